//! A user system inserted into ferropipe's pipeline without forking it: an
//! overdraw heat-map.
//!
//! `count_overdraw` runs in the `BackEnd` schedule just before the tile
//! pass (`.before(PipelineSet::Tiles)`), where the whole binned scene is
//! available (`SceneExecution::binned`).  For every tile, on the screen's
//! worker pool, it walks the tile's bin in submission order and evaluates
//! each primitive's coverage with the rasterizer's own kernel
//! (`ferropipe::cover_prim`, the same 4x2-group SIMD edge test the tile
//! pass uses), adding one per covered pixel into its own resource,
//! `Overdraw`.  The count is *rasterized* coverage: every fragment
//! a primitive produces before any depth, stencil or alpha test, i.e. the
//! depth complexity that early-Z and the opaque-bin skip then cut down.
//!
//! The system writes only its own resource; the render targets are output
//! merge's alone (ARCHITECTURE.md).  The host turns the counts into a
//! heat-map (`heat_map`) — the demo shows it with its *Overdraw* toggle.
//!
//! ```sh
//! cargo run --release -p demo --example custom_system -- \
//!     tests/scenes/conformance/blend_factors.json out/overdraw.png
//! ```

use std::sync::Mutex;

use ferropipe::bevy_ecs::prelude::*;
use ferropipe::{
    BackEnd, Context, Coverage, FRAG_LANE_X, FRAG_LANE_Y, PipelineExecutor, PipelineSet,
    SceneExecution, bin_flags, cover_prim,
};

/// Rasterized fragments per pixel since the host last reset it.
#[derive(Resource, Default, Clone, Debug)]
pub struct Overdraw {
    pub width: u32,
    pub height: u32,
    /// Row-major, top row first (framebuffer y).
    pub counts: Vec<u32>,
}

impl Overdraw {
    /// The largest count.
    pub fn max(&self) -> u32 {
        self.counts.iter().copied().max().unwrap_or(0)
    }
}

/// The system: per-pixel rasterized coverage of every binned primitive.
pub fn count_overdraw(
    exec: Res<SceneExecution>,
    pool: Res<PipelineExecutor>,
    mut map: ResMut<Overdraw>,
) {
    let grid = exec.grid;
    if map.width != grid.width || map.height != grid.height {
        *map = Overdraw {
            width: grid.width,
            height: grid.height,
            counts: vec![0; grid.width as usize * grid.height as usize],
        };
    }
    let width = grid.width as usize;
    // Tiles are 64 pixels tall: each tile row owns a disjoint band of rows,
    // so one lock per band keeps the workers out of each other's way.
    let bands: Vec<Mutex<&mut [u32]>> = map.counts.chunks_mut(width * 64).map(Mutex::new).collect();
    let exec = &*exec;
    pool.0.for_each(grid.tiles(), &|t| {
        let rect = grid.tile_rect(t);
        let band_y0 = (rect.y0 as usize / 64) * 64;
        let mut local = vec![0u32; 64 * 64];
        let mut groups: Vec<Coverage> = Vec::new();
        for job in &exec.binned {
            for e in job.tile_entries(t) {
                if e.flags & bin_flags::CLEAR != 0 {
                    continue;
                }
                let Some(p) = job.prims.prims.get(e.prim as usize) else {
                    continue;
                };
                cover_prim(p, e.edge_mask, &rect, &mut groups);
                for g in &groups {
                    for lane in 0..8 {
                        if g.mask & (1 << lane) == 0 {
                            continue;
                        }
                        let x = g.x + FRAG_LANE_X[lane] as i32 - rect.x0;
                        let y = g.y + FRAG_LANE_Y[lane] as i32 - rect.y0;
                        if (0..64).contains(&x) && (0..64).contains(&y) {
                            local[y as usize * 64 + x as usize] += 1;
                        }
                    }
                }
            }
        }
        let Some(band) = bands.get(rect.y0 as usize / 64) else {
            return;
        };
        let mut band = band.lock().unwrap_or_else(|e| e.into_inner());
        for y in rect.y0..rect.y1 {
            for x in rect.x0..rect.x1 {
                let at = (y as usize - band_y0) * width + x as usize;
                if let Some(v) = band.get_mut(at) {
                    *v += local[(y - rect.y0) as usize * 64 + (x - rect.x0) as usize];
                }
            }
        }
    });
}

/// Installs the heat-map system on `ctx` (once per context).  It runs
/// while the [`Overdraw`] resource exists: removing the resource turns it
/// off at no cost.
pub fn install(ctx: &mut Context) {
    ctx.insert_resource(Overdraw::default());
    ctx.add_systems(
        BackEnd,
        count_overdraw
            .run_if(resource_exists::<Overdraw>)
            .before(PipelineSet::Tiles),
    );
}

/// Counts → RGBA8 heat-map: black (0), blue (1), green, yellow, red at
/// `max` and above.
pub fn heat_map(map: &Overdraw, max: u32) -> Vec<u8> {
    map.counts
        .iter()
        .flat_map(|&c| heat_color(c, max))
        .collect()
}

