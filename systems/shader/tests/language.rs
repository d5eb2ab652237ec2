//! The language surface: WGSL `override`s at creation, the one name and
//! the source location of each refused construct, validation limited to
//! the requested entry point, and the loop limit reported as an error.

use std::sync::atomic::{AtomicBool, AtomicU32};

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{
    FragmentIo, FragmentShader, Lanes, ShaderResources, VertexIo, VertexShader,
};
use ferropipe_shader::{
    CompiledShader, Language, ShaderError, compile, compile_compute,
    compile_compute_with_overrides, compile_with_overrides,
};
use ferropipe_shader::{ComputeCall, WordBuffer};

fn fs(src: &str, overrides: &[(&str, f64)]) -> Result<CompiledShader, ShaderError> {
    compile_with_overrides(
        Language::Wgsl,
        src,
        "fs",
        ShaderType::Fragment,
        &[],
        overrides,
    )
}

/// Colour output 0 of one 4x2 block of a fragment shader without inputs.
fn shade(s: &CompiledShader) -> [f32; 4] {
    shade_with(s, &ShaderResources::default())
}

/// [`shade`] with bound resources.
fn shade_with(s: &CompiledShader, resources: &ShaderResources<'_>) -> [f32; 4] {
    let mut outputs = vec![Lanes::ZERO; s.info().outputs.len() * 4];
    let mut mask = vec![Lanes::from_bits(wide::u32x8::splat(!0))];
    let frag_coord = vec![Lanes::ZERO; 4];
    let mut io = FragmentIo {
        groups: 1,
        inputs: &[],
        frag_coord: &frag_coord,
        mask: &mut mask,
        outputs: &mut outputs,
    };
    FragmentShader::run(s, resources, &mut io);
    std::array::from_fn(|c| outputs[c].to_array()[0])
}

const OVERRIDES: &str = "
override scale: f32 = 2.0;
@id(7) override bias: f32;
override flip: bool = false;
override count: u32 = 3u;
@fragment fn fs() -> @location(0) vec4<f32> {
    var n = 0.0;
    for (var i = 0u; i < count; i++) { n += 1.0; }
    return vec4<f32>(scale, bias, select(0.0, 1.0, flip), n);
}";

#[test]
fn overrides_take_given_values_and_defaults() {
    let s = fs(OVERRIDES, &[("7", 0.5)]).unwrap();
    assert_eq!(shade(&s), [2.0, 0.5, 0.0, 3.0]);
    let s = fs(
        OVERRIDES,
        &[("scale", -1.5), ("7", 0.25), ("flip", 1.0), ("count", 5.0)],
    )
    .unwrap();
    assert_eq!(shade(&s), [-1.5, 0.25, 1.0, 5.0]);
}

#[test]
fn override_errors_are_typed_and_named() {
    assert_eq!(
        fs(OVERRIDES, &[]).unwrap_err(),
        ShaderError::MissingOverride {
            name: "bias".into()
        }
    );
    assert!(matches!(
        fs(OVERRIDES, &[("7", 0.0), ("nope", 1.0)]),
        Err(ShaderError::BadOverride { name, .. }) if name == "nope"
    ));
    // u32 from a negative value does not fit
    assert!(matches!(
        fs(OVERRIDES, &[("7", 0.0), ("count", -1.0)]),
        Err(ShaderError::BadOverride { .. })
    ));
    // a shader without overrides refuses values too: never silently ignored
    let plain = "@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    assert!(matches!(
        fs(plain, &[("x", 1.0)]),
        Err(ShaderError::BadOverride { name, .. }) if name == "x"
    ));
}

#[test]
fn overrides_size_workgroups() {
    let src = "
override wg: u32 = 4u;
@group(3) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(wg) fn main(@builtin(local_invocation_index) i: u32) { out[i] = i + 1u; }";
    let k = compile_compute(Language::Wgsl, src, "main").unwrap();
    assert_eq!(k.info().workgroup_size, [4, 1, 1]);
    let k = compile_compute_with_overrides(Language::Wgsl, src, "main", &[("wg", 16.0)]).unwrap();
    assert_eq!(k.info().workgroup_size, [16, 1, 1]);
}

fn unsupported(src: &str, entry: &str, stage: ShaderType) -> (String, Option<(u32, u32)>) {
    match compile(Language::Wgsl, src, entry, stage, &[]) {
        Err(e @ ShaderError::Unsupported { .. }) => {
            let ShaderError::Unsupported { construct, .. } = &e else {
                unreachable!()
            };
            (construct.clone(), e.location())
        }
        Err(e) => panic!("not Unsupported: {e}"),
        Ok(_) => panic!("compiled"),
    }
}

