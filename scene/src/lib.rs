//! The `gallium-scene/1` reader, replayer and capture writer
//! (`../shared/scenes/FORMAT.md`): the `ferropipe-scene` crate, so the
//! `ferropipe` library itself needs neither JSON nor PNG (issue 16).
//!
//! Library code so the replay CLI, the tests, the demo and the fuzzers share
//! it:
//!
//! ```no_run
//! use ferropipe_scene::{ReplayOptions, Scene, replay_to_dir};
//! let scene = Scene::load("tests/scenes/conformance/clear_subrect.json".as_ref())?;
//! let report = replay_to_dir(&scene, "out/clear_subrect".as_ref(), &ReplayOptions::default())?;
//! std::process::exit(report.exit_code());
//! # Ok::<(), ferropipe_scene::SceneError>(())
//! ```
//!
//! * [`Scene::load`] / [`Scene::parse`] read and validate the whole scene
//!   first (into [`Call`]s): a malformed scene is [`SceneError::Malformed`]
//!   (exit 2) naming the call index and field; a field, op variant or value
//!   FORMAT.md allows but ferropipe does not implement is
//!   [`SceneError::Unsupported`] (exit 3).
//! * [`Replayer`] executes calls on one `Screen` + `Context`; façade errors
//!   become exit 3 (`Error::Unsupported`, allocations too large) or exit 2
//!   (invalid arguments), naming the call.
//! * [`capture::SceneCapture`] records what a `Context` does into a scene
//!   file (issue 18; docs/capture.md).
//! * [`replay_to_dir`] runs a scene, writes its outputs ([`output`]) and
//!   `queries.jsonl`, and with `time_runs > 0` replays the work after
//!   `timing_begin` that many times from the bound state at `timing_begin`,
//!   measuring flush to flush, into `timing.json`.
#![warn(missing_docs)]

pub mod capture;
pub mod compare;
mod json;
pub mod output;
mod parse;
mod replay;

use std::path::Path;
use std::time::Instant;

pub use output::{OutputData, OutputPixels};
/// The typed call list (the parser's `parse` and the replayer's `replay`
/// modules are private; these are what a caller names).
pub use parse::{
    BlitCall, BlitSide, Call, ConstantSource, DataDir, ImageSpec, Kind, LaunchGridCall,
    MAX_SCENE_FILE_BYTES, Output, OutputSource, Scene, parse_scene, parse_scene_in,
};
pub use replay::Replayer;

/// Why a scene could not be replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SceneError {
    /// The scene is malformed (exit status 2).
    #[error("malformed scene: {0}")]
    Malformed(String),
    /// The scene needs something ferropipe does not implement (exit 3).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Outputs could not be written (exit 4).
    #[error("i/o error: {0}")]
    Io(String),
    /// The replay ran past its work budget ([`ReplayOptions::budget`]) and
    /// the context was lost (exit 5): valid input, too much work.
    #[error("device lost: {0}")]
    DeviceLost(String),
}

impl SceneError {
    /// The replay CLI's exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            SceneError::Malformed(_) => 2,
            SceneError::Unsupported(_) => 3,
            SceneError::Io(_) => 4,
            SceneError::DeviceLost(_) => 5,
        }
    }
}

impl Scene {
    /// Reads and validates a scene file (data files and shader sources are
    /// relative to its directory).
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SceneError::Malformed(format!("cannot read scene {}: {e}", path.display()))
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        parse_scene(&text, base)
    }

    /// Validates scene JSON text.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Scene, SceneError> {
        parse_scene(text, base_dir)
    }

    /// Validates scene JSON text that is not trusted: data files and shader
    /// sources must be plain relative paths inside `base_dir` (see
    /// [`DataDir`]).  The fuzzers use this.
    pub fn parse_confined(text: &str, base_dir: &Path) -> Result<Scene, SceneError> {
        parse_scene_in(
            text,
            DataDir {
                base: base_dir,
                confined: true,
            },
        )
    }

    /// The calls a benchmark times: those after `timing_begin`, or all.
    pub fn work_range(&self) -> std::ops::Range<usize> {
        match self.timing_begin {
            Some(t) => t + 1..self.calls.len(),
            None => 0..self.calls.len(),
        }
    }
}

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// Worker threads (0 = all CPUs).
    pub threads: usize,
    /// Timed replays of the work after `timing_begin` (0 = none).
    pub time_runs: usize,
    /// Print progress to stderr on long replays.
    pub progress: bool,
    /// The context's work budget for every flush and launch
    /// ([`ferropipe::Context::set_work_budget`]; the default is unbounded).
    pub budget: ferropipe::WorkBudget,
    /// How `poly_smooth` renders ([`ferropipe::ScreenConfig::poly_smooth`];
    /// `None`: `FERROPIPE_POLY_SMOOTH`, else GL's analytic coverage).  The
    /// conformance test replays with [`ferropipe::PolySmooth::Off`], as its
    /// references are llvmpipe's.
    pub poly_smooth: Option<ferropipe::PolySmooth>,
}

/// `--time` results.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// The median of `runs`, in milliseconds.
    pub median_ms: f64,
    /// Each timed run, flush to flush, in milliseconds.
    pub runs: Vec<f64>,
    /// Worker threads of the screen the runs used.
    pub threads: usize,
    /// Calls after `timing_begin`: what each run repeats.
    pub timed_calls: usize,
    /// Calls before `timing_begin`: set up once, not timed.
    pub setup_calls: usize,
}

