//! The clip stage's plan (draw's `draw_clip` state, `clipper->plane[]`):
//! which half-spaces beyond the view volume's x/y are clipped against.
//! Derived from the rasterizer state, the user clip planes, viewport 0 and
//! the vertex shader's clip-distance outputs, and from nothing else; plans.rs caches
//! it across draws and flushes.

use ferropipe_components::shader::{Semantic, ShaderInfo};
use ferropipe_components::state::{
    ClipState, MAX_CLIP_PLANES, MAX_VIEWPORTS, RasterizerState, ViewportState,
};

use crate::lanes::window_viewport;

/// One enabled clip half-space beyond the view volume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClipPlane {
    /// `dot(plane, position) >= 0` (a `set_clip_state` plane).
    User([f32; 4]),
    /// `distance >= 0` for component `comp` of VS output slot `slot`.
    Distance {
        /// VS output slot of the clip distances.
        slot: usize,
        /// Component of that slot.
        comp: usize,
    },
}

/// What clipping tests beyond the guard band.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipPlan {
    /// The enabled user clip planes or clip distances, beyond the view volume.
    pub planes: Vec<ClipPlane>,
    /// Clip against the near plane (`depth_clip_near`).
    pub near: bool,
    /// Clip against the far plane (`depth_clip_far`).
    pub far: bool,
    /// Viewport 0 in window space (`lanes::window_viewport`): the guard
    /// band's extent and the transform of clipped vertices.
    pub viewport: ViewportState,
    /// `clip_halfz`: the view volume's z range is [0, w], not [-w, w].
    pub halfz: bool,
    /// `point_size`, for points whose shader writes no size or without
    /// `point_size_per_vertex`.
    pub point_size: f32,
    /// `point_size_per_vertex`: the shader's point size output is used.
    pub point_size_per_vertex: bool,
    /// `point_tri_clip`: points are clipped like triangles (whole, by
    /// their centre otherwise).
    pub point_tri_clip: bool,
}

impl ClipPlan {
    /// The plan for `rast` with user planes `clip`, `viewports` and a
    /// vertex shader of interface `vs`.  Shader clip distances take
    /// precedence over user planes; distances not written count as
    /// disabled (rasterizer.rst).
    pub fn derive(
        rast: &RasterizerState,
        clip: &ClipState,
        viewports: &[ViewportState; MAX_VIEWPORTS],
        vs: &ShaderInfo,
    ) -> Self {
        let mut planes = Vec::new();
        let enable = rast.clip_plane_enable;
        if vs.num_clip_distances > 0 {
            for i in 0..(vs.num_clip_distances as usize).min(MAX_CLIP_PLANES) {
                if enable & (1 << i) == 0 {
                    continue;
                }
                if let Some(slot) = vs.output_slot(Semantic::ClipDistance((i / 4) as u8)) {
                    planes.push(ClipPlane::Distance { slot, comp: i % 4 });
                }
            }
        } else {
            for i in 0..MAX_CLIP_PLANES {
                if enable & (1 << i) != 0 {
                    planes.push(ClipPlane::User(clip.ucp[i]));
                }
            }
        }
        ClipPlan {
            planes,
            near: rast.depth_clip_near,
            far: rast.depth_clip_far,
            viewport: window_viewport(&viewports[0], rast.half_pixel_center),
            halfz: rast.clip_halfz,
            point_size: rast.point_size,
            point_size_per_vertex: rast.point_size_per_vertex,
            point_tri_clip: rast.point_tri_clip,
        }
    }
}
