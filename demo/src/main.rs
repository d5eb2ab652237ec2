//! The ferropipe demo: an interactive window showing frames rendered by
//! ferropipe, with live state editing, pipeline counters and a puffin
//! flamegraph; or, with `--headless` (or no display), PNG frames.
//!
//! ```text
//! demo                                   # window, lit torus knot
//! demo --scene field                     # thousands of instanced cubes
//! demo --headless --frames 60 --out out/demo
//! demo tests/scenes/showcase/test_card.json   # replay a scene every frame
//! demo model.glb                         # a glTF 2.0 model, orbit camera
//! demo --headless --frames 120 --out out/turntable model.glb
//! demo --profile-server                  # puffin_viewer can attach
//! ```

use std::path::PathBuf;

use clap::Parser;
use demo::cli::Args;
use demo::scenes::SceneParams;
use demo::settings::RenderSettings;
use demo::{app, headless};

/// Why the window could not open, if it can be said before trying.
fn display_missing() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        let set = |v| std::env::var_os(v).is_some_and(|s| !s.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            return Some("neither DISPLAY nor WAYLAND_DISPLAY is set");
        }
    }
    None
}

fn main() {
    demo::logger::init();
    let args = Args::parse();
    let mut settings = RenderSettings {
        threads: args.threads,
        msaa: args.msaa,
        overdraw: args.overdraw,
        ..RenderSettings::default()
    };
    if let Some(w) = args.width {
        settings.width = w;
    }
    if let Some(h) = args.height {
        settings.height = h;
    }
    let params = SceneParams {
        field_side: args.field_side,
        stress_triangles: args.triangles,
    };
    let source = args.source();
    for option in args.ignored_options() {
        eprintln!(
            "demo: warning: {option} does not apply to a scene file \
             (it sets its own framebuffer and state)"
        );
    }

    let profile_server = match &args.profile_server {
        Some(addr) => match ferropipe_profiling::ProfileServer::start(addr) {
            Ok(s) => {
                eprintln!("demo: puffin_http serving on {addr} (attach with puffin_viewer)");
                Some(s)
            }
            Err(e) => {
                eprintln!("demo: cannot start the profile server: {e}");
                std::process::exit(1);
            }
        },
        None => None,
    };

    let mut headless = args.headless;
    if !headless && let Some(why) = display_missing() {
        if args.screenshot.is_some() {
            eprintln!("demo: --screenshot needs a display: {why}");
            std::process::exit(1);
        }
        eprintln!("demo: no display ({why}); falling back to headless mode");
        headless = true;
    }

    if !headless {
        let options = app::WindowOptions {
            source: source.clone(),
            settings: settings.clone(),
            params,
            fit_to_window: args.width.is_none() && args.height.is_none(),
            fixed_time: args.time,
            profile_server,
            screenshot: args.screenshot.clone(),
            screenshot_after: args.screenshot_after,
            window_size: [args.window_size.0 as f32, args.window_size.1 as f32],
            capture_dir: args
                .capture
                .clone()
                .unwrap_or_else(|| PathBuf::from("out/capture")),
        };
        match app::run(options) {
            Ok(()) => return,
            Err(e) => {
                if args.screenshot.is_some() {
                    eprintln!("demo: cannot open a window: {e}");
                    std::process::exit(1);
                }
                eprintln!("demo: cannot open a window ({e}); falling back to headless mode");
            }
        }
    }

    let job = headless::HeadlessJob {
        source,
        settings,
        params,
        frames: args.frames,
        out: args.out.clone(),
        orbit_step: std::f32::consts::TAU / 120.0,
        frame_time: 1.0 / 30.0,
        capture: args.capture.clone(),
    };
    let start_time = args.time.unwrap_or(0.0);
    match headless::run_from(&job, start_time) {
        Ok(mean_ms) => eprintln!(
            "demo: wrote {} frames to {} ({mean_ms:.1} ms/frame)",
            job.frames,
            job.out.display()
        ),
        Err(e) => {
            eprintln!("demo: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
