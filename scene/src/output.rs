//! Scene outputs as FORMAT.md "Outputs" defines them: colour as 8-bit RGBA
//! (row 0 = window y 0), depth as little-endian f32, stencil as u8, buffer
//! outputs as their raw bytes (`N.bin`), query
//! results as `queries.jsonl` lines formatted like the reference tool's
//! Python `json.dumps`.

use std::io::Write;
use std::path::Path;

use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::pack;
use serde_json::Value;

use super::SceneError;

/// What one output read back.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputPixels {
    /// 8-bit RGBA, `width * height * 4` bytes, row 0 first.
    Color(Vec<u8>),
    /// Depth and/or stencil, `width * height` values each.
    DepthStencil {
        /// Depth in `[0, 1]`, when the format has depth.
        depth: Option<Vec<f32>>,
        /// Stencil, when the format has stencil.
        stencil: Option<Vec<u8>>,
    },
    /// A buffer output's bytes, unconverted (`N.bin`).
    Bytes(Vec<u8>),
}

/// One output's data.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputData {
    /// The output's name (its file stem).
    pub name: String,
    /// Width in pixels (buffers: bytes).
    pub width: u32,
    /// Height in pixels (buffers: 1).
    pub height: u32,
    /// The format it was read in (the surface's view format).
    pub format: Format,
    /// The values.
    pub pixels: OutputPixels,
}

impl OutputData {
    /// Converts `width * height` pixels of `format` (tightly packed rows) to
    /// output data.
    pub fn from_pixels(
        name: &str,
        format: Format,
        width: u32,
        height: u32,
        bytes: &[u8],
    ) -> OutputData {
        let n = width as usize * height as usize;
        let d = format.desc();
        let pixels = if d.kind == FormatKind::Color {
            OutputPixels::Color(color_to_rgba8(format, bytes, n))
        } else {
            let depth = d.has_depth().then(|| {
                let mut z = vec![0.0f32; n];
                pack::unpack_z_row(format, bytes, &mut z);
                z
            });
            let stencil = d.has_stencil().then(|| {
                let mut s = vec![0u8; n];
                pack::unpack_s_row(format, bytes, &mut s);
                s
            });
            OutputPixels::DepthStencil { depth, stencil }
        };
        OutputData {
            name: name.to_string(),
            width,
            height,
            format,
            pixels,
        }
    }

    /// A buffer output: `bytes` as read (`width` is their count, `height`
    /// 1; the format is nominal, the bytes are not converted).
    pub fn from_buffer(name: &str, bytes: Vec<u8>) -> OutputData {
        OutputData {
            name: name.to_string(),
            width: bytes.len() as u32,
            height: 1,
            format: Format::R8_UINT,
            pixels: OutputPixels::Bytes(bytes),
        }
    }

    /// The files this output writes (`N.png`, or `N.depth.f32` and/or
    /// `N.stencil.u8`).
    pub fn files(&self) -> Vec<String> {
        match &self.pixels {
            OutputPixels::Color(_) => vec![format!("{}.png", self.name)],
            OutputPixels::Bytes(_) => vec![format!("{}.bin", self.name)],
            OutputPixels::DepthStencil { depth, stencil } => {
                let mut f = Vec::new();
                if depth.is_some() {
                    f.push(format!("{}.depth.f32", self.name));
                }
                if stencil.is_some() {
                    f.push(format!("{}.stencil.u8", self.name));
                }
                f
            }
        }
    }

    /// Writes the output's files into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), SceneError> {
        match &self.pixels {
            OutputPixels::Color(rgba) => {
                let path = dir.join(format!("{}.png", self.name));
                write_png(&path, self.width, self.height, rgba)
            }
            OutputPixels::Bytes(b) => write_file(&dir.join(format!("{}.bin", self.name)), b),
            OutputPixels::DepthStencil { depth, stencil } => {
                if let Some(z) = depth {
                    let bytes: Vec<u8> = z.iter().flat_map(|v| v.to_le_bytes()).collect();
                    write_file(&dir.join(format!("{}.depth.f32", self.name)), &bytes)?;
                }
                if let Some(s) = stencil {
                    write_file(&dir.join(format!("{}.stencil.u8", self.name)), s)?;
                }
                Ok(())
            }
        }
    }
}

