//! Equivalent of llvmpipe's `lp_setup_tri.c`, `lp_setup_line.c` and
//! `lp_setup_point.c` (with the coefficient math of `lp_state_setup.c`):
//! fixed-point snapping, culling, edge functions with exact fill-rule
//! tie-breaking, bounding boxes, and the plane equations of depth, 1/w and
//! every fragment-shader input.
//!
//! # Fixed point and edge functions
//! Window positions, minus the pixel-centre offset (0.5 with
//! `half_pixel_center`), are rounded (ties to even, as SSE's `cvtps2dq`) to
//! [`FIXED_ORDER`] = 8 sub-pixel bits.  Pixel `(px, py)`'s sample then sits at
//! the fixed-point point `(256 px, 256 py)`.
//!
//! For an edge from `(xa, ya)` to `(xb, yb)` of a counter-clockwise (in
//! window space, y down) primitive, llvmpipe evaluates
//! `V = c - dcdx * 256 px + dcdy * 256 py` with `dcdx = ya - yb`,
//! `dcdy = xa - xb`, `c = dcdx * xa - dcdy * ya`, and a pixel is inside iff
//! `V > 0`.  Ties (a sample exactly on the edge) are broken by adding 1 to
//! `c` for left edges (`dcdx < 0`) and, for horizontal edges, for top edges
//! (`dcdy > 0`) under the top-left rule or bottom edges (`dcdy < 0`) under
//! `bottom_edge_rule`.
//!
//! Since `256 (-dcdx px + dcdy py)` is a multiple of 256, `V > 0` is exactly
//! `E = ceil(c / 256) + a px + b py > 0` with `a = -dcdx`, `b = dcdy` — the
//! form stored in [`SetupPrim`].  With positions inside the guard band
//! (|x| <= 2^14 px, so deltas < 2^23 fixed units), `E` over any 64x64 tile a
//! partially-covering edge crosses stays below 2^31: the raster stage works
//! in `i32` lanes, after narrowing `c` at tile (bin.rs) and block level.
//!
//! # Plane equations
//! Attributes use the same convention as llvmpipe: perspective-correct
//! inputs are planes of `a / w` divided per pixel by the plane of `1 / w`;
//! linear inputs are planes of `a`; flat inputs take the provoking vertex's
//! value.  Gradients are computed from the snapped positions, so they agree
//! with the coverage and never divide by a zero area.

pub use crate::setup_plan::SetupPlan;
use ferropipe_components::batch::{
    ClippedPrim, ClippedPrims, FIXED_ONE, FIXED_ORDER, GUARD_BAND, MAX_EDGES, MS_SAMPLES, Plane,
    PrimKind, RESET_STIPPLE, SetupPrim, SetupPrims,
};
use ferropipe_components::enums::{Face, PolygonMode, SpriteCoordMode};
use ferropipe_components::shader::{ILanes, Interpolation, LANES, Lanes};
use multiversion::multiversion;

use crate::derived::DerivedState;
use crate::lanes::Rect;
use crate::link::{FsInputSource, PlaneChunk, PlanePlan};
use bevy_ecs::prelude::*;

use crate::job::{FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, for_each_job};
use crate::sets::PipelineSet;

mod tri_run;

/// Largest point size (llvmpipe's `LP_MAX_POINT_WIDTH`).
pub(crate) const MAX_POINT_WIDTH: f32 = 255.0;
// Smooth points are clamped to the same size (aa_state.rs).
const _: () = assert!(crate::aa_state::MAX_RADIUS * 2.0 == MAX_POINT_WIDTH);

/// The largest snapped coordinate magnitude, in 1/256 pixel: the guard
/// band and two pixels ([`snap`] and [`snap_corners`] clamp to it).
const SNAP_LIMIT: f32 = (GUARD_BAND + 2.0) * FIXED_ONE as f32;

/// Rounds to the nearest integer, ties to even (SSE `cvtps2dq`), clamped to
/// the guard band so degenerate inputs can never overflow later math.
#[inline]
pub fn snap(v: f32) -> i32 {
    let s = (v * FIXED_ONE as f32).round_ties_even();
    if s.is_nan() {
        0
    } else {
        s.clamp(-SNAP_LIMIT, SNAP_LIMIT) as i32
    }
}

/// [`snap`] of a triangle's three corners (window x and y, less `off`)
/// at once: the same values, as one 8-lane subtract, multiply, clamp and
/// `cvtps2dq` (round to nearest, ties to even, in the default rounding
/// mode) instead of six scalar round-and-clamp chains of ~20
/// instructions each: tiny_tris_1m -69 instructions a triangle net, the
/// gather into lanes included (callgrind).  Clamping before rounding
/// gives the same integers: the
/// limit is itself an integer.  A NaN coordinate snaps to 0, as in
/// [`snap`].  Vertices shorter than two floats read as 0 (never: clip
/// writes whole vertices).
#[inline(always)]
fn snap_corners(v: [&[f32]; 3], off: f32) -> ([i32; 3], [i32; 3]) {
    let at = |k: usize, c: usize| v[k].get(c).copied().unwrap_or(0.0);
    let p = Lanes::new([
        at(0, 0),
        at(0, 1),
        at(1, 0),
        at(1, 1),
        at(2, 0),
        at(2, 1),
        0.0,
        0.0,
    ]);
    let i = snap_lanes(p - Lanes::splat(off)).to_array();
    ([i[0], i[2], i[4]], [i[1], i[3], i[5]])
}

/// [`snap`] in every lane of `v` (window coordinates less the pixel
/// offset): multiply, NaN to 0, clamp, `cvtps2dq` (round to nearest, ties
/// to even).  Clamping before rounding gives the same integers, the limit
/// being one.
#[inline(always)]
fn snap_lanes(v: Lanes) -> ILanes {
    let s = v * Lanes::splat(FIXED_ONE as f32);
    s.simd_eq(s)
        .select(s, Lanes::ZERO)
        .fast_max(Lanes::splat(-SNAP_LIMIT))
        .fast_min(Lanes::splat(SNAP_LIMIT))
        .fast_round_int()
}

/// `ceil(c / 256)` for the reduced edge form.
#[inline]
fn ceil_fixed(c: i64) -> i64 {
    (c + (FIXED_ONE as i64 - 1)) >> FIXED_ORDER
}

/// Edge function (reduced form `(a, b, c)`) of the edge from `(xa, ya)` to
/// `(xb, yb)` of a counter-clockwise primitive, with the fill-rule bias.
#[inline]
pub fn edge(xa: i32, ya: i32, xb: i32, yb: i32, bottom_edge_rule: bool) -> (i32, i32, i64) {
    let (a, b, c) = edge_full(xa, ya, xb, yb, bottom_edge_rule);
    (a, b, ceil_fixed(c))
}

/// [`edge`] before the reduction: `c` in 1/256-pixel units squared, so
/// the value at any sub-pixel point `(X, Y)` (1/256 pixel) is
/// `a * X + b * Y + c` (multisample coverage evaluates it at the samples).
#[inline]
pub(crate) fn edge_full(
    xa: i32,
    ya: i32,
    xb: i32,
    yb: i32,
    bottom_edge_rule: bool,
) -> (i32, i32, i64) {
    let dcdx = ya - yb;
    let dcdy = xa - xb;
    let c = dcdx as i64 * xa as i64 - dcdy as i64 * ya as i64;
    // The fill rule's tie-break as flags, not branches: an edge's
    // direction is as random as the triangle, and the `if` chain it
    // replaced mispredicted ~1.5 times a triangle in tiny_tris_1m
    // (cachegrind's branch model: 17 % of the scene's mispredicts).
    let horizontal_included = if bottom_edge_rule { dcdy < 0 } else { dcdy > 0 };
    let include = (dcdx < 0) | ((dcdx == 0) & horizontal_included);
    (-dcdx, dcdy, c + include as i64)
}

/// The reduced edges of a primitive with corners `(x, y)` (in setup's
/// counter-clockwise order) and its multisample record (`SetupPrim::ms`).
///
/// Multisample rasterization (llvmpipe's `lp_rast_triangle_ms`): each
/// sample's coverage is the edge test at the sample's position, i.e. the
/// full-precision `c` moved by `a * dx + b * dy` and reduced per sample;
/// the primitive's own `c` is the most inclusive of them, so binning and
/// the union of the samples' coverage stay conservative.
fn prim_edges<const N: usize>(
    ds: &DerivedState,
    x: &[i32; N],
    y: &[i32; N],
    out: &mut SetupPrims,
) -> ([(i32, i32, i64); N], u32) {
    let Some(offsets) = ds.tiles.ms_offsets else {
        let mut edges = polygon_edges(x, y, ds.setup.bottom_edge_rule);
        conservative_dilate(ds, &mut edges);
        return (edges, 0);
    };
    if ds.setup.conservative.is_some() {
        // Conservative rasterization covers every sample of a pixel the
        // primitive touches (GL_NV_conservative_raster, D3D's full
        // coverage): each sample's edge constant is the pixel's, dilated.
        let mut edges = polygon_edges(x, y, ds.setup.bottom_edge_rule);
        conservative_dilate(ds, &mut edges);
        let mut per_sample = [[0i64; MAX_EDGES]; MS_SAMPLES];
        for sample in per_sample.iter_mut() {
            for (c, e) in sample.iter_mut().zip(edges.iter()) {
                *c = e.2;
            }
        }
        out.sample_c.push(per_sample);
        return (edges, out.sample_c.len() as u32);
    }
    let mut per_sample = [[0i64; MAX_EDGES]; MS_SAMPLES];
    let edges = std::array::from_fn(|e| {
        let j = (e + 1) % N;
        let (a, b, c) = edge_full(x[e], y[e], x[j], y[j], ds.setup.bottom_edge_rule);
        let mut most = i64::MIN;
        for (s, &(dx, dy)) in offsets.iter().enumerate() {
            let cs = ceil_fixed(c + a as i64 * dx + b as i64 * dy);
            if e < MAX_EDGES {
                per_sample[s][e] = cs;
            }
            most = most.max(cs);
        }
        (a, b, most)
    });
    out.sample_c.push(per_sample);
    (edges, out.sample_c.len() as u32)
}

/// A multisampled primitive's samples reach up to 3/8 pixel past its
/// pixel-centre bounding box: one more pixel on every side.
fn ms_grow(ds: &DerivedState, bb: Rect) -> Rect {
    // (A conservative box is already exact: every sample of its pixels.)
    if ds.tiles.ms_offsets.is_none() || ds.setup.conservative.is_some() {
        return bb;
    }
    Rect {
        x0: bb.x0 - 1,
        y0: bb.y0 - 1,
        x1: bb.x1 + 1,
        y1: bb.y1 + 1,
    }
}

