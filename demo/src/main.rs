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
use clap::builder::RangedU64ValueParser;
use demo::render::SceneSource;
use demo::scenes::{SceneKind, SceneParams};
use demo::settings::{MAX_DIMENSION, RenderSettings};
use demo::{app, headless};
use ferropipe::MAX_ENV_THREADS;

/// ferropipe's interactive demo.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// A gallium-scene/1 .json file to replay every frame, or a glTF 2.0
    /// model (.glb / .gltf) to show (instead of a built-in scene).
    scene_file: Option<PathBuf>,
    /// Built-in scene to show.
    #[arg(long, value_enum, default_value = "mesh")]
    scene: SceneKind,
    /// Render to PNG files instead of opening a window.
    #[arg(long)]
    headless: bool,
    /// Headless: frames to render.
    #[arg(long, default_value_t = 60)]
    frames: u32,
    /// Headless: output directory for frame_NNNN.png.
    #[arg(long, default_value = "out/demo")]
    out: PathBuf,
    /// Frame width in pixels, 1..=4096 (window: fixes the resolution
    /// instead of following the window).
    #[arg(long, value_parser = dimension())]
    width: Option<u32>,
    /// Frame height in pixels, 1..=4096.
    #[arg(long, value_parser = dimension())]
    height: Option<u32>,
    /// Worker threads, 0..=1024 (0 = FERROPIPE_NUM_THREADS, else one per
    /// CPU).
    #[arg(long, default_value_t = 0, value_parser = in_range::<usize>(0, MAX_ENV_THREADS as u64))]
    threads: usize,
    /// 4x multisampling.
    #[arg(long)]
    msaa: bool,
    /// Show the overdraw heat-map (the custom pipeline system of
    /// examples/custom_system.rs) instead of the image.
    #[arg(long)]
    overdraw: bool,
    /// Stress scene: triangle count, 32..=20000000.
    #[arg(long, default_value_t = SceneParams::default().stress_triangles,
          value_parser = in_range::<u32>(32, 20_000_000))]
    triangles: u32,
    /// Field scene: cubes per side (instances = side²), 1..=1024.
    #[arg(long, default_value_t = SceneParams::default().field_side,
          value_parser = in_range::<u32>(1, 1024))]
    field_side: u32,
    /// Animation time in seconds: the window freezes it there; headless
    /// starts there.
    #[arg(long)]
    time: Option<f32>,
    /// Serve puffin profiles on ADDR for puffin_viewer
    /// (default 127.0.0.1:8585).
    #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:8585", value_name = "ADDR")]
    profile_server: Option<String>,
    /// Window: after --screenshot-after frames, save the window to this PNG
    /// (and its layout to the same path with .json) and exit.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// Window: frames to show before the screenshot.
    #[arg(long, default_value_t = 30)]
    screenshot_after: u32,
    /// Capture a frame into DIR as a gallium-scene/1 file with its side
    /// files (docs/capture.md): headless, the first frame (DIR/frame.json);
    /// in the window, where the "Capture frame" button writes.
    #[arg(long, value_name = "DIR")]
    capture: Option<PathBuf>,
    /// Window size in logical pixels, WxH.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    window_size: (u32, u32),
}

/// A parser of whole numbers in `min..=max`: a value outside is a usage
/// error naming the argument and the range (exit status 2), never clamped.
fn in_range<T>(min: u64, max: u64) -> RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    RangedU64ValueParser::<T>::new().range(min..=max)
}

/// `--width` / `--height`: `1..=MAX_DIMENSION`.
fn dimension() -> RangedU64ValueParser<u32> {
    in_range(1, u64::from(MAX_DIMENSION))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("`{s}`: expected WxH"))?;
    let p = |v: &str| {
        v.parse::<u32>()
            .ok()
            .filter(|&v| (1..=MAX_DIMENSION).contains(&v))
            .ok_or_else(|| format!("`{v}`: expected 1..={MAX_DIMENSION}"))
    };
    Ok((p(w)?, p(h)?))
}

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
    settings.clamp_size();
    let params = SceneParams {
        field_side: args.field_side,
        stress_triangles: args.triangles,
    };
    let source = match &args.scene_file {
        Some(path) => SceneSource::from_path(path.clone()),
        None => SceneSource::Builtin(args.scene),
    };

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