#[test]
fn each_feature_has_one_name_and_a_location() {
    // 64-bit integers: a type, a literal and an atomic all say the same
    let int64 = "64-bit integers (i64, u64)";
    let (c, at) = unsupported(
        "@fragment fn fs() -> @location(0) vec4<f32> {\n  var x: i64 = 5li;\n  return vec4<f32>(f32(x));\n}",
        "fs",
        ShaderType::Fragment,
    );
    assert_eq!(c, int64);
    assert_eq!(at.map(|l| l.0), Some(2));
    let (c, at) = unsupported(
        "@group(3) @binding(0) var<storage, read_write> a: atomic<u64>;\n@compute @workgroup_size(1) fn main() {\n  atomicMax(&a, 1lu);\n}",
        "main",
        ShaderType::Compute,
    );
    assert_eq!(c, int64);
    assert_eq!(at.map(|l| l.0), Some(3));
    // f16 runs (tests/f16.rs); a bitcast of vec2<f16> keeps naga's 16-bit
    // width, so it is a 16-bit integer, named as such where it is used
    let (c, at) = unsupported(
        "enable f16;\n@fragment fn fs() -> @location(0) vec4<f32> {\n  let h = vec2<f16>(1.5h, 2.0h);\n  let b = bitcast<u32>(h);\n  return vec4<f32>(1.0);\n}",
        "fs",
        ShaderType::Fragment,
    );
    assert_eq!(c, "16-bit integers (i16, u16)");
    assert_eq!(at.map(|l| l.0), Some(4));
    // builtins in WGSL spelling, not Rust Debug
    let (c, _) = unsupported(
        "@compute @workgroup_size(64) fn main(@builtin(subgroup_invocation_id) i: u32) {}",
        "main",
        ShaderType::Compute,
    );
    assert!(c.contains("@builtin(subgroup_invocation_id)"), "{c}");
}

#[test]
fn messages_have_no_handles_and_no_fake_location() {
    for (src, stage, entry) in [
        (
            "@fragment fn fs() -> @location(0) vec4<f32> { let x: i32 = 1; return vec4<f32>(x); }",
            ShaderType::Fragment,
            "fs",
        ),
        (
            "@compute @workgroup_size(1) fn main(@builtin(subgroup_size) s: u32) {}",
            ShaderType::Compute,
            "main",
        ),
    ] {
        let e = compile(Language::Wgsl, src, entry, stage, &[]).unwrap_err();
        let m = e.to_string();
        assert!(!m.contains("0:0"), "{m}");
        assert!(!m.contains("naga::"), "{m}");
        assert!(
            !m.contains(" [")
                || !m
                    .split(" [")
                    .skip(1)
                    .any(|t| t.starts_with(char::is_numeric)),
            "{m}"
        );
    }
}

#[test]
fn every_binding_mismatch_is_reported_at_once() {
    let src = "
@group(7) @binding(0) var<uniform> a: vec4<f32>;
@group(8) @binding(1) var<uniform> b: vec4<f32>;
@group(9) @binding(0) var t: texture_2d<f32>;
@fragment fn fs() -> @location(0) vec4<f32> { return a + b + textureLoad(t, vec2<i32>(0), 0); }";
    let (c, at) = unsupported(src, "fs", ShaderType::Fragment);
    for g in ["@group(7)", "@group(8)", "@group(9)"] {
        assert!(c.contains(g), "{c}");
    }
    assert!(c.starts_with("3 resource bindings"), "{c}");
    assert_eq!(at.map(|l| l.0), Some(2));
}

#[test]
fn only_the_requested_entry_point_is_checked() {
    // `bad` has an output naga's validator refuses (for the whole
    // module), `worse` uses a construct ferropipe refuses; `good` uses
    // neither and compiles
    let src = "
@fragment fn bad(@location(0) u: f32) -> @location(0) bool {
    return u > 0.5;
}
@compute @workgroup_size(64) fn worse(@builtin(subgroup_size) n: u32) {}
@fragment fn good() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    let good = compile(Language::Wgsl, src, "good", ShaderType::Fragment, &[]).unwrap();
    assert_eq!(shade(&good), [1.0; 4]);
    let e = compile(Language::Wgsl, src, "bad", ShaderType::Fragment, &[]).unwrap_err();
    assert!(matches!(e, ShaderError::Validation { .. }), "{e}");
    assert!(e.to_string().contains("bad (fragment)"), "{e}");
}

