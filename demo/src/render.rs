//! One ferropipe screen and context rendering the demo's frames.
//!
//! Shared by the window and the headless mode: [`Renderer::render`] sets up
//! the frame from [`RenderSettings`], lets the scene record its draws,
//! flushes, and returns what the overlay shows.

use std::time::Instant;

use ferropipe::components::enums::QueryType;
use ferropipe::{Context, Error, QueryHandle, QueryResult, Result, Screen, ScreenConfig};
use ferropipe_profiling::{self as profiling, Counts};

use crate::camera::OrbitCamera;
use crate::gfx::{self, FrameSetup, Targets};
use crate::scenes::{self, FrameInput, SceneKind, SceneParams, Showcase};
use crate::settings::RenderSettings;

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

/// What one frame cost and did.
#[derive(Clone, Debug, Default)]
pub struct FrameReport {
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
}

/// A screen, a context, the frame targets and the current scene.
///
/// Field order is drop order: the scene's CSOs and the context go before the
/// targets whose host memory they may reference.
pub struct Renderer {
    scene: Option<Box<dyn Showcase>>,
    source: Option<SceneSource>,
    statistics_query: Option<QueryHandle>,
    statistics_supported: bool,
    cache: gfx::StateCache,
    ctx: Context,
    targets: Option<Targets>,
    screen: Screen,
    threads: usize,
    started: Instant,
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
            targets: None,
            screen,
            threads,
            started: Instant::now(),
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
        if let Some(old) = self.scene.take() {
            old.release(&mut self.ctx);
        }
        self.source = Some(source.clone());
        self.started = Instant::now();
        let scene = match source {
            SceneSource::Builtin(kind) => {
                scenes::create(kind, &self.screen, &mut self.ctx, params)?
            }
        };
        self.scene = Some(scene);
        Ok(())
    }

    /// Renders one frame at `time` seconds (`None`: wall-clock time since
    /// the scene started).
    pub fn render(
        &mut self,
        settings: &RenderSettings,
        camera: &OrbitCamera,
        params: &SceneParams,
        time: Option<f32>,
    ) -> Result<FrameReport> {
        profiling::scope!("render_frame");
        let start = Instant::now();
        let before = profiling::global().snapshot();
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
        let query = self.begin_statistics();
        let targets = self.targets.as_ref().expect("ensured above");
        let scene = self.scene.as_mut().expect("checked above");
        let aspect = targets.width as f32 / targets.height as f32;
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
        if let Some(q) = query {
            let _ = self.ctx.end_query(q);
        }
        {
            profiling::scope!("flush_and_wait");
            gfx::end_frame(&mut self.ctx, targets)?;
        }
        let statistics = query.and_then(|q| match self.ctx.get_query_result(q, true) {
            Ok(Some(QueryResult::PipelineStatistics(a))) => Some(PipelineStatistics::from_array(a)),
            _ => None,
        });
        Ok(FrameReport {
            render_ms: start.elapsed().as_secs_f64() * 1e3,
            counters: profiling::global().snapshot().since(&before),
            statistics,
            submitted_triangles,
        })
    }

    /// The last finished frame: RGBA8 rows, top to bottom.
    pub fn pixels(&self) -> Option<(&[u8], u32, u32)> {
        self.targets
            .as_ref()
            .map(|t| (t.pixels(), t.width, t.height))
    }

    /// Starts a pipeline-statistics query for the frame, if the context
    /// supports them (checked once; an unsupported query is not an error
    /// for the demo, the overlay says "n/a").
    fn begin_statistics(&mut self) -> Option<QueryHandle> {
        if !self.statistics_supported {
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
