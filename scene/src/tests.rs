//! Malformed, unsupported and well-formed scenes: exit codes and messages,
//! and no panic on any input.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn scene(calls: Value) -> String {
    json!({"format": "gallium-scene/1", "calls": calls}).to_string()
}

fn parse(text: &str) -> Result<Scene, SceneError> {
    Scene::parse(text, Path::new("."))
}

fn malformed(text: &str, needles: &[&str]) {
    match parse(text) {
        Err(SceneError::Malformed(m)) => {
            for n in needles {
                assert!(m.contains(n), "{m:?} should mention {n:?}");
            }
        }
        other => panic!("expected malformed, got {other:?}"),
    }
}

fn rt_calls() -> Vec<Value> {
    vec![
        json!({"op": "resource_create", "id": "rt", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 4, "height0": 2,
               "bind": ["PIPE_BIND_RENDER_TARGET"]}),
        json!({"op": "create_surface", "id": "s", "resource": "rt"}),
        json!({"op": "set_framebuffer_state", "width": 4, "height": 2, "cbufs": ["s"]}),
    ]
}

fn with(mut calls: Vec<Value>, more: Value) -> String {
    calls.push(more);
    scene(Value::Array(calls))
}

#[test]
fn malformed_scenes_exit_2_naming_call_and_field() {
    malformed("{\"format\": \"gallium-scene/1\", \"calls\": [", &["JSON"]);
    malformed("[]", &["expected an object"]);
    malformed(
        &json!({"format": "gallium-scene/2", "calls": []}).to_string(),
        &["format"],
    );
    malformed(
        &json!({"format": "gallium-scene/1"}).to_string(),
        &["calls"],
    );
    // An op nobody knows is a call ferropipe does not support (exit 3,
    // FORMAT.md), with a hint when it is close to one it knows.
    match parse(&scene(json!([{"op": "frobnicate"}]))) {
        Err(SceneError::Unsupported(m)) => {
            assert!(
                m.contains("call 0") && m.contains("frobnicate") && !m.contains("did you mean"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    match parse(&scene(
        json!([{"op": "resource_craete", "id": "b", "width0": 4}]),
    )) {
        Err(SceneError::Unsupported(m)) => {
            assert!(m.contains("did you mean `resource_create`?"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    match parse(&scene(json!([{"op": "draw_vbo", "cuont": 3}]))) {
        Err(SceneError::Unsupported(m)) => {
            assert!(
                m.contains("'cuont'") && m.contains("did you mean `count`?"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    malformed(&scene(json!([{"id": "x"}])), &["call 0", "op"]);
    malformed(&scene(json!([5])), &["call 0"]);
    malformed(
        &scene(json!([{"op": "resource_create", "id": "b", "width0": "big"}])),
        &["call 0", "width0", "integer"],
    );
    malformed(
        &scene(json!([{"op": "resource_create", "id": "b", "width0": -5}])),
        &["call 0", "width0", "-5"],
    );
    malformed(
        &scene(json!([{"op": "resource_create", "id": "b"}])),
        &["call 0", "width0", "missing"],
    );
    malformed(
        &with(rt_calls(), json!({"op": "create_surface", "id": "t"})),
        &["call 3", "resource"],
    );
    malformed(
        &with(
            rt_calls(),
            json!({"op": "set_framebuffer_state", "width": 4, "height": 2, "cbufs": ["nope"]}),
        ),
        &["call 3", "cbufs", "nope"],
    );
    malformed(
        &with(
            rt_calls(),
            json!({"op": "create_surface", "id": "s", "resource": "rt"}),
        ),
        &["call 3", "already created by call 1"],
    );
    malformed(
        &with(
            rt_calls(),
            json!({"op": "create_surface", "id": "u", "resource": "s"}),
        ),
        &["call 3", "is a surface, not a resource"],
    );
    malformed(
        &with(
            rt_calls(),
            json!({"op": "create_blend_state", "id": "b",
            "state": {"rt": [{"rgb_func": "PIPE_BLEND_SIDEWAYS"}]}}),
        ),
        &["call 3", "rgb_func", "PIPE_BLEND_SIDEWAYS"],
    );
    malformed(
        &with(
            rt_calls(),
            json!({"op": "create_blend_state", "id": "b",
            "state": {"rt": [{"blend_enable": true}]}}),
        ),
        &["call 3", "rgb_src_factor"],
    );
    malformed(
        &scene(
            json!([{"op": "resource_create", "id": "b", "width0": 4, "data": [1, 300], "type": "u8"}]),
        ),
        &["call 0", "300", "u8"],
    );
    malformed(
        &scene(
            json!([{"op": "resource_create", "id": "b", "width0": 4, "data": [1, 2], "type": "u32"}]),
        ),
        &["call 0", "data", "8 bytes"],
    );
    malformed(
        &scene(json!([{"op": "resource_create", "id": "b", "width0": 4,
                       "data": {"file": "definitely-missing.bin"}}])),
        &["call 0", "file", "definitely-missing.bin"],
    );
    malformed(
        &scene(
            json!([{"op": "resource_create", "id": "t", "target": "PIPE_TEXTURE_2D",
                       "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 2, "height0": 2,
                       "data": [1, 2, 3]}]),
        ),
        &["call 0", "data", "16"],
    );
    malformed(
        &scene(
            json!([{"op": "resource_create", "id": "t", "target": "PIPE_TEXTURE_2D",
                       "format": "PIPE_FORMAT_R9G9B9_BOGUS", "width0": 2}]),
        ),
        &["call 0", "format", "PIPE_FORMAT_R9G9B9_BOGUS"],
    );
    // Use after destroy names the earlier destruction.
    let mut calls = rt_calls();
    calls.push(json!({"op": "surface_destroy", "id": "s"}));
    malformed(
        &with(
            calls,
            json!({"op": "clear_render_target", "surface": "s", "color": [0, 0, 0, 0], "width": 1, "height": 1}),
        ),
        &["call 4", "destroyed"],
    );
    malformed(
        &scene(json!([{"op": "timing_begin"}, {"op": "timing_begin"}])),
        &["call 1", "second timing_begin"],
    );
    // Outputs are validated too.
    malformed(
        &json!({"format": "gallium-scene/1", "calls": rt_calls(),
                "outputs": [{"name": "../evil", "surface": "s"}]})
        .to_string(),
        &["output 0", "name"],
    );
    malformed(
        &json!({"format": "gallium-scene/1", "calls": rt_calls(),
                "outputs": [{"name": "c", "surface": "missing"}]})
        .to_string(),
        &["output 0", "missing"],
    );
}

#[test]
fn unknown_fields_and_unimplemented_features_exit_3() {
    let e = parse(&with(rt_calls(), json!({"op": "flush", "turbo": true}))).unwrap_err();
    assert!(
        matches!(&e, SceneError::Unsupported(m) if m.contains("call 3") && m.contains("turbo"))
    );
    assert_eq!(e.exit_code(), 3);
    // Parses, then the façade refuses a draw with no shaders or rasterizer
    // bound: invalid input, exit 2 naming the call.
    let s = parse(&with(
        rt_calls(),
        json!({"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "count": 3}),
    ))
    .unwrap();
    let e = replay(
        &s,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap_err();
    {
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("call 3 (draw_vbo)"), "{e}");
    }
    // An 8x MSAA resource is valid Gallium ferropipe does not implement.
    let s = parse(&scene(json!([{"op": "resource_create", "id": "m",
        "target": "PIPE_TEXTURE_2D", "format": "PIPE_FORMAT_R8G8B8A8_UNORM",
        "width0": 4, "height0": 4, "nr_samples": 8, "bind": ["PIPE_BIND_RENDER_TARGET"]}])))
    .unwrap();
    let e = replay(
        &s,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.exit_code(), 3, "{e}");
    // Invalid arguments the façade finds are exit 2 naming the call.
    let s = parse(&with(
        rt_calls(),
        json!({"op": "create_surface", "id": "t", "resource": "rt", "level": 3}),
    ))
    .unwrap();
    let e = replay(
        &s,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, SceneError::Malformed(m) if m.contains("call 3 (create_surface)") && m.contains("level")),
        "{e}"
    );
}

#[test]
fn clears_and_outputs() {
    let mut calls = rt_calls();
    calls.extend([
        json!({"op": "resource_create", "id": "zs", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_Z24_UNORM_S8_UINT", "width0": 4, "height0": 2,
               "bind": ["PIPE_BIND_DEPTH_STENCIL"]}),
        json!({"op": "create_surface", "id": "zss", "resource": "zs"}),
        json!({"op": "set_framebuffer_state", "width": 4, "height": 2, "cbufs": ["s"], "zsbuf": "zss"}),
        json!({"op": "timing_begin"}),
        json!({"op": "clear", "buffers": ["PIPE_CLEAR_COLOR", "PIPE_CLEAR_DEPTH"],
               "color": [1.0, 0.5, 0.0, 1.0], "depth": 0.5}),
        json!({"op": "clear_render_target", "surface": "s", "color": [0, 0, 1, 1],
               "dstx": 1, "dsty": 1, "width": 2, "height": 5}),
        json!({"op": "clear_depth_stencil", "surface": "zss", "clear_flags": "PIPE_CLEAR_STENCIL",
               "stencil": 7, "width": 1, "height": 1}),
    ]);
    let text = json!({"format": "gallium-scene/1", "calls": calls,
        "outputs": [{"name": "color", "surface": "s"}, {"name": "zs", "resource": "zs"}]})
    .to_string();
    let s = parse(&text).unwrap();
    assert_eq!(s.timing_begin, Some(6));
    let dir = std::env::temp_dir().join(format!("ferropipe-scene-{}", std::process::id()));
    let rep = replay_to_dir(
        &s,
        &dir,
        &ReplayOptions {
            threads: 1,
            time_runs: 3,
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(rep.exit_code(), 0);
    let OutputPixels::Color(rgba) = &rep.outputs[0].pixels else {
        panic!()
    };
    assert_eq!(&rgba[..4], &[255, 128, 0, 255]);
    assert_eq!(&rgba[(4 + 1) * 4..][..4], &[0, 0, 255, 255]);
    let OutputPixels::DepthStencil { depth, stencil } = &rep.outputs[1].pixels else {
        panic!()
    };
    assert!((depth.as_ref().unwrap()[3] - 0.5).abs() < 1e-7);
    assert_eq!(stencil.as_ref().unwrap()[..2], [7, 0]);
    for f in [
        "color.png",
        "zs.depth.f32",
        "zs.stencil.u8",
        "queries.jsonl",
        "manifest.json",
        "timing.json",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let (w, h, png) = output::read_png(&dir.join("color.png")).unwrap();
    assert_eq!((w, h), (4, 2));
    assert_eq!(&png, rgba);
    let timing: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("timing.json")).unwrap()).unwrap();
    assert_eq!(timing["runs"].as_array().unwrap().len(), 3);
    assert_eq!(timing["timed_calls"], 3);
    if cfg!(target_os = "linux") {
        assert!(timing["peak_rss_kib"].as_u64().unwrap() > 1000);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every value any field could take, for the mutation test.
fn any_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        Just(json!(f64::MAX)),
        "[a-zA-Z_]{0,12}".prop_map(Value::from),
        Just(json!("PIPE_FORMAT_Z24_UNORM_S8_UINT")),
        Just(json!(["PIPE_BIND_RENDER_TARGET", 7])),
        Just(json!([1, 2, 3])),
        Just(json!({"file": "/dev/null", "size": 4})),
        Just(json!({})),
        Just(json!(-1)),
        Just(json!(4294967296u64)),
    ]
}

fn base_scene() -> Value {
    let mut calls = rt_calls();
    calls.extend([
        json!({"op": "resource_create", "id": "zs", "target": "PIPE_TEXTURE_2D",
               "format": "PIPE_FORMAT_Z24_UNORM_S8_UINT", "width0": 4, "height0": 2,
               "bind": ["PIPE_BIND_DEPTH_STENCIL"]}),
        json!({"op": "create_surface", "id": "zss", "resource": "zs"}),
        json!({"op": "resource_create", "id": "vb", "width0": 64, "data": [1, 2, 3, 4],
               "bind": ["PIPE_BIND_VERTEX_BUFFER"]}),
        json!({"op": "set_vertex_buffers", "buffers": [{"buffer": "vb", "stride": 16}]}),
        json!({"op": "texture_subdata", "resource": "rt", "box": {"width": 2, "height": 1},
               "data": [1, 2, 3, 4, 5, 6, 7, 8], "type": "u8"}),
        json!({"op": "clear", "buffers": ["PIPE_CLEAR_COLOR"], "color": [1, 0, 0, 1]}),
        json!({"op": "clear_depth_stencil", "surface": "zss", "clear_flags": 3, "depth": 1,
               "width": 4, "height": 2}),
        json!({"op": "resource_copy_region", "dst": "rt", "dstx": 2, "src": "rt",
               "src_box": {"width": 2, "height": 2}}),
        json!({"op": "set_viewport_states", "viewports": [{"scale": [2, 1, 0.5], "translate": [2, 1, 0.5]}]}),
        json!({"op": "create_sampler_state", "id": "smp", "state": {"wrap_s": "PIPE_TEX_WRAP_CLAMP"}}),
        json!({"op": "bind_sampler_states", "shader": "PIPE_SHADER_FRAGMENT", "samplers": ["smp"]}),
        json!({"op": "clear_buffer", "resource": "vb", "offset": 4, "size": 8, "value": [7]}),
        json!({"op": "set_constant_buffer", "shader": "PIPE_SHADER_FRAGMENT", "index": 1, "data": [1.5, 2]}),
    ]);
    json!({"format": "gallium-scene/1", "calls": calls,
           "outputs": [{"name": "c", "surface": "s"}, {"name": "z", "surface": "zss"}]})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Replacing any field of any call with any JSON value never panics:
    /// the scene either replays or fails with a typed error.
    #[test]
    fn mutated_scenes_never_panic(call in 0usize..16, key in 0usize..8, v in any_json()) {
        let mut s = base_scene();
        let calls = s["calls"].as_array_mut().unwrap();
        let c = calls[call].as_object_mut().unwrap();
        let keys: Vec<String> = c.keys().cloned().collect();
        if key < keys.len() {
            c.insert(keys[key].clone(), v);
        } else {
            c.insert(format!("extra{key}"), v);
        }
        if let Ok(scene) = parse(&s.to_string()) {
            let _ = replay(&scene, &ReplayOptions { threads: 1, ..Default::default() });
        }
    }

    /// Truncating a scene anywhere is a clean error.
    #[test]
    fn truncated_scenes_are_malformed(cut in 0usize..2000) {
        let text = base_scene().to_string();
        let cut = cut.min(text.len() - 1);
        prop_assert!(matches!(parse(&text[..cut]), Err(SceneError::Malformed(_))));
    }
}

#[test]
fn base_scene_replays() {
    let s = parse(&base_scene().to_string()).unwrap();
    let rep = replay(
        &s,
        &ReplayOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(rep.outputs.len(), 2);
}

/// Every public scene parses, and every call ferropipe implements executes
/// without a validation error (exit 2): only `Unsupported` may stop them.
/// Guards the façade's validation against rejecting valid scenes.
#[test]
fn public_scenes_parse_and_their_implemented_calls_execute() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenes");
    let mut n = 0;
    for dir in ["conformance"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let scene = Scene::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let mut r = Replayer::new(1).unwrap();
            r.keep_going = true;
            match r.run(&scene, 0..scene.calls.len(), true) {
                Ok(()) | Err(SceneError::Unsupported(_)) => {}
                Err(e) => panic!("{}: {e}", p.display()),
            }
            n += 1;
        }
    }
    assert!(
        n > 0 || !root.exists(),
        "no scenes found under {}",
        root.display()
    );
}

/// Data files are read only as regular files of bounded size, and an
/// untrusted (confined) scene cannot name files outside its directory.
#[test]
fn data_files_are_confined_and_bounded() {
    let with_file = |file: &str| {
        scene(json!([{"op": "resource_create", "id": "b", "width0": 4,
                      "data": {"file": file, "size": 4}}]))
    };
    let dir = std::env::temp_dir().join(format!("ferropipe-datadir-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/ok.bin"), [1u8; 8]).unwrap();
    let confined = |f: &str| Scene::parse_confined(&with_file(f), &dir);
    assert!(confined("sub/ok.bin").is_ok());
    assert!(confined("./sub/ok.bin").is_ok());
    for bad in ["../ok.bin", "sub/../../x", "/etc/passwd"] {
        match confined(bad) {
            Err(SceneError::Malformed(m)) => assert!(m.contains("leaves"), "{m}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    // Unconfined scenes may name any path, but only regular files.
    let open = |f: &str| Scene::parse(&with_file(f), &dir);
    assert!(open(dir.join("sub/ok.bin").to_str().unwrap()).is_ok());
    match open("/dev/zero") {
        Err(SceneError::Malformed(m)) => assert!(m.contains("not a regular file"), "{m}"),
        other => panic!("/dev/zero: {other:?}"),
    }
    match open("sub") {
        Err(SceneError::Malformed(m)) => assert!(m.contains("not a regular file"), "{m}"),
        other => panic!("a directory: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}
