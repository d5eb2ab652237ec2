//! One ferropipe screen and context rendering the demo's frames.
//!
//! Shared by the window and the headless mode: [`Renderer::render`] sets up
//! the frame from [`RenderSettings`], lets the scene record its draws,
//! flushes, and returns what the overlay shows.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ferropipe::QueryType;
use ferropipe::{
    BoundState, Context, Error, QueryHandle, QueryResult, Result, Screen, ScreenConfig,
};
use ferropipe_profiling::{self as profiling, Counts};
use ferropipe_scene::capture::{CaptureError, CaptureSummary, SceneCapture};
use ferropipe_scene::{OutputPixels, Replayer, Scene, SceneError};

use crate::camera::OrbitCamera;
use crate::gfx::{self, FrameSetup, Targets};
use crate::overdraw;
use crate::scenes::{self, FrameInput, SceneKind, SceneParams, Showcase};
use crate::settings::RenderSettings;

/// Fragments per pixel that the overdraw heat-map shows as full red (the
/// overlay's legend runs from 0 to this).
pub const HEAT_MAP_MAX: u32 = 8;
/// `pipe_query_data_pipeline_statistics`, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineStatistics {
    pub ia_vertices: u64,
    pub ia_primitives: u64,
    pub vs_invocations: u64,
    /// Primitives sent to the clipper.
    pub c_invocations: u64,
    /// Primitives that came out of the clipper.
    pub c_primitives: u64,
    pub ps_invocations: u64,
}

impl PipelineStatistics {
    fn from_array(a: [u64; 11]) -> Self {
        PipelineStatistics {
            ia_vertices: a[0],
            ia_primitives: a[1],
            vs_invocations: a[2],
            c_invocations: a[5],
            c_primitives: a[6],
            ps_invocations: a[7],
        }
    }
}

/// What kind of picture a frame is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameContent {
    /// A built-in showcase scene.
    #[default]
    Builtin,
    /// A glTF model.
    Model,
    /// A scene file's output, in its own framebuffer's size.
    SceneFile,
    /// The overdraw heat-map of a built-in scene or model.
    HeatMap,
}

/// The picture [`Renderer::pixels`] holds after a frame: what the
/// overlay describes, so its resolution line is the frame on screen (a
/// scene file's own framebuffer, not the panel's resolution).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShownFrame {
    pub width: u32,
    pub height: u32,
    /// Samples per pixel it was rendered with (1 for scene files: their
    /// outputs are single-sampled images, FORMAT.md).
    pub samples: u32,
    /// Worker threads of the screen that rendered it.
    pub threads: usize,
    pub content: FrameContent,
}

/// What one frame cost and did.
#[derive(Clone, Debug, Default)]
pub struct FrameReport {
    /// The picture rendered.
    pub frame: ShownFrame,
    /// Wall time from the first state call to the fence, milliseconds.
    pub render_ms: f64,
    /// The pipeline's counters over this frame (all zero when the pipeline
    /// does not report them).
    pub counters: Counts,
    /// `PIPE_QUERY_PIPELINE_STATISTICS` over the frame's draws, when the
    /// context supports the query.
    pub statistics: Option<PipelineStatistics>,
    /// Triangles the scene submitted.
    pub submitted_triangles: u64,
}

/// The scene currently shown.
#[derive(Clone, Debug, PartialEq)]
pub enum SceneSource {
    Builtin(SceneKind),
    /// A `gallium-scene/1` file, replayed every frame.
    File(PathBuf),
    /// A glTF 2.0 model (`.glb` / `.gltf`), drawn by `ferropipe-gltf`.
    Model(PathBuf),
}

impl SceneSource {
    /// A short name for titles and messages.
    pub fn label(&self) -> String {
        match self {
            SceneSource::Builtin(k) => k.label().to_owned(),
            SceneSource::File(p) | SceneSource::Model(p) => p.display().to_string(),
        }
    }

    /// A file to show: a glTF model for `.glb` / `.gltf` (any case), a
    /// scene file otherwise.
    pub fn from_path(path: PathBuf) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("glb" | "gltf") => SceneSource::Model(path),
            _ => SceneSource::File(path),
        }
    }

    /// The file shown, for file sources.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SceneSource::Builtin(_) => None,
            SceneSource::File(p) | SceneSource::Model(p) => Some(p),
        }
    }

    /// Where the orbit camera starts: the field is wide and seen from
    /// higher up; everything else from the default orbit.
    pub fn default_camera(&self) -> OrbitCamera {
        match self {
            SceneSource::Builtin(SceneKind::Field) => OrbitCamera {
                distance: 5.5,
                pitch: 0.6,
                ..OrbitCamera::default()
            },
            _ => OrbitCamera::default(),
        }
    }
}

