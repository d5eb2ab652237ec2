//! Filled triangles set up eight at a time (llvmpipe's counterpart is the
//! scalar `lp_setup_tri.c` `do_triangle_ccw`, one triangle per call; its
//! SIMD is inside one triangle, across the three edges).
//!
//! A run is up to [`LANES`] consecutive filled triangles of one state and
//! one viewport whose state needs none of setup's special modes
//! ([`runs_in_lanes`]).  Snapping, the area and its sign, culling, the
//! counter-clockwise rotation, the bounding box, the three edges with
//! their fill-rule tie-breaks and the gradients' cross products are
//! computed for all of them in lanes, as plain loops over `[_; LANES]`
//! arrays that the x86-64-v3 clone compiles to 256-bit instructions; then
//! the surviving triangles are written out in submission order (record,
//! planes, polygon offset, rectangle merge), as [`super::setup_triangle_as`]
//! writes them.  The same integer and float operations in the same order:
//! the same records and planes bit for bit (`the_run_is_the_scalar_setup`).
//!
//! Why: per triangle, the scalar setup was ~860 instructions in
//! tiny_tris_1m (callgrind, 2026-12-06), mostly scalar moves, spills and
//! extracts around a few dozen arithmetic operations; those operations are
//! the same for every triangle of a run.

use ferropipe_components::batch::{
    ClippedPrim, ClippedPrims, FIXED_ONE, FIXED_ORDER, PrimKind, SetupPrim, SetupPrims,
};
use ferropipe_components::enums::Face;
use ferropipe_components::shader::{ILanes, LANES, Lanes};
use multiversion::multiversion;

use super::{TriCorners, follow_rectangle, push_tri_planes, snap_lanes, tri_gradients, vertex};
use crate::derived::DerivedState;

/// Whether `ds`'s filled triangles may be set up in runs: none of the
/// modes [`super::setup_triangle_as`] treats specially (conservative
/// rasterization in any form, multisample rasterization, smooth polygons,
/// unfilled polygons, rasterizer discard).  Polygon offset is handled.
#[inline]
pub(super) fn runs_in_lanes(ds: &DerivedState) -> bool {
    let s = &ds.setup;
    !s.rasterizer_discard
        && !s.unfilled
        && s.conservative.is_none()
        && s.conservative_fine_snap.is_none()
        && !s.conservative_pre_snap
        && ds.tiles.ms_offsets.is_none()
        && !ds.link.aa.is_some_and(|aa| aa.poly_smooth)
}

/// How many triangles from the start of `prims` form one run: up to
/// [`LANES`] triangles of the first one's state and viewport.
#[inline]
pub(super) fn run_length(prims: &[ClippedPrim]) -> usize {
    let Some(first) = prims.first() else {
        return 0;
    };
    prims
        .iter()
        .take(LANES)
        .take_while(|p| {
            p.kind == PrimKind::Triangle && p.state == first.state && p.viewport == first.viewport
        })
        .count()
}

