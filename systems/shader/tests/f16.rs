//! WGSL f16 (`enable f16;`): per-op results against correctly rounded
//! half arithmetic (the `half` crate rounding an exact or f64 result once),
//! f16 in storage buffers (2-byte elements, neighbouring invocations
//! storing into one word), workgroup memory and struct layouts, both back
//! ends bit for bit, and what stays a typed error.

// Lane loops index several per-lane arrays with one counter.
#![allow(clippy::needless_range_loop)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use common::{Leaf, run_lanes, setup};
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::Semantic;

use ferropipe_components::shader::ShaderResources;
use ferropipe_shader::{Backend, Language, ShaderError, compile_compute_with_backend};
use ferropipe_shader::{ComputeCall, WordBuffer};
use half::f16;

/// Runs `groups` workgroups (x) of `src` on one back end over copies of
/// `bufs` (slots 0..) and returns the buffers' words afterwards.
fn run_on(
    lang: Language,
    src: &str,
    backend: Backend,
    bufs: &[Vec<u32>],
    groups: u32,
) -> Vec<Vec<u32>> {
    run_with_constants(lang, src, backend, bufs, &[], groups)
}

/// [`run_on`] with constant buffers (slots 0..).
fn run_with_constants(
    lang: Language,
    src: &str,
    backend: Backend,
    bufs: &[Vec<u32>],
    constants: &[&[u8]],
    groups: u32,
) -> Vec<Vec<u32>> {
    let shader = compile_compute_with_backend(lang, src, "main", &[], backend)
        .unwrap_or_else(|e| panic!("{e}"));
    let mem: Vec<Vec<AtomicU32>> = bufs
        .iter()
        .map(|b| b.iter().map(|&w| AtomicU32::new(w)).collect())
        .collect();
    let buffers: Vec<Option<WordBuffer>> = mem
        .iter()
        .map(|w| {
            Some(WordBuffer {
                words: w,
                bytes: (w.len() * 4) as u32,
            })
        })
        .collect();
    for g in 0..groups {
        let shared: Vec<AtomicU32> = (0..shader.shared_words())
            .map(|_| AtomicU32::new(0))
            .collect();
        let diverged = AtomicBool::new(false);
        let call = ComputeCall {
            buffers: &buffers,
            globals: &[],
            images: &[],
            shared: &shared,
            workgroup_id: [g, 0, 0],
            num_workgroups: [groups, 1, 1],
            workgroup_size: shader.info().workgroup_size,
            active: shader.info().workgroup_size,
            diverged: &diverged,
        };
        let res = ShaderResources {
            constants,
            ..ShaderResources::default()
        };
        shader.run_workgroup(&res, &call).unwrap();
    }
    mem.iter()
        .map(|b| b.iter().map(|w| w.load(Ordering::Relaxed)).collect())
        .collect()
}

/// [`run_on`] on the interpreter and on both JIT code generators; they
/// must agree bit for bit.
fn run_lang(lang: Language, src: &str, bufs: &[Vec<u32>], groups: u32) -> Vec<Vec<u32>> {
    let interp = run_on(lang, src, Backend::Interp, bufs, groups);
    for b in [Backend::Llvm, Backend::Cranelift] {
        let jit = run_on(lang, src, b, bufs, groups);
        assert_eq!(interp, jit, "interpreter and {b:?} differ");
    }
    interp
}

fn run(src: &str, bufs: &[Vec<u32>], groups: u32) -> Vec<Vec<u32>> {
    run_lang(Language::Wgsl, src, bufs, groups)
}

/// Halves packed two per word, element 0 in the low half.
fn pack(h: &[f16]) -> Vec<u32> {
    h.chunks(2)
        .map(|p| {
            let lo = p[0].to_bits() as u32;
            let hi = p.get(1).map_or(0, |x| x.to_bits() as u32);
            lo | (hi << 16)
        })
        .collect()
}

fn unpack(w: &[u32]) -> Vec<f16> {
    w.iter()
        .flat_map(|&x| [f16::from_bits(x as u16), f16::from_bits((x >> 16) as u16)])
        .collect()
}

