//! Bad shader source gives typed errors, never a panic.

use ferropipe_components::enums::ShaderType;
use ferropipe_shader::{Language, ShaderError, compile};
use proptest::prelude::*;

const GOOD: &str = "
struct VOut { @builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32> };
@vertex fn vs(@location(0) p: vec4<f32>) -> VOut { var o: VOut; o.pos = p; o.c = p * 2.0; return o; }
@fragment fn fs(in: VOut) -> @location(0) vec4<f32> {
    var acc = vec4<f32>(0.0);
    for (var i = 0; i < 4; i++) { if (in.c.x > f32(i)) { acc += in.c; } else { break; } }
    return acc;
}";

fn wgsl(src: &str, entry: &str, stage: ShaderType) -> Result<(), ShaderError> {
    compile(Language::Wgsl, src, entry, stage, &[]).map(|_| ())
}

#[test]
fn good_shader_compiles() {
    wgsl(GOOD, "vs", ShaderType::Vertex).unwrap();
    wgsl(GOOD, "fs", ShaderType::Fragment).unwrap();
}

#[test]
fn parse_errors_carry_a_location() {
    let err = wgsl(
        "@fragment fn fs() -> @location(0) vec4<f32> {\n  return vec4<f32>(1.0) +;\n}",
        "fs",
        ShaderType::Fragment,
    )
    .unwrap_err();
    match err {
        ShaderError::Parse {
            language: Language::Wgsl,
            line,
            column,
            message,
        } => {
            assert_eq!(line, 2, "{message}");
            assert!(column > 1, "{message}");
        }
        other => panic!("{other:?}"),
    }
    let err = compile(
        Language::Glsl,
        "#version 450\nvoid main() { float x = ; }\n",
        "main",
        ShaderType::Fragment,
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            ShaderError::Parse {
                language: Language::Glsl,
                line: 2,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn validation_errors_are_typed() {
    // type mismatch passes the parser's grammar but not the type checker or validator
    let err = wgsl(
        "@fragment fn fs() -> @location(0) vec4<f32> { let x: i32 = 1; return vec4<f32>(x); }",
        "fs",
        ShaderType::Fragment,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            ShaderError::Parse { .. } | ShaderError::Validation { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn missing_entry_points_are_typed() {
    assert_eq!(
        wgsl(GOOD, "nope", ShaderType::Fragment).unwrap_err(),
        ShaderError::MissingEntryPoint {
            stage: "fragment",
            name: "nope".into()
        }
    );
    // right name, wrong stage
    assert!(matches!(
        wgsl(GOOD, "vs", ShaderType::Fragment),
        Err(ShaderError::MissingEntryPoint { .. })
    ));
}

#[test]
fn unsupported_constructs_are_reported_at_create_time() {
    let cases = [
        (
            "@group(0) @binding(0) var<storage, read_write> buf: array<u32>;
          @fragment fn fs() -> @location(0) vec4<f32> { buf[0] = 1u; return vec4<f32>(1.0); }",
            "shader buffer in @group(0)",
        ),
        (
            "@group(6) @binding(0) var<storage, read_write> buf: array<u32>;
          @fragment fn fs() -> @location(0) vec4<f32> { buf[0] = 1u; return vec4<f32>(1.0); }",
            "global bindings",
        ),
        (
            "@group(3) @binding(0) var<uniform> u: vec4<f32>;
          @fragment fn fs() -> @location(0) vec4<f32> { return u; }",
            "group(3)",
        ),
        (
            "var<workgroup> w: u32;
          @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(f32(w)); }",
            "workgroup",
        ),
    ];
    for (src, what) in cases {
        match wgsl(src, "fs", ShaderType::Fragment) {
            Err(ShaderError::Unsupported { construct, .. }) => {
                assert!(construct.contains(what), "{construct}")
            }
            Err(ShaderError::Validation { .. }) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    // compute shaders compile (tests/compute.rs); GOOD has no compute
    // entry point
    assert!(matches!(
        compile(Language::Wgsl, GOOD, "fs", ShaderType::Compute, &[]),
        Err(ShaderError::MissingEntryPoint { .. })
    ));
}

#[test]
fn garbage_is_an_error() {
    for src in [
        "",
        "\0\0\0",
        "fn",
        "@fragment",
        "}}}}",
        "struct { }",
        &"(".repeat(10000),
    ] {
        assert!(wgsl(src, "fs", ShaderType::Fragment).is_err());
        assert!(compile(Language::Glsl, src, "main", ShaderType::Vertex, &[]).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random edits of a valid shader: always Ok or a typed error.
    #[test]
    fn mutated_sources_never_panic(edits in prop::collection::vec((0usize..10_000, 0u8..4, any::<char>()), 1..6)) {
        let mut s: Vec<char> = GOOD.chars().collect();
        for (pos, kind, ch) in edits {
            if s.is_empty() { break; }
            let p = pos % s.len();
            match kind {
                0 => { s.remove(p); }
                1 => s.insert(p, ch),
                2 => s[p] = ch,
                _ => { let q = (p + 7).min(s.len()); s.drain(p..q); }
            }
        }
        let src: String = s.into_iter().collect();
        let _ = wgsl(&src, "fs", ShaderType::Fragment);
        let _ = wgsl(&src, "vs", ShaderType::Vertex);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let src = String::from_utf8_lossy(&bytes);
        let _ = wgsl(&src, "fs", ShaderType::Fragment);
        let _ = compile(Language::Glsl, &src, "main", ShaderType::Fragment, &[]);
    }
}
