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
//! each pixel's sample point (`aa_state.rs`'s `polygon_planes`); the
//! wrapper clips the triangle to the pixel's square (`poly_coverage`),
//! multiplies the alpha by the area and discards pixels touched with zero
//! area.  The same conditions turn it off as the line and point smoothing.
//!
//! In ferropipe the extra varying is the last attribute of every clipped
//! vertex of a state block with smoothing on (`DerivedState::aa`): clip
//! writes `AA_NEUTRAL` there (coverage exactly 1, so triangles and
//! non-smooth primitives drawn with the same state keep their alpha, as
//! llvmpipe, which binds the augmented shader only for smooth primitives,
//! leaves it), and setup hands smooth lines and points to [`aaline`] /
//! [`aapoint`] instead of its own line and point rules; their triangles
//! come back to setup's smooth-triangle rule.  The fragment shader is
//! wrapped once per state block (`aa_state.rs`'s `AaFragmentShader`), so
//! WGSL / GLSL programs and Rust-native shaders get the same coverage
//! multiply.

use std::cell::RefCell;

use ferropipe_components::batch::{ClippedPrim, ClippedPrims, PrimKind};

use crate::aa_state::MAX_RADIUS;
use crate::derived::DerivedState;

thread_local! {
    /// The quad of the primitive being expanded (four vertices).
    static QUAD: RefCell<ClippedPrims> = RefCell::new(ClippedPrims::default());
}

/// Builds the quad's vertices (copies of `src[i]` moved by `offset[i]`,
/// with the varying `aa[i]`) and hands its two triangles `tris`, each
/// taking flat values from quad vertex `provoking`, to `triangle` (setup's
/// smooth-triangle rule: draw's stages pass their triangles to the next
/// stage the same way).
fn emit_quad(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    mut triangle: impl FnMut(&ClippedPrims, &ClippedPrim),
    quad: ([u32; 4], [[f32; 2]; 4], [[f32; 4]; 4]),
    tris: [[u32; 3]; 2],
    provoking: u32,
) {
    let (src, offset, aa) = quad;
    let s = clipped.stride;
    let a = 4 + 4 * ds.link.aa.map_or(0, |aa| aa.attr);
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
            triangle(&q, &tri);
        }
    });
}

/// A smooth line: `aaline_line`'s quad and varying; its triangles go to
/// `triangle`.
pub fn aaline(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    triangle: impl FnMut(&ClippedPrims, &ClippedPrim),
) {
    let Some(hw) = ds.link.aa.and_then(|aa| aa.line_half_width) else {
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
        triangle,
        (src, offset, aa),
        [[2, 1, 0], [3, 1, 2]],
        provoking,
    );
}

/// A smooth point: `aapoint_point`'s quad and varying; its triangles go to
/// `triangle`.
pub fn aapoint(
    clipped: &ClippedPrims,
    prim: &ClippedPrim,
    ds: &DerivedState,
    triangle: impl FnMut(&ClippedPrims, &ClippedPrim),
) {
    let Some(aa) = ds.link.aa else { return };
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
        triangle,
        ([v; 4], offset, aa),
        [[0, 1, 2], [0, 2, 3]],
        0,
    );
}