/// A scene file replayed every frame, the way `replay --time` re-runs its
/// work: the calls before `timing_begin` (setup) run once, then each frame
/// restores the bound state from that point and replays the rest, and the
/// first colour output is the frame.
///
/// File scenes carry all their own state (framebuffer, rasterizer,
/// shaders), so the side panel's settings do not apply to them.
pub struct FilePlayer {
    scene: Scene,
    replayer: Replayer,
    snapshot: BoundState,
    first: bool,
    frame: Option<(Vec<u8>, u32, u32)>,
    /// Index into the scene's outputs of the one shown.
    pub output: usize,
}

impl FilePlayer {
    /// Loads and validates the scene and runs its setup calls.
    pub fn load(path: &Path, threads: usize) -> std::result::Result<Self, SceneError> {
        let scene = Scene::load(path)?;
        let mut replayer = Replayer::new(threads)?;
        let work = scene.work_range();
        replayer.run(&scene, 0..work.start, true)?;
        let snapshot = replayer.snapshot();
        let output = scene
            .outputs
            .iter()
            .position(|o| !o.name.contains("depth") && !o.name.contains("stencil"))
            .unwrap_or(0);
        Ok(FilePlayer {
            scene,
            replayer,
            snapshot,
            first: true,
            frame: None,
            output,
        })
    }

    /// The names of the scene's outputs.
    pub fn output_names(&self) -> Vec<String> {
        self.scene.outputs.iter().map(|o| o.name.clone()).collect()
    }

    /// Replays the scene's work once and reads the shown output.
    fn render(&mut self) -> std::result::Result<(), SceneError> {
        let work = self.scene.work_range();
        if !self.first {
            self.replayer.restore(self.snapshot.clone())?;
        }
        // The first replay logs and checks queries like `replay` does.
        self.replayer.run(&self.scene, work, self.first)?;
        self.first = false;
        let outputs = self.replayer.read_outputs(&self.scene)?;
        let Some(out) = outputs.get(self.output).or(outputs.first()) else {
            return Err(SceneError::Unsupported("the scene names no outputs".into()));
        };
        match &out.pixels {
            OutputPixels::Color(rgba) => {
                self.frame = Some((rgba.clone(), out.width, out.height));
            }
            OutputPixels::DepthStencil { depth, stencil } => {
                // Depth as grey (near = dark), or stencil values scaled.
                let grey: Vec<u8> = match (depth, stencil) {
                    (Some(z), _) => z
                        .iter()
                        .map(|&v| (v.clamp(0.0, 1.0) * 255.0) as u8)
                        .collect(),
                    (None, Some(s)) => s.clone(),
                    (None, None) => vec![0; (out.width * out.height) as usize],
                };
                let rgba = grey.iter().flat_map(|&g| [g, g, g, 255]).collect();
                self.frame = Some((rgba, out.width, out.height));
            }
            OutputPixels::Bytes(_) => {
                return Err(SceneError::Unsupported(format!(
                    "output {:?} is a buffer (written as {}.bin; nothing to show)",
                    out.name, out.name
                )));
            }
        }
        Ok(())
    }
}

/// What the renderer is showing.
enum Active {
    Builtin(Box<dyn Showcase>),
    File(Box<FilePlayer>),
    Model(Box<ferropipe_gltf::Model>),
}

/// A glTF loading error as a façade error, for one error type in the UI
/// (unsupported features stay `Unsupported`, exit code 3 headless).
fn model_error(e: ferropipe_gltf::Error) -> Error {
    match e {
        ferropipe_gltf::Error::Ferropipe(e) => e,
        e if e.is_unsupported() => Error::unsupported("glTF model", e.to_string()),
        e => Error::invalid("glTF model", "file", e.to_string()),
    }
}

/// A scene error as a façade error, for one error type in the UI.
fn scene_error(e: SceneError) -> Error {
    match e {
        SceneError::Unsupported(what) => Error::unsupported("scene replay", what),
        other => Error::invalid("scene replay", "scene", other.to_string()),
    }
}