/// Sets up every primitive of `clipped` into `out`.  Returns how many of
/// them survived culling: produced at least one record (before a
/// rectangle merge folds two triangles' records into one), i.e. were not
/// culled by facing, of zero area, discarded, outside the scissored
/// viewport or (lines) entirely in stipple gaps.  One compare per primitive.
pub fn setup_prims(clipped: &ClippedPrims, states: &[DerivedState], out: &mut SetupPrims) -> u64 {
    setup_prims_as(clipped, states, out, true)
}

/// [`setup_prims`], with `lanes` off every triangle through
/// [`setup_triangle_as`] (the reference `tri_run` is tested against).
fn setup_prims_as(
    clipped: &ClippedPrims,
    states: &[DerivedState],
    out: &mut SetupPrims,
    lanes: bool,
) -> u64 {
    let mut kept = 0u64;
    // The last triangle set up (its fixed-point corners), while it is the
    // last record: candidate for merging with the next into a rectangle.
    let mut last_tri: Option<TriCorners> = None;
    // Vertex copies of the polygon being drawn unfilled, and of stipple
    // dashes.
    let mut scratch = ClippedPrims {
        stride: clipped.stride,
        verts: Vec::new(),
        prims: Vec::new(),
    };
    let mut stipple = Stipple {
        counter: 0,
        dash: ClippedPrims {
            stride: clipped.stride,
            verts: Vec::new(),
            prims: Vec::new(),
        },
    };
    let mut at = 0;
    while let Some(prim) = clipped.prims.get(at) {
        let ds = &states[prim.state as usize];
        // Filled triangles of a plain state: up to LANES at once.
        if lanes && prim.kind == PrimKind::Triangle && tri_run::runs_in_lanes(ds) {
            let n = tri_run::run_length(&clipped.prims[at..]);
            kept += tri_run::setup_run(clipped, &clipped.prims[at..at + n], ds, out, &mut last_tri);
            at += n;
            continue;
        }
        at += 1;
        if ds.setup.rasterizer_discard {
            continue;
        }
        let before = out.prims.len();
        match prim.kind {
            PrimKind::Triangle if ds.setup.unfilled => {
                setup_unfilled(clipped, prim, ds, out, &mut scratch, &mut stipple);
                last_tri = None;
            }
            PrimKind::Triangle if ds.link.aa.is_some_and(|aa| aa.poly_smooth) => {
                setup_triangle_as(clipped, prim, ds, out, TriMode::PolySmooth);
                kept += (out.prims.len() > before) as u64;
                last_tri = None;
            }
            PrimKind::Triangle => {
                let corners = setup_triangle(clipped, prim, ds, out);
                // Counted here: the merge below may fold this record into
                // the previous one.
                kept += (out.prims.len() > before) as u64;
                last_tri = follow_rectangle(out, corners, last_tri, ds, before);
            }
            PrimKind::Line if ds.setup.line_stipple.is_some() => {
                if prim.edge_flags & RESET_STIPPLE != 0 {
                    stipple.counter = 0;
                }
                stipple_line(clipped, prim, ds, out, true, &mut stipple);
                last_tri = None;
            }
            PrimKind::Line => {
                setup_line(clipped, prim, ds, out, true);
                last_tri = None;
            }
            PrimKind::Point => {
                setup_point(clipped, prim, ds, out, true);
                last_tri = None;
            }
        }
        if prim.kind != PrimKind::Triangle || ds.setup.unfilled {
            kept += (out.prims.len() > before) as u64;
        }
    }
    kept
}

/// Unfilled polygons (draw's `draw_pipe_unfilled.c`, with its cull and
/// offset stages in front): a triangle whose facing selects
/// `PIPE_POLYGON_MODE_LINE` becomes its edges (v2→v0, v0→v1, v1→v2, in
/// draw's order) and `POINT` its vertices, each only where its edge flag
/// says it is a polygon edge (not a quad's diagonal or a clipped fan's
/// inner edge).  The lines and points are set up as real ones (line width,
/// point size and sprite rules) but report the polygon's facing, take flat
/// values from the polygon's provoking vertex (draw's flatshade copy) and
/// BCOLOR on back faces under `light_twoside`.  `offset_line` /
/// `offset_point` shift their vertices' z by the polygon's offset, clamped
/// to [0, 1] per vertex as draw's offset stage does.
fn setup_unfilled(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    scratch: &mut ClippedPrims,
    stipple: &mut Stipple,
) {
    let off = ds.setup.pixel_offset;
    let v = [
        vertex(clipped, prim.v[0]),
        vertex(clipped, prim.v[1]),
        vertex(clipped, prim.v[2]),
    ];
    let sx = |k: usize| snap(v[k][0] - off) as i64;
    let sy = |k: usize| snap(v[k][1] - off) as i64;
    let (x, y) = ([sx(0), sx(1), sx(2)], [sy(0), sy(1), sy(2)]);
    let area = (x[0] - x[1]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[0] - y[1]);
    // draw's cull stage drops zero-area triangles when culling is on.
    if area == 0 && ds.setup.cull_face != Face::None {
        return;
    }
    let front = (area > 0) == ds.setup.front_ccw;
    let culled = match ds.setup.cull_face {
        Face::None => false,
        Face::Front => front,
        Face::Back => !front,
        Face::FrontAndBack => true,
    };
    if culled {
        return;
    }
    let mode = ds.setup.fill[!front as usize];
    if matches!(mode, PolygonMode::Fill | PolygonMode::FillRectangle) {
        let as_ = if mode == PolygonMode::FillRectangle {
            TriMode::Rectangle
        } else if ds.link.aa.is_some_and(|aa| aa.poly_smooth) {
            TriMode::PolySmooth
        } else {
            TriMode::Fill
        };
        setup_triangle_as(clipped, prim, ds, out, as_);
        return;
    }
    let offset = match mode {
        PolygonMode::Line => ds.setup.offset_line,
        _ => ds.setup.offset_point,
    };
    // Copies: v0, v1, v2, provoking (indices 0..4), z offset applied.
    let stride = clipped.stride;
    scratch.verts.clear();
    for i in [prim.v[0], prim.v[1], prim.v[2], prim.provoking] {
        scratch.verts.extend_from_slice(vertex(clipped, i));
    }
    if let Some(o) = offset {
        let (ex, ey, ez) = (v[0][0] - v[2][0], v[0][1] - v[2][1], v[0][2] - v[2][2]);
        let (fx, fy, fz) = (v[1][0] - v[2][0], v[1][1] - v[2][1], v[1][2] - v[2][2]);
        let det = ex * fy - ey * fx;
        let inv_det = 1.0 / det;
        let dzdx = (ey * fz - ez * fy) * inv_det;
        let dzdy = (ez * fx - ex * fz) * inv_det;
        let zo = o.zoffset(dzdx, dzdy, [v[0][2], v[1][2], v[2][2]]);
        for k in 0..4 {
            let z = &mut scratch.verts[k * stride + 2];
            *z = (*z + zo).clamp(0.0, 1.0);
        }
    }
    let sub = |a: u32, b: u32, kind| ClippedPrim {
        v: [a, b, b],
        provoking: 3,
        kind,
        ..*prim
    };
    match mode {
        PolygonMode::Line => {
            // Each polygon restarts the line stipple (draw resets per
            // triangle primitive).
            stipple.counter = 0;
            for (a, b, flag) in [(2, 0, 2), (0, 1, 0), (1, 2, 1)] {
                if prim.edge_flags & (1 << flag) != 0 {
                    let line = sub(a, b, PrimKind::Line);
                    if ds.setup.line_stipple.is_some() {
                        stipple_line(scratch, &line, ds, out, front, stipple);
                    } else {
                        setup_line(scratch, &line, ds, out, front);
                    }
                }
            }
        }
        _ => {
            for k in 0..3 {
                if prim.edge_flags & (1 << k) != 0 {
                    setup_point(scratch, &sub(k, k, PrimKind::Point), ds, out, front);
                }
            }
        }
    }
}

/// Line-stipple state of one job's setup: the pattern counter runs on
/// along a strip (a stippled strip is never split across jobs, see
/// scene.rs) and restarts where a line carries `RESET_STIPPLE`.
pub(crate) struct Stipple {
    counter: u32,
    /// The current dash's vertices (start, end, provoking).
    dash: ClippedPrims,
}

/// Line stipple (draw's `draw_pipe_stipple.c`, which llvmpipe uses): walk
/// the line one pixel of its major axis at a time (`ceil(max(|dx|, |dy|))`
/// steps), advance the counter per step, and set up each run of "on" steps
/// as its own line, its end points and attributes interpolated linearly in
/// window space.  Bit `(counter / factor) & 15` of the pattern says on/off.
fn stipple_line(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    front: bool,
    st: &mut Stipple,
) {
    let Some((pattern, factor)) = ds.setup.line_stipple else {
        return;
    };
    let a = vertex(clipped, prim.v[0]);
    let b = vertex(clipped, prim.v[1]);
    let pv = vertex(clipped, prim.provoking);
    // Rectangular lines (line_smooth and multisampled ones included) walk
    // their Euclidean length, others their major axis (draw's
    // `stipple->rectangular`).
    let length = if ds.setup.line_rectangular {
        (a[0] - b[0]).hypot(a[1] - b[1])
    } else {
        (a[0] - b[0]).abs().max((a[1] - b[1]).abs())
    };
    // The view-volume clip bounds a line to ~2^15 pixels; a NaN or infinite
    // length draws nothing.
    let steps = if length.is_finite() {
        length.ceil().min((1 << 16) as f32) as u32
    } else {
        0
    };
    let on = |c: u32| (pattern >> ((c / factor) & 15)) & 1 != 0;
    let stride = clipped.stride;
    let mut emit = |t0: f32, t1: f32, dash: &mut ClippedPrims| {
        dash.verts.clear();
        for t in [t0, t1] {
            dash.verts
                .extend(a.iter().zip(b).map(|(&p, &q)| p + t * (q - p)));
        }
        dash.verts.extend_from_slice(pv);
        debug_assert_eq!(dash.verts.len(), 3 * stride);
        let line = ClippedPrim {
            v: [0, 1, 1],
            provoking: 2,
            ..*prim
        };
        setup_line(dash, &line, ds, out, front);
    };
    let (mut state, mut start) = (false, 0u32);
    for i in 0..steps {
        let r = on(st.counter);
        if r != state {
            if state {
                if start != i {
                    emit(start as f32 / length, i as f32 / length, &mut st.dash);
                }
            } else {
                start = i;
            }
            state = r;
        }
        st.counter = st.counter.wrapping_add(1);
    }
    if state && (start as f32) < length {
        emit(start as f32 / length, 1.0, &mut st.dash);
    }
}