/// The heat-map colour of a pixel shaded `count` times: black for 0, then
/// blue, green, yellow and red at `max` (and above), so a legend can show
/// the same ramp the image uses.
pub fn heat_color(count: u32, max: u32) -> [u8; 4] {
    const RAMP: [[f32; 3]; 5] = [
        [0.0, 0.0, 0.0],
        [0.1, 0.2, 0.9],
        [0.1, 0.8, 0.3],
        [0.95, 0.9, 0.1],
        [0.9, 0.1, 0.1],
    ];
    let max = max.max(1) as f32;
    let rgb = if count == 0 {
        RAMP[0]
    } else {
        let t = ((count as f32 - 1.0) / (max - 1.0).max(1.0)).clamp(0.0, 1.0) * 3.0;
        let i = (t as usize).min(2);
        let f = t - i as f32;
        let (a, b) = (RAMP[i + 1], RAMP[i + 2]);
        [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * f)
    };
    [
        (rgb[0] * 255.0) as u8,
        (rgb[1] * 255.0) as u8,
        (rgb[2] * 255.0) as u8,
        255,
    ]
}

/// Replays `scene` with the heat-map system installed: the overdraw of its
/// last flush.
pub fn overdraw_of_scene(
    scene: &ferropipe_scene::Scene,
) -> Result<Overdraw, ferropipe_scene::SceneError> {
    let mut r = ferropipe_scene::Replayer::new(2)?;
    install(&mut r.ctx);
    r.run(scene, 0..scene.calls.len(), true)?;
    r.ctx
        .flush()
        .map_err(|e| ferropipe_scene::SceneError::Unsupported(e.to_string()))?;
    Ok(r.ctx.resource::<Overdraw>().cloned().unwrap_or_default())
}

#[allow(dead_code)]
fn main() {
    let mut args = std::env::args().skip(1);
    let scene_path = args
        .next()
        .unwrap_or_else(|| "tests/scenes/conformance/blend_factors.json".into());
    let out = args.next().unwrap_or_else(|| "out/overdraw.png".into());
    let scene = match ferropipe_scene::Scene::load(scene_path.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{scene_path}: {e}");
            std::process::exit(e.exit_code());
        }
    };
    let map = match overdraw_of_scene(&scene) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{scene_path}: {e}");
            std::process::exit(e.exit_code());
        }
    };
    let rgba = heat_map(&map, map.max());
    if let Some(dir) = std::path::Path::new(&out).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = ferropipe_scene::output::write_png(out.as_ref(), map.width, map.height, &rgba) {
        eprintln!("{out}: {e}");
        std::process::exit(4);
    }
    println!(
        "{out}: {}x{} overdraw heat-map, max {} fragments on one pixel",
        map.width,
        map.height,
        map.max()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(name: &str) -> ferropipe_scene::Scene {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/scenes/conformance")
            .join(format!("{name}.json"));
        ferropipe_scene::Scene::load(&p).unwrap()
    }

    /// The system sees every fragment and no more: `fill_rule_mesh` is a
    /// mesh of triangles sharing edges, which the fill rule rasterizes
    /// exactly once per covered pixel, so every count is 0 or 1.
    #[test]
    fn overdraw_counts_rasterized_fragments() {
        let map = overdraw_of_scene(&scene("fill_rule_mesh")).unwrap();
        assert_eq!(map.counts.len(), (map.width * map.height) as usize);
        let covered = map.counts.iter().filter(|&&c| c > 0).count();
        assert!(covered > 0, "the system saw no fragments");
        assert_eq!(map.max(), 1, "shared edges rasterized twice");
        // The same scene without the system renders the same image: the
        // system does not touch render targets.
        let with = {
            let mut r = ferropipe_scene::Replayer::new(2).unwrap();
            install(&mut r.ctx);
            let s = scene("blend_factors");
            r.run(&s, 0..s.calls.len(), true).unwrap();
            r.read_outputs(&s).unwrap()
        };
        let without = ferropipe_scene::replay(&scene("blend_factors"), &Default::default())
            .unwrap()
            .outputs;
        assert!(with == without, "the heat-map system changed the image");
    }

    /// Overlapping blended quads give counts above one, and the heat-map
    /// visibly differs from the rendered image.
    #[test]
    fn heat_map_shows_overlap() {
        let map = overdraw_of_scene(&scene("blend_factors")).unwrap();
        assert!(
            map.max() >= 2,
            "blend_factors overlaps quads: max {}",
            map.max()
        );
        let rgba = heat_map(&map, map.max());
        assert_eq!(rgba.len(), map.counts.len() * 4);
        let hot = rgba
            .chunks_exact(4)
            .filter(|p| p[0] > 200 && p[1] < 60)
            .count();
        assert!(hot > 0, "the hottest pixels are red");
    }
}
