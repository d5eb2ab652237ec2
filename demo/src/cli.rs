//! The `demo` command line: its arguments and their ranges.
//!
//! Every number is checked against its range when it is parsed: a value
//! outside is a usage error naming the argument and the range (clap's exit
//! status 2), never clamped to something the user did not ask for.  The
//! parsers are plain functions so the unit tests below check each range
//! without starting a process.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::RangedU64ValueParser;
use ferropipe::MAX_ENV_THREADS;

use crate::render::SceneSource;
use crate::scenes::{SceneKind, SceneParams};
use crate::settings::MAX_DIMENSION;

/// Most frames `--frames` renders (and `--screenshot-after` waits for):
/// 100,000 frames are 55 minutes of a 30 fps turntable.
pub const MAX_FRAMES: u32 = 100_000;

/// Latest animation time `--time` accepts, seconds.  Scene time is an
/// `f32`: at 3600 s its spacing is 0.24 ms, and headless frame `i` is at
/// `time + i / 30` s, at most 3600 + 3333 s, where the spacing (0.49 ms)
/// is still far below a 33 ms frame step, so frames never repeat.  Past
/// 2^19 s (6 days) the spacing exceeds a frame step.
pub const MAX_TIME: f32 = 3600.0;

/// ferropipe's interactive demo.
#[derive(Parser, Debug)]
#[command(name = "demo", version, about)]
pub struct Args {
    /// A gallium-scene/1 .json file to replay every frame, or a glTF 2.0
    /// model (.glb / .gltf) to show (instead of a built-in scene).
    pub scene_file: Option<PathBuf>,
    /// Built-in scene to show.
    #[arg(long, value_enum, default_value = "mesh")]
    pub scene: SceneKind,
    /// Render to PNG files instead of opening a window.
    #[arg(long)]
    pub headless: bool,
    /// Headless: frames to render, 1..=100000.
    #[arg(long, default_value_t = 60, value_parser = in_range::<u32>(1, u64::from(MAX_FRAMES)))]
    pub frames: u32,
    /// Headless: output directory for frame_NNNN.png.
    #[arg(long, default_value = "out/demo")]
    pub out: PathBuf,
    /// Frame width in pixels, 1..=4096 (window: fixes the resolution
    /// instead of following the window).
    #[arg(long, value_parser = dimension())]
    pub width: Option<u32>,
    /// Frame height in pixels, 1..=4096.
    #[arg(long, value_parser = dimension())]
    pub height: Option<u32>,
    /// Worker threads, 0..=1024 (0 = FERROPIPE_NUM_THREADS, else one per
    /// CPU).
    #[arg(long, default_value_t = 0, value_parser = in_range::<usize>(0, MAX_ENV_THREADS as u64))]
    pub threads: usize,
    /// 4x multisampling.
    #[arg(long)]
    pub msaa: bool,
    /// Show the overdraw heat-map (the custom pipeline system of
    /// examples/custom_system.rs) instead of the image.
    #[arg(long)]
    pub overdraw: bool,
    /// Stress scene: triangle count, 32..=20000000.
    #[arg(long, default_value_t = SceneParams::default().stress_triangles,
          value_parser = in_range::<u32>(32, 20_000_000))]
    pub triangles: u32,
    /// Field scene: cubes per side (instances = side²), 1..=1024.
    #[arg(long, default_value_t = SceneParams::default().field_side,
          value_parser = in_range::<u32>(1, 1024))]
    pub field_side: u32,
    /// Animation time in seconds, 0..=3600: the window freezes it there;
    /// headless starts there.
    #[arg(long, value_parser = parse_time)]
    pub time: Option<f32>,
    /// Serve puffin profiles on ADDR for puffin_viewer
    /// (default 127.0.0.1:8585).
    #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:8585", value_name = "ADDR")]
    pub profile_server: Option<String>,
    /// Window: after --screenshot-after frames, save the window to this PNG
    /// (and its layout to the same path with .json) and exit.
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Window: frames to show before the screenshot, 0..=100000.
    #[arg(long, default_value_t = 30, value_parser = in_range::<u32>(0, u64::from(MAX_FRAMES)))]
    pub screenshot_after: u32,
    /// Capture a frame into DIR as a gallium-scene/1 file with its side
    /// files (docs/capture.md): headless, the first frame (DIR/frame.json);
    /// in the window, where the "Capture frame" button writes.
    #[arg(long, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// Window size in logical pixels, WxH, each 1..=4096.
    #[arg(long, default_value = "1280x800", value_parser = parse_size)]
    pub window_size: (u32, u32),
}

impl Args {
    /// What to show: the file named on the command line, else `--scene`.
    pub fn source(&self) -> SceneSource {
        match &self.scene_file {
            Some(path) => SceneSource::from_path(path.clone()),
            None => SceneSource::Builtin(self.scene),
        }
    }