/// Fixed-point corners of a set-up triangle (counter-clockwise), in
/// elements 0..3.  Padded to four: as three-element arrays the returned
/// value was copied in 8- and 4-byte pieces and read back in 8-byte
/// pieces that straddled them, a store-forwarding stall on every triangle
/// (~1.5 % of tiny_tris_1m).
#[derive(Clone, Copy)]
struct TriCorners {
    x: [i32; 4],
    y: [i32; 4],
}

impl TriCorners {
    /// Whether two corners share x and two share y (necessary for half of
    /// an axis-aligned rectangle).
    #[inline]
    fn axis_right_angle(&self) -> bool {
        let (x, y) = (&self.x, &self.y);
        (x[0] == x[1] || x[1] == x[2] || x[2] == x[0])
            && (y[0] == y[1] || y[1] == y[2] || y[2] == y[0])
    }
}

/// The rectangle-merge candidate after a filled triangle: `corners` are
/// what [`setup_triangle_as`] returned for it (`Some` when it pushed a
/// record, at index `before`), `last` the candidate before it.  Merges
/// the two records when they form a rectangle ([`merge_rectangle`]).
fn follow_rectangle(
    out: &mut SetupPrims,
    corners: Option<TriCorners>,
    last: Option<TriCorners>,
    ds: &DerivedState,
    before: usize,
) -> Option<TriCorners> {
    match (corners, last) {
        // (Conservative edges are dilated and multisampled ones carry
        // per-sample records: no rectangle merge.)
        _ if ds.setup.conservative.is_some() || ds.tiles.ms_offsets.is_some() => None,
        // Half of an axis-aligned rectangle has a right angle on the axes:
        // a corner sharing x with one vertex and y with another.  Random
        // triangles fail this at once (the full test cost ~150
        // instructions per triangle).
        (Some(cur), _) if !cur.axis_right_angle() => None,
        (Some(cur), Some(prev)) if out.prims.len() == before + 1 => {
            if merge_rectangle(out, &prev, &cur, ds) {
                None
            } else {
                Some(cur)
            }
        }
        (Some(cur), _) if out.prims.len() == before + 1 => Some(cur),
        _ => None,
    }
}

/// Rectangle detection (llvmpipe's `lp_setup_rect.c`, and what makes a
/// full-screen quad opaque in every tile): when the last two records are
/// triangles of one draw that split an axis-aligned rectangle along a
/// diagonal, and their plane equations agree (the attributes are linear
/// over the rectangle), they become one four-edge record.  Exact: the two
/// triangles' coverage under the fill rule is the rectangle's (the shared
/// diagonal's samples belong to exactly one of them).
fn merge_rectangle(
    out: &mut SetupPrims,
    a: &TriCorners,
    b: &TriCorners,
    ds: &DerivedState,
) -> bool {
    let n = out.prims.len();
    if n < 2 {
        return false;
    }
    // (References: copying the two 112-byte records for every triangle
    // showed in tiny_tris_1m's profile.)
    let (pa, pb) = (&out.prims[n - 2], &out.prims[n - 1]);
    if pa.kind != PrimKind::Triangle
        || pa.num_edges != 3
        || pa.command != pb.command
        || pa.state != pb.state
        || pa.front_facing != pb.front_facing
        || pa.viewport != pb.viewport
    {
        return false;
    }
    // Same plane equations (evaluated at a's reference pixel), tested
    // before the corners: a mesh of screen-aligned cells with varying
    // depth or attributes (textured_mesh) passes the right-angle filter on
    // every triangle, and its depth plane already tells them apart.
    let np = ds.link.planes_per_prim;
    let (qa, qb) = (pa.planes as usize, pb.planes as usize);
    if out.planes.len() < qb + np {
        return false;
    }
    let (dx, dy) = ((pa.ref_x - pb.ref_x) as f32, (pa.ref_y - pb.ref_y) as f32);
    let close = |u: f32, v: f32| (u - v).abs() <= 1e-6 * (1.0 + u.abs().max(v.abs()));
    for k in 0..np {
        let p = out.planes[qa + k];
        let q = out.planes[qb + k];
        let constant = |pl: &Plane| pl.dadx == 0.0 && pl.dady == 0.0;
        let same = if constant(&p) && constant(&q) {
            // Flat and constant inputs, integers among them (bit patterns
            // that are tiny or non-finite as floats): exact bits only.
            p.a0.to_bits() == q.a0.to_bits()
        } else {
            let q0 = q.a0 + q.dadx * dx + q.dady * dy;
            close(p.a0, q0) && close(p.dadx, q.dadx) && close(p.dady, q.dady)
        };
        if !same {
            return false;
        }
    }
    // Four distinct corners of an axis-aligned rectangle, each triangle
    // missing a different, opposite one.
    // Stack arrays: `concat` allocated a Vec per triangle (4 % of
    // tiny_tris_1m with the frees).
    let xs = [a.x[0], a.x[1], a.x[2], b.x[0], b.x[1], b.x[2]];
    let ys = [a.y[0], a.y[1], a.y[2], b.y[0], b.y[1], b.y[2]];
    let (x0, x1) = (
        *xs.iter().min().unwrap_or(&0),
        *xs.iter().max().unwrap_or(&0),
    );
    let (y0, y1) = (
        *ys.iter().min().unwrap_or(&0),
        *ys.iter().max().unwrap_or(&0),
    );
    if x0 == x1 || y0 == y1 {
        return false;
    }
    let corner = |x: i32, y: i32| -> Option<u8> {
        match (x == x0, x == x1, y == y0, y == y1) {
            (true, _, true, _) => Some(0),
            (true, _, _, true) => Some(1),
            (_, true, _, true) => Some(2),
            (_, true, true, _) => Some(3),
            _ => None,
        }
    };
    let missing = |t: &TriCorners| -> Option<u8> {
        let mut seen = 0u8;
        for k in 0..3 {
            seen |= 1 << corner(t.x[k], t.y[k])?;
        }
        (seen.count_ones() == 3).then(|| (!seen & 0xf).trailing_zeros() as u8)
    };
    let (Some(ma), Some(mb)) = (missing(a), missing(b)) else {
        return false;
    };
    if (ma + 2) % 4 != mb {
        return false;
    }
    // Counter-clockwise (y down): top-left, bottom-left, bottom-right,
    // top-right; the fill rule's bias comes out of `edge` as for triangles.
    let edges = polygon_edges(
        &[x0, x0, x1, x1],
        &[y0, y1, y1, y0],
        ds.setup.bottom_edge_rule,
    );
    let bbox = (
        pa.x0.min(pb.x0),
        pa.y0.min(pb.y0),
        pa.x1.max(pb.x1),
        pa.y1.max(pb.y1),
    );
    let r = &mut out.prims[n - 2];
    for (i, &(ea, eb, ec)) in edges.iter().enumerate() {
        r.a[i] = ea;
        r.b[i] = eb;
        r.c[i] = ec;
    }
    r.num_edges = 4;
    (r.x0, r.y0, r.x1, r.y1) = bbox;
    out.prims.pop();
    out.planes.truncate(qb);
    true
}

#[inline]
fn vertex(clipped: &ClippedPrims, i: u32) -> &[f32] {
    let s = clipped.stride;
    &clipped.verts[i as usize * s..(i as usize + 1) * s]
}

/// Gradients of a triangle in the offset pixel space, as splatted lanes
/// for [`PlanePlan::push_planes`]: built straight from setup's registers
/// (a scalar struct in memory read back by the lane code was a
/// store-forwarding stall, 7 % of setup_triangle_as).
#[derive(Clone, Copy)]
struct GradLanes {
    /// Reference pixel minus the first vertex.
    rx: Lanes,
    ry: Lanes,
    e1x: Lanes,
    e1y: Lanes,
    e2x: Lanes,
    e2y: Lanes,
    inv_det: Lanes,
}

/// Gradients of a triangle in the offset pixel space (scalar; the
/// reference the lane planes are tested against).
#[cfg(test)]
struct TriGrad {
    x0: f32,
    y0: f32,
    e1x: f32,
    e1y: f32,
    e2x: f32,
    e2y: f32,
    inv_det: f32,
    ref_x: f32,
    ref_y: f32,
}

#[cfg(test)]
impl TriGrad {
    fn lanes(&self) -> GradLanes {
        GradLanes {
            rx: Lanes::splat(self.ref_x - self.x0),
            ry: Lanes::splat(self.ref_y - self.y0),
            e1x: Lanes::splat(self.e1x),
            e1y: Lanes::splat(self.e1y),
            e2x: Lanes::splat(self.e2x),
            e2y: Lanes::splat(self.e2y),
            inv_det: Lanes::splat(self.inv_det),
        }
    }

    /// One plane, scalar: the reference [`PlanePlan::push_planes`] is
    /// tested against.
    #[cfg(test)]
    fn plane(&self, a: [f32; 3]) -> Plane {
        let d1 = a[1] - a[0];
        let d2 = a[2] - a[0];
        let dadx = (d1 * self.e2y - d2 * self.e1y) * self.inv_det;
        let dady = (d2 * self.e1x - d1 * self.e2x) * self.inv_det;
        Plane {
            a0: a[0] + dadx * (self.ref_x - self.x0) + dady * (self.ref_y - self.y0),
            dadx,
            dady,
        }
    }
}