/// Edge values: zeros, ones, halfway-prone values, the largest half,
/// subnormals (smallest, largest, one in between), the smallest normal,
/// infinities and NaN.
fn edges() -> Vec<f16> {
    [
        0x0000u16, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x3e00, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff,
        0x0200, 0x0400, 0x7c00, 0xfc00, 0x7e00, 0x3c01, 0x3bff, 0x4200, 0x3555, 0x63d0, 0x7800,
        0x5bff, 0x4001,
    ]
    .into_iter()
    .map(f16::from_bits)
    .collect()
}

/// Same value, or both NaN (NaN payloads are not WGSL's concern).
fn same(got: f16, want: f16) -> bool {
    (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits()
}

const OPS: usize = 10;

const PER_OP: &str = "
enable f16;
@group(3) @binding(0) var<storage, read> a: array<f16>;
@group(3) @binding(1) var<storage, read> b: array<f16>;
@group(3) @binding(2) var<storage, read_write> r: array<f32>;
@group(3) @binding(3) var<storage, read_write> cmp: array<u32>;
@group(3) @binding(4) var<storage, read_write> h: array<f16>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&a)) { return; }
    let x = a[i];
    let y = b[i];
    let o = i * 10u;
    // as f32: a result that skipped its rounding to half would show
    r[o] = f32(x + y);
    r[o + 1u] = f32(x - y);
    r[o + 2u] = f32(x * y);
    r[o + 3u] = f32(x / y);
    r[o + 4u] = f32(sqrt(x));
    r[o + 5u] = f32(fma(x, y, x));
    r[o + 6u] = f32(-x);
    r[o + 7u] = f32(f16(f32(x) * 3.0));
    r[o + 8u] = f32(f16(i32(x)));
    r[o + 9u] = f32(select(x, y, x < y));
    // and as f16 in memory: neighbouring invocations store the two halves
    // of each word
    h[i] = x * y;
    cmp[i] = u32(x < y) | (u32(x <= y) << 1u) | (u32(x == y) << 2u) | (u32(x != y) << 3u)
        | (u32(x > y) << 4u) | (u32(x >= y) << 5u)
        | (bitcast<u32>(i32(x)) & 0xffu) << 8u | (u32(y) & 0xffffu) << 16u;
}";

#[test]
fn every_op_is_the_correctly_rounded_half_result() {
    let e = edges();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for x in &e {
        for y in &e {
            xs.push(*x);
            ys.push(*y);
        }
    }
    let n = xs.len();
    let out = run(
        PER_OP,
        &[
            pack(&xs),
            pack(&ys),
            vec![0; n * OPS],
            vec![0; n],
            vec![0x5555_5555; n / 2 + 1],
        ],
        n.div_ceil(64) as u32,
    );
    // every result is exactly a half
    let r: Vec<f16> = out[2]
        .iter()
        .map(|&w| {
            let x = f32::from_bits(w);
            let h = f16::from_f32(x);
            assert!(x.is_nan() || h.to_f32() == x, "{x} is not a half");
            h
        })
        .collect();
    let stored = unpack(&out[4]);
    // one rounding of the exact (+ - *) or f64 (/ sqrt: 53 >= 2 * 11 + 2
    // bits, so rounding twice is rounding once) result
    let round = f16::from_f64;
    let mut checked = 0;
    for i in 0..n {
        let (x, y) = (xs[i], ys[i]);
        let (fx, fy) = (x.to_f64(), y.to_f64());
        let want = [
            round(fx + fy),
            round(fx - fy),
            round(fx * fy),
            round(fx / fy),
            round(fx.sqrt()),
            // fma: the f32 fma (x * y is exact in f32), rounded to half
            f16::from_f32(x.to_f32().mul_add(y.to_f32(), x.to_f32())),
            -x,
            f16::from_f32(x.to_f32() * 3.0),
            // f16(i32(x)): saturating truncation, NaN -> 0
            round(x.to_f32() as i32 as f64),
            if x < y { y } else { x },
        ];
        for (k, w) in want.iter().enumerate() {
            let got = r[i * OPS + k];
            assert!(
                same(got, *w),
                "op {k} on ({x:?} = {:#06x}, {y:?} = {:#06x}): got {got:?} ({:#06x}), want {w:?} ({:#06x})",
                x.to_bits(),
                y.to_bits(),
                got.to_bits(),
                w.to_bits()
            );
            checked += 1;
        }
        let c = out[3][i];
        let bits = (x < y) as u32
            | ((x <= y) as u32) << 1
            | ((x == y) as u32) << 2
            | ((x != y) as u32) << 3
            | ((x > y) as u32) << 4
            | ((x >= y) as u32) << 5
            | ((x.to_f32() as i32 as u32) & 0xff) << 8
            | ((y.to_f32() as u32) & 0xffff) << 16;
        assert_eq!(c, bits, "comparisons and casts of ({x:?}, {y:?})");
        assert!(same(stored[i], r[i * OPS + 2]), "h[{i}]");
    }
    // the word past the last element keeps its upper half
    assert_eq!(out[4][n / 2] >> 16, 0x5555);
    assert_eq!(checked, n * OPS);
    // the edges exercise what they are for: a halfway case rounding to
    // even (1 + (1 + 2^-10) = 2 + 2^-10 -> 2), overflow to infinity
    // (65504 + 65504), and a subnormal product
    let at = |x: u16, y: u16, k: usize| {
        let i = (0..n)
            .find(|&i| xs[i].to_bits() == x && ys[i].to_bits() == y)
            .unwrap();
        r[i * OPS + k].to_bits()
    };
    assert_eq!(at(0x3c00, 0x3c01, 0), 0x4000);
    assert_eq!(at(0x7bff, 0x7bff, 0), 0x7c00);
    assert_eq!(at(0x0001, 0x3800, 2), 0x0000); // 2^-25: a tie, to even 0
    assert_eq!(at(0x0001, 0x3e00, 2), 0x0002); // 1.5 * 2^-24 -> 2^-23
    assert_eq!(at(0x03ff, 0x0001, 0), 0x0400); // largest subnormal + 1 ulp
}