/// A screen, a context, the frame targets and the current scene.
///
/// Field order is drop order: the scene's CSOs and the context go before the
/// targets whose host memory they may reference.
pub struct Renderer {
    scene: Option<Active>,
    source: Option<SceneSource>,
    statistics_query: Option<QueryHandle>,
    statistics_supported: bool,
    cache: gfx::StateCache,
    ctx: Context,
    /// Whether the overdraw system is in the context's schedule.
    overdraw_installed: bool,
    /// The heat-map of the last frame, shown instead of the image while
    /// `RenderSettings::overdraw` is on.
    heat_map: Option<(Vec<u8>, u32, u32)>,
    targets: Option<Targets>,
    screen: Screen,
    threads: usize,
    started: Instant,
    /// Capture the next frame into (directory, scene name).
    capture_next: Option<(PathBuf, String)>,
    /// How the last capture went.
    capture_result: Option<std::result::Result<CaptureSummary, CaptureError>>,
}

impl Renderer {
    /// A renderer with `threads` workers (0 = one per CPU).
    pub fn new(threads: usize) -> Result<Self> {
        let screen = Screen::new(ScreenConfig {
            threads,
            ..Default::default()
        })?;
        let ctx = screen.context_create()?;
        Ok(Renderer {
            scene: None,
            source: None,
            statistics_query: None,
            statistics_supported: true,
            cache: gfx::StateCache::default(),
            ctx,
            overdraw_installed: false,
            heat_map: None,
            targets: None,
            screen,
            threads,
            started: Instant::now(),
            capture_next: None,
            capture_result: None,
        })
    }

    /// The thread count it was created with (0 = one per CPU).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Worker threads actually running.
    pub fn worker_threads(&self) -> usize {
        self.screen.threads()
    }

    /// Seconds since the current scene started.
    pub fn scene_time(&self) -> f32 {
        self.started.elapsed().as_secs_f32()
    }

    /// Whether a scene is loaded (false after a failed `set_scene`).
    pub fn has_scene(&self) -> bool {
        self.scene.is_some()
    }

    pub fn source(&self) -> Option<&SceneSource> {
        self.source.as_ref()
    }

    /// Switches to `source`, creating its resources.
    pub fn set_scene(&mut self, source: SceneSource, params: &SceneParams) -> Result<()> {
        match self.scene.take() {
            Some(Active::Builtin(old)) => old.release(&mut self.ctx),
            Some(Active::Model(old)) => old.release(&mut self.ctx),
            _ => {}
        }
        self.source = Some(source.clone());
        self.started = Instant::now();
        let scene = match source {
            SceneSource::Builtin(kind) => {
                Active::Builtin(scenes::create(kind, &self.screen, &mut self.ctx, params)?)
            }
            SceneSource::File(path) => Active::File(Box::new(
                FilePlayer::load(&path, self.threads).map_err(scene_error)?,
            )),
            SceneSource::Model(path) => Active::Model(Box::new(
                ferropipe_gltf::Model::load(&self.screen, &mut self.ctx, &path)
                    .map_err(model_error)?,
            )),
        };
        self.scene = Some(scene);
        Ok(())
    }

    /// An orbit camera framing the loaded glTF model's bounds (`None` for
    /// other scenes).
    pub fn model_camera(&self) -> Option<OrbitCamera> {
        match &self.scene {
            Some(Active::Model(m)) => {
                let b = m.bounds()?;
                Some(OrbitCamera::framing(b.centre(), b.radius()))
            }
            _ => None,
        }
    }

    /// The scene file being replayed, if that is what is shown.
    pub fn file_player(&mut self) -> Option<&mut FilePlayer> {
        match &mut self.scene {
            Some(Active::File(f)) => Some(f),
            _ => None,
        }
    }

    /// Captures the next frame [`Renderer::render`] draws into
    /// `dir/NAME.json` (a `gallium-scene/1` file with its side files;
    /// docs/capture.md).  [`Renderer::take_capture_result`] says how it
    /// went.
    pub fn capture_next_frame(&mut self, dir: PathBuf, name: String) {
        self.capture_next = Some((dir, name));
    }

    /// The result of the last capture, once (`None` while none finished).
    pub fn take_capture_result(
        &mut self,
    ) -> Option<std::result::Result<CaptureSummary, CaptureError>> {
        self.capture_result.take()
    }

