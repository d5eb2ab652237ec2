//! The smoothing of a state block, derived once per state (the linkage,
//! link.rs):
//! what smooth lines, points and polygons it draws ([`AaState`]) and the
//! fragment shader it binds ([`AaFragmentShader`], Mesa's
//! `nir_lower_aaline_fs` / `nir_lower_aapoint_fs` of `nir_draw_helpers.c`,
//! with the [`coverage`] formulas aa_stage.rs's module comment derives,
//! and GL's polygon coverage, [`poly_coverage`] from the corner planes
//! setup writes with [`polygon_planes`]).
//!
//! Apart from aa_stage.rs (the quads, draw's `draw_pipe_aaline.c` /
//! `draw_pipe_aapoint.c`), which reads `DerivedState`: the linkage and
//! clip.rs read this file, so it imports no stage.

use std::sync::Arc;

use smallvec::SmallVec;

use ferropipe_components::batch::{FIXED_ONE, FIXED_ORDER, Plane};
use ferropipe_components::shader::{
    FragmentIo, FragmentShader, FragmentShaderRef, Interpolation, IoSlot, LANES, Lanes, ScalarKind,
    Semantic, ShaderInfo, ShaderResources,
};
use ferropipe_components::state::RasterizerState;

/// The smooth-primitive varying of vertices that are not part of a smooth
/// line or point: the line formula then gives exactly 1 (`2 - |0|`
/// saturates), however the value is interpolated.
pub const AA_NEUTRAL: [f32; 4] = [0.0, 2.0, 0.0, 2.0];

/// Largest point radius a smooth point is drawn with: half of setup.rs's
/// `MAX_POINT_WIDTH` (llvmpipe's `LP_MAX_POINT_WIDTH`, 255), which setup.rs
/// asserts at compile time (this file stays below the stages).
pub(crate) const MAX_RADIUS: f32 = 127.5;

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
        // One batch (`MAX_BATCH_GROUPS`, 8 KiB of lanes) fits on the stack.
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
