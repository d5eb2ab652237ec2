//! Equivalent of draw's `draw_pipe_aaline.c` and `draw_pipe_aapoint.c` (with
//! the fragment-shader lowering of `nir_draw_helpers.c`,
//! `nir_lower_aaline_fs` / `nir_lower_aapoint_fs`): antialiased lines and
//! points (`line_smooth`, `point_smooth`) as llvmpipe draws them.
//!
//! llvmpipe has no coverage-based antialiasing of its own; the draw module
//! turns each smooth line or point into a quad (two triangles) a little
//! larger than the primitive, gives its vertices one extra varying, and
//! binds a copy of the fragment shader that multiplies the alpha of every
//! colour output by a coverage term computed from that varying:
//!
//! * **lines** (`aaline_line`): the quad is the line lengthened by half a
//!   pixel at each end and `half_width = max(1, line_width / 2 + 1/2)` on
//!   each side; the varying is `(±half_width, half_width, ±half_length,
//!   half_length)` with `half_length = length / 2 + 1/2`, and the coverage
//!   `sat(hw - |x|) * sat(hl - |z|) * min(1, (2 hl - 1) / hl)`.  The last
//!   factor is what Mesa 22.3.6's llvmpipe does for lines shorter than a
//!   pixel (measured: a probe of lengths 0.2 to 3 pixels matches it
//!   exactly); later Mesa's `nir_lower_aaline_fs` writes
//!   `min(sat(hl - |z|), 2 hl - 1)`, which agrees from one pixel up;
//! * **points** (`aapoint_point`): the quad is the centre ± `radius`
//!   (`point_size / 2`, at least 1 unless the size comes from the vertex),
//!   the varying `(±1, ±1, k, 1)` with `k = (1 - 1/radius)²`; fragments with
//!   `x² + y² > 1` are discarded, and — as the NIR lowering Mesa 22.3 runs
//!   computes it — the alpha is multiplied by `(1 - d) / (1 - k)` where
//!   `d = x² + y² <= k` and by 1 elsewhere.
//!
//! The quads are rasterized as triangles with draw's "no cull" rasterizer
//! state: no culling, polygon offset or stipple, facing from the winding.
//!
//! With multisample rasterization Mesa's state tracker clears the smooth
//! flags (GL: multisampling replaces line and point antialiasing) and the
//! draw stages assert they never see both; ferropipe likewise ignores
//! `line_smooth` / `point_smooth` when rasterizing a 4x framebuffer with
//! `multisample` on.
//!
//! `poly_smooth` goes beyond llvmpipe, which has no antialiased-polygon
//! path and renders such triangles exactly as if the flag were off (the
//! engine's `PolySmooth::Off` screen option does the same).  Here it is GL
//! 4.6 §14.6.1's polygon antialiasing: setup rasterizes every filled
//! triangle conservatively (a fragment for each pixel square it touches)
//! and writes two more slots, the triangle's snapped corners relative to
//! each pixel's sample point ([`polygon_planes`]); the wrapper clips the
//! triangle to the pixel's square ([`poly_coverage`]), multiplies the
//! alpha by the area and discards pixels touched with zero area.  The same
//! conditions turn it off as the line and point smoothing.
//!
//! In ferropipe the extra varying is the last attribute of every clipped
//! vertex of a state block with smoothing on (`DerivedState::aa`): clip
//! writes [`AA_NEUTRAL`] there (coverage exactly 1, so triangles and
//! non-smooth primitives drawn with the same state keep their alpha, as
//! llvmpipe, which binds the augmented shader only for smooth primitives,
//! leaves it), and setup hands smooth lines and points to [`aaline`] /
//! [`aapoint`] instead of its own line and point rules.  The fragment shader
//! is wrapped once per state block ([`AaFragmentShader`]), so WGSL / GLSL
//! programs and Rust-native shaders get the same coverage multiply.

use std::cell::RefCell;
use std::sync::Arc;

use smallvec::SmallVec;