    /// Renders one frame at `time` seconds (`None`: wall-clock time since
    /// the scene started), captured when [`Renderer::capture_next_frame`]
    /// asked for it.
    pub fn render(
        &mut self,
        settings: &RenderSettings,
        camera: &OrbitCamera,
        params: &SceneParams,
        time: Option<f32>,
    ) -> Result<FrameReport> {
        let Some((dir, name)) = self.capture_next.take() else {
            return self.render_frame(settings, camera, params, time);
        };
        // The file player replays on its own context: capture that one.
        let ctx = match &mut self.scene {
            Some(Active::File(p)) => &mut p.replayer.ctx,
            _ => &mut self.ctx,
        };
        if let Err(e) = ctx.start_capture(Box::new(SceneCapture::named(&dir, &name))) {
            self.capture_result = Some(Err(CaptureError::Context(e.to_string())));
            return self.render_frame(settings, camera, params, time);
        }
        let report = self.render_frame(settings, camera, params, time);
        let ctx = match &mut self.scene {
            Some(Active::File(p)) => &mut p.replayer.ctx,
            _ => &mut self.ctx,
        };
        self.capture_result = Some(SceneCapture::finish(ctx));
        report
    }

    fn render_frame(
        &mut self,
        settings: &RenderSettings,
        camera: &OrbitCamera,
        params: &SceneParams,
        time: Option<f32>,
    ) -> Result<FrameReport> {
        profiling::scope!("render_frame");
        let start = Instant::now();
        let before = profiling::global().snapshot();
        if let Some(Active::File(player)) = &mut self.scene {
            player.render().map_err(scene_error)?;
            let (width, height) = player.frame.as_ref().map_or((0, 0), |f| (f.1, f.2));
            return Ok(FrameReport {
                frame: ShownFrame {
                    width,
                    height,
                    samples: 1,
                    threads: player.replayer.screen.threads(),
                    content: FrameContent::SceneFile,
                },
                render_ms: start.elapsed().as_secs_f64() * 1e3,
                counters: profiling::global().snapshot().since(&before),
                statistics: None,
                submitted_triangles: 0,
            });
        }
        self.ensure_targets(settings)?;
        if self.scene.is_none() {
            return Err(Error::invalid(
                "Renderer::render",
                "scene",
                "no scene loaded",
            ));
        }
        let targets = self.targets.as_ref().expect("ensured above");
        let rasterizer = settings.rasterizer();
        gfx::begin_frame(
            &mut self.ctx,
            targets,
            &mut self.cache,
            &FrameSetup {
                rasterizer: &rasterizer,
                scissor: settings.scissor.then(|| settings.scissor_state()),
                clear_color: [0.07, 0.08, 0.1, 1.0],
            },
        )?;
        self.prepare_overdraw(settings.overdraw);
        let query = self.begin_statistics();
        let targets = self.targets.as_ref().expect("ensured above");
        let aspect = targets.width as f32 / targets.height as f32;
        if let Some(Active::Model(model)) = self.scene.as_mut() {
            let camera = ferropipe_gltf::Camera {
                view: camera.view(),
                proj: camera.proj(aspect),
            };
            let options = ferropipe_gltf::DrawOptions {
                rasterizer,
                ..Default::default()
            };
            let stats = {
                profiling::scope!("scene_draw");
                model
                    .draw(&mut self.ctx, &camera, &options)
                    .map_err(model_error)?
            };
            return self.finish_frame(settings, query, start, &before, stats.triangles);
        }
        let Some(Active::Builtin(scene)) = self.scene.as_mut() else {
            unreachable!("file scenes returned above");
        };
        let input = FrameInput {
            view_proj: camera.view_proj(aspect),
            eye: camera.eye(),
            time: time.unwrap_or_else(|| self.started.elapsed().as_secs_f32()),
            params: *params,
        };
        {
            profiling::scope!("scene_draw");
            scene.draw(&self.screen, &mut self.ctx, &input)?;
        }
        let submitted_triangles = scene.triangles();
        self.finish_frame(settings, query, start, &before, submitted_triangles)
    }