    /// The options given that the chosen source ignores: a scene file sets
    /// its own framebuffer, sample count and state, and the heat-map
    /// counts the demo's own draws only.  `main` warns about each rather
    /// than leave the user wondering why `--width 320` gave 256 pixels.
    pub fn ignored_options(&self) -> Vec<&'static str> {
        if !matches!(self.source(), SceneSource::File(_)) {
            return Vec::new();
        }
        [
            ("--width", self.width.is_some()),
            ("--height", self.height.is_some()),
            ("--msaa", self.msaa),
            ("--overdraw", self.overdraw),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

/// A parser of whole numbers in `min..=max`: a value outside is a usage
/// error naming the argument and the range (exit status 2), never clamped.
pub fn in_range<T>(min: u64, max: u64) -> RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    RangedU64ValueParser::<T>::new().range(min..=max)
}

/// `--width` / `--height`: `1..=MAX_DIMENSION`.
fn dimension() -> RangedU64ValueParser<u32> {
    in_range(1, u64::from(MAX_DIMENSION))
}

/// `--window-size WxH`, each side `1..=MAX_DIMENSION`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
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

/// `--time`: seconds, finite, `0..=MAX_TIME` (Rust's float parser takes
/// `nan` and `inf`, which would freeze or break the animation).
pub fn parse_time(s: &str) -> Result<f32, String> {
    s.parse::<f32>()
        .ok()
        .filter(|t| (0.0..=MAX_TIME).contains(t))
        .ok_or_else(|| format!("`{s}`: expected seconds in 0..={MAX_TIME}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("demo").chain(args.iter().copied()))
    }

    /// The usage error for `args`, rendered as the user sees it.
    fn error(args: &[&str]) -> String {
        let e = parse(args).expect_err(&format!("{args:?} should be refused"));
        assert_eq!(e.exit_code(), 2, "{args:?}: usage errors exit with 2");
        e.to_string()
    }

    #[test]
    fn every_range_is_enforced_not_clamped() {
        for (args, range) in [
            (&["--width", "20000"][..], "1..=4096"),
            (&["--width", "0"], "1..=4096"),
            (&["--height", "4097"], "1..=4096"),
            (&["--frames", "0"], "1..=100000"),
            (&["--frames", "100001"], "1..=100000"),
            (&["--threads", "1025"], "0..=1024"),
            (&["--triangles", "31"], "32..=20000000"),
            (&["--field-side", "0"], "1..=1024"),
            (&["--field-side", "1025"], "1..=1024"),
            (&["--screenshot-after", "100001"], "0..=100000"),
            (&["--time=-1"], "0..=3600"),
            (&["--time", "nan"], "0..=3600"),
            (&["--time", "inf"], "0..=3600"),
            (&["--time", "3600.5"], "0..=3600"),
            (&["--window-size", "5000x10"], "1..=4096"),
            (&["--window-size", "640x0"], "1..=4096"),
        ] {
            let e = error(args);
            let name = args[0].split('=').next().unwrap();
            assert!(
                e.contains(name) && e.contains(range),
                "{args:?}: the message names neither the argument nor {range}: {e}"
            );
        }
        assert!(error(&["--window-size", "640"]).contains("expected WxH"));
        assert!(parse(&["--frames", "-3"]).is_err());
    }

    #[test]
    fn the_ends_of_each_range_are_accepted() {
        let a = parse(&[
            "--width",
            "4096",
            "--height",
            "1",
            "--frames",
            "1",
            "--threads",
            "1024",
            "--time",
            "3600",
            "--screenshot-after",
            "0",
            "--window-size",
            "1x4096",
        ])
        .unwrap();
        assert_eq!(
            (a.width, a.height, a.frames, a.threads),
            (Some(4096), Some(1), 1, 1024)
        );
        assert_eq!(
            (a.time, a.screenshot_after, a.window_size),
            (Some(3600.0), 0, (1, 4096))
        );
        let a = parse(&["--frames", "100000", "--time", "0"]).unwrap();
        assert_eq!((a.frames, a.time), (100_000, Some(0.0)));
        // The defaults are in range too.
        let d = parse(&[]).unwrap();
        assert_eq!(
            (d.frames, d.screenshot_after, d.window_size),
            (60, 30, (1280, 800))
        );
    }

    #[test]
    fn options_a_scene_file_ignores_are_named() {
        let a = parse(&["scene.json", "--width", "320", "--msaa", "--threads", "2"]).unwrap();
        assert_eq!(a.source(), SceneSource::File("scene.json".into()));
        assert_eq!(a.ignored_options(), ["--width", "--msaa"]);
        let a = parse(&["scene.json", "--height", "9", "--overdraw"]).unwrap();
        assert_eq!(a.ignored_options(), ["--height", "--overdraw"]);
        // Models and built-in scenes use all of them.
        let a = parse(&["model.GLB", "--width", "320", "--msaa", "--overdraw"]).unwrap();
        assert_eq!(a.source(), SceneSource::Model("model.GLB".into()));
        assert!(a.ignored_options().is_empty());
        let a = parse(&["--scene", "field", "--width", "320", "--msaa"]).unwrap();
        assert_eq!(a.source(), SceneSource::Builtin(SceneKind::Field));
        assert!(a.ignored_options().is_empty());
    }
}