impl PlanePlan {
    /// Pushes the planes of the triangle `v` (gradients `g`, provoking
    /// vertex `pv`) onto `planes`.  Each vertex is the clipped vertex
    /// buffer from that vertex on (slot `s` is element `s`).
    ///
    /// `#[inline(always)]`, and its gather a function rather than a
    /// closure: left out of line, a baseline build compiled it for SSE2
    /// only, outside the set-up clone (small_tris_100k: 24.5 M
    /// instructions a frame there, against none beside the v3 clone's).
    #[inline(always)]
    fn push_planes(&self, g: &GradLanes, v: &[&[f32]; 3], pv: &[f32], planes: &mut Vec<Plane>) {
        /// The chunk's eight slots of one vertex.  Consecutive slots (the
        /// usual layout: depth, 1/w, then the varyings in order): one
        /// 8-float load, lanes past the chunk's planes read the next slots
        /// (or, at the end of the buffer, nothing: `v` is the rest of the
        /// vertex buffer from this vertex on).
        #[inline(always)]
        fn gather(vert: &[f32], k: &PlaneChunk) -> Lanes {
            if let Some(base) = k.consecutive
                && let Some(eight) = vert.get(base as usize..base as usize + LANES)
                && let Ok(eight) = <[f32; LANES]>::try_from(eight)
            {
                return Lanes::new(eight);
            }
            let mut a = [0.0f32; LANES];
            for (d, &i) in a.iter_mut().zip(&k.src) {
                *d = vert.get(i as usize).copied().unwrap_or(0.0);
            }
            Lanes::new(a)
        }
        let GradLanes {
            rx,
            ry,
            e1x,
            e1y,
            e2x,
            e2y,
            inv_det,
        } = *g;
        for k in &self.chunks {
            let mut a = [gather(v[0], k), gather(v[1], k), gather(v[2], k)];
            if k.perspective != 0 {
                let m = crate::lanes::mask_lanes(k.perspective);
                for (ak, vk) in a.iter_mut().zip(v) {
                    let w = Lanes::splat(vk.get(3).copied().unwrap_or(0.0));
                    *ak = m.select(*ak * w, *ak);
                }
            }
            // TriGrad::plane, lane-wise.
            let d1 = a[1] - a[0];
            let d2 = a[2] - a[0];
            let mut dadx = (d1 * e2y - d2 * e1y) * inv_det;
            let mut dady = (d2 * e1x - d1 * e2x) * inv_det;
            let mut a0 = a[0] + dadx * rx + dady * ry;
            if k.flat | k.zero != 0 {
                let constant = crate::lanes::mask_lanes(k.flat | k.zero);
                let flat = gather(pv, k);
                let zero = crate::lanes::mask_lanes(k.zero);
                a0 = constant.select(zero.select(Lanes::ZERO, flat), a0);
                dadx = constant.select(Lanes::ZERO, dadx);
                dady = constant.select(Lanes::ZERO, dady);
            }
            // All 8 as one fixed-size copy, then the unused ones dropped:
            // a push per plane (capacity check, three scalar stores) cost
            // as much as evaluating them.
            let (a0, dadx, dady) = (a0.to_array(), dadx.to_array(), dady.to_array());
            let mut eight = [Plane::default(); LANES];
            for (l, p) in eight.iter_mut().enumerate() {
                *p = Plane {
                    a0: a0[l],
                    dadx: dadx[l],
                    dady: dady[l],
                };
            }
            let len = planes.len() + k.len;
            planes.extend_from_slice(&eight);
            planes.truncate(len);
        }
    }
}

fn clip_bbox(ds: &DerivedState, viewport: u8, r: Rect) -> Rect {
    ds.setup.draw_regions[viewport as usize].intersect(&r)
}

fn clip_tri_bbox(ds: &DerivedState, viewport: u8, r: Rect) -> Rect {
    ds.setup.tri_regions[viewport as usize].intersect(&r)
}

/// A set-up record for `prim` over `bbox`, with `edges` filled in and its
/// planes starting at the next plane of `out`.
fn new_prim(
    prim: &ClippedPrim,
    kind: PrimKind,
    front_facing: bool,
    bbox: &Rect,
    edges: &[(i32, i32, i64)],
    out: &SetupPrims,
) -> SetupPrim {
    let mut sp = SetupPrim {
        num_edges: edges.len() as u8,
        kind,
        front_facing,
        viewport: prim.viewport,
        x0: bbox.x0,
        y0: bbox.y0,
        x1: bbox.x1,
        y1: bbox.y1,
        ref_x: bbox.x0,
        ref_y: bbox.y0,
        state: prim.state,
        command: prim.command,
        planes: out.planes.len() as u32,
        ..Default::default()
    };
    for (i, &(a, b, c)) in edges.iter().enumerate().take(MAX_EDGES) {
        sp.a[i] = a;
        sp.b[i] = b;
        sp.c[i] = c;
    }
    sp
}

/// The edges of the closed counter-clockwise polygon `(x[i], y[i])`.
fn polygon_edges<const N: usize>(
    x: &[i32; N],
    y: &[i32; N],
    bottom_edge_rule: bool,
) -> [(i32, i32, i64); N] {
    // A loop, not `array::from_fn`: its closure stayed out of line, a call
    // per edge of every triangle (2 % of tiny_tris_1m).
    let mut out = [(0, 0, 0); N];
    for i in 0..N {
        let j = if i + 1 == N { 0 } else { i + 1 };
        out[i] = edge(x[i], y[i], x[j], y[j], bottom_edge_rule);
    }
    out
}

/// Post-snap conservative rasterization (rasterizer.rst
/// `conservative_raster_mode`; llvmpipe has none, so this is ferropipe's
/// definition): each edge of the snapped triangle moves outward by `r`
/// pixels in the L-infinity sense, i.e. its reduced edge value grows by
/// `r * (|a| + |b|)`, and a pixel is covered when the dilated value is at
/// least 0.  With `r` = 1/2 that is "the pixel's square touches the
/// triangle" along the edge normals (the edge test at the square's most
/// inside corner); the bounding box (setup_triangle_as) supplies the x and
/// y axes, so coverage is the exact separating-axis overlap test.  The
/// fill-rule bias is dropped, as touching squares all count.  Degenerate
/// (zero-area) triangles generate nothing in post-snap mode; in pre-snap
/// mode (`r` one unit larger, covering the snapping error) they cover what
/// their segment touches: their three edges are two opposite half-planes
/// along it, dilated, and the box bounds the ends.  Points and lines
/// (setup_point, setup_line) dilate their squares and rectangles alike.
fn conservative_dilate<const N: usize>(ds: &DerivedState, edges: &mut [(i32, i32, i64); N]) {
    if let Some(r) = ds.setup.conservative {
        dilate_edges(r, edges);
    }
}

/// Moves every edge out by `r` / 256 pixel in the L-infinity sense
/// ([`conservative_dilate`]).
fn dilate_edges<const N: usize>(r: i64, edges: &mut [(i32, i32, i64); N]) {
    for (a, b, c) in edges.iter_mut() {
        let span = (a.unsigned_abs() as i64 + b.unsigned_abs() as i64) * r;
        // `c` is ceil(c_full / 256) (fill-rule bias included), so
        // `256 c >= c_full`: testing `256 c + span >= 0` over-covers by
        // less than 1/256 pixel, never under-covers.  In the reduced form
        // that is `c + ceil((span + 1) / 256) + k > 0`.
        *c += (span + FIXED_ONE as i64) >> FIXED_ORDER;
    }
}

fn setup_triangle(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
) -> Option<TriCorners> {
    setup_triangle_as(clipped, prim, ds, out, TriMode::Fill)
}

/// How [`setup_triangle_as`] treats a triangle.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TriMode {
    /// A filled triangle.
    Fill,
    /// Its bounding rectangle (`PIPE_POLYGON_MODE_FILL_RECTANGLE`).
    Rectangle,
    /// Half of a smooth line's or point's quad (aa_stage.rs), drawn with
    /// draw's "no cull" rasterizer state (`draw_get_rasterizer_no_cull`):
    /// never culled, no polygon offset or conservative dilation, front
    /// facing when clockwise (`front_ccw` off), front attributes.
    Smooth,
    /// A filled triangle under `poly_smooth` (GL 4.6 §14.6.1): a fragment
    /// for every pixel whose square the triangle touches (the conservative
    /// half-pixel dilation and box, [`POLY_SMOOTH_DILATE`]), with the
    /// corner planes the fragment shader wrapper measures the covered area
    /// from (aa_stage.rs `polygon_planes`, `poly_coverage`; it discards
    /// the pixels touched with zero area).  Culling, facing, polygon offset
    /// and attributes are the filled triangle's, evaluated at pixel centres
    /// (extrapolated outside the triangle).
    PolySmooth,
}

/// A smooth polygon's edge dilation, in 1/256 pixel: half a pixel, so
/// every pixel square the snapped triangle touches has a fragment
/// ([`conservative_dilate`]: the test then over-covers by under 1/256
/// pixel, which the coverage's zero-area discard removes).
const POLY_SMOOTH_DILATE: i64 = FIXED_ONE as i64 / 2;

/// One triangle of a smooth line's or point's quad (aa_stage.rs).
fn setup_smooth_triangle(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
) {
    setup_triangle_as(clipped, prim, ds, out, TriMode::Smooth);
}