/// FORMAT.md's colour rule: stored bytes for 8-bit UNORM and sRGB formats;
/// `round(clamp(v, 0, 1) * 255)` otherwise (the reference rounds halves
/// up); integer formats clamped to 0..=255; missing channels 0, alpha 1
/// (integer alpha 1, float alpha 1.0 = 255).
pub fn color_to_rgba8(format: Format, bytes: &[u8], n: usize) -> Vec<u8> {
    let d = format.desc();
    let bpp = d.block_bytes as usize;
    let n = n.min(bytes.len() / bpp.max(1));
    let mut out = Vec::with_capacity(n * 4);
    let eight_bit_unorm = d.channel_type == ChannelType::Unorm
        && !d.packed
        && d.channel_bits[..d.nr_channels()].iter().all(|&b| b == 8);
    match d.channel_type {
        ChannelType::Uint => {
            let mut px = vec![[0u32; 4]; n];
            pack::unpack_rgba_u32_row(format, bytes, &mut px);
            out.extend(px.iter().flat_map(|p| p.map(|v| v.min(255) as u8)));
        }
        ChannelType::Sint => {
            let mut px = vec![[0i32; 4]; n];
            pack::unpack_rgba_i32_row(format, bytes, &mut px);
            out.extend(px.iter().flat_map(|p| p.map(|v| v.clamp(0, 255) as u8)));
        }
        _ => {
            // sRGB formats: read the stored bytes through the linear twin.
            let f = if eight_bit_unorm {
                format.linear()
            } else {
                format
            };
            let mut px = vec![[0f32; 4]; n];
            pack::unpack_rgba_f32_row(f, bytes, &mut px);
            out.extend(px.iter().flat_map(|p| {
                p.map(|v| {
                    if v > 0.0 {
                        (v.min(1.0) * 255.0 + 0.5).floor() as u8
                    } else {
                        0 // negative and NaN
                    }
                })
            }));
        }
    }
    out
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SceneError> {
    std::fs::write(path, bytes)
        .map_err(|e| SceneError::Io(format!("cannot write {}: {e}", path.display())))
}

/// Writes 8-bit RGBA as a PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), SceneError> {
    let io = |e: &dyn std::fmt::Display| SceneError::Io(format!("{}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(|e| io(&e))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut w = enc.write_header().map_err(|e| io(&e))?;
    w.write_image_data(rgba).map_err(|e| io(&e))?;
    w.finish().map_err(|e| io(&e))?;
    Ok(())
}

/// Reads a PNG as 8-bit RGBA (grey, grey+alpha, RGB and palette images are
/// expanded; 16-bit channels keep their high byte).  Returns (width,
/// height, pixels).
pub fn read_png(path: &Path) -> Result<(u32, u32, Vec<u8>), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec
        .read_info()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| format!("{}: image too large", path.display()))?;
    let mut buf = vec![0u8; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    buf.truncate(info.buffer_size());
    let (w, h) = (info.width, info.height);
    let n = w as usize * h as usize;
    let rgba = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err(format!("{}: palette not expanded", path.display())),
    };
    if rgba.len() != n * 4 {
        return Err(format!("{}: unexpected pixel data size", path.display()));
    }
    Ok((w, h, rgba))
}

/// Formats a JSON value as Python's `json.dumps` does by default
/// (`", "` and `": "` separators, non-ASCII escaped).
pub fn py_json(v: &Value) -> String {
    match v {
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(py_json).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_json(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::String(s) => py_str(s),
        other => other.to_string(),
    }
}

fn py_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Python's `==` on JSON values (`1 == 1.0`, `True == 1`), which is how the
/// reference compares a query result with its `expect`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (num(a), num(b)) {
            (Some(p), Some(q)) => p == q,
            _ => a == b,
        },
    }
}

/// Writes `queries.jsonl`.
pub fn write_queries(dir: &Path, lines: &[(String, Value)]) -> Result<(), SceneError> {
    let path = dir.join("queries.jsonl");
    let mut text = String::new();
    for (id, result) in lines {
        text.push_str(&query_line(id, result));
        text.push('\n');
    }
    let mut f = std::fs::File::create(&path)
        .map_err(|e| SceneError::Io(format!("cannot write {}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(|e| SceneError::Io(format!("cannot write {}: {e}", path.display())))
}

/// One `queries.jsonl` line: `{"query": id, "result": ...}`.
pub fn query_line(id: &str, result: &Value) -> String {
    format!(
        "{{\"query\": {}, \"result\": {}}}",
        py_str(id),
        py_json(result)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn colour_rules() {
        // 8-bit UNORM: stored bytes, swizzled to RGBA.
        assert_eq!(
            color_to_rgba8(Format::B8G8R8A8_UNORM, &[1, 2, 3, 4], 1),
            vec![3, 2, 1, 4]
        );
        // sRGB: stored bytes, not linearised.
        assert_eq!(
            color_to_rgba8(Format::R8G8B8A8_SRGB, &[200, 100, 50, 7], 1),
            vec![200, 100, 50, 7]
        );
        // Missing channels 0, alpha 1.
        assert_eq!(
            color_to_rgba8(Format::R8_UNORM, &[9], 1),
            vec![9, 0, 0, 255]
        );
        // Floats: clamp, round halves up.
        let f: Vec<u8> = [0.5f32, -1.0, 2.0, 0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            color_to_rgba8(Format::R32G32B32A32_FLOAT, &f, 1),
            vec![128, 0, 255, 64]
        );
        // Integers clamp to 0..=255; integer alpha reads 1.
        assert_eq!(
            color_to_rgba8(Format::R32_UINT, &300u32.to_le_bytes(), 1),
            vec![255, 0, 0, 1]
        );
        assert_eq!(
            color_to_rgba8(Format::R32_SINT, &(-5i32).to_le_bytes(), 1),
            vec![0, 0, 0, 1]
        );
    }

    #[test]
    fn json_like_python() {
        assert_eq!(
            query_line("stats", &json!([9, 3, 0])),
            r#"{"query": "stats", "result": [9, 3, 0]}"#
        );
        assert_eq!(
            query_line("p", &json!(true)),
            r#"{"query": "p", "result": true}"#
        );
        assert_eq!(
            query_line("n", &Value::Null),
            r#"{"query": "n", "result": null}"#
        );
        assert_eq!(py_str("é\"\n"), r#""\u00e9\"\n""#);
        assert!(py_eq(&json!(256), &json!(256.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!(true), &json!(2)));
        assert!(py_eq(&json!([1, false]), &json!([1.0, 0])));
        assert!(!py_eq(&json!(null), &json!(0)));
    }

    #[test]
    fn png_round_trip() {
        let dir = std::env::temp_dir().join(format!("ferropipe-png-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rgba: Vec<u8> = (0..3 * 2 * 4).map(|i| (i * 11) as u8).collect();
        let p = dir.join("t.png");
        write_png(&p, 3, 2, &rgba).unwrap();
        assert_eq!(read_png(&p).unwrap(), (3, 2, rgba));
        std::fs::remove_dir_all(&dir).ok();
    }
}
