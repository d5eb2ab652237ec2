//! Capture round trip (issue 18; docs/capture.md): capture loses nothing.
//!
//! For every scene in `tests/scenes/conformance/`: replay it with a capture
//! running, replay the capture, and require byte-identical outputs (images,
//! depth/stencil and buffer outputs) to the first replay.  The capture
//! starts at the scene's first work call, after its resources, uploads and
//! state were set up, so the writer's recreation of the bound state and
//! of resource contents (read back) is exercised on every scene, not only
//! the forwarding of calls.

use std::path::{Path, PathBuf};

use ferropipe_scene::{Call, OutputData, ReplayOptions, Replayer, Scene, replay};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests")
}

fn scenes() -> Vec<(String, PathBuf)> {
    let dir = root().join("scenes/conformance");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    v.sort();
    v
}

/// The first call that does work: where the capture starts.
fn first_work(scene: &Scene) -> usize {
    scene
        .calls
        .iter()
        .position(|c| {
            matches!(
                c,
                Call::DrawVbo(_)
                    | Call::Clear { .. }
                    | Call::ClearRenderTarget { .. }
                    | Call::ClearDepthStencil { .. }
                    | Call::LaunchGrid(_)
                    | Call::Blit(_)
                    | Call::ResourceCopyRegion { .. }
            )
        })
        .unwrap_or(scene.calls.len())
}

/// Replays `scene` with a capture from its first work call into `dir`;
/// returns the outputs and the captured scene's path.
fn replay_capturing(scene: &Scene, dir: &Path) -> (Vec<OutputData>, PathBuf) {
    let mut r = Replayer::new(2).unwrap();
    let k = first_work(scene);
    r.run(scene, 0..k, true).unwrap();
    r.start_capture(dir, "capture").unwrap();
    r.run(scene, k..scene.calls.len(), true).unwrap();
    let outputs = r.read_outputs(scene).unwrap();
    let summary = r
        .finish_capture(scene)
        .unwrap_or_else(|e| panic!("capture failed: {e}"));
    assert_eq!(
        summary.outputs,
        scene
            .outputs
            .iter()
            .map(|o| o.name.clone())
            .collect::<Vec<_>>()
    );
    (outputs, summary.scene)
}

fn same_outputs(name: &str, a: &[OutputData], b: &[OutputData]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{name}: {} outputs, capture {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x.name != y.name || x.pixels != y.pixels || (x.width, x.height) != (y.width, y.height) {
            return Err(format!("{name}: output {:?} differs after capture", x.name));
        }
    }
    Ok(())
}

