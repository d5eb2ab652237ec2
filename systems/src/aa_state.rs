//! The smoothing of a state block, derived once per state (derived.rs):
//! what smooth lines and points it draws ([`AaState`]) and the fragment
//! shader it binds ([`AaFragmentShader`], Mesa's `nir_lower_aaline_fs` /
//! `nir_lower_aapoint_fs` of `nir_draw_helpers.c`, with the [`coverage`]
//! formulas aa_stage.rs's module comment derives).
//!
//! Apart from aa_stage.rs (the quads, draw's `draw_pipe_aaline.c` /
//! `draw_pipe_aapoint.c`), which reads `DerivedState`: derived.rs and
//! clip.rs read this file, so it imports no stage.

use std::sync::Arc;

use smallvec::SmallVec;

use ferropipe_components::shader::{
    FragmentIo, FragmentShader, FragmentShaderRef, IoSlot, Lanes, ScalarKind, Semantic, ShaderInfo,
    ShaderResources,
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
}

impl AaState {
    /// The smoothing `rast` asks for, `None` when neither lines nor points
    /// are smooth or `off` (multisample rasterization or conservative
    /// rasterization is on: both ignore the smooth flags).
    /// `attr` is the index the varying gets, `per_vertex_size` whether the
    /// vertex shader writes the point size that `point_size_per_vertex`
    /// reads.
    pub fn new(
        rast: &RasterizerState,
        off: bool,
        attr: usize,
        per_vertex_size: bool,
    ) -> Option<AaState> {
        if off || !(rast.line_smooth || smooth_points(rast)) {
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
        })
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
}

impl AaFragmentShader {
    /// Wraps `inner`.  `point_smooth` shaders may discard (outside the
    /// point's circle), so the wrapper says so.
    pub fn wrap(inner: FragmentShaderRef, point_smooth: bool) -> Arc<AaFragmentShader> {
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
        info.uses_discard |= point_smooth;
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
        })
    }
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
            let (f, kill) = coverage(c(0), c(1), c(2), c(3));
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
    fn point_coverage_and_discard() {
        // Radius 4: k = (1 - 1/4)^2.
        let k = 0.5625;
        assert_eq!(cov([0.0, 0.0, k, -1.0]), (1.0 / (1.0 - k), false));
        assert_eq!(cov([0.9, 0.0, k, -1.0]), (1.0, false));
        assert!(cov([0.8, 0.7, k, -1.0]).1);
    }
}
