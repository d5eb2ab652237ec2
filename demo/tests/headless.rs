//! `demo --headless`: PNG frames of a showcase scene, and the fallback when
//! there is no display.

mod common;

use std::time::Duration;

use common::{Image, distinct_colors, dominant, render_headless, run_demo, scratch_dir};

const NO_DISPLAY: [(&str, Option<&str>); 2] = [("DISPLAY", None), ("WAYLAND_DISPLAY", None)];

#[test]
fn headless_frames_are_pngs_of_an_orbiting_scene() {
    let dir = scratch_dir("headless");
    render_headless(
        &dir,
        &[
            "--frames",
            "3",
            "--width",
            "160",
            "--height",
            "120",
            "--threads",
            "2",
        ],
    );
    let frames: Vec<Image> = (0..3)
        .map(|i| Image::load(&dir.join(format!("frame_{i:04}.png"))))
        .collect();
    for (i, f) in frames.iter().enumerate() {
        assert_eq!((f.width, f.height), (160, 120), "frame {i} size");
        let px = f.region([0, 0, 160, 120]);
        let (_, background) = dominant(&px);
        assert!(
            background < 0.95,
            "frame {i}: {:.1}% is one colour: nothing was drawn",
            background * 100.0
        );
        assert!(
            distinct_colors(&px) >= 64,
            "frame {i}: too few colours for a lit mesh"
        );
    }
    for i in 1..3 {
        assert_ne!(
            frames[i - 1].rgba,
            frames[i].rgba,
            "frames {} and {i} are identical: the camera did not orbit",
            i - 1
        );
    }
}

#[test]
fn no_display_falls_back_to_headless() {
    let dir = scratch_dir("fallback");
    let out = run_demo(
        &[
            "--frames",
            "1",
            "--width",
            "64",
            "--height",
            "48",
            "--out",
            dir.to_str().unwrap(),
        ],
        &NO_DISPLAY,
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no display") && stderr.contains("falling back to headless"),
        "{stderr}"
    );
    assert!(out.status.success(), "{stderr}");
    let f = Image::load(&dir.join("frame_0000.png"));
    assert_eq!((f.width, f.height), (64, 48));
}

#[test]
fn screenshot_without_display_is_an_error_not_a_hang() {
    let out = run_demo(
        &["--screenshot", "/nonexistent/x.png"],
        &NO_DISPLAY,
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a display"));
}

/// Out-of-range numbers are usage errors naming the argument and its
/// range (clap's exit status 2), not silently clamped.
#[test]
fn out_of_range_arguments_are_errors_naming_the_range() {
    let dir = scratch_dir("out-of-range");
    for (args, name, range) in [
        (["--width", "20000"], "--width", "1..=4096"),
        (["--threads", "10000"], "--threads", "0..=1024"),
        (["--field-side", "0"], "--field-side", "1..=1024"),
        (["--frames", "0"], "--frames", "1..=100000"),
        (["--time", "nan"], "--time", "0..=3600"),
    ] {
        // (Were one accepted, its frames would go to the scratch dir.)
        let mut all = vec!["--headless", "--out", dir.to_str().unwrap()];
        all.extend(args);
        let out = run_demo(&all, &NO_DISPLAY, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(name) && err.contains(range), "{args:?}: {err}");
    }
}

#[test]
fn headless_replays_a_scene_file() {
    let dir = scratch_dir("scene-file");
    let scene = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/scenes/showcase/test_card.json"
    );
    render_headless(&dir, &[scene, "--frames", "2"]);
    let a = Image::load(&dir.join("frame_0000.png"));
    let b = Image::load(&dir.join("frame_0001.png"));
    // The scene's own framebuffer size, not the demo's default.
    assert_eq!((a.width, a.height), (256, 192));
    assert!(distinct_colors(&a.region([0, 0, 256, 192])) >= 16);
    // Replaying the same work again gives the same picture.
    assert_eq!(a.rgba, b.rgba);
}

#[test]
fn a_malformed_scene_file_is_reported_not_rendered() {
    let dir = scratch_dir("bad-scene");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        // (An unknown op is "unsupported" now, issue 16: a wrong type is
        // what makes a file malformed.)
        r#"{"format": "gallium-scene/1", "calls": [{"op": "draw_vbo", "count": "no_such_count"}]}"#,
    )
    .unwrap();
    let out = run_demo(
        &[
            "--headless",
            bad.to_str().unwrap(),
            "--frames",
            "1",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("count"), "{stderr}");
    assert!(!dir.join("frame_0000.png").exists());
}

