//! The demo window under Xvfb: start it, capture it (eframe's screenshot
//! API), and check that the rendered frame and the flamegraph are there.
//!
//! Needs Xvfb and the libraries eframe loads at run time
//! (`.ci/install-demo-deps.sh` installs them); without Xvfb the test says
//! so and passes, unless `FERROPIPE_REQUIRE_WINDOW_TEST` is set (`.ci/run`
//! sets it after installing Xvfb).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Image, dominant, render_headless, run_demo, saturated_fraction, scratch_dir};

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// Starts Xvfb for a window test, or returns `None` (the test skips,
/// saying why) where it is not installed.  CI installs Xvfb and sets
/// `FERROPIPE_REQUIRE_WINDOW_TEST`, so there a test cannot skip.
fn start_xvfb(test: &str) -> Option<Xvfb> {
    let Some(xvfb) = find_in_path("Xvfb") else {
        assert!(
            std::env::var_os("FERROPIPE_REQUIRE_WINDOW_TEST").is_none(),
            "FERROPIPE_REQUIRE_WINDOW_TEST is set but Xvfb is not installed"
        );
        eprintln!(
            "SKIPPED {test}: Xvfb is not installed (bash .ci/install-demo-deps.sh installs it)"
        );
        return None;
    };
    Some(Xvfb::start(&xvfb))
}

/// An Xvfb server this test started; killed on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb with `-displayfd`: the server itself picks a free
    /// display and writes its number to our pipe once it accepts
    /// connections. Choosing the number here raced: both tests of this file
    /// run in one process, computed the same number, and the second test
    /// took the first one's socket for its own and lost its display when
    /// the first test's server was killed (CI stop 14: "The X11 server
    /// closed the connection").
    fn start(binary: &Path) -> Xvfb {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(binary)
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn Xvfb");
        let stdout = child.stdout.take().expect("Xvfb stdout piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.trim().parse::<u32>().is_ok() => Xvfb {
                child,
                display: format!(":{}", line.trim()),
            },
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("Xvfb did not report a display: {other:?}");
            }
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rect(v: &serde_json::Value) -> Option<[i64; 4]> {
    let a = v.as_array()?;
    Some(std::array::from_fn(|i| a[i].as_i64().unwrap_or(0)))
}

#[test]
fn window_shows_the_frame_and_the_flamegraph() {
    let Some(server) = start_xvfb("window test") else {
        return;
    };
    let dir = scratch_dir("window");
    let shot = dir.join("window.png");
    let out = run_demo(
        &[
            "--screenshot",
            shot.to_str().unwrap(),
            "--screenshot-after",
            "15",
            "--time",
            "1.5",
            "--threads",
            "2",
            "--window-size",
            "1100x760",
        ],
        &[
            ("DISPLAY", Some(server.display.as_str())),
            ("WAYLAND_DISPLAY", None),
            ("LIBGL_ALWAYS_SOFTWARE", Some("1")),
        ],
        Duration::from_secs(180),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo window failed: {stderr}");
    let img = Image::load(&shot);
    let layout: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("json")).unwrap())
            .unwrap();
    assert_eq!((img.width, img.height), (1100, 760), "window size");

    // The flamegraph panel: puffin's coloured scope bars over a dark
    // panel, with text.
    let profiler = rect(&layout["profiler"]).expect("profiler panel laid out");
    assert!(
        profiler[3] - profiler[1] > 100,
        "profiler panel too small: {profiler:?}"
    );
    let px = img.region(profiler);
    let (_, bg) = dominant(&px);
    assert!(
        bg < 0.97,
        "profiler panel is blank ({:.1}% one colour)",
        bg * 100.0
    );
    let bars = saturated_fraction(&px);
    assert!(
        bars > 0.002,
        "no flamegraph bars in the profiler panel ({bars})"
    );

    // The frame.
    if let Some(err) = layout["error"].as_str() {
        panic!("the demo reported an error: {err}");
    }
    check_counters(&layout);
    check_frame(&img, &layout, &dir);
}