#[test]
fn every_conformance_scene_survives_capture() {
    let tmp = std::env::temp_dir().join(format!("ferropipe-capture-rt-{}", std::process::id()));
    let mut failures = Vec::new();
    let all = scenes();
    assert!(all.len() > 50, "{} scenes", all.len());
    for (name, path) in &all {
        let scene = Scene::load(path).unwrap();
        let dir = tmp.join(name);
        let (first, captured) = replay_capturing(&scene, &dir);
        let again = Scene::load(&captured)
            .map_err(|e| format!("{name}: the capture does not read back: {e}"))
            .and_then(|s| {
                replay(&s, &ReplayOptions::default())
                    .map_err(|e| format!("{name}: the capture does not replay: {e}"))
            })
            .and_then(|report| same_outputs(name, &first, &report.outputs));
        if let Err(e) = again {
            failures.push(e);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A capture of a whole replay (from the first call, nothing to recreate)
/// of a textured, blended scene gives the byte-identical image; and the
/// capture of that capture is the same file.
#[test]
fn replaying_a_capture_gives_the_captured_frame() {
    let path = root().join("scenes/conformance/tex_filter.json");
    let scene = Scene::load(&path).unwrap();
    let tmp = std::env::temp_dir().join(format!("ferropipe-capture-frame-{}", std::process::id()));
    // The capture stops before the outputs are read (their final flush
    // is then not part of it), so capturing the capture's replay writes
    // the same calls again.
    let mut r = Replayer::new(1).unwrap();
    r.start_capture(&tmp.join("a"), "capture").unwrap();
    r.run(&scene, 0..scene.calls.len(), true).unwrap();
    let a = r.finish_capture(&scene).unwrap();
    let frame = r.read_outputs(&scene).unwrap();
    let captured = Scene::load(&a.scene).unwrap();
    let mut r2 = Replayer::new(1).unwrap();
    r2.start_capture(&tmp.join("b"), "capture").unwrap();
    r2.run(&captured, 0..captured.calls.len(), true).unwrap();
    let b = r2.finish_capture(&captured).unwrap();
    let again = r2.read_outputs(&captured).unwrap();
    same_outputs("tex_filter", &frame, &again).unwrap();
    let text = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert_eq!(text(&a.scene), text(&b.scene));
    assert_eq!(
        std::fs::read(a.scene.with_extension("bin")).unwrap(),
        std::fs::read(b.scene.with_extension("bin")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Stream output in the proposed form (docs/scene-format-stream-output.md)
/// is read, replayed, captured and replayed again to the same bytes: the
/// captured buffer and the image.
#[test]
fn stream_output_survives_capture() {
    let wgsl = "struct VOut { @builtin(position) pos: vec4<f32>, @location(0) attr: vec4<f32> };\n\
                @vertex fn vs_main(@location(0) pos: vec4<f32>, @location(1) attr: vec4<f32>) -> VOut {\n\
                var o: VOut; o.pos = pos; o.attr = attr; return o; }\n\
                @fragment fn fs_main(@location(0) attr: vec4<f32>) -> @location(0) vec4<f32> { return attr; }\n";
    let tri: Vec<f32> = vec![
        -0.5, -0.5, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, -0.5, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0,
        0.5, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0,
    ];
    let text = serde_json::json!({
        "format": "gallium-scene/1",
        "calls": [
            {"op": "resource_create", "id": "rt", "target": "PIPE_TEXTURE_2D", "format": "PIPE_FORMAT_R8G8B8A8_UNORM", "width0": 32, "height0": 32, "bind": ["PIPE_BIND_RENDER_TARGET"]},
            {"op": "create_surface", "id": "s", "resource": "rt"},
            {"op": "set_framebuffer_state", "width": 32, "height": 32, "cbufs": ["s"]},
            {"op": "set_viewport_states", "start_slot": 0, "viewports": [{"scale": [16.0, 16.0, 0.5], "translate": [16.0, 16.0, 0.5]}]},
            {"op": "create_blend_state", "id": "b", "state": {"rt": [{"colormask": 15}]}},
            {"op": "bind_blend_state", "id": "b"},
            {"op": "create_depth_stencil_alpha_state", "id": "d", "state": {}},
            {"op": "bind_depth_stencil_alpha_state", "id": "d"},
            {"op": "create_rasterizer_state", "id": "r", "state": {}},
            {"op": "bind_rasterizer_state", "id": "r"},
            {"op": "create_vs_state", "id": "vs", "language": "wgsl", "code": wgsl, "entry_point": "vs_main",
             "stream_output": {"stride": [8], "output": [
                 {"register_index": 0, "num_components": 4, "dst_offset": 0},
                 {"register_index": 1, "num_components": 4, "dst_offset": 4}]}},
            {"op": "create_fs_state", "id": "fs", "language": "wgsl", "code": wgsl, "entry_point": "fs_main"},
            {"op": "bind_vs_state", "id": "vs"},
            {"op": "bind_fs_state", "id": "fs"},
            {"op": "create_vertex_elements_state", "id": "ve", "elements": [
                {"src_offset": 0, "vertex_buffer_index": 0, "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"},
                {"src_offset": 16, "vertex_buffer_index": 0, "src_format": "PIPE_FORMAT_R32G32B32A32_FLOAT"}]},
            {"op": "bind_vertex_elements_state", "id": "ve"},
            {"op": "resource_create", "id": "vb", "target": "PIPE_BUFFER", "width0": 96, "bind": ["PIPE_BIND_VERTEX_BUFFER"], "data": tri},
            {"op": "set_vertex_buffers", "start_slot": 0, "buffers": [{"buffer": "vb", "stride": 32}]},
            {"op": "resource_create", "id": "so", "target": "PIPE_BUFFER", "width0": 256, "bind": ["PIPE_BIND_STREAM_OUTPUT"]},
            {"op": "create_stream_output_target", "id": "t", "buffer": "so", "buffer_offset": 16, "buffer_size": 224},
            {"op": "clear", "buffers": ["PIPE_CLEAR_COLOR"], "color": [0.0, 0.0, 0.0, 1.0]},
            {"op": "set_stream_output_targets", "targets": ["t"], "offsets": [0]},
            {"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "count": 3},
            {"op": "set_stream_output_targets", "targets": [], "offsets": []},
            {"op": "set_stream_output_targets", "targets": ["t"], "offsets": ["append"]},
            {"op": "draw_vbo", "mode": "PIPE_PRIM_TRIANGLES", "count": 3},
            {"op": "memory_barrier", "flags": ["PIPE_BARRIER_MAPPED_BUFFER"]}
        ],
        "outputs": [{"name": "color", "surface": "s"}, {"name": "so", "buffer": "so"}]
    })
    .to_string();
    let scene = Scene::parse(&text, Path::new(".")).unwrap();
    let tmp = std::env::temp_dir().join(format!("ferropipe-capture-so-{}", std::process::id()));
    let (first, captured) = replay_capturing(&scene, &tmp);
    let so = match &first[1].pixels {
        ferropipe_scene::OutputPixels::Bytes(b) => b.clone(),
        other => panic!("{other:?}"),
    };
    // Two triangles of 3 vertices, 32 bytes each, after the 16-byte offset.
    assert!(so[16..16 + 192].iter().any(|&b| b != 0) && so[16 + 192..].iter().all(|&b| b == 0));
    let text = std::fs::read_to_string(&captured).unwrap();
    assert!(text.contains("set_stream_output_targets") && text.contains("\"append\""));
    let report = replay(&Scene::load(&captured).unwrap(), &ReplayOptions::default()).unwrap();
    same_outputs("stream output", &first, &report.outputs).unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
}