/// A kernel mixing f16 struct members (WGSL offsets: `a` 0, `v` 8, `m`
/// 16, `b` 24, size 32), f16 arithmetic, vector and matrix math, and an
/// f16 workgroup array whose neighbouring elements share words, against
/// the same computation on the CPU with the `half` crate.
const KERNEL: &str = "
enable f16;
struct S { a: f16, v: vec3<f16>, m: mat2x2<f16>, b: f16 };
@group(3) @binding(0) var<storage, read_write> s: array<S>;
@group(3) @binding(1) var<storage, read_write> dots: array<f32>;
var<workgroup> w: array<f16, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    let e = s[i];
    w[i] = e.a * e.b + e.v.z;
    workgroupBarrier();
    let n = w[(i + 1u) % 64u];
    var t = e.m * vec2<f16>(e.a, n);
    t.y = t.y + f16(i);
    s[i].v = vec3<f16>(t, dot(e.v, e.v));
    s[i].a = n;
    s[i].b = max(e.b, 0.0h) * 0.5h;
    s[i].m[1] = e.m[0] + e.m[1];
    dots[i] = f32(e.v.x) * 2.0;
}";

#[test]
fn struct_members_workgroup_memory_and_math_match_the_cpu() {
    // inputs: a deterministic spread of halves, some subnormal-small
    let val = |k: u32| f16::from_f32((k.wrapping_mul(2654435761) % 20000) as f32 / 97.0 - 100.0);
    let words = |v: [f16; 16]| pack(&v);
    let mut input = Vec::new();
    let mut structs = Vec::new();
    for i in 0..64u32 {
        let a = val(i * 7 + 1);
        let v = [
            val(i * 7 + 2),
            val(i * 7 + 3),
            f16::from_bits((i as u16) + 1),
        ];
        let m = [
            val(i * 7 + 4),
            val(i * 7 + 5),
            val(i * 7 + 6),
            val(i * 7 + 7),
        ];
        let b = val(i * 11 + 9);
        // 32 bytes = 16 halves: a, pad, pad, pad, v.xyz, pad, m (4), b, pad..
        let z = f16::from_bits(0x5555); // padding must survive untouched
        let mut h = [z; 16];
        h[0] = a;
        h[4..7].copy_from_slice(&v);
        h[8..12].copy_from_slice(&m);
        h[12] = b;
        input.extend(words(h));
        structs.push((a, v, m, b));
    }
    let out = run(KERNEL, &[input, vec![0; 64]], 1);
    let got = unpack(&out[0]);
    let q = |x: f32| f16::from_f32(x);
    let wv: Vec<f16> = structs
        .iter()
        .map(|(a, v, _, b)| q((*a * *b).to_f32() + v[2].to_f32()))
        .collect();
    for (i, (a, v, m, b)) in structs.iter().enumerate() {
        let n = wv[(i + 1) % 64];
        // mat2x2 * vec2, rounded once per component
        let t0 = q(m[0].to_f32() * a.to_f32() + m[2].to_f32() * n.to_f32());
        let t1 = q(m[1].to_f32() * a.to_f32() + m[3].to_f32() * n.to_f32());
        let t1 = q(t1.to_f32() + i as f32);
        let d = q(v[0].to_f32() * v[0].to_f32()
            + v[1].to_f32() * v[1].to_f32()
            + v[2].to_f32() * v[2].to_f32());
        let h = &got[i * 16..i * 16 + 16];
        let z = f16::from_bits(0x5555);
        let want = [
            n,
            z,
            z,
            z,
            t0,
            t1,
            d,
            z,
            m[0],
            m[1],
            q(m[0].to_f32() + m[2].to_f32()),
            q(m[1].to_f32() + m[3].to_f32()),
            q(b.to_f32().max(0.0) * 0.5),
            z,
            z,
            z,
        ];
        for k in 0..16 {
            assert!(
                same(h[k], want[k]),
                "struct {i} half {k}: got {:?}, want {:?}",
                h[k],
                want[k]
            );
        }
        assert_eq!(f32::from_bits(out[1][i]), v[0].to_f32() * 2.0);
    }
}

