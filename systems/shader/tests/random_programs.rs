//! Random WGSL programs through the lane executor and through the scalar
//! reference interpreter, lane by lane, on random inputs.
//!
//! The generator mixes every integer, bit, float and boolean op family
//! with divergent control flow: nested if/else, `for` loops with `break`
//! and `continue`, `loop` with `continuing` / `break if`, `switch` with
//! multi-value cases, early `return`s from the entry point and from
//! helpers, helpers that write through pointer parameters, and
//! dynamically indexed local arrays.  Inputs differ per lane, so lanes of a
//! group take different paths.
//!
//! Float expressions are built so that no value overflows to infinity or
//! becomes NaN (bounded literals and inputs, divisions by `abs(y) + 1`,
//! `sqrt(abs(x))`), which keeps every operation IEEE-exact on both sides:
//! results are compared bit for bit.  f16 expressions (`enable f16;`)
//! feed the float ones through `f32(...)`: every f16 result rounds to the
//! nearest half on both sides (the reference with the `half` crate);
//! products are clamped and conversions from f32 and integers bounded so
//! that they stay finite too.

mod common;

use common::*;
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::Semantic;
use ferropipe_shader::Language;
use proptest::prelude::*;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u32) as usize]
    }
}

struct Gen {
    rng: Rng,
    out: String,
    indent: usize,
    loop_depth: usize,
    in_loop: bool,
    counters: u32,
}

impl Gen {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn int(&mut self, depth: u32) -> String {
        let r = &mut self.rng;
        if depth == 0 || r.below(4) == 0 {
            return match r.below(5) {
                // literals go through a function so no sub-expression is a
                // WGSL const-expression (whose overflow is a compile error)
                0 => format!("lit({}i)", r.below(2000) as i32 - 1000),
                1 => format!("i{}", r.below(3)),
                2 => format!("a.{}", ["x", "y", "z", "w"][r.below(4) as usize]),
                3 => format!("arr[u32(i{}) % 5u]", r.below(3)),
                _ => format!("i{}", r.below(3)),
            };
        }
        let d = depth - 1;
        match self.rng.below(17) {
            0..=5 => {
                let op = self.rng.pick(&["+", "-", "*", "/", "%", "&", "|", "^"]);
                format!("({} {op} {})", self.int(d), self.int(d))
            }
            6 => {
                let op = self.rng.pick(&["<<", ">>"]);
                format!("({} {op} (u32({}) & 31u))", self.int(d), self.int(d))
            }
            7 => format!("(-({}))", self.int(d)),
            8 => format!("(~{})", self.int(d)),
            9 => format!(
                "select({}, {}, {})",
                self.int(d),
                self.int(d),
                self.boolean(d)
            ),
            10 => {
                let f = self.rng.pick(&[
                    "abs",
                    "countOneBits",
                    "reverseBits",
                    "firstLeadingBit",
                    "firstTrailingBit",
                    "sign",
                ]);
                format!("{f}({})", self.int(d))
            }
            11 => {
                let f = self.rng.pick(&["min", "max"]);
                format!("{f}({}, {})", self.int(d), self.int(d))
            }
            12 => format!("clamp({}, -50, 300)", self.int(d)),
            13 => format!(
                "extractBits({}, u32({}) & 15u, u32({}) & 15u)",
                self.int(d),
                self.int(d),
                self.int(d)
            ),
            14 => format!(
                "insertBits({}, {}, u32({}) & 15u, u32({}) & 15u)",
                self.int(d),
                self.int(d),
                self.int(d),
                self.int(d)
            ),
            15 => format!("i32({})", self.float(d)),
            _ => format!("bitcast<i32>({})", self.uint(d)),
        }
    }

    fn uint(&mut self, depth: u32) -> String {
        let r = &mut self.rng;
        if depth == 0 || r.below(4) == 0 {
            return match r.below(3) {
                0 => format!("litu({}u)", r.next() as u32),
                1 => format!("b.{}", ["x", "y", "z", "w"][r.below(4) as usize]),
                _ => format!("u{}", r.below(3)),
            };
        }
        let d = depth - 1;
        match self.rng.below(12) {
            0..=4 => {
                let op = self.rng.pick(&["+", "-", "*", "/", "%", "&", "|", "^"]);
                format!("({} {op} {})", self.uint(d), self.uint(d))
            }
            5 => {
                let op = self.rng.pick(&["<<", ">>"]);
                format!("({} {op} ({} & 31u))", self.uint(d), self.uint(d))
            }
            6 => {
                let f = self.rng.pick(&[
                    "countLeadingZeros",
                    "countTrailingZeros",
                    "countOneBits",
                    "reverseBits",
                    "firstLeadingBit",
                ]);
                format!("{f}({})", self.uint(d))
            }
            7 => format!("u32({})", self.int(d)),
            8 => format!("u32({})", self.float(d)),
            9 => format!(
                "select({}, {}, {})",
                self.uint(d),
                self.uint(d),
                self.boolean(d)
            ),
            10 => format!("max({}, {})", self.uint(d), self.uint(d)),
            _ => format!("extractBits({}, {} & 15u, 9u)", self.uint(d), self.uint(d)),
        }
    }

