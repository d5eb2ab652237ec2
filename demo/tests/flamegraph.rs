//! The flamegraph accounts for the whole frame (issue 18's polish list):
//! every front-end job and tile has a scope on the thread that ran it,
//! the pool's worker runs some of them, and the main thread shows the
//! clears and the MSAA resolve.  Read from puffin's
//! own frame data, as the demo's panel and `puffin_viewer` see it.
//!
//! Its own test binary: puffin's scope switch and profiler are global to
//! the process.

use std::collections::{BTreeMap, BTreeSet};

use demo::camera::OrbitCamera;
use demo::render::{Renderer, SceneSource};
use demo::scenes::{SceneKind, SceneParams};
use demo::settings::RenderSettings;
use ferropipe_profiling::puffin;

/// Every scope name in `stream`, nested ones included.
fn names(
    stream: &puffin::Stream,
    offset: u64,
    view: &puffin::FrameView,
    out: &mut BTreeSet<String>,
) {
    let reader = puffin::Reader::with_offset(stream, offset).expect("stream offset");
    for scope in reader.read_top_scopes().expect("puffin stream") {
        if let Some(d) = view.scope_collection().fetch_by_id(&scope.id) {
            out.insert(d.name().to_string());
        }
        names(stream, scope.child_begin_position, view, out);
    }
}

/// Renders one frame with `settings` and returns the scope names of each
/// thread that recorded any, by thread name.
fn profile_frame(
    view: &puffin::GlobalFrameView,
    renderer: &mut Renderer,
    settings: &RenderSettings,
) -> BTreeMap<String, BTreeSet<String>> {
    ferropipe_profiling::new_frame();
    renderer
        .render(
            settings,
            &OrbitCamera::default(),
            &SceneParams::default(),
            Some(1.0),
        )
        .expect("frame renders");
    ferropipe_profiling::new_frame();
    let frame = view.lock().latest_frame().expect("a profiled frame");
    let frame = frame.unpacked().expect("frame data unpacks");
    let view = view.lock();
    let mut threads = BTreeMap::new();
    for (info, stream) in &frame.thread_streams {
        let mut set = BTreeSet::new();
        names(&stream.stream, 0, &view, &mut set);
        threads
            .entry(info.name.clone())
            .or_insert_with(BTreeSet::new)
            .extend(set);
    }
    threads
}

/// The jobs a frame's waves and tile pass run, each under its own scope.
const JOBS: [&str; 7] = [
    "fetch_job",
    "shade_job",
    "clip_job",
    "setup_job",
    "bin_job",
    "rasterize_tile",
    // The frame's clear, recorded into the scene, runs per tile.
    "clear_tile",
];

#[test]
fn every_job_has_a_scope_workers_run_jobs_and_the_main_thread_resolves_and_clears() {
    let view = puffin::GlobalFrameView::default();
    ferropipe_profiling::set_enabled(true);
    let mut renderer = Renderer::new(2).expect("screen");
    // The stress torus (200,000 triangles): several front-end jobs per
    // wave, so the pool runs them on its workers.
    renderer
        .set_scene(
            SceneSource::Builtin(SceneKind::Stress),
            &SceneParams::default(),
        )
        .expect("scene");
    let plain = RenderSettings {
        width: 320,
        height: 240,
        threads: 2,
        ..RenderSettings::default()
    };
    // The calling thread runs its share of every call's jobs and takes a
    // sleeping worker's share when it finishes first (pool.rs), so which
    // thread records a given job is the scheduler's choice: on a loaded
    // 2-core CI machine a frame's worker ran every stage but `shade_job`.
    // What must hold is that each job has a scope on some thread, and
    // that the worker runs jobs at all, on one of a few frames.
    let mut worker_jobs = BTreeSet::new();
    let mut threads = BTreeMap::new();
    for _ in 0..5 {
        threads = profile_frame(&view, &mut renderer, &plain);
        let all: BTreeSet<String> = threads.values().flatten().cloned().collect();
        for job in JOBS {
            assert!(all.contains(job), "no {job} scope: {threads:#?}");
        }
        worker_jobs.extend(
            threads
                .iter()
                .filter(|(name, _)| name.starts_with("ferropipe-worker"))
                .flat_map(|(_, s)| s.iter().cloned())
                .filter(|scope| JOBS.contains(&scope.as_str())),
        );
        if !worker_jobs.is_empty() {
            break;
        }
    }
    assert!(
        !worker_jobs.is_empty(),
        "no job ran on a worker thread in five frames: {threads:#?}"
    );
    let all: BTreeSet<String> = threads.values().flatten().cloned().collect();
    for system in [
        "render_frame",
        "execute_scene",
        "fetch_vertices",
        "bin_primitives",
    ] {
        assert!(all.contains(system), "no {system} scope: {threads:#?}");
    }

    // 4x MSAA: the clear of the multisampled target runs outside the tile
    // pass, and the resolve blit ends the frame.
    let msaa = RenderSettings {
        msaa: true,
        ..plain
    };
    let threads = profile_frame(&view, &mut renderer, &msaa);
    let all: BTreeSet<String> = threads.values().flatten().cloned().collect();
    for scope in ["clear", "msaa_resolve", "blit_rows", "rasterize_tile"] {
        assert!(all.contains(scope), "no {scope} scope: {threads:#?}");
    }
    ferropipe_profiling::set_enabled(false);
}
