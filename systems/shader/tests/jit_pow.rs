//! Consecutive `pow`s run as one JIT helper call (`codegen::pow_run`):
//! a vec3 and a vec4 `pow`, a chain where one `pow` reads another's result
//! (the run must stop there), and a run longer than one call.  The
//! harness requires the JIT's bytes to equal the interpreter's; the values
//! are checked against `f64` too.

mod common;

use common::*;
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::Semantic;
use ferropipe_shader::Language;

const SRC: &str = "
@fragment fn fs(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
    let x = p.xyz * 0.01 + vec3<f32>(0.05);
    let g = pow(x, vec3<f32>(2.2));
    let h = pow(vec4<f32>(x, 0.5), vec4<f32>(0.45, 1.7, 3.0, 0.5));
    let chain = pow(pow(x.x + 1.0, 1.5), 0.7);
    let five = pow(x.y, 5.0) + pow(x.z, 0.3) + pow(x.x, 2.0) + pow(x.y, 0.9) + pow(x.z, 4.0);
    return vec4<f32>(g.x + g.y + g.z, h.x + h.y + h.z + h.w, chain, five);
}";

#[test]
fn pow_runs_match_the_interpreter_and_f64() {
    let s = setup(Language::Wgsl, SRC, "fs", ShaderType::Fragment);
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        let (x, y) = pixel_of(lane, 64, (0, 0));
        match leaf {
            Leaf::Slot(Semantic::Generic(_), _, _) => {
                [x as f32, y as f32, (x * y) as f32 * 0.1, 1.0][c].to_bits()
            }
            _ => 0,
        }
    };
    let out = run_lanes(&s, 64 * 16 / 8, &inputs, &[]);
    let mut checked = 0;
    for lane in 0..64 * 16 {
        let (px, py) = pixel_of(lane, 64, (0, 0));
        let f = |v: f64| v as f32 as f64;
        let x = [
            f(px as f64 * 0.01 + 0.05),
            f(py as f64 * 0.01 + 0.05),
            f(f((px * py) as f64 * 0.1) * 0.01 + 0.05),
        ];
        let want = [
            x.iter().map(|v| v.powf(2.2)).sum::<f64>(),
            x[0].powf(0.45) + x[1].powf(1.7) + x[2].powf(3.0) + 0.5f64.powf(0.5),
            (x[0] + 1.0).powf(1.5).powf(0.7),
            x[1].powf(5.0) + x[2].powf(0.3) + x[0].powf(2.0) + x[1].powf(0.9) + x[2].powf(4.0),
        ];
        for (c, w) in want.iter().enumerate() {
            let got = f32::from_bits(out.outputs[0][c][lane]) as f64;
            assert!(
                (got - w).abs() <= 2e-6 * w.abs().max(1.0),
                "lane {lane} c {c}: {got} vs {w}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 1024);
}

/// `pow` with a constant integer exponent in 2..=16 is lowered to
/// multiplications (`Builder::pow_int`): the values stay within 2e-6
/// of `f64` (relative), negative bases (and NaN) still give NaN, zero gives zero, and
/// both back ends give the same bits (the harness).
#[test]
fn integer_exponents_multiply_and_keep_pows_special_cases() {
    const SRC: &str = "
    @fragment fn fs(@location(0) p: vec4<f32>) -> @location(0) vec4<f32> {
        return vec4<f32>(pow(p.x, 2.0), pow(p.x, 5.0), pow(p.x, 16.0), pow(p.x, 7.0));
    }";
    let s = setup(Language::Wgsl, SRC, "fs", ShaderType::Fragment);
    let xs = |lane: usize| -> f32 {
        match lane {
            0 => -1.5,
            1 => -0.0,
            2 => 0.0,
            3 => f32::NAN,
            4 => f32::INFINITY,
            5 => 1.0,
            6 => 1e-30,
            7 => 3e5,
            l => (l as f32 - 7.5) * 0.37,
        }
    };
    let inputs = |leaf: Leaf, c: usize, lane: usize| -> u32 {
        match leaf {
            Leaf::Slot(Semantic::Generic(_), _, _) if c == 0 => xs(lane).to_bits(),
            _ => 0,
        }
    };
    let out = run_lanes(&s, 8, &inputs, &[]);
    for lane in 0..64 {
        let x = xs(lane);
        for (c, n) in [2, 5, 16, 7].into_iter().enumerate() {
            let got = f32::from_bits(out.outputs[0][c][lane]);
            if x.is_nan() || x < 0.0 {
                assert!(got.is_nan(), "pow({x}, {n}) = {got}, want NaN");
                continue;
            }
            let want = (x as f64).powi(n) as f32;
            if want.is_infinite() || want == 0.0 || !want.is_normal() {
                assert!(
                    got == want
                        || (want.abs() < f32::MIN_POSITIVE && got.abs() < f32::MIN_POSITIVE),
                    "pow({x}, {n}) = {got}, want {want}"
                );
                assert!(got.is_sign_positive(), "pow({x}, {n}) = {got}");
                continue;
            }
            // each squaring doubles the relative error (16 is 4
            // squarings: up to ~16 ulp); `lanemath::pow` is within 4e-7
            let rel = ((got as f64 - want as f64) / want as f64).abs();
            assert!(rel <= 2e-6, "pow({x}, {n}) = {got}, want {want} ({rel:e})");
        }
    }
}