    fn float(&mut self, depth: u32) -> String {
        let r = &mut self.rng;
        if depth == 0 || r.below(4) == 0 {
            return match r.below(3) {
                0 => format!("litf({:.3})", (r.below(16000) as f32 - 8000.0) / 1000.0),
                1 => format!("f.{}", ["x", "y", "z", "w"][r.below(4) as usize]),
                _ => format!("x{}", r.below(3)),
            };
        }
        let d = depth - 1;
        match self.rng.below(13) {
            0..=2 => {
                let op = self.rng.pick(&["+", "-", "*"]);
                format!("({} {op} {})", self.float(d), self.float(d))
            }
            3 => format!("({} / (abs({}) + 1.0))", self.float(d), self.float(d)),
            4 => {
                let f = self
                    .rng
                    .pick(&["abs", "floor", "ceil", "trunc", "fract", "round", "sign"]);
                format!("{f}({})", self.float(d))
            }
            5 => format!("sqrt(abs({}))", self.float(d)),
            6 => {
                let f = self.rng.pick(&["min", "max"]);
                format!("{f}({}, {})", self.float(d), self.float(d))
            }
            7 => format!("clamp({}, -3.5, 7.25)", self.float(d)),
            8 => format!("f32({} % 100000)", self.int(d)),
            9 => format!("f32({} % 100000u)", self.uint(d)),
            10 => format!(
                "select({}, {}, {})",
                self.float(d),
                self.float(d),
                self.boolean(d)
            ),
            11 => format!("f32({})", self.half(d)),
            _ => format!("step({}, {})", self.float(d), self.float(d)),
        }
    }

    fn half(&mut self, depth: u32) -> String {
        let r = &mut self.rng;
        if depth == 0 || r.below(4) == 0 {
            return match r.below(3) {
                // through a function like the other literals: `u32(f32(-6.593h))`
                // is a const-expression folding to 0, and `x / 0u` on one is a
                // compile error (seed 8802328084242183940)
                0 => format!("lith({:.3}h)", (r.below(16000) as f32 - 8000.0) / 1000.0),
                1 => format!("h{}", r.below(2)),
                _ => format!("f16(clamp(x{}, -60000.0, 60000.0))", r.below(3)),
            };
        }
        let d = depth - 1;
        match self.rng.below(10) {
            0 | 1 => {
                let op = self.rng.pick(&["+", "-"]);
                format!("({} {op} {})", self.half(d), self.half(d))
            }
            2 => format!(
                "clamp({} * {}, -4000.0h, 4000.0h)",
                self.half(d),
                self.half(d)
            ),
            3 => format!("({} / (abs({}) + 1.0h))", self.half(d), self.half(d)),
            4 => {
                let f = self
                    .rng
                    .pick(&["abs", "floor", "ceil", "trunc", "fract", "round", "sign"]);
                format!("{f}({})", self.half(d))
            }
            5 => format!("sqrt(abs({}))", self.half(d)),
            6 => {
                let f = self.rng.pick(&["min", "max"]);
                format!("{f}({}, {})", self.half(d), self.half(d))
            }
            7 => format!(
                "fma(clamp({}, -100.0h, 100.0h), clamp({}, -100.0h, 100.0h), {})",
                self.half(d),
                self.half(d),
                self.half(d)
            ),
            8 => match self.rng.below(3) {
                0 => format!("f16({} % 60000)", self.int(d)),
                1 => format!("f16({} % 60000u)", self.uint(d)),
                _ => format!("f16(clamp({}, -60000.0, 60000.0))", self.float(d)),
            },
            _ => format!(
                "select({}, {}, {})",
                self.half(d),
                self.half(d),
                self.boolean(d)
            ),
        }
    }

