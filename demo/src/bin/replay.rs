//! `replay SCENE.json --out DIR [--threads N] [--time N] [--budget UNITS]
//! [--budget-ms MS] [--capture DIR]`: replays a `gallium-scene/1` recording on ferropipe
//! and writes its outputs (`../shared/scenes/FORMAT.md`).
//!
//! Exit status: 0 ok; 1 a query result differed from its `expect` (after
//! writing every output); 2 malformed scene (the message names the call and
//! field); 3 the scene needs something ferropipe does not implement yet
//! (named); 4 the outputs could not be written; 5 a flush or launch ran
//! past the work budget and the context was lost.
//!
//! Warnings (the validation layer of `FERROPIPE_DEBUG=validate`, a bad
//! `FERROPIPE_NUM_THREADS`) go to stderr as `warning: ...` lines.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ferropipe::WorkBudget;
use ferropipe_scene::{ReplayOptions, Replayer, Scene, SceneError, replay_to_dir};

#[derive(Parser)]
#[command(
    name = "replay",
    about = "Replays a gallium-scene/1 file on ferropipe and writes its outputs",
    after_help = "Exit status: 0 ok, 1 a query differs from its `expect`, 2 malformed scene, \
                  3 unsupported feature, 4 outputs could not be written, 5 work budget \
                  exceeded (context lost).\n\nEnvironment: FERROPIPE_NUM_THREADS sets the \
                  worker count when --threads is 0; FERROPIPE_DEBUG=validate warns about \
                  draws that can produce nothing or read something unbound; \
                  FERROPIPE_POLY_SMOOTH=off renders poly_smooth as llvmpipe does (as if \
                  off; the default, analytic, is GL's coverage-to-alpha)."
)]
struct Args {
    /// The scene file.
    scene: PathBuf,
    /// Output directory (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (0 = FERROPIPE_NUM_THREADS, else one per CPU).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Work units each flush or launch may spend (one per assembled
    /// primitive, per 64x64-tile bin entry, per compute invocation); past
    /// it the context is lost and replay exits 5.  Deterministic.
    #[arg(long, value_name = "UNITS")]
    budget: Option<u64>,
    /// Wall-clock milliseconds each flush or launch may take, checked at
    /// safe points (between waves, tiles and workgroups); past it the
    /// context is lost and replay exits 5.
    #[arg(long, value_name = "MS")]
    budget_ms: Option<u64>,
    /// After the full replay, time N replays of the calls after
    /// `timing_begin` and write DIR/timing.json (median, runs).
    #[arg(long, default_value_t = 0, value_name = "N")]
    time: usize,
    /// Do not print query results or progress.
    #[arg(long)]
    quiet: bool,
    /// Also capture the replay into DIR/capture.json with its side files,
    /// naming the scene's outputs (docs/capture.md): a capture of a capture
    /// replays to the same outputs.
    #[arg(long, value_name = "DIR")]
    capture: Option<PathBuf>,
}

/// Replays `scene` once with a capture into `dir`.
fn capture(scene: &Scene, dir: &std::path::Path, threads: usize) -> Result<(), SceneError> {
    let mut r = Replayer::new(threads)?;
    r.start_capture(dir, "capture")?;
    r.run(scene, 0..scene.calls.len(), true)?;
    let s = r.finish_capture(scene)?;
    eprintln!(
        "replay: captured {} calls into {}",
        s.calls,
        s.scene.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    demo::logger::init();
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = Scene::load(&args.scene).and_then(|scene| {
        if let Some(dir) = &args.capture {
            capture(&scene, dir, args.threads)?;
        }
        replay_to_dir(
            &scene,
            &args.out,
            &ReplayOptions {
                threads: args.threads,
                time_runs: args.time,
                progress: !args.quiet,
                budget: WorkBudget {
                    units: args.budget,
                    time: args.budget_ms.map(Duration::from_millis),
                },
                // FERROPIPE_POLY_SMOOTH decides (GL's coverage by default).
                poly_smooth: None,
            },
        )
    });
    match result {
        Ok(report) => {
            if !args.quiet {
                for (id, v) in &report.queries {
                    println!("{}", ferropipe_scene::output::query_line(id, v));
                }
            }
            if let Some(t) = &report.timing {
                eprintln!(
                    "ferropipe: median {:.2} ms over {} runs ({} threads)",
                    t.median_ms,
                    t.runs.len(),
                    t.threads
                );
            }
            for f in &report.expect_failures {
                eprintln!("EXPECT FAILED: {f}");
            }
            ExitCode::from(report.exit_code() as u8)
        }
        Err(e) => {
            eprintln!("replay: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