/// Sets up the run `run` (see [`run_length`]; its state `ds` passes
/// [`runs_in_lanes`]) into `out`, with `last_tri` the rectangle-merge
/// candidate carried across records.  Returns how many of its triangles
/// produced a record (before merges), as `setup_prims` counts.
///
/// Out of line (`inline(never)`): inlined into `setup_prims`' loop, which
/// a change elsewhere in the crate's code-generation units made LLVM do,
/// it ran ~27 M more instructions a frame in tiny_tris_1m (callgrind,
/// 2026-12-06), the larger function's registers spilling.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
#[inline(never)]
pub(super) fn setup_run(
    clipped: &ClippedPrims,
    run: &[ClippedPrim],
    ds: &DerivedState,
    out: &mut SetupPrims,
    last_tri: &mut Option<TriCorners>,
) -> u64 {
    const L: usize = LANES;
    let n = run.len().min(L);
    let s = &ds.setup;
    let off = s.pixel_offset;
    let live = (1u32 << n) - 1;

    // Window positions less the pixel offset, per corner (the subtraction
    // `snap_corners` and the gradients both start from).
    let mut px = [[0.0f32; L]; 3];
    let mut py = [[0.0f32; L]; 3];
    for (l, p) in run[..n].iter().enumerate() {
        for k in 0..3 {
            let v = vertex(clipped, p.v[k]);
            px[k][l] = v.first().copied().unwrap_or(0.0) - off;
            py[k][l] = v.get(1).copied().unwrap_or(0.0) - off;
        }
    }
    let mut fx = px.map(Lanes::new);
    let mut fy = py.map(Lanes::new);
    let mut x = fx.map(snap_lanes);
    let mut y = fy.map(snap_lanes);

    // Twice the signed area, in 64 bits (lane by lane: the products reach
    // 2^46), its sign and culling, as bit masks.
    let (xs, ys) = (x.map(ILanes::to_array), y.map(ILanes::to_array));
    let (mut ccw, mut nonzero) = (0u32, 0u32);
    for l in 0..L {
        let dx01 = (xs[0][l] - xs[1][l]) as i64;
        let dy01 = (ys[0][l] - ys[1][l]) as i64;
        let dx20 = (xs[2][l] - xs[0][l]) as i64;
        let dy20 = (ys[2][l] - ys[0][l]) as i64;
        let area = dx01 * dy20 - dx20 * dy01;
        ccw |= ((area > 0) as u32) << l;
        nonzero |= ((area != 0) as u32) << l;
    }
    let front = if s.front_ccw { ccw } else { !ccw };
    let culled = match s.cull_face {
        Face::None => 0,
        Face::Front => front,
        Face::Back => !front,
        Face::FrontAndBack => u32::MAX,
    };
    let mut alive = nonzero & !culled & live;

    // Clockwise triangles rotated to counter-clockwise, keeping the
    // provoking vertex's position (llvmpipe's rotate_fixed_position_*):
    // corners `i` and `j` swap.
    let (i, j) = if s.flatshade_first { (1, 2) } else { (0, 1) };
    // (`ccw` has a bit per lane, 8 at most.)
    let keep: ILanes = bytemuck::cast(crate::lanes::mask_lanes(ccw as u8));
    let keepf: Lanes = bytemuck::cast(keep);
    (x[i], x[j]) = (keep.select(x[i], x[j]), keep.select(x[j], x[i]));
    (y[i], y[j]) = (keep.select(y[i], y[j]), keep.select(y[j], y[i]));
    (fx[i], fx[j]) = (keepf.select(fx[i], fx[j]), keepf.select(fx[j], fx[i]));
    (fy[i], fy[j]) = (keepf.select(fy[i], fy[j]), keepf.select(fy[j], fy[i]));

    // Bounding boxes (llvmpipe's rounding; y depends on the fill
    // convention), clipped to the viewport's triangle region.
    let adj = ILanes::splat(s.bottom_edge_rule as i32);
    let one = ILanes::splat(1);
    let region = s.tri_regions[usize::from(run.first().map_or(0, |p| p.viewport))];
    let (xmin, xmax) = (x[0].min(x[1]).min(x[2]), x[0].max(x[1]).max(x[2]));
    let (ymin, ymax) = (y[0].min(y[1]).min(y[2]), y[0].max(y[1]).max(y[2]));
    let bx0 = (xmin >> FIXED_ORDER).max(ILanes::splat(region.x0));
    let by0 = ((ymin + adj) >> FIXED_ORDER).max(ILanes::splat(region.y0));
    let bx1 = (((xmax - one) >> FIXED_ORDER) + one).min(ILanes::splat(region.x1));
    let by1 = (((ymax - one + adj) >> FIXED_ORDER) + one).min(ILanes::splat(region.y1));
    alive &= (bx0.simd_lt(bx1) & by0.simd_lt(by1)).to_bitmask();

    // The three edges (`polygon_edges`: `edge` from corner e to e + 1):
    // steps and the fill rule's tie-break here, `c` (64-bit) per record.
    let zero = ILanes::ZERO;
    let mut ea = [[0i32; L]; 3];
    let mut eb = [[0i32; L]; 3];
    let mut inc = [[0i32; L]; 3];
    for e in 0..3 {
        let f = if e == 2 { 0 } else { e + 1 };
        let dcdx = y[e] - y[f];
        let dcdy = x[e] - x[f];
        let horizontal_included = if s.bottom_edge_rule {
            dcdy.simd_lt(zero)
        } else {
            dcdy.simd_gt(zero)
        };
        let include = dcdx.simd_lt(zero) | (dcdx.simd_eq(zero) & horizontal_included);
        ea[e] = (zero - dcdx).to_array();
        eb[e] = dcdy.to_array();
        inc[e] = (zero - include).to_array();
    }

    // The unsnapped edge vectors (setup_triangle_as's gradients).
    let e1x = fx[1] - fx[0];
    let e1y = fy[1] - fy[0];
    let e2x = fx[2] - fx[0];
    let e2y = fy[2] - fy[0];
    let det = (e1x * e2y - e2x * e1y).to_array();
    let (e1x, e1y, e2x, e2y) = (
        e1x.to_array(),
        e1y.to_array(),
        e2x.to_array(),
        e2y.to_array(),
    );
    let (x0f, y0f) = (fx[0].to_array(), fy[0].to_array());
    let (xs, ys) = (x.map(ILanes::to_array), y.map(ILanes::to_array));
    let bb = [bx0, by0, bx1, by1].map(ILanes::to_array);

    // Records, in submission order.
    let mut kept = 0u64;
    for (l, prim) in run[..n].iter().enumerate() {
        let before = out.prims.len();
        let corners = if alive & (1 << l) != 0 {
            let front = front & (1 << l) != 0;
            let mut vi = prim.v;
            if ccw & (1 << l) == 0 {
                vi.swap(i, j);
            }
            let (cx, cy) = (
                [xs[0][l], xs[1][l], xs[2][l]],
                [ys[0][l], ys[1][l], ys[2][l]],
            );
            // `edge_full`'s `c` and `ceil_fixed`, with `dcdx = -a` and
            // `dcdy = b`.
            let c = |e: usize| -> i64 {
                let full = -(ea[e][l] as i64) * cx[e] as i64 - eb[e][l] as i64 * cy[e] as i64;
                (full + inc[e][l] as i64 + (FIXED_ONE as i64 - 1)) >> FIXED_ORDER
            };
            let sp = SetupPrim {
                a: [ea[0][l], ea[1][l], ea[2][l], 0],
                b: [eb[0][l], eb[1][l], eb[2][l], 0],
                c: [c(0), c(1), c(2), 0],
                num_edges: 3,
                kind: PrimKind::Triangle,
                front_facing: front,
                viewport: prim.viewport,
                x0: bb[0][l],
                y0: bb[1][l],
                x1: bb[2][l],
                y1: bb[3][l],
                ref_x: bb[0][l],
                ref_y: bb[1][l],
                state: prim.state,
                command: prim.command,
                planes: out.planes.len() as u32,
                ms: 0,
            };
            let g = tri_gradients(
                [e1x[l], e1y[l], e2x[l], e2y[l]],
                det[l],
                (x0f[l], y0f[l]),
                (&cx, &cy),
                (sp.x0, sp.y0),
            );
            push_tri_planes(
                clipped,
                &ds.link.tri_planes[usize::from(!front)],
                &g,
                (vi, prim.provoking),
                s.offset_tri.as_ref(),
                out,
            );
            out.prims.push(sp);
            Some(TriCorners {
                x: [cx[0], cx[1], cx[2], 0],
                y: [cy[0], cy[1], cy[2], 0],
            })
        } else {
            None
        };
        kept += (out.prims.len() > before) as u64;
        *last_tri = follow_rectangle(out, corners, *last_tri, ds, before);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::super::setup_prims_as;
    use super::*;
    use crate::tests::Setup;
    use ferropipe_components::batch::Plane;
    use ferropipe_components::enums::PolygonMode;
    use ferropipe_components::format::Format;
    use ferropipe_components::state::RasterizerState;
    use std::sync::Arc;

    /// Runs produce exactly the scalar setup's records, planes and counts:
    /// every cull mode and facing convention, both provoking vertices and
    /// fill conventions, polygon offset, integer pixel centres, a scissor,
    /// runs cut by state and viewport changes and by states that stay
    /// scalar (unfilled), clockwise, counter-clockwise, zero-area,
    /// sliver, off-screen, NaN, infinite and guard-band-clamped
    /// triangles, and axis-aligned quads (the rectangle merge across and
    /// within runs).
    #[test]
    fn the_run_is_the_scalar_setup() {
        let mut rnd = crate::tests::xorshift32(0x2545_f491);
        let mut states = Vec::new();
        for k in 0..24u32 {
            let mut s = Setup::new(200, 120, Some(Format::Z32_FLOAT));
            let rast = RasterizerState {
                cull_face: [Face::None, Face::Front, Face::Back, Face::FrontAndBack]
                    [k as usize % 4],
                front_ccw: k & 4 != 0,
                flatshade_first: k & 8 != 0,
                bottom_edge_rule: k % 3 == 1,
                half_pixel_center: k % 5 != 2,
                offset_tri: k % 3 == 2,
                offset_units: 3.0,
                offset_scale: 0.75,
                scissor: k % 7 == 3,
                fill_front: if k == 23 {
                    PolygonMode::Line
                } else {
                    PolygonMode::Fill
                },
                ..Default::default()
            };
            s.block.rasterizer = Arc::new(rast);
            if s.block.rasterizer.scissor {
                Arc::make_mut(&mut s.block.scissors)[0] =
                    ferropipe_components::state::ScissorState {
                        minx: 13,
                        miny: 7,
                        maxx: 150,
                        maxy: 101,
                    };
            }
            states.push(DerivedState::new(Arc::new(s.block)));
        }
        let stride = states[0].stride.max(8);
        for st in &states {
            assert_eq!(st.stride.max(8), stride);
        }
        let mut clipped = ClippedPrims {
            stride,
            verts: Vec::new(),
            prims: Vec::new(),
        };
        let special = [f32::NAN, f32::INFINITY, -f32::INFINITY, 1e9, -1e9, 0.5, 0.0];
        // A vertex at (x, y); its depth, 1/w and inputs random, or with
        // `constant` all that value (1/w 1: planar over a quad).
        let vert = |clipped: &mut ClippedPrims,
                    x: f32,
                    y: f32,
                    constant: Option<f32>,
                    r: &mut dyn FnMut() -> u32| {
            let i = (clipped.verts.len() / stride) as u32;
            clipped.verts.push(x);
            clipped.verts.push(y);
            let mut z = (r() % 1000) as f32 / 1000.0;
            let mut w = 1.0 + (r() % 100) as f32 / 50.0;
            if let Some(c) = constant {
                (z, w) = (c, 1.0);
            }
            clipped.verts.push(z);
            clipped.verts.push(w);
            for _ in 4..stride {
                let a = (r() % 2001) as f32 / 100.0 - 10.0;
                clipped.verts.push(constant.unwrap_or(a));
            }
            i
        };
        let mut state = 0u32;
        for t in 0..6000u32 {
            // Runs of one state, of varying length; now and then another
            // viewport index (same regions here) or state.
            if rnd().is_multiple_of(13) {
                state = rnd() % states.len() as u32;
            }
            let viewport = rnd().is_multiple_of(29) as u8;
            let v = match t % 10 {
                // An axis-aligned quad's two halves (merged when planar).
                0 | 1 => {
                    let (x0, y0) = ((rnd() % 180) as f32, (rnd() % 100) as f32);
                    let (x1, y1) = (
                        x0 + 1.0 + (rnd() % 20) as f32,
                        y0 + 1.0 + (rnd() % 20) as f32,
                    );
                    let q = [(x0, y0), (x0, y1), (x1, y1), (x1, y0)];
                    let c = Some((rnd() % 100) as f32 / 100.0);
                    let q = q.map(|(x, y)| vert(&mut clipped, x, y, c, &mut rnd));
                    let (a, b) = if t % 10 == 0 {
                        ([0, 1, 2], [0, 2, 3])
                    } else {
                        ([0, 2, 1], [0, 3, 2])
                    };
                    for tri in [a, b] {
                        clipped.prims.push(ClippedPrim {
                            v: tri.map(|k| q[k]),
                            provoking: q[tri[2]],
                            kind: PrimKind::Triangle,
                            edge_flags: 7,
                            command: t,
                            state,
                            viewport: 0,
                            point_size: 1.0,
                        });
                    }
                    continue;
                }
                // A special coordinate somewhere.
                2 => {
                    let c = special[rnd() as usize % special.len()];
                    let mut xy = [0.0f32; 6];
                    for (k, p) in xy.iter_mut().enumerate() {
                        *p = if rnd() % 6 == k as u32 {
                            c
                        } else {
                            (rnd() % 240) as f32 - 20.0
                        };
                    }
                    [0, 2, 4].map(|k| vert(&mut clipped, xy[k], xy[k + 1], None, &mut rnd))
                }
                // Degenerate: three points on a line.
                3 => {
                    let (x, y) = ((rnd() % 200) as f32, (rnd() % 120) as f32);
                    let d = (rnd() % 7) as f32 + 0.25;
                    [0.0, 1.0, 2.5]
                        .map(|s| vert(&mut clipped, x + s * d, y + s * 0.5 * d, None, &mut rnd))
                }
                // Small and large triangles, sub-pixel positions.
                _ => {
                    let size = [2.0, 8.0, 60.0, 400.0][rnd() as usize % 4];
                    let (cx, cy) = ((rnd() % 260) as f32 - 30.0, (rnd() % 180) as f32 - 30.0);
                    [0; 3].map(|_| {
                        let dx = (rnd() % 4096) as f32 / 4096.0 * size;
                        let dy = (rnd() % 4096) as f32 / 4096.0 * size;
                        vert(&mut clipped, cx + dx, cy + dy, None, &mut rnd)
                    })
                }
            };
            clipped.prims.push(ClippedPrim {
                v,
                provoking: v[(rnd() % 3) as usize],
                kind: PrimKind::Triangle,
                edge_flags: 7,
                command: t,
                state,
                viewport,
                point_size: 1.0,
            });
        }
        let (mut scalar, mut lanes) = (SetupPrims::default(), SetupPrims::default());
        let kept_scalar = setup_prims_as(&clipped, &states, &mut scalar, false);
        let kept_lanes = setup_prims_as(&clipped, &states, &mut lanes, true);
        assert!(kept_scalar > 1000, "{kept_scalar} records: too few to test");
        assert_eq!(kept_lanes, kept_scalar);
        assert_eq!(lanes.prims.len(), scalar.prims.len());
        let merged = scalar.prims.iter().filter(|p| p.num_edges == 4).count();
        assert!(merged > 50, "{merged} rectangles");
        for (k, (a, b)) in lanes.prims.iter().zip(&scalar.prims).enumerate() {
            assert_eq!(a, b, "record {k}");
        }
        let bits = |p: &Plane| [p.a0.to_bits(), p.dadx.to_bits(), p.dady.to_bits()];
        assert_eq!(lanes.planes.len(), scalar.planes.len());
        for (k, (a, b)) in lanes.planes.iter().zip(&scalar.planes).enumerate() {
            assert_eq!(bits(a), bits(b), "plane {k}");
        }
    }
}