#[test]
fn dynamic_indices_pick_the_right_half() {
    // element i of a runtime array of f16 is at byte 2i: even indices are
    // low halves, odd ones high halves, chosen per lane
    let src = "
enable f16;
@group(3) @binding(0) var<storage, read_write> h: array<f16>;
@group(3) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(16)
fn main(@builtin(local_invocation_index) i: u32) {
    let j = (i * 5u) % 16u;
    o[i] = f32(h[j]);
    h[j] = h[j] + 1.0h;
    if (i == 3u) { h[40u] = 9.0h; } // out of range: dropped
}";
    let v: Vec<f16> = (0..16)
        .map(|k| f16::from_f32(k as f32 * 0.75 - 4.0))
        .collect();
    let out = run(src, &[pack(&v), vec![0; 16]], 1);
    let h = unpack(&out[0]);
    for i in 0..16 {
        let j = (i * 5) % 16;
        assert_eq!(f32::from_bits(out[1][i]), v[j].to_f32());
        assert_eq!(h[j], f16::from_f32(v[j].to_f32() + 1.0));
    }
}

#[test]
fn uniform_members_and_dynamic_indices_read_their_halves() {
    // WGSL offsets: a 0, b 2, v 8 (size 6), m 16 (columns 8 apart), w 40
    let src = "
enable f16;
struct U { a: f16, b: f16, v: vec3<f16>, m: mat3x3<f16>, w: vec4<f16> };
@group(0) @binding(0) var<uniform> u: U;
@group(3) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    let k = i * 6u;
    o[k] = f32(u.a + u.b);
    o[k + 1u] = f32(u.v[i % 3u]);
    o[k + 2u] = f32(u.m[i % 3u][(i + 1u) % 3u]);
    o[k + 3u] = f32(u.w[i]);
    o[k + 4u] = f32(u.m[2].z);
    o[k + 5u] = f32(dot(u.w, u.w));
}";
    let h = |x: f32| f16::from_f32(x);
    let (a, b) = (h(0.1), h(1000.5));
    let v = [h(1.25), h(-3.0e-5), h(7.0)];
    let m: Vec<f16> = (0..9).map(|k| h(k as f32 * 1.5 - 4.0)).collect();
    let w = [h(0.5), h(-2.25), h(300.0), h(1.0e-6)];
    let mut halves = [f16::from_bits(0x7e00); 24]; // padding: NaN
    halves[0] = a;
    halves[1] = b;
    halves[4..7].copy_from_slice(&v);
    for c in 0..3 {
        halves[8 + 4 * c..11 + 4 * c].copy_from_slice(&m[3 * c..3 * c + 3]);
    }
    halves[20..24].copy_from_slice(&w);
    let bytes: Vec<u8> = halves.iter().flat_map(|x| x.to_le_bytes()).collect();
    let run =
        |backend| run_with_constants(Language::Wgsl, src, backend, &[vec![0; 24]], &[&bytes], 1);
    let out = run(Backend::Interp);
    for b in [Backend::Llvm, Backend::Cranelift] {
        assert_eq!(out, run(b), "interpreter and {b:?} differ");
    }
    let q = |x: f32| f16::from_f32(x).to_f32();
    for i in 0..4 {
        let o: Vec<f32> = out[0][i * 6..i * 6 + 6]
            .iter()
            .map(|&x| f32::from_bits(x))
            .collect();
        let d = w.iter().map(|x| x.to_f32() * x.to_f32()).sum::<f32>();
        let want = [
            q(a.to_f32() + b.to_f32()),
            v[i % 3].to_f32(),
            m[(i % 3) * 3 + (i + 1) % 3].to_f32(),
            w[i].to_f32(),
            m[8].to_f32(),
            q(d),
        ];
        assert_eq!(o, want, "invocation {i}");
    }
}