    /// Ends the frame's statistics query, flushes and waits, and reports.
    fn finish_frame(
        &mut self,
        settings: &RenderSettings,
        query: Option<QueryHandle>,
        start: Instant,
        before: &Counts,
        submitted_triangles: u64,
    ) -> Result<FrameReport> {
        let targets = self.targets.as_ref().expect("ensured by render");
        if let Some(q) = query {
            let _ = self.ctx.end_query(q);
        }
        {
            profiling::scope!("flush_and_wait");
            gfx::end_frame(&mut self.ctx, targets)?;
        }
        if settings.overdraw {
            self.heat_map = self
                .ctx
                .resource::<overdraw::Overdraw>()
                .map(|m| (overdraw::heat_map(m, HEAT_MAP_MAX), m.width, m.height));
        }
        let statistics = query.and_then(|q| match self.ctx.get_query_result(q, true) {
            Ok(Some(QueryResult::PipelineStatistics(a))) => Some(PipelineStatistics::from_array(a)),
            _ => None,
        });
        // What `pixels` returns: the heat-map once there is one.
        let content = match (&self.scene, self.heat_map.is_some()) {
            (_, true) => FrameContent::HeatMap,
            (Some(Active::Model(_)), false) => FrameContent::Model,
            _ => FrameContent::Builtin,
        };
        let frame = ShownFrame {
            width: targets.width,
            height: targets.height,
            samples: targets.samples,
            threads: self.screen.threads(),
            content,
        };
        Ok(FrameReport {
            frame,
            render_ms: start.elapsed().as_secs_f64() * 1e3,
            counters: profiling::global().snapshot().since(before),
            statistics,
            submitted_triangles,
        })
    }

    /// Installs the overdraw system on first use; turns it on (a fresh,
    /// zeroed map) or off (no map: its run condition skips it).
    fn prepare_overdraw(&mut self, on: bool) {
        if !on {
            self.heat_map = None;
            self.ctx.remove_resource::<overdraw::Overdraw>();
            return;
        }
        if !self.overdraw_installed {
            overdraw::install(&mut self.ctx);
            self.overdraw_installed = true;
        }
        match self.ctx.resource_mut::<overdraw::Overdraw>() {
            Some(mut m) => m.counts.fill(0),
            None => {
                self.ctx.insert_resource(overdraw::Overdraw::default());
            }
        }
    }

    /// The last finished frame: RGBA8 rows, top to bottom (the overdraw
    /// heat-map instead while that setting is on).
    pub fn pixels(&self) -> Option<(&[u8], u32, u32)> {
        if let (Some((p, w, h)), Some(Active::Builtin(_) | Active::Model(_))) =
            (&self.heat_map, &self.scene)
        {
            return Some((p.as_slice(), *w, *h));
        }
        match &self.scene {
            Some(Active::File(f)) => f.frame.as_ref().map(|(p, w, h)| (p.as_slice(), *w, *h)),
            _ => self
                .targets
                .as_ref()
                .map(|t| (t.pixels(), t.width, t.height)),
        }
    }

    /// Starts a pipeline-statistics query for the frame, if the context
    /// supports them (checked once; an unsupported query is not an error
    /// for the demo, the overlay says "n/a").
    fn begin_statistics(&mut self) -> Option<QueryHandle> {
        // The overlay's query is instrumentation, not the frame: a captured
        // frame leaves it out (its counters are implementation-dependent,
        // FORMAT.md, so a reference replay could not match them).
        if !self.statistics_supported || self.ctx.is_capturing() {
            return None;
        }
        if self.statistics_query.is_none() {
            match self.ctx.create_query(QueryType::PipelineStatistics, 0) {
                Ok(q) => self.statistics_query = Some(q),
                Err(_) => {
                    self.statistics_supported = false;
                    return None;
                }
            }
        }
        let q = self.statistics_query?;
        match self.ctx.begin_query(q) {
            Ok(()) => Some(q),
            Err(_) => {
                self.statistics_supported = false;
                None
            }
        }
    }

    fn ensure_targets(&mut self, settings: &RenderSettings) -> Result<()> {
        let want = (settings.width, settings.height, settings.samples());
        if let Some(t) = &self.targets
            && (t.width, t.height, t.samples) == want
        {
            return Ok(());
        }
        if let Some(old) = self.targets.take() {
            old.release(&mut self.ctx);
        }
        self.targets = Some(Targets::new(
            &self.screen,
            &mut self.ctx,
            want.0,
            want.1,
            want.2,
        )?);
        Ok(())
    }
}
