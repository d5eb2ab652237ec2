//! Typed field access on scene JSON objects, with errors that name the call
//! and the field ("call 12 (create_surface): field 'level': expected a
//! non-negative integer, got -1").

use serde_json::{Map, Value};

use super::SceneError;

/// Edit distance (insertions, deletions, substitutions, transpositions of
/// neighbours) between two short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// `" (did you mean `x`?)"` for the known name closest to `name`, when it
/// is close: at most a third of its letters (at least 1) differ.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (name.chars().count() / 3).max(1);
    known
        .into_iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map_or(String::new(), |(_, k)| format!(" (did you mean `{k}`?)"))
}

/// One JSON object being read, with the context its errors name.
pub(crate) struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    /// "call 12 (create_surface)", "call 3 (create_blend_state) state.rt[1]".
    pub what: String,
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Obj<'a> {
    pub fn new(v: &'a Value, what: impl Into<String>) -> Result<Self, SceneError> {
        let what = what.into();
        match v {
            Value::Object(map) => Ok(Obj { map, what }),
            other => Err(SceneError::Malformed(format!(
                "{what}: expected an object, got {}",
                type_name(other)
            ))),
        }
    }

    /// A malformed-scene error about `key`.
    pub fn err(&self, key: &str, msg: impl std::fmt::Display) -> SceneError {
        SceneError::Malformed(format!("{}: field '{key}': {msg}", self.what))
    }

    /// An unsupported-feature error about `key`.
    pub fn unsupported(&self, key: &str, msg: impl std::fmt::Display) -> SceneError {
        SceneError::Unsupported(format!("{}: field '{key}': {msg}", self.what))
    }

    /// Refuses fields outside `allowed` (plus `comment`): a field this
    /// replayer does not know is a feature it does not implement (FORMAT.md:
    /// exit 3 naming it).
    pub fn check_fields(&self, allowed: &[&str]) -> Result<(), SceneError> {
        for k in self.map.keys() {
            if k != "comment" && k != "op" && !allowed.contains(&k.as_str()) {
                return Err(SceneError::Unsupported(format!(
                    "{}: unsupported field '{k}'{}",
                    self.what,
                    did_you_mean(k, allowed.iter().copied())
                )));
            }
        }
        if let Some(c) = self.map.get("comment")
            && !c.is_string()
        {
            return Err(self.err("comment", "expected a string"));
        }
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// The value of `key`, treating JSON `null` as absent.
    pub fn present(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn req(&self, key: &str) -> Result<&'a Value, SceneError> {
        self.map
            .get(key)
            .ok_or_else(|| SceneError::Malformed(format!("{}: missing field '{key}'", self.what)))
    }

    pub fn int_of(&self, key: &str, v: &Value, min: i64, max: i64) -> Result<i64, SceneError> {
        let i = match v {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(i)
                } else if let Some(u) = n.as_u64() {
                    Some(i64::try_from(u).unwrap_or(i64::MAX))
                } else {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e18)
                        .map(|f| f as i64)
                }
            }
            _ => None,
        };
        let Some(i) = i else {
            return Err(self.err(key, format!("expected an integer, got {}", short(v))));
        };
        if i < min || i > max {
            return Err(self.err(key, format!("{i} is outside {min}..={max}")));
        }
        Ok(i)
    }

    pub fn req_u32(&self, key: &str) -> Result<u32, SceneError> {
        let v = self.req(key)?;
        Ok(self.int_of(key, v, 0, u32::MAX as i64)? as u32)
    }

    pub fn u32_or(&self, key: &str, default: u32) -> Result<u32, SceneError> {
        match self.present(key) {
            Some(v) => Ok(self.int_of(key, v, 0, u32::MAX as i64)? as u32),
            None => Ok(default),
        }
    }

    pub fn i32_or(&self, key: &str, default: i32) -> Result<i32, SceneError> {
        match self.present(key) {
            Some(v) => Ok(self.int_of(key, v, i32::MIN as i64, i32::MAX as i64)? as i32),
            None => Ok(default),
        }
    }

    pub fn f64_of(&self, key: &str, v: &Value) -> Result<f64, SceneError> {
        match v.as_f64() {
            Some(f) if f.is_finite() => Ok(f),
            _ => Err(self.err(key, format!("expected a number, got {}", short(v)))),
        }
    }

    /// A number rounded to f32 (FORMAT.md: "numbers become f32 by rounding
    /// the decimal value").
    pub fn f32_or(&self, key: &str, default: f32) -> Result<f32, SceneError> {
        match self.present(key) {
            Some(v) => Ok(self.f64_of(key, v)? as f32),
            None => Ok(default),
        }
    }

    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64, SceneError> {
        match self.present(key) {
            Some(v) => self.f64_of(key, v),
            None => Ok(default),
        }
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, SceneError> {
        match self.present(key) {
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(key, format!("expected a boolean, got {}", short(v)))),
            None => Ok(default),
        }
    }

    pub fn str_of(&self, key: &str, v: &'a Value) -> Result<&'a str, SceneError> {
        v.as_str()
            .ok_or_else(|| self.err(key, format!("expected a string, got {}", short(v))))
    }

    pub fn req_str(&self, key: &str) -> Result<&'a str, SceneError> {
        let v = self.req(key)?;
        self.str_of(key, v)
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, SceneError> {
        match self.present(key) {
            Some(v) => Ok(Some(self.str_of(key, v)?)),
            None => Ok(None),
        }
    }

    /// An array of exactly `N` numbers (as f32) or, when absent, `default`.
    pub fn f32_array_or<const N: usize>(
        &self,
        key: &str,
        default: [f32; N],
    ) -> Result<[f32; N], SceneError> {
        match self.present(key) {
            Some(v) => Ok(self.f64_array::<N>(key, v)?.map(|f| f as f32)),
            None => Ok(default),
        }
    }

    pub fn f64_array<const N: usize>(&self, key: &str, v: &Value) -> Result<[f64; N], SceneError> {
        let arr = self.array_of(key, v)?;
        if arr.len() != N {
            return Err(self.err(key, format!("expected {N} numbers, got {}", arr.len())));
        }
        let mut out = [0.0; N];
        for (o, x) in out.iter_mut().zip(arr) {
            *o = self.f64_of(key, x)?;
        }
        Ok(out)
    }

    pub fn array_of(&self, key: &str, v: &'a Value) -> Result<&'a Vec<Value>, SceneError> {
        v.as_array()
            .ok_or_else(|| self.err(key, format!("expected an array, got {}", short(v))))
    }

    /// An optional array (absent or null = empty).
    pub fn array_or_empty(&self, key: &str) -> Result<&'a [Value], SceneError> {
        match self.present(key) {
            Some(v) => Ok(self.array_of(key, v)?),
            None => Ok(&[]),
        }
    }

    /// A Gallium enum written by name; `parse` maps names to values.
    pub fn enum_of<T>(
        &self,
        key: &str,
        v: &Value,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, SceneError> {
        let s = self.str_of(key, v)?;
        parse(s).ok_or_else(|| self.err(key, format!("unknown value {s:?}")))
    }

    pub fn enum_or<T>(
        &self,
        key: &str,
        default: T,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, SceneError> {
        match self.present(key) {
            Some(v) => self.enum_of(key, v, parse),
            None => Ok(default),
        }
    }

    /// A bit mask: an integer, one name, or an array of names.
    pub fn mask_of(
        &self,
        key: &str,
        v: &Value,
        parse: impl Fn(&str) -> Option<u32>,
    ) -> Result<u32, SceneError> {
        match v {
            Value::Number(_) => Ok(self.int_of(key, v, 0, u32::MAX as i64)? as u32),
            Value::String(s) => {
                parse(s).ok_or_else(|| self.err(key, format!("unknown flag {s:?}")))
            }
            Value::Array(items) => {
                let mut m = 0;
                for it in items {
                    let s = self.str_of(key, it)?;
                    m |= parse(s).ok_or_else(|| self.err(key, format!("unknown flag {s:?}")))?;
                }
                Ok(m)
            }
            Value::Null => Ok(0),
            other => Err(self.err(
                key,
                format!(
                    "expected a mask (integer or names), got {}",
                    type_name(other)
                ),
            )),
        }
    }

    pub fn mask_or(
        &self,
        key: &str,
        default: u32,
        parse: impl Fn(&str) -> Option<u32>,
    ) -> Result<u32, SceneError> {
        match self.map.get(key) {
            Some(v) => self.mask_of(key, v, parse),
            None => Ok(default),
        }
    }
}

/// A short rendering of a value for error messages.
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!("{}...", &s[..s.floor_char_boundary(37)])
    } else {
        s
    }
}