/// One 160x120 headless frame of the default scene at t = 1 s, with the
/// extra flags `extra` (`name` keeps runs apart).
fn one_frame(name: &str, extra: &[&str]) -> Image {
    let dir = scratch_dir(name);
    let mut args = vec![
        "--frames",
        "1",
        "--width",
        "160",
        "--height",
        "120",
        "--threads",
        "2",
        "--time",
        "1.0",
    ];
    args.extend_from_slice(extra);
    render_headless(&dir, &args);
    Image::load(&dir.join("frame_0000.png"))
}

/// The custom pipeline system (examples/custom_system.rs) visibly changes
/// the output: with `--overdraw` the frame is the heat-map — black where
/// nothing was rasterized, blue/green/yellow/red by fragment count — not
/// the lit mesh.
#[test]
fn overdraw_system_replaces_the_image_with_a_heat_map() {
    let plain = one_frame("overdraw-off", &[]);
    let heat = one_frame("overdraw-on", &["--overdraw"]);
    assert_ne!(plain.rgba, heat.rgba, "--overdraw changed nothing");
    let px = heat.region([0, 0, 160, 120]);
    // Background: nothing rasterized, black.
    let (rgb, share) = dominant(&px);
    assert!(
        rgb == [0, 0, 0] && share > 0.2,
        "background {rgb:?} {share}"
    );
    // The mesh: only heat-map colours (the ramp's stops and blends), and
    // some of it at counts above one (a torus knot overlaps itself).
    let non_black = px.iter().filter(|p| p[..3] != [0, 0, 0]).count();
    assert!(non_black > 500, "only {non_black} heat pixels");
    let above_one = px.iter().filter(|p| p[1] > 100 || p[0] > 100).count();
    assert!(above_one > 0, "no pixel rasterized twice");
}

/// `--msaa` renders into a 4x target resolved by a blit: the same picture
/// with antialiased edges (more distinct colours where the knot meets the
/// background), not an error.
#[test]
fn msaa_frames_resolve_with_smoothed_edges() {
    let plain = one_frame("msaa-off", &[]);
    let msaa = one_frame("msaa-on", &["--msaa"]);
    assert_ne!(plain.rgba, msaa.rgba, "--msaa changed nothing");
    let (p, m) = (
        distinct_colors(&plain.region([0, 0, 160, 120])),
        distinct_colors(&msaa.region([0, 0, 160, 120])),
    );
    assert!(m > p, "MSAA should add edge shades: {m} vs {p} colours");
}

/// The barrel glTF model (CC BY 4.0, gltf/tests/assets/barrel/README.md).
const BARREL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gltf/tests/assets/barrel/barrel.glb"
);

#[test]
fn headless_turntable_of_a_gltf_model() {
    let dir = scratch_dir("turntable");
    render_headless(
        &dir,
        &[
            "--frames",
            "3",
            "--width",
            "160",
            "--height",
            "120",
            "--threads",
            "2",
            BARREL,
        ],
    );
    let frames: Vec<Image> = (0..3)
        .map(|i| Image::load(&dir.join(format!("frame_{i:04}.png"))))
        .collect();
    for (i, f) in frames.iter().enumerate() {
        assert_eq!((f.width, f.height), (160, 120), "frame {i} size");
        let px = f.region([0, 0, 160, 120]);
        let (bg, share) = dominant(&px);
        // The framing camera fits the barrel's bounding sphere in the
        // view: it covers a plausible share of the frame, not all of it.
        assert!(
            (0.4..0.95).contains(&share),
            "frame {i}: background {bg:?} is {:.1}% of the frame",
            share * 100.0
        );
        // Textured wood: many colours, mostly red-brown.
        let model: Vec<&[u8; 4]> = px
            .iter()
            .filter(|p| (0..3).any(|c| p[c].abs_diff(bg[c]) > 8))
            .collect();
        assert!(distinct_colors(&px) >= 200, "frame {i}: too few colours");
        let wood = model
            .iter()
            .filter(|p| i32::from(p[0]) > i32::from(p[2]) + 20)
            .count();
        assert!(
            wood * 5 > model.len() * 2,
            "frame {i}: {wood} of {} model pixels are wood-coloured",
            model.len()
        );
    }
    assert_ne!(frames[0].rgba, frames[1].rgba, "the turntable turned");
}