use ferropipe_components::batch::{
    ClippedPrim, ClippedPrims, FIXED_ONE, FIXED_ORDER, Plane, PrimKind, SetupPrims,
};
use ferropipe_components::shader::{
    FragmentIo, FragmentShader, FragmentShaderRef, Interpolation, IoSlot, LANES, Lanes, ScalarKind,
    Semantic, ShaderInfo, ShaderResources,
};
use ferropipe_components::state::RasterizerState;

use crate::derived::DerivedState;

/// The smooth-primitive varying of vertices that are not part of a smooth
/// line or point: the line formula then gives exactly 1 (`2 - |0|`
/// saturates), however the value is interpolated.
pub const AA_NEUTRAL: [f32; 4] = [0.0, 2.0, 0.0, 2.0];

/// Largest point radius a smooth point is drawn with (setup.rs's
/// `MAX_POINT_WIDTH` / 2).
const MAX_RADIUS: f32 = crate::setup::MAX_POINT_WIDTH * 0.5;

/// What smoothing a state block does (`DerivedState::aa`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AaState {
    /// `line_smooth`: half the quad's width, `max(1, line_width/2 + 1/2)`
    /// (`aaline_first_line`).
    pub line_half_width: Option<f32>,
    /// `point_smooth`: the radius of points whose size is not per vertex
    /// (`aapoint_first_point`: 1 up to size 2, else size / 2).
    pub point_radius: Option<f32>,
    /// Points take their radius from the vertex's point size (half of it,
    /// unclamped below, as `aapoint_point` does).
    pub point_size_per_vertex: bool,
    /// Index of the smooth-primitive varying among the clipped vertex's
    /// attributes (after the linked VS outputs).
    pub attr: usize,
    /// `poly_smooth`: filled triangles get GL's analytic coverage
    /// ([`poly_coverage`]).
    pub poly_smooth: bool,
    /// With `poly_smooth`, the index of the first of the eight planes that
    /// carry a filled triangle's corners relative to each pixel's sample
    /// point (attributes `attr + 1` and `attr + 2`, noperspective).  Setup
    /// writes those planes itself ([`polygon_planes`]); the derivation sets
    /// the index once the planes are laid out.
    pub poly_plane: usize,
}

impl AaState {
    /// The smoothing `rast` asks for, `None` when neither lines nor points
    /// are smooth or `off` (multisample rasterization or conservative
    /// rasterization is on: both ignore the smooth flags).
    /// `attr` is the index the varying gets, `per_vertex_size` whether the
    /// vertex shader writes the point size that `point_size_per_vertex`
    /// reads.
    /// `poly_plane` is set by the caller once the planes are laid out.
    pub fn new(
        rast: &RasterizerState,
        off: bool,
        attr: usize,
        per_vertex_size: bool,
    ) -> Option<AaState> {
        if off || !(rast.line_smooth || smooth_points(rast) || rast.poly_smooth) {
            return None;
        }
        let lw = if rast.line_width.is_finite() {
            rast.line_width
        } else {
            1.0
        };
        let ps = if rast.point_size.is_finite() {
            rast.point_size
        } else {
            1.0
        };
        Some(AaState {
            line_half_width: rast.line_smooth.then(|| {
                if lw <= 1.0 {
                    1.0
                } else {
                    0.5 * lw.min(255.0) + 0.5
                }
            }),
            point_radius: smooth_points(rast).then(|| {
                if ps <= 2.0 {
                    1.0
                } else {
                    (0.5 * ps).min(MAX_RADIUS)
                }
            }),
            point_size_per_vertex: rast.point_size_per_vertex && per_vertex_size,
            attr,
            poly_smooth: rast.poly_smooth,
            poly_plane: 0,
        })
    }

    /// Attribute slots the smoothing adds to every clipped vertex: the
    /// line/point varying, and with `poly_smooth` the two corner slots
    /// (which clip leaves zero: the "not a smooth polygon" marker of
    /// [`AaFragmentShader`]).
    pub fn slots(&self) -> usize {
        1 + 2 * self.poly_smooth as usize
    }
}