/// The overlay's pipeline counters of the captured frame: live, and equal
/// to what the frame's `PIPE_QUERY_PIPELINE_STATISTICS` query (counted per
/// command, a separate path) says where both count the same thing.
fn check_counters(layout: &serde_json::Value) {
    let c = &layout["counters"];
    let get = |name: &str| {
        c[name]
            .as_u64()
            .unwrap_or_else(|| panic!("counter {name} missing: {c}"))
    };
    let stats = &layout["statistics"];
    let stat = |name: &str| stats[name].as_u64().unwrap_or_else(|| panic!("{stats}"));
    let flushes = get("flushes");
    assert!(flushes >= 1);
    assert!(get("draws") > 0);
    assert_eq!(get("primitives-in"), stat("c_invocations"));
    assert_eq!(get("primitives-after-clip"), stat("c_primitives"));
    assert_eq!(get("vertices-shaded"), stat("vs_invocations"));
    let after_cull = get("primitives-after-cull");
    assert!(after_cull > 0 && after_cull <= get("primitives-after-clip"));
    let (w, h) = (
        layout["frame_width"].as_u64().unwrap(),
        layout["frame_height"].as_u64().unwrap(),
    );
    let tiles = w.div_ceil(64) * h.div_ceil(64);
    let touched = get("tiles-touched");
    // Counted once per flush and tile.
    assert!(
        touched > 0 && touched <= flushes * tiles,
        "{touched} of {tiles}"
    );
    assert!(get("tiles-fully-covered") <= touched);
    assert!(get("bins-emitted") >= touched);
    let shaded = get("fragments-shaded");
    assert!(shaded > 0, "no fragments shaded");
    assert!(get("fragments-killed") <= shaded);
    assert!(get("tiles-time") > 0 && get("fetch-time") > 0);
}

/// The frame shown in the window must be the frame ferropipe renders
/// headless with the same settings: compare them outside the overlay.
fn check_frame(img: &Image, layout: &serde_json::Value, dir: &Path) {
    let image = rect(&layout["image"]).expect("frame laid out");
    let (w, h) = (
        layout["frame_width"].as_u64().unwrap() as u32,
        layout["frame_height"].as_u64().unwrap() as u32,
    );
    assert_eq!(
        ((image[2] - image[0]) as u32, (image[3] - image[1]) as u32),
        (w, h),
        "frame shown 1:1"
    );
    let headless_dir = dir.join("headless");
    let (ws, hs) = (w.to_string(), h.to_string());
    render_headless(
        &headless_dir,
        &[
            "--frames",
            "1",
            "--time",
            "1.5",
            "--threads",
            "2",
            "--width",
            &ws,
            "--height",
            &hs,
        ],
    );
    let reference = Image::load(&headless_dir.join("frame_0000.png"));
    let overlay = rect(&layout["overlay"]).unwrap_or([0; 4]);
    let (mut compared, mut off) = (0u64, 0u64);
    for y in 0..h {
        for x in 0..w {
            let (sx, sy) = (image[0] + x as i64, image[1] + y as i64);
            if sx >= overlay[0] && sx < overlay[2] && sy >= overlay[1] && sy < overlay[3] {
                continue;
            }
            let a = img.pixel(sx as u32, sy as u32);
            let b = reference.pixel(x, y);
            compared += 1;
            if (0..3).any(|c| a[c].abs_diff(b[c]) > 2) {
                off += 1;
            }
        }
    }
    assert!(compared > (w * h / 2) as u64);
    assert!(
        off * 1000 <= compared,
        "{off} of {compared} pixels differ from the headless frame"
    );
    let px = reference.region([0, 0, w as i64, h as i64]);
    let (_, bg) = dominant(&px);
    assert!(bg < 0.95, "the frame is {:.1}% one colour", bg * 100.0);
}

/// `demo model.glb` under Xvfb: the window shows the barrel glTF model
/// (CC BY 4.0, gltf/tests/assets/barrel/README.md) lit and textured,
/// covering a plausible part of the frame.
#[test]
fn window_shows_a_gltf_model() {
    let Some(server) = start_xvfb("glTF window test") else {
        return;
    };
    let dir = scratch_dir("window-gltf");
    let shot = dir.join("window.png");
    let barrel = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../gltf/tests/assets/barrel/barrel.glb"
    );
    let out = run_demo(
        &[
            "--screenshot",
            shot.to_str().unwrap(),
            "--screenshot-after",
            "10",
            "--threads",
            "2",
            "--window-size",
            "1000x700",
            barrel,
        ],
        &[
            ("DISPLAY", Some(server.display.as_str())),
            ("WAYLAND_DISPLAY", None),
            ("LIBGL_ALWAYS_SOFTWARE", Some("1")),
        ],
        Duration::from_secs(180),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo window failed: {stderr}");
    let img = Image::load(&shot);
    let layout: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("json")).unwrap())
            .unwrap();
    if let Some(err) = layout["error"].as_str() {
        panic!("the demo reported an error: {err}");
    }
    let image = rect(&layout["image"]).expect("frame laid out");
    let overlay = rect(&layout["overlay"]).unwrap_or([0; 4]);
    let px = img.region(image);
    let (bg, _) = dominant(&px);
    let w = (image[2] - image[0]) as usize;
    let (mut total, mut model, mut wood) = (0usize, 0usize, 0usize);
    for (i, p) in px.iter().enumerate() {
        let (x, y) = (image[0] + (i % w) as i64, image[1] + (i / w) as i64);
        if x >= overlay[0] && x < overlay[2] && y >= overlay[1] && y < overlay[3] {
            continue;
        }
        total += 1;
        if (0..3).any(|c| p[c].abs_diff(bg[c]) > 8) {
            model += 1;
            if i32::from(p[0]) > i32::from(p[2]) + 20 {
                wood += 1;
            }
        }
    }
    let share = model as f64 / total as f64;
    assert!(
        (0.05..0.6).contains(&share),
        "the model covers {:.1}% of the frame",
        share * 100.0
    );
    assert!(
        wood * 5 > model * 2,
        "{wood} of {model} model pixels are wood-coloured: not lit and textured?"
    );
}