const RUNAWAY: &str = "
@group(3) @binding(0) var<storage, read_write> buf: array<u32>;
@compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) {
    var n = 0u;
    loop { n += buf[1]; if n == 7u { break; } }
    buf[0] = 1u;
}";

#[test]
fn a_runaway_kernel_is_an_error_not_a_completion() {
    let k = compile_compute(Language::Wgsl, RUNAWAY, "main").unwrap();
    let words: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
    let buffers = [Some(WordBuffer {
        words: &words,
        bytes: 16,
    })];
    let diverged = AtomicBool::new(false);
    let call = ComputeCall {
        buffers: &buffers,
        globals: &[],
        images: &[],
        shared: &[],
        workgroup_id: [0; 3],
        num_workgroups: [1; 3],
        workgroup_size: [8, 1, 1],
        active: [8, 1, 1],
        diverged: &diverged,
    };
    assert_eq!(
        k.run_workgroup(&ShaderResources::default(), &call),
        Err(ShaderError::LoopLimit { stage: "compute" })
    );
    // with buf[1] = 7 the loop ends: a normal completion
    words[1].store(7, std::sync::atomic::Ordering::Relaxed);
    k.run_workgroup(&ShaderResources::default(), &call).unwrap();
    assert_eq!(words[0].load(std::sync::atomic::Ordering::Relaxed), 1);
}

#[test]
fn a_runaway_draw_shader_flags_its_run() {
    let src = "
@group(0) @binding(0) var<uniform> step: vec4<f32>;
@vertex fn vs(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {
    var x = 0.0;
    loop { x += step.x; if x > 1.0 { break; } }
    return p * x;
}
@fragment fn fs() -> @location(0) vec4<f32> {
    var x = 0.0;
    loop { x += step.x; if x > 1.0 { break; } }
    return vec4<f32>(x);
}";
    let v = compile(Language::Wgsl, src, "vs", ShaderType::Vertex, &[]).unwrap();
    let inputs = vec![Lanes::ZERO; 4];
    let mut outputs = vec![Lanes::ZERO; 4];
    let ids = [Lanes::ZERO];
    let mut io = VertexIo {
        groups: 1,
        inputs: &inputs,
        vertex_id: &ids,
        instance_id: &ids,
        outputs: &mut outputs,
        count: 8,
    };
    // no constant buffer: step is 0, so the loop never ends
    VertexShader::run(&v, &ShaderResources::default(), &mut io);
    assert!(VertexShader::take_incomplete(&v));
    assert!(!VertexShader::take_incomplete(&v), "taking clears the flag");
    let f = compile(Language::Wgsl, src, "fs", ShaderType::Fragment, &[]).unwrap();
    shade(&f);
    assert!(FragmentShader::take_incomplete(&f));
}

/// Once a draw shader has stopped a runaway loop, its further calls
/// return at once until the flush takes the flag (the flush fails
/// anyway): a full-screen draw pays the loop budget once, not once per
/// fragment batch (the fuzz harness's timeout).  Observed through a
/// counter each call adds to before its loop.
#[test]
fn a_stopped_draw_shader_runs_nothing_until_the_flush_takes_the_flag() {
    let src = "
@group(3) @binding(0) var<storage, read_write> count: atomic<u32>;
@fragment fn fs() -> @location(0) vec4<f32> {
    atomicAdd(&count, 1u);
    var x = 0u;
    loop { x += atomicLoad(&count) & 0x80000000u; if x > 1u { break; } }
    return vec4<f32>(1.0);
}";
    let f = compile(Language::Wgsl, src, "fs", ShaderType::Fragment, &[]).unwrap();
    let words: Vec<AtomicU32> = (0..1).map(|_| AtomicU32::new(0)).collect();
    let buffers = [Some(WordBuffer {
        words: &words,
        bytes: 4,
    })];
    let res = ShaderResources {
        buffers: &buffers,
        ..Default::default()
    };
    let run = || {
        shade_with(&f, &res);
        words[0].load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(run(), 8, "one add per lane, then the loop stops");
    assert_eq!(run(), 8, "stopped: the second call ran nothing");
    assert!(FragmentShader::take_incomplete(&f));
    assert_eq!(run(), 16, "taken: the next call runs (and stops) again");
    assert!(FragmentShader::take_incomplete(&f));
}