/// Whether points are smooth: `point_smooth`, unless sprite coordinates
/// are on (draw's wide-point stage then turns points into sprite quads
/// ahead of the aapoint stage, which never sees a point; GL likewise
/// ignores point smoothing for point sprites).
pub fn smooth_points(rast: &RasterizerState) -> bool {
    rast.point_smooth && rast.sprite_coord_enable == 0
}

/// The fragment shader of a state block with smoothing on: the user's
/// shader with one more input (the smooth-primitive varying, the last
/// input slot) and the coverage applied to the alpha of every float colour
/// output (`nir_lower_aaline_fs` / `nir_lower_aapoint_fs` rewrite every
/// store to `FRAG_RESULT_COLOR` / `DATAn`).  Lines and points share one
/// varying: points mark theirs with a negative `w`.
pub struct AaFragmentShader {
    inner: FragmentShaderRef,
    info: ShaderInfo,
    /// The user shader's input count (the varying's slot).
    aa_slot: usize,
    /// Output slots whose alpha is scaled.
    alpha_slots: Vec<usize>,
    /// `poly_smooth`: the two corner inputs follow the varying.
    poly_smooth: bool,
}

impl AaFragmentShader {
    /// Wraps `inner`.  `point_smooth` shaders may discard (outside the
    /// point's circle), and so may `poly_smooth` ones (pixels the polygon
    /// only touches, with zero area), so the wrapper says so: depth and
    /// stencil are then tested and written after the shader, for exactly
    /// the fragments that survive.
    pub fn wrap(
        inner: FragmentShaderRef,
        point_smooth: bool,
        poly_smooth: bool,
    ) -> Arc<AaFragmentShader> {
        let mut info = inner.info().clone();
        let aa_slot = info.inputs.len();
        let free_generic = info
            .inputs
            .iter()
            .filter_map(|i| match i.semantic {
                Semantic::Generic(n) => Some(n),
                _ => None,
            })
            .max()
            .map_or(0, |n| n.saturating_add(1));
        // Perspective, as NIR's default for the added `aaline` /
        // `aapoint` variable.
        info.inputs
            .push(IoSlot::new(Semantic::Generic(free_generic), u32::MAX));
        if poly_smooth {
            // The triangle's corners relative to the sample point: affine
            // in window space, so noperspective interpolation is exact.
            for k in 1..3 {
                let mut slot =
                    IoSlot::new(Semantic::Generic(free_generic.saturating_add(k)), u32::MAX);
                slot.interpolation = Interpolation::Linear;
                info.inputs.push(slot);
            }
        }
        info.uses_discard |= point_smooth || poly_smooth;
        // The outputs are no longer copies of inputs.
        info.output_values.clear();
        let alpha_slots = info
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                matches!(o.semantic, Semantic::Color(_)) && o.kind == ScalarKind::Float
            })
            .filter(|(_, o)| o.components == 4)
            .map(|(i, _)| i)
            .collect();
        Arc::new(AaFragmentShader {
            inner,
            info,
            aa_slot,
            alpha_slots,
            poly_smooth,
        })
    }
}