/// A triangle, or with `rectangle` its screen-aligned bounding rectangle
/// (`PIPE_POLYGON_MODE_FILL_RECTANGLE`, NV_fill_rectangle): the four
/// axis-aligned edges of the snapped vertices' bounding box replace the
/// triangle's three, under the same fill rule, while depth and attributes
/// keep the triangle's planes (evaluated across the whole rectangle).
/// Facing, culling and zero-area rejection are the triangle's.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn setup_triangle_as(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    mode: TriMode,
) -> Option<TriCorners> {
    let smooth = mode == TriMode::Smooth;
    let poly_smooth = mode == TriMode::PolySmooth;
    // (Never both: conservative rasterization turns smoothing off.)
    let conservative = if poly_smooth {
        Some(POLY_SMOOTH_DILATE)
    } else {
        ds.setup.conservative.filter(|_| !smooth)
    };
    let off = ds.setup.pixel_offset;
    let mut vi = prim.v;
    let (mut x, mut y) = snap_corners(
        [
            vertex(clipped, vi[0]),
            vertex(clipped, vi[1]),
            vertex(clipped, vi[2]),
        ],
        off,
    );
    let dx01 = (x[0] - x[1]) as i64;
    let dy01 = (y[0] - y[1]) as i64;
    let dx20 = (x[2] - x[0]) as i64;
    let dy20 = (y[2] - y[0]) as i64;
    let area = dx01 * dy20 - dx20 * dy01;
    // Pre-snap conservative rasterization covers what the unsnapped
    // triangle touches, so one that snapping made degenerate still counts:
    // back-facing, flat (rasterizer.rst).  Everything else degenerate
    // draws nothing.
    // With a subpixel precision bias the finer grid decides: degenerate
    // there draws nothing; degenerate only at 1/256 pixel is drawn as a
    // pre-snap degenerate triangle (it is thinner than 1/256 pixel).
    let fine = ds
        .setup
        .conservative_fine_snap
        .filter(|_| !smooth)
        .map(|bits| fine_snapped_area(clipped, &vi, off, bits));
    if fine == Some(0) {
        return None;
    }
    let degenerate = area == 0;
    let pre_snap = (ds.setup.conservative_pre_snap || fine.is_some()) && !smooth;
    if degenerate && !pre_snap {
        return None;
    }
    let ccw = area > 0;
    let front = if smooth {
        !ccw
    } else {
        !degenerate && ccw == ds.setup.front_ccw
    };
    let culled = match ds.setup.cull_face {
        _ if smooth => false,
        Face::None => false,
        Face::Front => front,
        Face::Back => !front,
        Face::FrontAndBack => true,
    };
    if culled {
        return None;
    }
    if !ccw && !degenerate {
        // Make the triangle counter-clockwise, keeping the provoking
        // vertex's position (llvmpipe's rotate_fixed_position_*).
        let (i, j) = if ds.setup.flatshade_first {
            (1, 2)
        } else {
            (0, 1)
        };
        vi.swap(i, j);
        x.swap(i, j);
        y.swap(i, j);
    }

    // Bounding box (llvmpipe's rounding; y depends on the fill convention).
    let adj = ds.setup.bottom_edge_rule as i32;
    let mut bb = Rect {
        x0: x.iter().min().copied().unwrap_or(0) >> FIXED_ORDER,
        y0: (y.iter().min().copied().unwrap_or(0) + adj) >> FIXED_ORDER,
        x1: ((x.iter().max().copied().unwrap_or(0) - 1) >> FIXED_ORDER) + 1,
        y1: ((y.iter().max().copied().unwrap_or(0) - 1 + adj) >> FIXED_ORDER) + 1,
    };
    if let Some(r) = conservative {
        // Exactly the pixels whose dilated square overlaps the snapped box
        // (touching counts): the box is the x/y separating axes that the
        // dilated edges lack, without it acute corners would spike out.
        bb = conservative_bbox(&x, &y, r);
    }
    let bbox = clip_tri_bbox(ds, prim.viewport, ms_grow(ds, bb));
    if bbox.is_empty() {
        return None;
    }

    let sp = if mode == TriMode::Rectangle {
        let (x0, x1) = (x.iter().min().copied()?, x.iter().max().copied()?);
        let (y0, y1) = (y.iter().min().copied()?, y.iter().max().copied()?);
        // Counter-clockwise in setup's sense (as the triangle now is).
        let (edges, ms) = prim_edges(ds, &[x0, x0, x1, x1], &[y0, y1, y1, y0], out);
        SetupPrim {
            ms,
            ..new_prim(prim, PrimKind::Triangle, front, &bbox, &edges, out)
        }
    } else if poly_smooth {
        // (Single-sampled: multisample rasterization turns it off.)
        let mut edges = polygon_edges(&x, &y, ds.setup.bottom_edge_rule);
        dilate_edges(POLY_SMOOTH_DILATE, &mut edges);
        new_prim(prim, PrimKind::Triangle, front, &bbox, &edges, out)
    } else {
        let (edges, ms) = prim_edges(ds, &x, &y, out);
        SetupPrim {
            ms,
            ..new_prim(prim, PrimKind::Triangle, front, &bbox, &edges, out)
        }
    };

    if degenerate {
        push_flat_planes(ds, vertex(clipped, prim.provoking), out);
        out.prims.push(sp);
        return None;
    }
    let v = [
        vertex(clipped, vi[0]),
        vertex(clipped, vi[1]),
        vertex(clipped, vi[2]),
    ];
    // Gradients from the unsnapped positions, as llvmpipe's setup does (on
    // steep clipped triangles snapping would move depth by ~1/512 px worth
    // of gradient).
    let fx = |k: usize| v[k][0] - off;
    let fy = |k: usize| v[k][1] - off;
    let e = [fx(1) - fx(0), fy(1) - fy(0), fx(2) - fx(0), fy(2) - fy(0)];
    let g = tri_gradients(
        e,
        e[0] * e[3] - e[2] * e[1],
        (fx(0), fy(0)),
        (&x, &y),
        (bbox.x0, bbox.y0),
    );
    let first_plane = out.planes.len();
    push_tri_planes(
        clipped,
        &ds.link.tri_planes[usize::from(!(front || smooth))],
        &g,
        (vi, prim.provoking),
        ds.setup.offset_tri.as_ref().filter(|_| !smooth),
        out,
    );
    if poly_smooth && let Some(aa) = &ds.link.aa {
        crate::aa_state::polygon_planes(
            aa,
            &mut out.planes[first_plane..],
            &x,
            &y,
            (bbox.x0, bbox.y0),
        );
    }
    out.prims.push(sp);
    Some(TriCorners {
        x: [x[0], x[1], x[2], 0],
        y: [y[0], y[1], y[2], 0],
    })
}

/// A triangle's gradients for [`PlanePlan::push_planes`]: `e` are the
/// unsnapped edge vectors `v1 - v0` and `v2 - v0` (x, y, x, y), `det`
/// their cross product `e1x e2y - e2x e1y` and `origin` is `v0`, all
/// less the pixel offset; `(x, y)` the snapped
/// corners, `reference` the record's reference pixel.  A float area that
/// degenerates (zero or not finite) where the fixed-point one does not
/// falls back to the snapped positions.
#[inline(always)]
fn tri_gradients(
    e: [f32; 4],
    det: f32,
    origin: (f32, f32),
    (x, y): (&[i32; 3], &[i32; 3]),
    reference: (i32, i32),
) -> GradLanes {
    let [mut e1x, mut e1y, mut e2x, mut e2y] = e;
    let mut det = det;
    let (mut x0f, mut y0f) = origin;
    if det == 0.0 || !det.is_finite() {
        let one = 1.0 / FIXED_ONE as f32;
        let sx = |k: usize| x[k] as f32 * one;
        let sy = |k: usize| y[k] as f32 * one;
        (e1x, e1y, e2x, e2y) = (sx(1) - sx(0), sy(1) - sy(0), sx(2) - sx(0), sy(2) - sy(0));
        let det_fixed = (x[1] - x[0]) as i64 * (y[2] - y[0]) as i64
            - (x[2] - x[0]) as i64 * (y[1] - y[0]) as i64;
        det = (det_fixed as f64 / 65536.0) as f32;
        (x0f, y0f) = (sx(0), sy(0));
    }
    GradLanes {
        rx: Lanes::splat(reference.0 as f32 - x0f),
        ry: Lanes::splat(reference.1 as f32 - y0f),
        e1x: Lanes::splat(e1x),
        e1y: Lanes::splat(e1y),
        e2x: Lanes::splat(e2x),
        e2y: Lanes::splat(e2y),
        inv_det: Lanes::splat(1.0 / det),
    }
}

/// Pushes the planes of the triangle with corners `vi` (in setup's
/// counter-clockwise order) and provoking vertex `pv` onto `out`, through
/// `plan` with gradients `g`; then shifts its depth plane by the polygon
/// offset `offset`, if any.
#[inline(always)]
fn push_tri_planes(
    clipped: &ClippedPrims,
    plan: &PlanePlan,
    g: &GradLanes,
    (vi, pv): ([u32; 3], u32),
    offset: Option<&crate::setup_plan::PolygonOffset>,
    out: &mut SetupPrims,
) {
    let first_plane = out.planes.len();
    let tail = |i: u32| {
        clipped
            .verts
            .get(i as usize * clipped.stride..)
            .unwrap_or(&[])
    };
    plan.push_planes(
        g,
        &[tail(vi[0]), tail(vi[1]), tail(vi[2])],
        tail(pv),
        &mut out.planes,
    );
    // Polygon offset: a constant shift of the depth plane.
    if let Some(o) = offset
        && let Some(zp) = out.planes.get_mut(first_plane)
    {
        let v = vi.map(|k| vertex(clipped, k));
        let (dzdx, dzdy) = offset_slopes(&v).unwrap_or((zp.dadx, zp.dady));
        zp.a0 += o.zoffset(dzdx, dzdy, [v[0][2], v[1][2], v[2][2]]);
    }
}

/// The depth slopes polygon offset scales, as llvmpipe's triangle setup
/// computes them (`lp_do_offset_tri` in lp_state_setup.c, Mesa 22.3): from
/// the window positions themselves, in setup's (counter-clockwise) vertex
/// order, with `d01 = v0 - v1` and `d20 = v2 - v0`:
/// `dzdx = (dz20 dy01 - dy20 dz01) / (dx01 dy20 - dy01 dx20)` and
/// `dzdy = (dx20 dz01 - dz20 dx01) / (...)`, the quotient taken as a product
/// with the reciprocal.  Only the magnitudes matter ([`PolygonOffset::zoffset`]
/// takes `|dzdx|`, `|dzdy|`).  The depth plane's gradients are the same
/// expressions of the positions shifted by the pixel centre; that shift
/// rounds for positions below 1/2 (negative or in the guard band), so the
/// plane's values would differ there in the last bits.  `None` when the
/// unshifted positions give no finite reciprocal (llvmpipe would offset by
/// NaN; the caller keeps the plane's gradients).
#[inline]
fn offset_slopes(v: &[&[f32]; 3]) -> Option<(f32, f32)> {
    let d01 = [v[0][0] - v[1][0], v[0][1] - v[1][1], v[0][2] - v[1][2]];
    let d20 = [v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]];
    let ooa = 1.0 / (d01[0] * d20[1] - d01[1] * d20[0]);
    if !ooa.is_finite() {
        return None;
    }
    let dzdx = (d20[2] * d01[1] - d20[1] * d01[2]) * ooa;
    let dzdy = (d20[0] * d01[2] - d20[2] * d01[0]) * ooa;
    Some((dzdx, dzdy))
}

/// Twice the area of the triangle `vi` snapped to a grid `bits` (x, y)
/// finer than 1/256 pixel, ties to even as [`snap`] (conservative
/// rasterization's subpixel precision bias).
fn fine_snapped_area(clipped: &ClippedPrims, vi: &[u32; 3], off: f32, bits: (u8, u8)) -> i128 {
    let fine = |v: f32, b: u8| -> i128 {
        let scale = (FIXED_ONE as f64) * f64::from(1u32 << b);
        let limit = (GUARD_BAND as f64 + 2.0) * scale;
        let s = (f64::from(v) * scale).round_ties_even();
        if s.is_nan() {
            0
        } else {
            s.clamp(-limit, limit) as i128
        }
    };
    let p = vi.map(|i| {
        let v = vertex(clipped, i);
        (fine(v[0] - off, bits.0), fine(v[1] - off, bits.1))
    });
    (p[0].0 - p[1].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[0].1 - p[1].1)
}

/// Constant planes with the values of vertex `pv` (a degenerate triangle
/// under pre-snap conservative rasterization: "the vertex attributes and
/// depth are that of the provoking vertex", and it is back-facing, so
/// `light_twoside` picks BCOLOR).
fn push_flat_planes(ds: &DerivedState, pv: &[f32], out: &mut SetupPrims) {
    let flat = |a0: f32| Plane {
        a0,
        dadx: 0.0,
        dady: 0.0,
    };
    out.planes.push(flat(pv[2]));
    out.planes.push(flat(pv[3]));
    for src in &ds.link.fs_inputs {
        match *src {
            FsInputSource::Attr { back, interp, .. } => {
                let o = 4 + 4 * back;
                for c in 0..4 {
                    let a = pv.get(o + c).copied().unwrap_or(0.0);
                    out.planes.push(flat(match interp {
                        Interpolation::Perspective => a * pv[3],
                        _ => a,
                    }));
                }
            }
            FsInputSource::PointCoord { .. } => {
                out.planes.extend_from_slice(&[Plane::default(); 4]);
            }
            _ => {}
        }
    }
}

