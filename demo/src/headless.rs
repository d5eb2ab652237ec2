//! `demo --headless --frames N --out DIR [FILE]`: renders N frames of a
//! showcase scene, a scene file or a glTF model (a turntable: the camera
//! orbits it) to PNG, with a progress bar on stderr (indicatif).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::render::{Renderer, SceneSource};
use crate::scenes::SceneParams;
use crate::settings::RenderSettings;

/// What the headless mode renders.
pub struct HeadlessJob {
    pub source: SceneSource,
    pub settings: RenderSettings,
    pub params: SceneParams,
    pub frames: u32,
    pub out: PathBuf,
    /// Camera yaw advance per frame, radians.
    pub orbit_step: f32,
    /// Scene time per frame, seconds (animation is by frame number, so the
    /// output does not depend on how fast the machine is).
    pub frame_time: f32,
    /// `--capture DIR`: capture the first frame into `DIR/frame.json`
    /// (docs/capture.md).
    pub capture: Option<PathBuf>,
}

/// How the headless run failed; [`HeadlessError::exit_code`] follows the
/// replayer's convention (3 = ferropipe does not support something yet).
#[derive(Debug)]
pub enum HeadlessError {
    Render(ferropipe::Error),
    Io(PathBuf, std::io::Error),
    Png(PathBuf, png::EncodingError),
    Capture(ferropipe_scene::capture::CaptureError),
}

impl std::fmt::Display for HeadlessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeadlessError::Render(e) => write!(f, "ferropipe: {e}"),
            HeadlessError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            HeadlessError::Png(p, e) => write!(f, "{}: {e}", p.display()),
            HeadlessError::Capture(e) => write!(f, "{e}"),
        }
    }
}

impl HeadlessError {
    pub fn exit_code(&self) -> i32 {
        match self {
            HeadlessError::Render(e) if e.is_unsupported() => 3,
            HeadlessError::Capture(ferropipe_scene::capture::CaptureError::Inexpressible {
                ..
            })
            | HeadlessError::Capture(ferropipe_scene::capture::CaptureError::NativeShader {
                ..
            }) => 3,
            _ => 1,
        }
    }
}

impl From<ferropipe::Error> for HeadlessError {
    fn from(e: ferropipe::Error) -> Self {
        HeadlessError::Render(e)
    }
}

/// Renders the job's frames to `out/frame_NNNN.png`, frame `i` at scene
/// time `start_time + i * frame_time`; returns the mean render time in
/// milliseconds.
pub fn run_from(job: &HeadlessJob, start_time: f32) -> Result<f64, HeadlessError> {
    std::fs::create_dir_all(&job.out).map_err(|e| HeadlessError::Io(job.out.clone(), e))?;
    let mut renderer = Renderer::new(job.settings.threads)?;
    renderer.set_scene(job.source.clone(), &job.params)?;
    let mut camera = renderer
        .model_camera()
        .unwrap_or_else(|| job.source.default_camera());
    if let Some(dir) = &job.capture {
        renderer.capture_next_frame(dir.clone(), "frame".into());
    }
    let mut bar = Progress::new(job.frames);
    let started = Instant::now();
    let mut total_ms = 0.0;
    for i in 0..job.frames {
        let report = renderer.render(
            &job.settings,
            &camera,
            &job.params,
            Some(start_time + i as f32 * job.frame_time),
        )?;
        total_ms += report.render_ms;
        if let Some(result) = renderer.take_capture_result() {
            let summary = result.map_err(HeadlessError::Capture)?;
            bar.bar.suspend(|| {
                eprintln!(
                    "demo: captured frame {i} into {} ({} calls, {} bytes of data)",
                    summary.scene.display(),
                    summary.calls,
                    summary.data_bytes
                )
            });
        }
        let (pixels, w, h) = renderer.pixels().expect("a frame was rendered");
        let path = job.out.join(format!("frame_{i:04}.png"));
        write_png(&path, pixels, w, h)?;
        camera.orbit(job.orbit_step);
        ferropipe_profiling::new_frame();
        bar.update(i + 1, report.render_ms);
    }
    bar.finish(started.elapsed().as_secs_f64());
    Ok(total_ms / job.frames.max(1) as f64)
}

/// Writes RGBA8 rows (top first) as an 8-bit RGBA PNG.
pub fn write_png(path: &Path, rgba: &[u8], width: u32, height: u32) -> Result<(), HeadlessError> {
    let file = std::fs::File::create(path).map_err(|e| HeadlessError::Io(path.to_owned(), e))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let png_err = |e| HeadlessError::Png(path.to_owned(), e);
    let mut w = enc.write_header().map_err(png_err)?;
    w.write_image_data(rgba).map_err(png_err)?;
    w.finish().map_err(png_err)
}

/// A progress bar on stderr (indicatif; hidden when stderr is not a
/// terminal, so CI logs get the final summary line only).
struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    fn new(total: u32) -> Self {
        let bar = indicatif::ProgressBar::new(u64::from(total.max(1)));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "[{bar:30}] {pos}/{len} frames  {msg}  eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("#>."),
        );
        Progress { bar }
    }

    fn update(&mut self, done: u32, ms: f64) {
        self.bar.set_message(format!("{ms:6.1} ms/frame"));
        self.bar.set_position(u64::from(done));
    }

    fn finish(&self, seconds: f64) {
        self.bar.finish_and_clear();
        let total = self.bar.length().unwrap_or(0);
        let _ = writeln!(
            std::io::stderr().lock(),
            "rendered {total} frames in {seconds:.2} s"
        );
    }
}