/// The area of the triangle `t` inside the pixel's square, `t` being the
/// corners relative to the pixel's sample point (its centre) in pixels,
/// either winding: GL 4.6 §14.6.1's coverage of a smooth polygon.  The
/// square `[-1/2, 1/2]²` is clipped by nothing: the triangle is clipped by
/// the square's four sides (Sutherland–Hodgman, at most 7 corners) and
/// measured by the shoelace formula, in f64, so the error is that of the
/// f32 corners (about 1e-5 pixel on a 4096-pixel target), far inside the
/// 1/64 px² the tests allow.
pub fn poly_coverage(t: [[f32; 2]; 3]) -> f32 {
    let mut poly = [[0f64; 2]; 8];
    for (p, c) in poly.iter_mut().zip(&t) {
        *p = [c[0] as f64, c[1] as f64];
    }
    let mut n = 3;
    let mut next = [[0f64; 2]; 8];
    for (axis, sign) in [(0, 1.0f64), (0, -1.0), (1, 1.0), (1, -1.0)] {
        // Keep `sign * p[axis] <= 1/2`.  A corner on the side is kept once
        // and only strict crossings add corners, so a clip adds at most
        // one: 3 + 4 = 7 fit in 8.
        let mut m = 0;
        for i in 0..n {
            let a = poly[i];
            let b = poly[if i + 1 == n { 0 } else { i + 1 }];
            let da = sign * a[axis] - 0.5;
            let db = sign * b[axis] - 0.5;
            if da <= 0.0 && m < next.len() {
                next[m] = a;
                m += 1;
            }
            if ((da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0)) && m < next.len() {
                let k = da / (da - db);
                next[m] = [a[0] + k * (b[0] - a[0]), a[1] + k * (b[1] - a[1])];
                m += 1;
            }
        }
        std::mem::swap(&mut poly, &mut next);
        n = m;
        if n < 3 {
            return 0.0;
        }
    }
    let mut twice = 0.0;
    for i in 0..n {
        let a = poly[i];
        let b = poly[if i + 1 == n { 0 } else { i + 1 }];
        twice += a[0] * b[1] - b[0] * a[1];
    }
    // At most 1 (rounding aside).
    (0.5 * twice.abs()).min(1.0) as f32
}

/// The coverage of one register of fragments from the smooth-primitive
/// varying `(x, y, z, w)`, and the lanes a point discards.
#[inline]
pub fn coverage(x: Lanes, y: Lanes, z: Lanes, w: Lanes) -> (Lanes, Lanes) {
    let zero = Lanes::ZERO;
    let one = Lanes::ONE;
    let sat = |v: Lanes| v.max(zero).min(one);
    // Line: sat(hw - |x|) * sat(hl - |z|) * min(1, (2 hl - 1) / hl).
    let len = w * Lanes::splat(2.0) - one;
    let line = sat(y - x.abs()) * sat(w - z.abs()) * (len / w).min(one);
    // Point: d = x² + y², k = z; (1 - d) / (1 - k) where k >= d, else 1.
    let d = x * x + y * y;
    let cov = (one / (one - z)) * (one - d);
    let point = z.simd_ge(d).select(cov, one);
    let is_point = w.simd_lt(zero);
    let kill = is_point & one.simd_lt(d);
    (is_point.select(point, line), kill)
}

impl AaFragmentShader {
    /// The smooth-polygon coverage of group `g` and the lanes it discards
    /// (zero area: the polygon only touches the square).  Lanes whose
    /// marker (input `aa_slot + 2`, `w`) is not 1 are no smooth polygon's
    /// (lines, points, unfilled or rectangle-filled triangles): coverage 1.
    /// Scalar per lane: the clip is branchy, and this path only runs for
    /// `poly_smooth` state.
    #[inline(never)]
    fn polygon_lanes(&self, io: &FragmentIo<'_>, g: usize) -> (Lanes, Lanes) {
        let v = |s: usize, k: usize| io.input(self.aa_slot + s, k)[g].to_array();
        let (x0, y0, x1, y1) = (v(1, 0), v(1, 1), v(1, 2), v(1, 3));
        let (x2, y2, marker) = (v(2, 0), v(2, 1), v(2, 3));
        let live = io.mask[g].to_bitmask();
        let mut cov = [1.0f32; LANES];
        let mut kill = [0.0f32; LANES];
        for l in 0..LANES {
            if marker[l] != 1.0 || live & (1 << l) == 0 {
                continue;
            }
            let a = poly_coverage([[x0[l], y0[l]], [x1[l], y1[l]], [x2[l], y2[l]]]);
            cov[l] = a;
            if a <= 0.0 || a.is_nan() {
                kill[l] = f32::from_bits(u32::MAX);
            }
        }
        (Lanes::new(cov), Lanes::new(kill))
    }
}