/// f32 values whose nearest halves are interesting: not halves (0.30001,
/// 2049: a tie, to even 2048), the overflow edge (65519 stays 65504,
/// 65520 is infinity), the subnormal range (3e-8 = 0.503 * 2^-24 rounds up
/// to 2^-24, 1e-8 to 0), and exact halves.
const INTERFACE: [f32; 8] = [
    0.30001, 2049.0, 65519.0, 65520.0, 3.0e-8, 1.0e-8, -1.5, 1.0e-4,
];

#[test]
fn f16_inputs_arrive_rounded_to_the_nearest_half() {
    let nearest = |x: f32| f16::from_f32(x).to_f32().to_bits();
    let vs = setup(
        Language::Wgsl,
        "enable f16;
         struct O { @builtin(position) p: vec4<f32>, @location(0) a: f32, @location(1) b: f16 };
         @vertex fn vs(@location(0) p: vec4<f32>, @location(1) k: vec2<f16>) -> O {
             return O(p, f32(k.x), k.y);
         }",
        "vs",
        ShaderType::Vertex,
    );
    let input = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        match leaf {
            Leaf::Slot(Semantic::Generic(1), ..) => {
                INTERFACE[(lane + 3 * c) % INTERFACE.len()].to_bits()
            }
            _ => 0,
        }
    };
    let out = run_lanes(&vs, 1, &input, &[]);
    let slot = |sem| vs.shader.info().output_slot(sem).unwrap();
    let (a, b) = (slot(Semantic::Generic(0)), slot(Semantic::Generic(1)));
    for lane in 0..8 {
        assert_eq!(
            out.outputs[a][0][lane],
            nearest(INTERFACE[lane]),
            "k.x, lane {lane}"
        );
        assert_eq!(
            out.outputs[b][0][lane],
            nearest(INTERFACE[(lane + 3) % 8]),
            "k.y, lane {lane}"
        );
    }
    // interpolated and flat varyings of f16 type: the same
    let fs = setup(
        Language::Wgsl,
        "enable f16;
         @fragment fn fs(@location(0) x: f16, @location(1) @interpolate(flat) y: vec2<f16>)
             -> @location(0) vec4<f32> {
             return vec4<f32>(f32(x), f32(y.x), f32(y.y), 1.0);
         }",
        "fs",
        ShaderType::Fragment,
    );
    let input = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        match leaf {
            Leaf::Slot(Semantic::Generic(l), ..) => {
                INTERFACE[(lane + l as usize + c) % INTERFACE.len()].to_bits()
            }
            _ => 0,
        }
    };
    let out = run_lanes(&fs, 1, &input, &[]);
    for lane in 0..8 {
        for c in 0..3 {
            let (l, k) = if c == 0 { (0, 0) } else { (1, c - 1) };
            assert_eq!(
                out.outputs[0][c][lane],
                nearest(INTERFACE[(lane + l + k) % 8]),
                "component {c}, lane {lane}"
            );
        }
    }
}

