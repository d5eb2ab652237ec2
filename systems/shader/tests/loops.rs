//! Loops with a constant trip count are unrolled at lowering time
//! (`Lowerer::peel_loop`): the result must equal the scalar reference
//! interpreter's on every lane, on both back ends, and a loop whose exit
//! test is not constant must still run as a loop.

mod common;

use common::*;
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::Semantic;
use ferropipe_shader::Language;

/// Runs `entry` over a 64x32 grid (location 0 = the pixel position) and
/// compares every lane with the reference; returns the program's jumps.
fn check(src: &str, entry: &str) -> usize {
    let s = setup(Language::Wgsl, src, entry, ShaderType::Fragment);
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let (x, y) = pixel_of(lane, 64, (0, 0));
        let v = [x as f32 + 0.5, y as f32 + 0.5, 0.5, 1.0][c];
        match leaf {
            Leaf::FragCoord | Leaf::Slot(Semantic::Generic(_), _, _) => v.to_bits(),
            _ => 0,
        }
    };
    let cb = [1.5f32, 0.25, 3.0, 7.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect::<Vec<u8>>();
    assert!(differential(&s, 64 * 32 / 8, &inputs, &[cb], EXACT) > 0);
    s.shader.jump_count()
}

const SRC: &str = "
struct U { a: f32, b: f32, n: f32, m: f32 };
@group(0) @binding(0) var<uniform> u: U;
const TAPS = array<vec2<f32>, 5>(vec2<f32>(0.5, -1.0), vec2<f32>(2.0, 0.25),
    vec2<f32>(-3.0, 1.5), vec2<f32>(0.125, 4.0), vec2<f32>(-0.75, -0.5));

// the perf_post.wgsl shape: a constant bound, a constant table indexed by
// the counter, an accumulator
@fragment fn taps(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var acc = vec2<f32>(0.0);
    for (var i = 0; i < 5; i++) {
        acc += (p.xy * TAPS[i] * u.a + vec2<f32>(f32(i))) * f32(i + 1);
    }
    return vec4<f32>(acc, 0.0, 1.0);
}

// `loop` with the break first, a counter stepping by 3 downwards, a nested
// varying `if` and a nested constant loop with a varying `break`
@fragment fn nested(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    var k = 20u;
    loop {
        if k < 3u { break; }
        if p.x > f32(k) { s += p.y; } else { s -= 1.0; }
        for (var j = 0; j < 4; j++) {
            if p.y < f32(j) * 8.0 { break; }
            s += f32(j) * u.b;
        }
        continuing { k -= 3u; }
    }
    return vec4<f32>(s, f32(k), 0.0, 1.0);
}

// a varying trip count: stays a loop
@fragment fn varying_bound(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    for (var i = 0; i < i32(p.x) % 7; i++) { s += f32(i) * u.b; }
    return vec4<f32>(s, 0.0, 0.0, 1.0);
}

// constant for two iterations, then varying (the counter is bumped by a
// varying amount): peeled twice, then a loop from the state left
@fragment fn partly(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    var i = 0;
    while i < 9 {
        s += f32(i) + p.x;
        if i >= 1 { i += i32(p.y) % 3 + 1; } else { i += 1; }
    }
    return vec4<f32>(s, f32(i), 0.0, 1.0);
}

// a uniform bound from a constant buffer is not a constant: a loop
@fragment fn uniform_bound(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    for (var i = 0.0; i < u.n; i += 1.0) { s += p.x * i; }
    return vec4<f32>(s, 0.0, 0.0, 1.0);
}

// a continue leaves the body: not peeled
@fragment fn with_continue(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    for (var i = 0; i < 6; i++) {
        if (i & 1) == 1 { continue; }
        s += p.x * f32(i);
    }
    return vec4<f32>(s, 0.0, 0.0, 1.0);
}

// more iterations than the peeling budget: the rest runs as a loop
@fragment fn long_loop(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    var s = 0.0;
    for (var i = 0; i < 100; i++) { s += p.x * f32(i) + u.b; }
    return vec4<f32>(s, 0.0, 0.0, 1.0);
}
";

#[test]
fn constant_loops_unroll_to_straight_line_code() {
    assert_eq!(check(SRC, "taps"), 0);
    // the outer loop (7 iterations) and the inner one's header are peeled;
    // only the varying `if`s and the inner `break` branch remain
    let nested = check(SRC, "nested");
    assert!(nested > 0);
}

#[test]
fn varying_exits_stay_loops() {
    assert!(check(SRC, "varying_bound") > 0);
    assert!(check(SRC, "partly") > 0);
    assert!(check(SRC, "uniform_bound") > 0);
    assert!(check(SRC, "with_continue") > 0);
    assert!(check(SRC, "long_loop") > 0);
}