/// `demo scene.json` under Xvfb: the scene file's 256x192 frame is scaled
/// to fit the panel (aspect kept, centred), not shown 1:1 in its corner
/// under the overlay, and the overlay's frame line describes it.
#[test]
fn window_fits_a_scene_file_to_the_frame() {
    let Some(server) = start_xvfb("scene-file window test") else {
        return;
    };
    let dir = scratch_dir("window-scene-file");
    let shot = dir.join("window.png");
    let card = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/scenes/showcase/test_card.json"
    );
    let out = run_demo(
        &[
            "--screenshot",
            shot.to_str().unwrap(),
            "--screenshot-after",
            "8",
            "--threads",
            "2",
            "--window-size",
            "1000x700",
            card,
        ],
        &[
            ("DISPLAY", Some(server.display.as_str())),
            ("WAYLAND_DISPLAY", None),
            ("LIBGL_ALWAYS_SOFTWARE", Some("1")),
        ],
        Duration::from_secs(180),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo window failed: {stderr}");
    let img = Image::load(&shot);
    let layout: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shot.with_extension("json")).unwrap())
            .unwrap();
    if let Some(err) = layout["error"].as_str() {
        panic!("the demo reported an error: {err}");
    }
    assert_eq!(
        (
            layout["frame_width"].as_u64(),
            layout["frame_height"].as_u64()
        ),
        (Some(256), Some(192)),
        "the frame on screen is the scene's own"
    );
    let line = layout["overlay_lines"][1].as_str().unwrap_or_default();
    assert!(line.starts_with("256x192 scene file"), "overlay: {line:?}");
    let area = rect(&layout["area"]).expect("area laid out");
    let image = rect(&layout["image"]).expect("frame laid out");
    let (w, h) = (image[2] - image[0], image[3] - image[1]);
    let (aw, ah) = (area[2] - area[0], area[3] - area[1]);
    // Fitted: one side fills the panel, the aspect is 4:3, centred.
    assert!(
        (w - aw).abs() <= 1 || (h - ah).abs() <= 1,
        "{image:?} does not fill {area:?}"
    );
    assert!(w > 256 && h > 192, "not scaled up: {w}x{h}");
    assert!(((w as f64 / h as f64) - 4.0 / 3.0).abs() < 0.01, "{w}x{h}");
    assert!(((image[0] + image[2]) - (area[0] + area[2])).abs() <= 2);
    assert!(((image[1] + image[3]) - (area[1] + area[3])).abs() <= 2);

    // The picture is the scene's: at each source pixel whose 3x3
    // neighbourhood is one colour (bilinear scaling cannot blend in
    // another), the window shows that colour.
    let headless_dir = dir.join("headless");
    render_headless(&headless_dir, &[card, "--frames", "1"]);
    let reference = Image::load(&headless_dir.join("frame_0000.png"));
    let overlay = rect(&layout["overlay"]).unwrap_or([0; 4]);
    let (sx, sy) = (w as f64 / 256.0, h as f64 / 192.0);
    let (mut compared, mut off) = (0u32, 0u32);
    for y in 1..191u32 {
        for x in 1..255u32 {
            let c = reference.pixel(x, y);
            let flat = (y - 1..=y + 1)
                .all(|yy| (x - 1..=x + 1).all(|xx| reference.pixel(xx, yy)[..3] == c[..3]));
            if !flat {
                continue;
            }
            let px = image[0] + ((x as f64 + 0.5) * sx) as i64;
            let py = image[1] + ((y as f64 + 0.5) * sy) as i64;
            if px >= overlay[0] && px < overlay[2] && py >= overlay[1] && py < overlay[3] {
                continue;
            }
            compared += 1;
            let s = img.pixel(px as u32, py as u32);
            if (0..3).any(|k| s[k].abs_diff(c[k]) > 3) {
                off += 1;
            }
        }
    }
    assert!(compared > 5000, "only {compared} flat pixels compared");
    assert!(
        off * 100 <= compared,
        "{off} of {compared} pixels differ from the scene's frame"
    );
}