#[test]
fn f16_overrides_and_constants_are_halves() {
    let src = "
enable f16;
override s: f16 = 2.0;
const c: f16 = 1.0 / 3.0;
@group(3) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() { o[0] = f32(s); o[1] = f32(c); o[2] = f32(s * c); }";
    let run = |v: f64| {
        let k = ferropipe_shader::compile_compute_with_overrides(
            Language::Wgsl,
            src,
            "main",
            &[("s", v)],
        )
        .unwrap();
        let mem: Vec<AtomicU32> = (0..3).map(|_| AtomicU32::new(0)).collect();
        let buffers = [Some(WordBuffer {
            words: &mem,
            bytes: 12,
        })];
        let diverged = AtomicBool::new(false);
        let call = ComputeCall {
            buffers: &buffers,
            globals: &[],
            images: &[],
            shared: &[],
            workgroup_id: [0; 3],
            num_workgroups: [1; 3],
            workgroup_size: [1; 3],
            active: [1; 3],
            diverged: &diverged,
        };
        k.run_workgroup(&ShaderResources::default(), &call).unwrap();
        mem.iter()
            .map(|w| f32::from_bits(w.load(Ordering::Relaxed)))
            .collect::<Vec<f32>>()
    };
    let h = |x: f64| f16::from_f64(x);
    let third = h(1.0 / 3.0);
    // the value set at creation is rounded to the nearest half (0.30001 ->
    // 0.2998...), and products with it round again
    let got = run(0.30001);
    assert_eq!(
        got,
        [
            h(0.30001).to_f32(),
            third.to_f32(),
            f16::from_f32(h(0.30001).to_f32() * third.to_f32()).to_f32()
        ]
    );
}

#[test]
fn glsl_float16_is_the_same_ir() {
    // naga's GLSL front end spells f16 `float16_t` / `f16vec*`; it is the
    // same naga IR, so the same lowering
    let src = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 1) in;
layout(set = 3, binding = 0) buffer B { float data[]; } b;
void main() {
    float16_t x = float16_t(b.data[0]);
    float16_t y = x + float16_t(1.0);
    b.data[1] = float(y);
}";
    let w = run_lang(Language::Glsl, src, &[vec![2049.0f32.to_bits(), 0]], 1);
    // 2049 is not a half: 2048 (a tie, to even), then 2048 + 1 = 2049 is
    // a tie again -> 2048 (an f32 program would store 2050)
    assert_eq!(f32::from_bits(w[0][1]), 2048.0);
}

#[test]
fn what_wgsl_has_no_f16_form_for_stays_an_error() {
    let compile = |body: &str| {
        let src = format!(
            "enable f16;
             @group(3) @binding(0) var<storage, read_write> o: array<u32>;
             @compute @workgroup_size(1) fn main() {{ {body} }}"
        );
        compile_compute_with_backend(Language::Wgsl, &src, "main", &[], Backend::Interp)
    };
    // bitcast between vec2<f16> and u32 has no naga IR form: naga keeps
    // the component width (a vec2<u16>), which is a 16-bit integer type,
    // refused by name, never run as the f32 bits of the halves
    match compile("let h = vec2<f16>(1.0h, 2.0h); let b = bitcast<u32>(h);") {
        Err(ShaderError::Unsupported { construct, .. }) => {
            assert_eq!(construct, "16-bit integers (i16, u16)")
        }
        other => panic!("{:?}", other.err()),
    }
    // using it as the u32 it should be is a front-end error
    assert!(compile("o[0] = bitcast<u32>(vec2<f16>(1.0h, 2.0h));").is_err());
    // and the other direction types as f32 in naga 30: as a vec2<f16> it
    // does not validate
    assert!(compile("let v: vec2<f16> = bitcast<vec2<f16>>(o[0]); o[1] = u32(v.x);").is_err());
}