/// The bounding box of a conservatively rasterized primitive with corners
/// `(x, y)` (1/256 pixel, offset space): exactly the pixels whose square,
/// dilated by `r` (1/256 pixel) beyond half a pixel, overlaps the corners'
/// box (touching counts).  Pixel p's centre is at p in this space.
fn conservative_bbox(x: &[i32], y: &[i32], r: i64) -> Rect {
    let r = r as i32;
    let lo = |v: &[i32]| v.iter().min().copied().unwrap_or(0);
    let hi = |v: &[i32]| v.iter().max().copied().unwrap_or(0);
    Rect {
        x0: (lo(x) - r + FIXED_ONE - 1) >> FIXED_ORDER,
        y0: (lo(y) - r + FIXED_ONE - 1) >> FIXED_ORDER,
        x1: ((hi(x) + r) >> FIXED_ORDER) + 1,
        y1: ((hi(y) + r) >> FIXED_ORDER) + 1,
    }
}

/// Pushes the planes of a primitive whose attributes vary along one axis
/// (lines) or not at all (points): `grad(a1, a2) -> (dadx, dady)` and the
/// origin vertex `(ox, oy)` in the offset space.
#[allow(clippy::too_many_arguments)]
fn push_axis_planes(
    ds: &DerivedState,
    out: &mut SetupPrims,
    v1: &[f32],
    v2: &[f32],
    pv: &[f32],
    origin: (f32, f32),
    reference: (i32, i32),
    grad: &dyn Fn(f32, f32) -> (f32, f32),
    sprite: Option<(f32, f32, f32)>,
    facing: bool,
) {
    let plane = |a1: f32, a2: f32| -> Plane {
        let (dadx, dady) = grad(a1, a2);
        Plane {
            a0: a1
                + dadx * (reference.0 as f32 - origin.0)
                + dady * (reference.1 as f32 - origin.1),
            dadx,
            dady,
        }
    };
    out.planes.push(plane(v1[2], v2[2]));
    out.planes.push(plane(v1[3], v2[3]));
    let sprite_enable = ds.setup.sprite_coord_enable;
    for src in &ds.link.fs_inputs {
        match *src {
            FsInputSource::Attr {
                front,
                back,
                interp,
                sprite: sprite_bit,
                ..
            } => {
                let o = 4 + 4 * if facing { front } else { back };
                if let (Some(sc), Some(bit)) = (sprite, sprite_bit)
                    && sprite_enable & (1 << bit) != 0
                {
                    let persp = interp == Interpolation::Perspective;
                    push_sprite_planes(ds, out, sc, reference, persp, v1[3]);
                    continue;
                }
                for c in 0..4 {
                    let p = match interp {
                        Interpolation::Flat => Plane {
                            a0: pv[o + c],
                            dadx: 0.0,
                            dady: 0.0,
                        },
                        Interpolation::Linear => plane(v1[o + c], v2[o + c]),
                        Interpolation::Perspective => plane(v1[o + c] * v1[3], v2[o + c] * v2[3]),
                    };
                    out.planes.push(p);
                }
            }
            FsInputSource::PointCoord { .. } => match sprite {
                Some(sc) => push_sprite_planes(ds, out, sc, reference, false, 1.0),
                None => out.planes.extend_from_slice(&[Plane::default(); 4]),
            },
            _ => {}
        }
    }
}

/// Point-sprite coordinates (s, t, 0, 1) over a point: `sc` is the point's
/// centre (offset space) and its width in pixels; s runs 0..1 left to right,
/// t top to bottom (`UPPER_LEFT`) or bottom to top.
fn push_sprite_planes(
    ds: &DerivedState,
    out: &mut SetupPrims,
    sc: (f32, f32, f32),
    reference: (i32, i32),
    perspective: bool,
    w0: f32,
) {
    let (cx, cy, width) = sc;
    let d = 1.0 / width;
    let dady = if ds.setup.sprite_coord_mode == SpriteCoordMode::LowerLeft {
        -d
    } else {
        d
    };
    let m = if perspective { w0 } else { 1.0 };
    let s = Plane {
        a0: (0.5 + d * (reference.0 as f32 - cx)) * m,
        dadx: d * m,
        dady: 0.0,
    };
    let t = Plane {
        a0: (0.5 + dady * (reference.1 as f32 - cy)) * m,
        dadx: 0.0,
        dady: dady * m,
    };
    out.planes.push(s);
    out.planes.push(t);
    out.planes.push(Plane::default());
    out.planes.push(Plane {
        a0: m,
        dadx: 0.0,
        dady: 0.0,
    });
}

/// `front`: the facing the line reports (`front_facing`, BCOLOR under
/// `light_twoside`): true for real lines, the polygon's for unfilled edges.
fn setup_line(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    front: bool,
) {
    if ds.link.aa.is_some_and(|aa| aa.line_half_width.is_some()) {
        // line_smooth: draw's aaline stage.
        crate::aa_stage::aaline(clipped, prim, ds, |q, tri| {
            setup_smooth_triangle(q, tri, ds, out)
        });
        return;
    }
    let rast = &*ds.setup;
    let off = ds.setup.pixel_offset;
    let mut v1 = vertex(clipped, prim.v[0]);
    let mut v2 = vertex(clipped, prim.v[1]);
    let (o1, o2) = (v1, v2);
    let pv = vertex(clipped, prim.provoking);
    let width = rast.line_width.max(1.0);
    let fixed_width = (width.round() as i32).clamp(1, 255) * FIXED_ONE;

    let mut dx = v1[0] - v2[0];
    let mut dy = v1[1] - v2[1];
    let len2 = dx * dx + dy * dy;
    if len2.is_nan() || len2 <= 0.0 {
        return;
    }
    let (odx, ody) = (dx, dy);
    let xs: [i32; 4];
    let ys: [i32; 4];
    let grad: Box<dyn Fn(f32, f32) -> (f32, f32)>;
    // Conservative rasterization covers what the line's rectangle touches.
    if rast.line_rectangular || ds.setup.conservative.is_some() {
        let scale = (rast.line_width * 0.5) / len2.sqrt();
        let tx = snap(-dy * scale);
        let ty = snap(dx * scale);
        let (ax, ay) = (snap(v1[0] - off), snap(v1[1] - off));
        let (bx, by) = (snap(v2[0] - off), snap(v2[1] - off));
        xs = [ax - tx, bx - tx, bx + tx, ax + tx];
        ys = [ay - ty, by - ty, by + ty, ay + ty];
        let inv = 1.0 / len2;
        grad = Box::new(move |a1, a2| ((a1 - a2) * odx * inv, (a1 - a2) * ody * inv));
    } else {
        let sign = |x: f32| x >= 0.0;
        let fracf = |f: f32| f - f.floor();
        let x1diff = v1[0] - v1[0].floor() - 0.5;
        let y1diff = v1[1] - v1[1].floor() - 0.5;
        let mut x2diff = v2[0] - v2[0].floor() - 0.5;
        let mut y2diff = v2[1] - v2[1].floor() - 0.5;
        let (mut x_off, mut y_off, mut x_off_end, mut y_off_end) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        // `line_last_pixel` with the end point inside its pixel's diamond:
        // that pixel is drawn (GL omits it so connected lines do not draw
        // it twice).
        let last_inside = rast.line_last_pixel && x2diff.abs() + y2diff.abs() < 0.5;
        if dx.abs() >= dy.abs() {
            let dydx = dy / dx;
            if y2diff == -0.5 && dy < 0.0 {
                y2diff = 0.5;
            }
            let draw_start = if x1diff.abs() + y1diff.abs() < 0.5 {
                true
            } else if sign(x1diff) == sign(-dx) {
                false
            } else if sign(-y1diff) != sign(dy) {
                true
            } else {
                let yi = fracf(v1[1]) + x1diff * dydx;
                yi < 1.0 && yi > 0.0
            };
            let draw_end = if x2diff.abs() + y2diff.abs() < 0.5 {
                last_inside
            } else if sign(x2diff) != sign(-dx) {
                false
            } else if sign(-y2diff) == sign(dy) {
                true
            } else {
                let yi = fracf(v2[1]) + x2diff * dydx;
                yi < 1.0 && yi > 0.0
            };
            let will_draw_start = sign(-x1diff) != sign(dx);
            let will_draw_end = sign(x2diff) == sign(-dx) || x2diff == 0.0;
            let inv_dx = 1.0 / odx;
            grad = Box::new(move |a1, a2| ((a1 - a2) * inv_dx, 0.0));
            if dx < 0.0 {
                std::mem::swap(&mut v1, &mut v2);
                dx = -dx;
                dy = -dy;
                if will_draw_start != draw_start {
                    x_off_end = -x1diff - 0.5;
                    y_off_end = x_off_end * dydx;
                }
                if will_draw_end != draw_end {
                    x_off = -x2diff - 0.5;
                    y_off = x_off * dydx;
                }
            } else {
                if will_draw_start != draw_start {
                    x_off = -x1diff + 0.5;
                    y_off = x_off * dydx;
                }
                if will_draw_end != draw_end {
                    x_off_end = -x2diff + 0.5;
                    y_off_end = x_off_end * dydx;
                }
            }
            if last_inside {
                // The end moves to its pixel's far boundary in the
                // direction of travel, so the edge cannot miss the centre
                // whatever the fill rule (the offsets above only shorten).
                if odx < 0.0 {
                    // travelling +x; the end is v1 after the swap
                    x_off = 0.5 - x2diff;
                    y_off = x_off * dydx;
                } else {
                    x_off_end = -x2diff - 0.5;
                    y_off_end = x_off_end * dydx;
                }
            }
            let _ = (dx, dy);
            let hw = fixed_width / 2;
            xs = [
                snap(v1[0] + x_off - off),
                snap(v2[0] + x_off_end - off),
                snap(v2[0] + x_off_end - off),
                snap(v1[0] + x_off - off),
            ];
            ys = [
                snap(v1[1] + y_off - off) - hw,
                snap(v2[1] + y_off_end - off) - hw,
                snap(v2[1] + y_off_end - off) + hw,
                snap(v1[1] + y_off - off) + hw,
            ];
        } else {
            let dxdy = dx / dy;
            if x2diff == -0.5 && dx < 0.0 {
                x2diff = 0.5;
            }
            let draw_start = if x1diff.abs() + y1diff.abs() < 0.5 {
                true
            } else if sign(-y1diff) == sign(dy) {
                false
            } else if sign(x1diff) != sign(-dx) {
                true
            } else {
                let xi = fracf(v1[0]) + y1diff * dxdy;
                xi < 1.0 && xi > 0.0
            };
            let draw_end = if x2diff.abs() + y2diff.abs() < 0.5 {
                last_inside
            } else if sign(-y2diff) != sign(dy) {
                false
            } else if sign(x2diff) == sign(-dx) {
                true
            } else {
                let xi = fracf(v2[0]) + y2diff * dxdy;
                (0.0..1.0).contains(&xi)
            };
            let will_draw_start = sign(y1diff) == sign(dy);
            let will_draw_end = sign(-y2diff) == sign(dy) || y2diff == 0.0;
            let inv_dy = 1.0 / ody;
            grad = Box::new(move |a1, a2| (0.0, (a1 - a2) * inv_dy));
            if dy > 0.0 {
                std::mem::swap(&mut v1, &mut v2);
                dx = -dx;
                dy = -dy;
                if will_draw_start != draw_start {
                    y_off_end = -y1diff + 0.5;
                    x_off_end = y_off_end * dxdy;
                }
                if will_draw_end != draw_end {
                    y_off = -y2diff + 0.5;
                    x_off = y_off * dxdy;
                }
            } else {
                if will_draw_start != draw_start {
                    y_off = -y1diff - 0.5;
                    x_off = y_off * dxdy;
                }
                if will_draw_end != draw_end {
                    y_off_end = -y2diff - 0.5;
                    x_off_end = y_off_end * dxdy;
                }
            }
            if last_inside {
                if ody > 0.0 {
                    // travelling -y (v1 below v2); the end is v1 after the swap
                    y_off = -y2diff - 0.5;
                    x_off = y_off * dxdy;
                } else {
                    y_off_end = 0.5 - y2diff;
                    x_off_end = y_off_end * dxdy;
                }
            }
            let _ = (dx, dy);
            let hw = fixed_width / 2;
            xs = [
                snap(v1[0] + x_off - off) - hw,
                snap(v2[0] + x_off_end - off) - hw,
                snap(v2[0] + x_off_end - off) + hw,
                snap(v1[0] + x_off - off) + hw,
            ];
            ys = [
                snap(v1[1] + y_off - off),
                snap(v2[1] + y_off_end - off),
                snap(v2[1] + y_off_end - off),
                snap(v1[1] + y_off - off),
            ];
        }
    }

    let adj = ds.setup.bottom_edge_rule as i32;
    let minx = *xs.iter().min().unwrap_or(&0);
    let maxx = *xs.iter().max().unwrap_or(&0);
    let miny = *ys.iter().min().unwrap_or(&0);
    let maxy = *ys.iter().max().unwrap_or(&0);
    let bb = match ds.setup.conservative {
        Some(r) => conservative_bbox(&xs, &ys, r),
        None => Rect {
            x0: (minx + FIXED_ONE - 1) >> FIXED_ORDER,
            x1: (maxx + FIXED_ONE - 1) >> FIXED_ORDER,
            y0: (miny + FIXED_ONE - 1 + adj) >> FIXED_ORDER,
            y1: (maxy + FIXED_ONE - 1 + adj) >> FIXED_ORDER,
        },
    };
    let bbox = clip_bbox(ds, prim.viewport, ms_grow(ds, bb));
    if bbox.is_empty() {
        return;
    }
    let (edges, ms) = prim_edges(ds, &xs, &ys, out);
    let sp = SetupPrim {
        ms,
        ..new_prim(prim, PrimKind::Line, front, &bbox, &edges, out)
    };
    // Planes use the original first vertex as origin (llvmpipe's a0).
    push_axis_planes(
        ds,
        out,
        o1,
        o2,
        pv,
        (o1[0] - off, o1[1] - off),
        (bbox.x0, bbox.y0),
        &*grad,
        None,
        front,
    );
    out.prims.push(sp);
}