impl FragmentShader for AaFragmentShader {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }

    /// The user's shader writes what it writes; the wrapper only scales.
    fn writes_all_outputs(&self) -> bool {
        self.inner.writes_all_outputs()
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let n = io.groups;
        // One batch (`MAX_BATCH_GROUPS`) fits on the stack.
        let mut cov: SmallVec<[Lanes; crate::lanes::MAX_BATCH_GROUPS]> = SmallVec::with_capacity(n);
        for g in 0..n {
            let c = |k: usize| io.input(self.aa_slot, k)[g];
            let (mut f, mut kill) = coverage(c(0), c(1), c(2), c(3));
            if self.poly_smooth {
                let (pf, pk) = self.polygon_lanes(io, g);
                f *= pf;
                kill |= pk;
            }
            cov.push(f);
            // Discarded lanes: clear the live mask (all bits set = live).
            let m = io.mask[g];
            io.mask[g] = kill.select(Lanes::ZERO, m);
        }
        self.inner.run(resources, io);
        for &s in &self.alpha_slots {
            for (a, f) in io.output(s, 3).iter_mut().zip(&cov) {
                *a *= *f;
            }
        }
    }
}

/// Writes a smooth polygon's corner planes (`AaState::poly_plane`, eight
/// planes from there among the primitive's `planes`): corner `k`'s x and y
/// minus the sample point's, `X_k - x` and `Y_k - y`, which are affine in
/// window space (gradient -1), then the marker 1.  `x`, `y` are the snapped
/// corners (1/256 pixel, in setup's offset space, where pixel `(px, py)`
/// samples at the integer point), so the coverage measures exactly the
/// triangle the edge functions rasterize; `reference` is the primitive's
/// reference pixel, where planes take their `a0`.  The differences are
/// taken in integers and are exact in f32 up to 65536 pixels.
pub fn polygon_planes(
    aa: &AaState,
    planes: &mut [Plane],
    x: &[i32; 3],
    y: &[i32; 3],
    reference: (i32, i32),
) {
    let Some(p) = planes.get_mut(aa.poly_plane..aa.poly_plane + 8) else {
        return;
    };
    let rel = |v: i32, r: i32| ((v as i64 - ((r as i64) << FIXED_ORDER)) as f32) / FIXED_ONE as f32;
    for k in 0..3 {
        p[2 * k] = Plane {
            a0: rel(x[k], reference.0),
            dadx: -1.0,
            dady: 0.0,
        };
        p[2 * k + 1] = Plane {
            a0: rel(y[k], reference.1),
            dadx: 0.0,
            dady: -1.0,
        };
    }
    p[6] = Plane::default();
    p[7] = Plane {
        a0: 1.0,
        dadx: 0.0,
        dady: 0.0,
    };
}

thread_local! {
    /// The quad of the primitive being expanded (four vertices).
    static QUAD: RefCell<ClippedPrims> = RefCell::new(ClippedPrims::default());
}

/// Builds the quad's vertices (copies of `src[i]` moved by `offset[i]`,
/// with the varying `aa[i]`) and sets up its two triangles `tris`, each
/// taking flat values from quad vertex `provoking`.
fn emit_quad(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
    quad: ([u32; 4], [[f32; 2]; 4], [[f32; 4]; 4]),
    tris: [[u32; 3]; 2],
    provoking: u32,
) {
    let (src, offset, aa) = quad;
    let s = clipped.stride;
    let a = 4 + 4 * ds.aa.map_or(0, |aa| aa.attr);
    QUAD.with(|q| {
        let mut q = q.borrow_mut();
        q.stride = s;
        q.prims.clear();
        q.verts.clear();
        for i in 0..4 {
            let v = src[i] as usize * s;
            let Some(vert) = clipped.verts.get(v..v + s) else {
                return;
            };
            q.verts.extend_from_slice(vert);
            let base = i * s;
            q.verts[base] += offset[i][0];
            q.verts[base + 1] += offset[i][1];
            if let Some(dst) = q.verts.get_mut(base + a..base + a + 4) {
                dst.copy_from_slice(&aa[i]);
            }
        }
        for t in tris {
            let tri = ClippedPrim {
                v: t,
                provoking,
                kind: PrimKind::Triangle,
                edge_flags: 0b111,
                ..*prim
            };
            crate::setup::setup_smooth_triangle(&q, &tri, ds, out);
        }
    });
}