    fn boolean(&mut self, depth: u32) -> String {
        let d = depth.saturating_sub(1);
        match self.rng.below(6) {
            0 => {
                let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.int(d), self.int(d))
            }
            1 => {
                let op = self.rng.pick(&["<", "<=", ">", ">="]);
                format!("({} {op} {})", self.uint(d), self.uint(d))
            }
            2 if self.rng.below(4) == 0 => {
                let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.half(d), self.half(d))
            }
            2 => {
                let op = self.rng.pick(&["<", "<=", ">", ">="]);
                format!("({} {op} {})", self.float(d), self.float(d))
            }
            3 if depth > 0 => {
                let op = self.rng.pick(&["&&", "||"]);
                format!("({} {op} {})", self.boolean(d), self.boolean(d))
            }
            4 if depth > 0 => format!("(!{})", self.boolean(d)),
            _ => format!(
                "((i{} & {}) != 0)",
                self.rng.below(3),
                1 << self.rng.below(8)
            ),
        }
    }

    fn assign(&mut self) {
        let s = match self.rng.below(6) {
            5 => format!("h{} = {};", self.rng.below(2), self.half(3)),
            0 | 1 => format!("i{} = {};", self.rng.below(3), self.int(3)),
            2 => format!("u{} = {};", self.rng.below(3), self.uint(3)),
            3 => format!("x{} = {};", self.rng.below(3), self.float(3)),
            _ => format!("arr[u32({}) % 5u] = {};", self.int(1), self.int(2)),
        };
        self.line(&s);
    }

    fn block(&mut self, depth: u32, n: u32) {
        for _ in 0..n {
            self.statement(depth);
        }
    }

    fn statement(&mut self, depth: u32) {
        let choice = if depth == 0 { 0 } else { self.rng.below(11) };
        match choice {
            0..=3 => self.assign(),
            4 => {
                let c = self.boolean(2);
                self.line(&format!("if {c} {{"));
                self.indent += 1;
                let n = 1 + self.rng.below(3);
                self.block(depth - 1, n);
                self.indent -= 1;
                if self.rng.below(2) == 0 {
                    self.line("} else {");
                    self.indent += 1;
                    let n = 1 + self.rng.below(2);
                    self.block(depth - 1, n);
                    self.indent -= 1;
                }
                self.line("}");
            }
            5 if self.loop_depth < 2 => {
                let k = format!("k{}", self.loop_depth);
                let n = self.int(1);
                self.line(&format!("for (var {k} = 0; {k} < (({n}) & 7); {k}++) {{"));
                self.loop_depth += 1;
                let was = self.in_loop;
                self.in_loop = true;
                self.indent += 1;
                let n = 1 + self.rng.below(3);
                self.block(depth - 1, n);
                self.indent -= 1;
                self.in_loop = was;
                self.loop_depth -= 1;
                self.line("}");
            }
            6 if self.loop_depth < 2 => {
                // loop with continuing and break if; the counter is a var
                self.counters += 1;
                let k = format!("c{}", self.counters);
                let n = self.int(1);
                self.line(&format!("var {k}: i32 = 0;"));
                self.line("loop {");
                self.loop_depth += 1;
                let was = self.in_loop;
                self.in_loop = true;
                self.indent += 1;
                let stmts = 1 + self.rng.below(2);
                self.block(depth - 1, stmts);
                self.line("continuing {");
                self.indent += 1;
                self.line(&format!("{k} += 1;"));
                self.line(&format!("break if {k} >= (({n}) & 7);"));
                self.indent -= 1;
                self.line("}");
                self.indent -= 1;
                self.in_loop = was;
                self.loop_depth -= 1;
                self.line("}");
            }
            7 if self.in_loop => {
                let c = self.boolean(1);
                let what = if self.rng.below(2) == 0 {
                    "break"
                } else {
                    "continue"
                };
                self.line(&format!("if {c} {{ {what}; }}"));
            }
            8 => {
                let sel = self.int(2);
                self.line(&format!("switch (({sel}) & 3) {{"));
                self.indent += 1;
                self.line("case 0: {");
                self.indent += 1;
                let n = 1 + self.rng.below(2);
                self.block(depth - 1, n);
                self.indent -= 1;
                self.line("}");
                self.line("case 1, 2: {");
                self.indent += 1;
                self.block(depth - 1, 1);
                self.indent -= 1;
                self.line("}");
                self.line("default: {");
                self.indent += 1;
                self.block(depth - 1, 1);
                self.indent -= 1;
                self.line("}");
                self.indent -= 1;
                self.line("}");
            }
            9 => {
                let c = self.boolean(2);
                self.line(&format!("if {c} {{ return finish(); }}"));
            }
            _ => {
                let v = self.int(2);
                let t = self.rng.below(3);
                let dst = self.rng.below(3);
                self.line(&format!("i{dst} = helper_on{t}_({v});"));
            }
        }
    }
}