/// `front` as for [`setup_line`].
fn setup_point(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    front: bool,
) {
    if ds.link.aa.is_some_and(|aa| aa.point_radius.is_some()) {
        // point_smooth: draw's aapoint stage.
        crate::aa_stage::aapoint(clipped, prim, ds, |q, tri| {
            setup_smooth_triangle(q, tri, ds, out)
        });
        return;
    }
    let rast = &*ds.setup;
    let off = ds.setup.pixel_offset;
    let v0 = vertex(clipped, prim.v[0]);
    let mut size = prim.point_size;
    if size.is_nan() || size > MAX_POINT_WIDTH {
        size = MAX_POINT_WIDTH;
    }
    let adj = ds.setup.bottom_edge_rule as i32;
    // Conservative rasterization covers what the point's square touches.
    let legacy =
        !rast.point_quad_rasterization && !rast.multisample && ds.setup.conservative.is_none();
    let (bb, mut edges, fixed_width): (Rect, [(i32, i32, i64); 4], i32);
    if !legacy {
        let fw = FIXED_ONE.max(snap(size));
        let x0 = snap(v0[0] - off) - fw / 2;
        let y0 = snap(v0[1] - off) - fw / 2;
        let (x1, y1) = (x0 + fw, y0 + fw);
        bb = match ds.setup.conservative {
            Some(r) => conservative_bbox(&[x0, x1], &[y0, y1], r),
            None => Rect {
                x0: x0 >> FIXED_ORDER,
                x1: (x1 + FIXED_ONE - 1) >> FIXED_ORDER,
                y0: (y0 + adj) >> FIXED_ORDER,
                y1: (y1 + FIXED_ONE - 1 + adj) >> FIXED_ORDER,
            },
        };
        // Left (inclusive), right, top, bottom with the fill rule.
        let top_inc = !ds.setup.bottom_edge_rule as i64;
        let bot_inc = ds.setup.bottom_edge_rule as i64;
        edges = [
            (1, 0, ceil_fixed(-(x0 as i64) + 1)),
            (-1, 0, ceil_fixed(x1 as i64)),
            (0, 1, ceil_fixed(-(y0 as i64) + top_inc)),
            (0, -1, ceil_fixed(y1 as i64 + bot_inc)),
        ];
        fixed_width = fw;
        conservative_dilate(ds, &mut edges);
    } else {
        // GL legacy point rules (GL 2.1 section 3.3.1): a whole-pixel square.
        let x0 = snap(v0[0]);
        let y0 = snap(v0[1]) - adj;
        let fw = FIXED_ONE.max((snap(size) + FIXED_ONE / 2 - 1) & !(FIXED_ONE - 1));
        let iw = fw >> FIXED_ORDER;
        let (bx0, by0) = if iw == 1 {
            (x0 >> FIXED_ORDER, y0 >> FIXED_ORDER)
        } else if iw & 1 == 1 {
            (
                (x0 >> FIXED_ORDER) - (iw - 1) / 2,
                (y0 >> FIXED_ORDER) - (iw - 1) / 2,
            )
        } else {
            (
                ((x0 + FIXED_ONE / 2) >> FIXED_ORDER) - iw / 2,
                ((y0 + FIXED_ONE / 2) >> FIXED_ORDER) - iw / 2,
            )
        };
        bb = Rect {
            x0: bx0,
            y0: by0,
            x1: bx0 + iw,
            y1: by0 + iw,
        };
        edges = [
            (1, 0, (1 - bx0) as i64),
            (-1, 0, (bx0 + iw) as i64),
            (0, 1, (1 - by0) as i64),
            (0, -1, (by0 + iw) as i64),
        ];
        fixed_width = fw;
    }
    let bbox = clip_bbox(ds, prim.viewport, ms_grow(ds, bb));
    if bbox.is_empty() {
        return;
    }
    let sp = match (ds.tiles.ms_offsets, legacy) {
        (Some(_), false) => {
            // The point's square as a polygon, for per-sample edges.
            let x0 = snap(v0[0] - off) - fixed_width / 2;
            let y0 = snap(v0[1] - off) - fixed_width / 2;
            let (x1, y1) = (x0 + fixed_width, y0 + fixed_width);
            let (edges, ms) = prim_edges(ds, &[x0, x0, x1, x1], &[y0, y1, y1, y0], out);
            SetupPrim {
                ms,
                ..new_prim(prim, PrimKind::Point, front, &bbox, &edges, out)
            }
        }
        _ => new_prim(prim, PrimKind::Point, front, &bbox, &edges, out),
    };
    let width = fixed_width as f32 / FIXED_ONE as f32;
    let centre = (v0[0] - off, v0[1] - off);
    push_axis_planes(
        ds,
        out,
        v0,
        v0,
        // Flat inputs: the provoking vertex, which is the point itself
        // except for points of unfilled polygons (the polygon's).
        vertex(clipped, prim.provoking),
        centre,
        (bbox.x0, bbox.y0),
        &|_, _| (0.0, 0.0),
        Some((centre.0, centre.1, width)),
        front,
    );
    out.prims.push(sp);
}

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The `Setup` system: fixed-point edges and plane equations, in parallel
/// over the wave's jobs.
pub(crate) fn setup_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
) {
    ferropipe_profiling::scope!("setup_primitives");
    let _time = counters.0.time_stage(PipelineSet::Setup.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    for_each_job(&pool.0, &mut exec.wave, &|job: &mut FrontJob| {
        ferropipe_profiling::scope!("setup_job");
        job.out.prims.clear();
        job.kept = setup_prims(&job.clipped, states, &mut job.out.prims);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane-wise planes equal the scalar reference bit for bit, for
    /// every kind of plane (linear, perspective, flat, unread, point
    /// coordinate), more than 8 planes (two chunks), both facings, and
    /// vertices at the end of the buffer (the 8-float load falls back to
    /// a gather there).
    #[test]
    fn lane_planes_match_the_scalar_planes() {
        let attr = |front, back, interp, read| FsInputSource::Attr {
            front,
            back,
            interp,
            plane: 0,
            sprite: None,
            read,
        };
        let inputs = [
            attr(0, 2, Interpolation::Perspective, 0b1111),
            attr(1, 0, Interpolation::Linear, 0b0101),
            FsInputSource::FrontFacing,
            attr(2, 1, Interpolation::Flat, 0b0011),
            FsInputSource::PointCoord { plane: 0 },
        ];
        let stride = 4 + 4 * 3;
        let mut seed = 7u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 20.0 - 10.0
        };
        let verts: Vec<f32> = (0..4 * stride).map(|_| rnd()).collect();
        let vertex = |i: usize| &verts[i * stride..(i + 1) * stride];
        let g = TriGrad {
            x0: 1.25,
            y0: -3.5,
            e1x: 4.0,
            e1y: 0.75,
            e2x: -1.5,
            e2y: 6.0,
            inv_det: 1.0 / (4.0 * 6.0 - (-1.5 * 0.75)),
            ref_x: 2.0,
            ref_y: -4.0,
        };
        for back in [false, true] {
            let plan = PlanePlan::new(&inputs, back);
            // Vertices 1, 2, 3 (3 is last: no 8 floats after its slots),
            // provoking vertex 2.
            let v = [vertex(1), vertex(2), vertex(3)];
            let mut expected = vec![
                g.plane([v[0][2], v[1][2], v[2][2]]),
                g.plane([v[0][3], v[1][3], v[2][3]]),
            ];
            for src in &inputs {
                match *src {
                    FsInputSource::Attr {
                        front,
                        back: b,
                        interp,
                        read,
                        ..
                    } => {
                        let o = 4 + 4 * if back { b } else { front };
                        for c in 0..4 {
                            expected.push(if read & (1 << c) == 0 {
                                Plane::default()
                            } else {
                                match interp {
                                    Interpolation::Flat => Plane {
                                        a0: v[1][o + c],
                                        dadx: 0.0,
                                        dady: 0.0,
                                    },
                                    Interpolation::Linear => {
                                        g.plane([v[0][o + c], v[1][o + c], v[2][o + c]])
                                    }
                                    Interpolation::Perspective => g.plane([
                                        v[0][o + c] * v[0][3],
                                        v[1][o + c] * v[1][3],
                                        v[2][o + c] * v[2][3],
                                    ]),
                                }
                            });
                        }
                    }
                    FsInputSource::PointCoord { .. } => expected.extend([Plane::default(); 4]),
                    _ => {}
                }
            }
            let tail = |i: usize| &verts[i * stride..];
            let mut got = vec![Plane::default()];
            plan.push_planes(&g.lanes(), &[tail(1), tail(2), tail(3)], tail(2), &mut got);
            assert_eq!(got.len(), 1 + expected.len());
            for (k, (a, b)) in got[1..].iter().zip(&expected).enumerate() {
                let bits = |p: &Plane| [p.a0.to_bits(), p.dadx.to_bits(), p.dady.to_bits()];
                assert_eq!(bits(a), bits(b), "plane {k}, back {back}");
            }
        }
    }

    /// Polygon offset's slopes are llvmpipe's (`lp_do_offset_tri`): from the
    /// unshifted window positions.  The expected bits were computed in
    /// float32 with llvmpipe's order (d01 = v0 - v1, d20 = v2 - v0, cross
    /// product times the reciprocal of the area); for these triangles, with
    /// a vertex left of x = 0, the depth plane's gradients (positions
    /// shifted by the half-pixel centre first) differ in the last bits.
    #[test]
    fn offset_slopes_are_llvmpipes() {
        use crate::setup_plan::PolygonOffset;
        use ferropipe_components::format::Format;
        use ferropipe_components::state::RasterizerState;
        let tris: [([[u32; 3]; 3], [u32; 3]); 2] = [
            (
                [
                    [0xbed956db, 0x40c0ed41, 0x3f01f56c],
                    [0x403b1290, 0x4121f4f5, 0x3f3c0175],
                    [0x423e49b9, 0x42785d56, 0x3f3fcc6a],
                ],
                // |dzdx|, |dzdy|, offset (Z24, units 2, scale 1.5)
                [0x3faa8ea7, 0x3f929212, 0x3fffd5fc],
            ),
            (
                [
                    [0xbf1ae3c9, 0x3ea5b0a6, 0x3f2323aa],
                    [0x416caf08, 0x4275af68, 0x3f21521c],
                    [0x41fe0e6c, 0x40f1abe4, 0x3e8c4f34],
                ],
                [0x3c42681f, 0x3b3c5b5a, 0x3c91ce97],
            ),
        ];
        let rast = RasterizerState {
            offset_tri: true,
            offset_units: 2.0,
            offset_scale: 1.5,
            ..Default::default()
        };
        let o = PolygonOffset::new(&rast, Some(Format::Z24_UNORM_S8_UINT));
        for (pos, [dzdx, dzdy, zo]) in tris {
            let v = pos.map(|p| p.map(f32::from_bits));
            let z = [v[0][2], v[1][2], v[2][2]];
            let (sx, sy) = offset_slopes(&[&v[0][..], &v[1][..], &v[2][..]]).unwrap();
            assert_eq!([sx.abs().to_bits(), sy.abs().to_bits()], [dzdx, dzdy]);
            assert_eq!(o.zoffset(sx, sy, z).to_bits(), zo);
            // The depth plane's gradients (centre-shifted positions).
            let fx = |k: usize| v[k][0] - 0.5;
            let fy = |k: usize| v[k][1] - 0.5;
            let (e1x, e1y, e2x, e2y) = (fx(1) - fx(0), fy(1) - fy(0), fx(2) - fx(0), fy(2) - fy(0));
            let g = TriGrad {
                x0: fx(0),
                y0: fy(0),
                e1x,
                e1y,
                e2x,
                e2y,
                inv_det: 1.0 / (e1x * e2y - e2x * e1y),
                ref_x: 0.0,
                ref_y: 0.0,
            };
            let zp = g.plane(z);
            assert_ne!(o.zoffset(zp.dadx, zp.dady, z).to_bits(), zo);
        }
        // No finite reciprocal of the area: no slopes (the plane's stay).
        let flat = [[1.0, 2.0, 0.5], [3.0, 4.0, 0.25], [5.0, 6.0, 0.75]];
        assert_eq!(
            offset_slopes(&[&flat[0][..], &flat[1][..], &flat[2][..]]),
            None
        );
    }

    /// Coverage of pixel (px, py) by a triangle given in fixed point.
    fn covered(x: [i32; 3], y: [i32; 3], bottom: bool, px: i64, py: i64) -> bool {
        (0..3).all(|i| {
            let j = (i + 1) % 3;
            let (a, b, c) = edge(x[i], y[i], x[j], y[j], bottom);
            c + a as i64 * px + b as i64 * py > 0
        })
    }

    fn ccw(x: [i32; 3], y: [i32; 3]) -> ([i32; 3], [i32; 3]) {
        let area = (x[0] - x[1]) as i64 * (y[2] - y[0]) as i64
            - (x[2] - x[0]) as i64 * (y[0] - y[1]) as i64;
        if area < 0 {
            ([x[1], x[0], x[2]], [y[1], y[0], y[2]])
        } else {
            (x, y)
        }
    }

    #[test]
    fn top_left_rule_on_pixel_aligned_square() {
        // A 2x2-pixel square split along its diagonal, corners exactly on
        // sample positions: each sample is hit exactly once, and only the
        // top/left edges own their samples.
        let s = FIXED_ONE;
        let quad = [(0, 0), (2 * s, 0), (2 * s, 2 * s), (0, 2 * s)];
        let tris = [[0, 1, 2], [0, 2, 3]];
        for bottom in [false, true] {
            let mut hits = [[0u32; 4]; 4];
            for t in tris {
                let (x, y) = ccw(
                    [quad[t[0]].0, quad[t[1]].0, quad[t[2]].0],
                    [quad[t[0]].1, quad[t[1]].1, quad[t[2]].1],
                );
                for py in 0..4 {
                    for px in 0..4 {
                        if covered(x, y, bottom, px, py) {
                            hits[py as usize][px as usize] += 1;
                        }
                    }
                }
            }
            for py in 0..4 {
                for px in 0..4 {
                    let inside_x = (0..2).contains(&px);
                    let inside_y = if bottom {
                        (1..3).contains(&py)
                    } else {
                        (0..2).contains(&py)
                    };
                    let want = (inside_x && inside_y) as u32;
                    assert_eq!(hits[py][px], want, "bottom={bottom} pixel ({px},{py})");
                }
            }
        }
    }

    #[test]
    fn shared_edges_hit_exactly_once_across_a_fan() {
        // A fan of slivers around a centre that sits exactly on a sample,
        // with vertices at odd sub-pixel positions: every sample inside the
        // fan's hull is covered exactly once.
        let c = (10 * FIXED_ONE, 10 * FIXED_ONE);
        let ring: Vec<(i32, i32)> = (0..17)
            .map(|i| {
                let t = i as f64 / 16.0 * std::f64::consts::TAU;
                (
                    c.0 + (t.cos() * 2000.3) as i32,
                    c.1 + (t.sin() * 1900.7) as i32,
                )
            })
            .collect();
        let mut hits = vec![0u32; 40 * 40];
        for i in 0..16 {
            let (x, y) = ccw(
                [c.0, ring[i].0, ring[i + 1].0],
                [c.1, ring[i].1, ring[i + 1].1],
            );
            for py in 0..40 {
                for px in 0..40 {
                    if covered(x, y, false, px, py) {
                        hits[(py * 40 + px) as usize] += 1;
                    }
                }
            }
        }
        assert!(hits.iter().all(|&h| h <= 1), "overlap in a fan");
        assert_eq!(hits[10 * 40 + 10], 1, "the centre sample is owned once");
        // Interior samples near the centre are all covered (no gaps).
        for py in 5..16 {
            for px in 5..16 {
                assert_eq!(hits[py * 40 + px], 1, "gap at ({px},{py})");
            }
        }
    }

    #[test]
    fn vertices_on_pixel_centres() {
        // A vertex exactly on a sample: covered only when both adjacent
        // edges are top/left edges.
        let s = FIXED_ONE;
        // Right-angle corner at (0,0) with edges going right and down: both
        // the top and the left edge meet there -> owned.
        let (x, y) = ccw([0, 0, 4 * s], [0, 4 * s, 0]);
        assert!(covered(x, y, false, 0, 0));
        // The corner at (4,0) is on the top edge and the right (hypotenuse)
        // edge -> not owned.
        assert!(!covered(x, y, false, 4, 0));
        // (0,4) is on the left edge and the bottom-right edge -> not owned.
        assert!(!covered(x, y, false, 0, 4));
    }

    #[test]
    fn snap_is_round_to_even_and_clamped() {
        assert_eq!(snap(0.5 / 256.0), 0);
        assert_eq!(snap(1.5 / 256.0), 2);
        assert_eq!(snap(f32::NAN), 0);
        assert!(snap(f32::INFINITY) > 0);
        assert!(snap(1e30) as i64 <= ((GUARD_BAND + 2.0) * 256.0) as i64);
    }

    #[test]
    fn corner_snaps_are_the_scalar_snaps() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5 / 256.0,
            1.5 / 256.0,
            -2.5 / 256.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            GUARD_BAND + 2.0,
            GUARD_BAND + 2.0 + 1.0 / 512.0,
            -(GUARD_BAND + 2.0) - 1.0 / 512.0,
            f32::MIN_POSITIVE,
        ];
        // A deterministic spread over the guard band, ties included.
        let mut next = crate::tests::xorshift32(0x9e37_79b9);
        for _ in 0..3000 {
            let r = next();
            let v = (r as i32 as f32) / 65536.0;
            values.push(v);
            values.push(v.round() + 0.5 / 256.0);
        }
        for &off in &[0.0f32, 0.5] {
            for w in values.windows(6) {
                let v: [[f32; 2]; 3] = [[w[0], w[1]], [w[2], w[3]], [w[4], w[5]]];
                let (x, y) = snap_corners([&v[0], &v[1], &v[2]], off);
                for k in 0..3 {
                    assert_eq!(x[k], snap(v[k][0] - off), "{:?} off {off}", v[k]);
                    assert_eq!(y[k], snap(v[k][1] - off), "{:?} off {off}", v[k]);
                }
            }
        }
    }
}