/// A smooth line: `aaline_line`'s quad and varying.
pub fn aaline(clipped: &ClippedPrims, prim: &ClippedPrim, ds: &DerivedState, out: &mut SetupPrims) {
    let Some(hw) = ds.aa.and_then(|aa| aa.line_half_width) else {
        return;
    };
    let s = clipped.stride;
    let pos = |i: u32| {
        let v = i as usize * s;
        clipped
            .verts
            .get(v..v + 2)
            .map_or([f32::NAN; 2], |p| [p[0], p[1]])
    };
    let (p0, p1) = (pos(prim.v[0]), pos(prim.v[1]));
    let (dx, dy) = (p1[0] - p0[0], p1[1] - p0[1]);
    let length = (dx * dx + dy * dy).sqrt();
    if length.is_nan() || length <= 0.0 || !length.is_finite() {
        // draw divides by the length: nothing sensible is drawn.
        return;
    }
    let (c_a, s_a) = (dx / length, dy / length);
    let hl = 0.5 * length + 0.5;
    let (tl, tw) = (0.5f32, hw);
    // Quad vertices 0, 1 at the start, 2, 3 at the end; 0 and 2 on one
    // side (+tw), 1 and 3 on the other.
    let offset = [
        [-tl * c_a - tw * s_a, -tl * s_a + tw * c_a],
        [-tl * c_a + tw * s_a, -tl * s_a - tw * c_a],
        [tl * c_a - tw * s_a, tl * s_a + tw * c_a],
        [tl * c_a + tw * s_a, tl * s_a - tw * c_a],
    ];
    let aa = [
        [-hw, hw, -hl, hl],
        [hw, hw, -hl, hl],
        [-hw, hw, hl, hl],
        [hw, hw, hl, hl],
    ];
    let src = [prim.v[0], prim.v[0], prim.v[1], prim.v[1]];
    // The line's provoking vertex (flat values, already the same on both
    // ends after draw's flatshade stage) is the first or the last.
    let provoking = if prim.provoking == prim.v[1] { 2 } else { 0 };
    emit_quad(
        clipped,
        prim,
        ds,
        out,
        (src, offset, aa),
        [[2, 1, 0], [3, 1, 2]],
        provoking,
    );
}