/// A random fragment shader.
fn program(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng(seed | 1),
        out: String::new(),
        indent: 1,
        loop_depth: 0,
        in_loop: false,
        counters: 0,
    };
    let n = 6 + g.rng.below(6);
    g.block(3, n);
    let body = g.out;
    format!(
        r#"
enable f16;
var<private> i0: i32;
var<private> i1: i32;
var<private> i2: i32;
var<private> u0: u32;
var<private> u1: u32;
var<private> u2: u32;
var<private> x0: f32;
var<private> x1: f32;
var<private> x2: f32;
var<private> arr: array<i32, 5>;
var<private> h0: f16;
var<private> h1: f16;

fn lit(v: i32) -> i32 {{ return v; }}
fn litu(v: u32) -> u32 {{ return v; }}
fn litf(v: f32) -> f32 {{ return v; }}
fn lith(v: f16) -> f16 {{ return v; }}

fn finish() -> vec4<u32> {{
    return vec4<u32>(bitcast<u32>(i0 ^ (i1 << 3u) ^ (i2 << 7u)) ^ u2 ^ bitcast<u32>(arr[0] + arr[3]),
                     u0 ^ (u1 >> 1u) ^ bitcast<u32>(arr[1] - arr[4]),
                     bitcast<u32>(x0) ^ bitcast<u32>(x2 * 0.5),
                     bitcast<u32>(x1) ^ bitcast<u32>(arr[2]) ^ (bitcast<u32>(f32(h0)) >> 1u) ^ bitcast<u32>(f32(h1)));
}}

fn helper(p: ptr<function, i32>, v: i32) -> i32 {{
    if (v > 100) {{
        *p = *p + v;
        return v - 7;
    }}
    *p = *p ^ v;
    return v * 3;
}}

// WGSL passes only function-space pointers: route the private globals
// through a local
fn helper_on0_(v: i32) -> i32 {{ var t = i0; let r = helper(&t, v); i0 = t; return r; }}
fn helper_on1_(v: i32) -> i32 {{ var t = i1; let r = helper(&t, v); i1 = t; return r; }}
fn helper_on2_(v: i32) -> i32 {{ var t = i2; let r = helper(&t, v); i2 = t; return r; }}

@fragment
fn fs_main(@location(0) @interpolate(flat) a: vec4<i32>, @location(1) @interpolate(flat) b: vec4<u32>,
           @location(2) f: vec4<f32>) -> @location(0) vec4<u32> {{
    i0 = a.x; i1 = a.y; i2 = a.z;
    u0 = b.x; u1 = b.y; u2 = b.z;
    x0 = f.x; x1 = f.y; x2 = f.z;
    h0 = f16(f.w); h1 = f16(f.x * 0.25);
    arr = array<i32, 5>(a.w, a.x ^ a.y, 3, -4, a.z);
{body}    return finish();
}}
"#
    )
}

fn run_case(seed: u64) {
    run_source(&program(seed), seed);
}

fn run_source(src: &str, seed: u64) {
    let s = setup(Language::Wgsl, src, "fs_main", ShaderType::Fragment);
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let h = (seed ^ (lane as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((c as u64) << 40))
            .wrapping_mul(0xff51_afd7_ed55_8ccd);
        let h = (h ^ (h >> 29)) as u32;
        match leaf {
            Leaf::Slot(Semantic::Generic(0), _, _) => ((h % 4000) as i32 - 2000) as u32,
            Leaf::Slot(Semantic::Generic(1), _, _) => {
                if lane.is_multiple_of(3) {
                    h
                } else {
                    h % 512
                }
            }
            Leaf::Slot(Semantic::Generic(2), _, _) => {
                ((h % 20000) as f32 / 100.0 - 100.0).to_bits()
            }
            _ => 0,
        }
    };
    let n = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        differential(&s, 4, &inputs, &[], EXACT)
    }));
    if let Err(e) = n {
        eprintln!("failing program (seed {seed:#x}):\n{src}");
        std::panic::resume_unwind(e);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_match_the_reference(seed in any::<u64>()) {
        run_case(seed);
    }
}

#[test]
fn fixed_seeds_match_the_reference() {
    for seed in [
        1u64,
        2,
        3,
        0xdead_beef,
        0x1234_5678_9abc,
        42,
        7,
        99,
        8802328084242183940,
    ] {
        run_case(seed);
    }
}

/// Replays a program from the file named by `RANDOM_PROGRAM` (for reducing
/// a failing case by hand; `RANDOM_SEED` picks the inputs):
/// `RANDOM_PROGRAM=/tmp/p.wgsl RANDOM_SEED=... cargo test -p
/// ferropipe-shader --test random_programs -- --ignored from_file`.
#[test]
#[ignore]
fn from_file() {
    let path = std::env::var("RANDOM_PROGRAM").expect("RANDOM_PROGRAM");
    let seed = std::env::var("RANDOM_SEED").map_or(1, |s| s.parse().unwrap());
    run_source(&std::fs::read_to_string(path).unwrap(), seed);
}