/// What a replay produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayReport {
    /// The scene's `outputs`, read back after the last call.
    pub outputs: Vec<OutputData>,
    /// `get_query_result` lines: (query id, result).
    pub queries: Vec<(String, serde_json::Value)>,
    /// `expect` mismatches; non-empty means exit status 1.
    pub expect_failures: Vec<String>,
    /// The `--time` results, when timing was asked for.
    pub timing: Option<Timing>,
}

impl ReplayReport {
    /// 0, or 1 when a query differed from its `expect`.
    pub fn exit_code(&self) -> i32 {
        if self.expect_failures.is_empty() {
            0
        } else {
            1
        }
    }
}

/// A timed run's flush failing: a lost context (exit 5) or a feature
/// ferropipe lacks (exit 3).
fn flush_error(e: ferropipe::Error) -> SceneError {
    if matches!(e, ferropipe::Error::DeviceLost { .. }) {
        SceneError::DeviceLost(e.to_string())
    } else {
        SceneError::Unsupported(e.to_string())
    }
}

/// Replays `scene` in memory: every call, then the outputs.  With
/// `time_runs`, also the timed re-runs.
pub fn replay(scene: &Scene, opts: &ReplayOptions) -> Result<ReplayReport, SceneError> {
    let mut r = Replayer::with_config(ferropipe::ScreenConfig {
        threads: opts.threads,
        poly_smooth: opts.poly_smooth,
        ..Default::default()
    })?;
    r.progress = opts.progress;
    r.ctx
        .set_work_budget(opts.budget)
        .map_err(|e| SceneError::DeviceLost(e.to_string()))?;
    let work = scene.work_range();
    r.run(scene, 0..work.start, true)?;
    let snapshot = r.snapshot();
    r.run(scene, work.clone(), true)?;
    let outputs = r.read_outputs(scene)?;
    let timing = if opts.time_runs > 0 {
        let mut runs = Vec::with_capacity(opts.time_runs);
        for k in 0..opts.time_runs {
            r.restore(snapshot.clone())?;
            r.ctx.flush().map_err(flush_error)?;
            let t0 = Instant::now();
            r.run(scene, work.clone(), false)?;
            r.ctx.flush().map_err(flush_error)?;
            runs.push(t0.elapsed().as_secs_f64() * 1000.0);
            if opts.progress && runs[k] > 1000.0 {
                eprintln!(
                    "replay: timed run {}/{}: {:.0} ms",
                    k + 1,
                    opts.time_runs,
                    runs[k]
                );
            }
        }
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ms = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Timing {
            median_ms,
            runs,
            threads: r.screen.threads(),
            timed_calls: work.len(),
            setup_calls: work.start,
        })
    } else {
        None
    };
    Ok(ReplayReport {
        outputs,
        queries: std::mem::take(&mut r.query_log),
        expect_failures: std::mem::take(&mut r.expect_failures),
        timing,
    })
}

/// Replays `scene` and writes everything FORMAT.md asks for into `out_dir`:
/// the outputs, `queries.jsonl`, a `manifest.json` like the reference
/// tool's, and `timing.json` when timed.
pub fn replay_to_dir(
    scene: &Scene,
    out_dir: &Path,
    opts: &ReplayOptions,
) -> Result<ReplayReport, SceneError> {
    let report = replay(scene, opts)?;
    std::fs::create_dir_all(out_dir)
        .map_err(|e| SceneError::Io(format!("cannot create {}: {e}", out_dir.display())))?;
    for o in &report.outputs {
        o.write(out_dir)?;
    }
    output::write_queries(out_dir, &report.queries)?;
    let manifest = serde_json::json!({
        "renderer": "ferropipe",
        "outputs": report.outputs.iter().zip(&scene.outputs).map(|(o, so)| match (&o.pixels, &so.source) {
            (OutputPixels::Bytes(b), OutputSource::Buffer { id, .. }) => serde_json::json!({
                "name": o.name,
                "files": o.files(),
                "size": b.len(),
                "buffer": id,
            }),
            _ => serde_json::json!({
                "name": o.name,
                "files": o.files(),
                "width": o.width,
                "height": o.height,
                "format": o.format.gallium_name(),
            }),
        }).collect::<Vec<_>>(),
        "query_types": scene.query_types.iter()
            .map(|(id, t)| (id.clone(), serde_json::Value::from(t.gallium_name())))
            .collect::<serde_json::Map<_, _>>(),
        "nondeterministic_queries": nondeterministic_queries(scene),
    });
    write_json(&out_dir.join("manifest.json"), &manifest)?;
    if let Some(t) = &report.timing {
        let timing = serde_json::json!({
            "renderer": "ferropipe",
            "median_ms": t.median_ms,
            "runs": t.runs,
            "threads": t.threads,
            "timed_calls": t.timed_calls,
            "setup_calls": t.setup_calls,
            "peak_rss_kib": peak_rss_kib(),
        });
        write_json(&out_dir.join("timing.json"), &timing)?;
    }
    Ok(report)
}

/// The process's peak resident set in KiB (`VmHWM` of /proc/self/status),
/// where the OS reports it: what `--time` records as peak memory.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Query ids whose results are timing-dependent (TIMESTAMP, TIME_ELAPSED):
/// comparisons only check they are present.
pub fn nondeterministic_queries(scene: &Scene) -> Vec<String> {
    use ferropipe_components::enums::QueryType;
    let mut v: Vec<String> = scene
        .query_types
        .iter()
        .filter(|(_, t)| matches!(t, QueryType::Timestamp | QueryType::TimeElapsed))
        .map(|(id, _)| id.clone())
        .collect();
    v.sort();
    v
}

fn write_json(path: &Path, v: &serde_json::Value) -> Result<(), SceneError> {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    std::fs::write(path, text)
        .map_err(|e| SceneError::Io(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests;