/// A smooth point: `aapoint_point`'s quad and varying.
pub fn aapoint(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    out: &mut SetupPrims,
) {
    let Some(aa) = ds.aa else { return };
    let Some(fixed) = aa.point_radius else { return };
    let radius = if aa.point_size_per_vertex {
        0.5 * prim.point_size
    } else {
        fixed
    };
    if radius.is_nan() || radius <= 0.0 {
        return;
    }
    let r = radius.min(MAX_RADIUS);
    let inv = 1.0 / r;
    let k = 1.0 - 2.0 * inv + inv * inv;
    let offset = [[-r, -r], [r, -r], [r, r], [-r, r]];
    // w = -1 marks a point for the shared coverage formula (draw's is 1, a
    // constant the shader uses as one: the wrapper does the same).
    let aa = [
        [-1.0, -1.0, k, -1.0],
        [1.0, -1.0, k, -1.0],
        [1.0, 1.0, k, -1.0],
        [-1.0, 1.0, k, -1.0],
    ];
    let v = prim.v[0];
    emit_quad(
        clipped,
        prim,
        ds,
        out,
        ([v; 4], offset, aa),
        [[0, 1, 2], [0, 2, 3]],
        0,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cov(v: [f32; 4]) -> (f32, bool) {
        let (c, k) = coverage(
            Lanes::splat(v[0]),
            Lanes::splat(v[1]),
            Lanes::splat(v[2]),
            Lanes::splat(v[3]),
        );
        (c.as_array()[0], k.as_array()[0].to_bits() != 0)
    }

    #[test]
    fn neutral_varying_keeps_alpha() {
        assert_eq!(cov(AA_NEUTRAL), (1.0, false));
        // However it is interpolated.
        assert_eq!(cov([1e-3, 1.999, -1e-3, 2.001]), (1.0, false));
    }

    #[test]
    fn line_coverage_falls_off_at_the_sides_and_ends() {
        // hw = 1 (width 1), a 10-pixel line: hl = 5.5.
        assert_eq!(cov([0.0, 1.0, 0.0, 5.5]).0, 1.0);
        assert_eq!(cov([0.5, 1.0, 0.0, 5.5]).0, 0.5);
        assert_eq!(cov([0.0, 1.0, 5.0, 5.5]).0, 0.5);
        assert_eq!(cov([1.0, 1.0, 0.0, 5.5]).0, 0.0);
        // A 0.25-pixel line: coverage at most its length (2 hl - 1).
        assert_eq!(cov([0.0, 1.0, 0.0, 0.625]).0, 0.25);
        // A 0.6-pixel line, 0.3 pixel from its middle: (0.8 - 0.3) * 0.6 /
        // 0.8, where llvmpipe writes 96/255 (later Mesa's formula: 0.5).
        assert!((cov([0.0, 2.0, -0.3, 0.8]).0 - 0.375).abs() < 1e-6);
    }

    #[test]
    fn polygon_coverage_is_the_area_in_the_square() {
        // A triangle far larger than the pixel: all of it, either winding.
        let big = [[-50.0, -50.0], [60.0, -40.0], [0.0, 70.0]];
        assert_eq!(poly_coverage(big), 1.0);
        assert_eq!(poly_coverage([big[0], big[2], big[1]]), 1.0);
        // Inside the square: its own area.
        let small = [[-0.25, -0.25], [0.25, -0.25], [0.0, 0.25]];
        assert!((poly_coverage(small) - 0.125).abs() < 1e-6);
        // An edge through the centre: half the square.
        let half = [[0.0, -40.0], [0.0, 40.0], [-40.0, 0.0]];
        assert!((poly_coverage(half) - 0.5).abs() < 1e-6);
        // The diagonal through the centre: half, too.
        let diag = [[-40.0, -40.0], [40.0, 40.0], [-40.0, 40.0]];
        assert!((poly_coverage(diag) - 0.5).abs() < 1e-6);
        // A corner cut off at 1/4 of each side: 1/32.
        let corner = [[0.25, 0.5], [0.5, 0.25], [9.0, 9.0]];
        assert!((poly_coverage(corner) - 1.0 / 32.0).abs() < 1e-6);
        // Touching the square along a side or at a corner: nothing.
        assert_eq!(poly_coverage([[0.5, -3.0], [0.5, 3.0], [4.0, 0.0]]), 0.0);
        assert_eq!(poly_coverage([[0.5, 0.5], [3.0, 0.5], [3.0, 3.0]]), 0.0);
        // Degenerate: nothing.
        assert_eq!(poly_coverage([[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]]), 0.0);
    }

    #[test]
    fn point_coverage_and_discard() {
        // Radius 4: k = (1 - 1/4)^2.
        let k = 0.5625;
        assert_eq!(cov([0.0, 0.0, k, -1.0]), (1.0 / (1.0 - k), false));
        assert_eq!(cov([0.9, 0.0, k, -1.0]), (1.0, false));
        assert!(cov([0.8, 0.7, k, -1.0]).1);
    }
}
