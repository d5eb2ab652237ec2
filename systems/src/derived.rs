//! Equivalent of llvmpipe's `lp_state_derived.c` (plus the linkage part of
//! `lp_state_setup.c` and draw's `draw_vs` output mapping): everything the
//! stages need that follows from a state block alone, never computed per
//! vertex or pixel, and derived once per distinct state: the plan cache
//! (plans.rs) keeps each [`DerivedShape`] across draws and flushes.
//!
//! A [`DerivedState`] answers, for one [`StateBlock`]:
//! * fetch: which vertex element feeds which VS input slot, and how to decode it;
//! * shade: where position, point size, clip distances and colours are;
//! * clip: which planes are enabled, and the linkage (which VS outputs the
//!   fragment shader reads, in which order they travel with the vertices);
//! * setup: fill rule, pixel offset, culling, draw regions;
//! * raster/merge: early depth, opaque-overwrite eligibility, the merge plan.

use std::sync::Arc;

use ferropipe_components::batch::StateBlock;
use ferropipe_components::draw::FramebufferState;
use ferropipe_components::enums::{Face, PolygonMode};
use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::shader::{FragmentShaderRef, Interpolation, LANES, Semantic, ShaderInfo};
use ferropipe_components::state::{MAX_CLIP_PLANES, MAX_VIEWPORTS, RasterizerState, ViewportState};

use crate::fetch::ElementFetch;
use crate::lanes::Rect;
use crate::merge::MergePlan;

/// Largest `conservative_raster_dilate` applied, in pixels
/// (`PIPE_CAPF_MAX_CONSERVATIVE_RASTER_DILATE`); larger values clamp to it
/// as NV_conservative_raster_dilate clamps.
pub const MAX_CONSERVATIVE_DILATE: f32 = 1.0;
/// Largest `subpixel_precision_x/y` bias applied
/// (`PIPE_CAP_MAX_CONSERVATIVE_RASTER_SUBPIXEL_PRECISION_BIAS`): a grid of
/// 2^-16 pixel keeps the finer snapped area within `i128` comfortably.
pub const MAX_SUBPIXEL_PRECISION_BIAS: u8 = 8;
/// Where a fragment-shader input gets its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FsInputSource {
    /// A varying: attribute `front` of the clipped vertices (attribute `back`
    /// on back faces, for `light_twoside`), interpolated as `interp`.
    /// `plane` is the index of its first component's plane after the depth
    /// and 1/w planes (see [`DerivedShape::planes_per_prim`]).
    Attr {
        /// Attribute index of the clipped vertices for front faces.
        front: usize,
        /// Attribute index for back faces.
        back: usize,
        /// How it is interpolated.
        interp: Interpolation,
        /// Its first plane after depth and 1/w.
        plane: usize,
        /// `Generic(n)`: replaced by sprite coordinates on points when bit
        /// n of `sprite_coord_enable` is set.
        sprite: Option<u8>,
        /// Components the fragment shader reads (`IoSlot::read`): the
        /// others get no plane and no interpolation.
        read: u8,
    },
    /// `@builtin(position)`: the window position (x, y, z, 1/w).
    FragCoord,
    /// `@builtin(front_facing)`: all bits set in front-facing lanes.
    FrontFacing,
    /// `gl_PointCoord`, or a `GENERIC` input whose `sprite_coord_enable`
    /// bit is set and that the vertex shader does not write: sprite
    /// coordinates (s, t, 0, 1) in `sprite_coord_mode` on points, zeros
    /// otherwise; planes like an attribute's.
    PointCoord {
        /// Its first plane after depth and 1/w.
        plane: usize,
    },
    /// Sample index (0: single-sampled).
    SampleId,
    /// Nothing upstream writes it: zeros.
    Zero,
}

/// Where each plane of a filled triangle comes from, decided once per
/// state and facing ([`DerivedShape::tri_planes`]): the same planes, in the
/// same order, as the per-input loop of setup.rs's `setup_triangle_as`
/// pushes, so that 8 of them are evaluated at once (setup.rs's
/// `PlanePlan::push_planes`) in `f32x8` lanes (lane = plane)
/// with the same operations in the same order, bit for bit.  The per-input
/// loop cost ~40 % of setup on tiny_tris_1m (a match and a scalar plane per
/// component).
#[derive(Clone, Debug, Default)]
pub struct PlanePlan {
    pub(crate) chunks: Vec<PlaneChunk>,
}

/// Up to 8 consecutive planes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlaneChunk {
    /// Vertex slot each lane reads (0 for constant-zero lanes).
    pub(crate) src: [u16; LANES],
    /// Planes in use (the rest of the lanes are not stored).
    pub(crate) len: usize,
    /// `Some(s)` when lane `l` reads slot `s + l` (zero lanes aside).
    pub(crate) consecutive: Option<u16>,
    /// Lane masks: perspective-corrected (value times 1/w), flat (the
    /// provoking vertex's value, no gradient), zero (an unread component
    /// or a point coordinate: `Plane::default()`).
    pub(crate) perspective: u8,
    pub(crate) flat: u8,
    pub(crate) zero: u8,
}

impl PlanePlan {
    /// The plan of `fs_inputs` for front (`back` false) or back faces.
    pub fn new(fs_inputs: &[FsInputSource], back: bool) -> Self {
        // (slot, interpolation) per plane; `None` is a zero plane.
        let mut planes: Vec<Option<(usize, Interpolation)>> = vec![
            Some((2, Interpolation::Linear)),
            Some((3, Interpolation::Linear)),
        ];
        for src in fs_inputs {
            match *src {
                FsInputSource::Attr {
                    front: fa,
                    back: ba,
                    interp,
                    read,
                    ..
                } => {
                    let o = 4 + 4 * if back { ba } else { fa };
                    for c in 0..4 {
                        planes.push((read & (1 << c) != 0).then_some((o + c, interp)));
                    }
                }
                FsInputSource::PointCoord { .. } => planes.extend([None; 4]),
                _ => {}
            }
        }
        let chunks = planes
            .chunks(LANES)
            .map(|c| {
                let mut k = PlaneChunk {
                    src: [0; LANES],
                    len: c.len(),
                    consecutive: None,
                    perspective: 0,
                    flat: 0,
                    zero: 0,
                };
                for (l, p) in c.iter().enumerate() {
                    match *p {
                        None => k.zero |= 1 << l,
                        Some((slot, interp)) => {
                            k.src[l] = slot.min(u16::MAX as usize) as u16;
                            match interp {
                                Interpolation::Flat => k.flat |= 1 << l,
                                Interpolation::Perspective => k.perspective |= 1 << l,
                                Interpolation::Linear => {}
                            }
                        }
                    }
                }
                let first = (0..k.len).find(|&l| k.zero & (1 << l) == 0);
                k.consecutive = first
                    .and_then(|l| k.src[l].checked_sub(l as u16))
                    .filter(|&b| {
                        (0..k.len).all(|l| k.zero & (1 << l) != 0 || k.src[l] == b + l as u16)
                    });
                k
            })
            .collect();
        PlanePlan { chunks }
    }
}

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

/// Everything derived from one state block: the block, and the derived
/// part shared (one `Arc`, from plans.rs' `PlanCache`) by every
/// block with the same state objects and value states, in this flush or
/// an earlier one; blocks differing only in bindings the derivation does
/// not read (`same_shape_inputs`: vertex and index buffers, stage
/// resources, stream-output targets) share it.  Fields of [`DerivedShape`]
/// read through `Deref`.
pub struct DerivedState {
    /// The state block the derivation is for.
    pub block: Arc<StateBlock>,
    /// Floats per clipped vertex: `[x, y, z, 1/w]` + 4 per attribute (+ 4
    /// for the smooth-primitive varying), padded to the scene's largest
    /// (`scene::begin_scene`), so the draws sharing a job share a layout.
    pub stride: usize,
    shape: Arc<DerivedShape>,
}

impl std::ops::Deref for DerivedState {
    type Target = DerivedShape;

    fn deref(&self) -> &DerivedShape {
        &self.shape
    }
}

/// Whether deriving `a` and `b` gives the same [`DerivedShape`]: every
/// field of the block but the bindings the derivation never reads.  The
/// destructuring is exhaustive, so a new `StateBlock` field does not
/// compile until it is placed on one side or the other.
pub(crate) fn same_shape_inputs(a: &StateBlock, b: &StateBlock) -> bool {
    let StateBlock {
        rasterizer,
        dsa,
        blend,
        velems,
        vs,
        fs,
        framebuffer,
        vertex_buffers: _,
        index_buffer: _,
        vs_resources: _,
        fs_resources: _,
        blend_color,
        stencil_ref,
        sample_mask,
        min_samples,
        clip,
        poly_stipple,
        viewports,
        scissors,
        stream_output: _,
    } = a;
    Arc::ptr_eq(rasterizer, &b.rasterizer)
        && Arc::ptr_eq(dsa, &b.dsa)
        && Arc::ptr_eq(blend, &b.blend)
        && Arc::ptr_eq(velems, &b.velems)
        && Arc::ptr_eq(vs, &b.vs)
        && Arc::ptr_eq(fs, &b.fs)
        && Arc::ptr_eq(framebuffer, &b.framebuffer)
        && *blend_color == b.blend_color
        && *stencil_ref == b.stencil_ref
        && *sample_mask == b.sample_mask
        && *min_samples == b.min_samples
        && *clip == b.clip
        && *poly_stipple == b.poly_stipple
        && *viewports == b.viewports
        && *scissors == b.scissors
}

/// The part of [`DerivedState`] computed from a block's state objects.
pub struct DerivedShape {
    /// The vertex shader's interface.
    pub vs_info: ShaderInfo,
    /// The fragment shader the pipeline runs: the block's, or with smooth
    /// lines / points the block's wrapped in the coverage multiply
    /// (aa_state.rs `AaFragmentShader`); `fs_info` is its interface.
    pub fs: FragmentShaderRef,
    /// The interface of `fs`.
    pub fs_info: ShaderInfo,
    /// `FragmentShader::writes_all_outputs`: the output buffer needs no
    /// clearing before a call.
    pub fs_writes_all_outputs: bool,
    /// `VertexShader::writes_all_outputs`, likewise for the vertex outputs.
    pub vs_writes_all_outputs: bool,

    // --- fetch -----------------------------------------------------------
    /// Per VS input slot, how it is fetched.
    pub fetch: Vec<ElementFetch>,

    // --- shade -----------------------------------------------------------
    /// VS output slot of the position (`None`: the shader writes none and nothing is drawn).
    pub pos_slot: Option<usize>,
    /// VS output slot of the point size, when the shader writes one (points
    /// read it with `point_size_per_vertex`).
    pub psize_slot: Option<usize>,
    /// VS output slots that `clamp_vertex_color` clamps (COLOR/BCOLOR).
    pub clamp_slots: Vec<usize>,

    // --- clip ------------------------------------------------------------
    /// The enabled user clip planes or clip distances, beyond the view volume.
    pub clip_planes: Vec<ClipPlane>,
    /// Clip against the near plane (`depth_clip_near`).
    pub clip_near: bool,
    /// Clip against the far plane (`depth_clip_far`).
    pub clip_far: bool,
    /// VS output slot of each clipped-vertex attribute, in AoS order.
    pub attrs: Vec<usize>,
    /// Interpolation of each attribute (for clipping `Linear` ones in
    /// window space).
    pub attr_interp: Vec<Interpolation>,
    /// `line_smooth` / `point_smooth` without multisample rasterization
    /// (aa_stage.rs, draw's aaline / aapoint stages); its varying is
    /// attribute `attrs.len()` of the clipped vertices.
    pub aa: Option<crate::aa_state::AaState>,

    // --- setup -----------------------------------------------------------
    /// Per FS input slot, its source.
    pub fs_inputs: Vec<FsInputSource>,
    /// Planes per set-up primitive: depth, 1/w, then 4 per `Attr` input.
    pub planes_per_prim: usize,
    /// Where a filled triangle's planes come from, for front and back
    /// faces (setup evaluates them 8 at a time).
    pub tri_planes: [PlanePlan; 2],
    /// 0.5 with `half_pixel_center`, else 0.
    pub pixel_offset: f32,
    /// The rasterizer state's fill convention (`bottom_edge_rule`).
    pub bottom_edge_rule: bool,
    /// Which faces are culled.
    pub cull_face: Face,
    /// Counter-clockwise triangles face front.
    pub front_ccw: bool,
    /// The first vertex provokes (flat inputs and stream output order).
    pub flatshade_first: bool,
    /// Nothing is rasterized (the front end still runs stream output and counts).
    pub rasterizer_discard: bool,
    /// Per viewport, the pixels a point or line may touch: the framebuffer,
    /// intersected with the scissor rectangle when `scissor` is on.
    pub draw_regions: [Rect; MAX_VIEWPORTS],
    /// Per viewport, the pixels a triangle may touch: the draw region
    /// intersected with the viewport.  Triangles are clipped to the guard
    /// band only; this scissor gives exactly what clipping to the view
    /// volume's x/y planes would (see `viewport_pixels`).
    pub tri_regions: [Rect; MAX_VIEWPORTS],
    /// Depth range per viewport `(min, max)` for `depth_clamp`.
    pub depth_range: [(f32, f32); MAX_VIEWPORTS],
    /// Polygon offset of filled triangles (`offset_tri`), `None` when off
    /// or when it cannot move depth (zero units and scale).
    pub offset_tri: Option<PolygonOffset>,
    /// `fill_front` or `fill_back` is not `FILL`: triangles go through
    /// setup's unfilled path.
    pub unfilled: bool,
    /// Conservative rasterization: how far every edge moves out, in 1/256
    /// pixel (half a pixel, so any pixel square the primitive touches is
    /// covered, plus `conservative_raster_dilate`, plus 1/256 pixel in
    /// pre-snap mode for the snapping error).  `None` when off.  See
    /// setup.rs `conservative_dilate`.
    pub conservative: Option<i64>,
    /// `PIPE_CONSERVATIVE_RASTER_PRE_SNAP`: coverage is with respect to the
    /// unsnapped primitive, so triangles that snapping made degenerate
    /// still generate fragments (back-facing, with the provoking vertex's
    /// depth and attributes).
    pub conservative_pre_snap: bool,
    /// Post-snap conservative rasterization with a subpixel precision bias
    /// (rasterizer.rst `subpixel_precision_x/y`): the extra bits of the
    /// snapping grid per axis.  Coverage is with respect to the triangle
    /// snapped to that finer grid: edges dilate by 1/256 pixel more (as
    /// pre-snap, the distance between the two snappings is below that),
    /// and the finer grid decides which triangles are degenerate.
    pub conservative_fine_snap: Option<(u8, u8)>,
    /// Samples per pixel of the colour buffers (1: single-sampled).
    pub fb_samples: u32,
    /// Multisample rasterization (`multisample` on a 4x framebuffer): the
    /// sample positions as offsets from the pixel's sample point, in 1/256
    /// pixel.  `None`: coverage at the pixel centre, written to every
    /// sample.
    pub ms_offsets: Option<[(i64, i64); ferropipe_components::batch::MS_SAMPLES]>,
    /// `set_sample_mask`, low bits (one per sample).
    pub sample_mask: u8,
    /// Sample shading: multisample rasterization with `min_samples` > 1
    /// runs the fragment shader once per sample, at the sample.
    pub sample_shading: bool,
    /// Polygon offset of polygons drawn as lines / points.
    pub offset_line: Option<PolygonOffset>,
    /// Polygon offset of polygons drawn as points.
    pub offset_point: Option<PolygonOffset>,
    /// `poly_stipple_enable`: per 4x2 group position in the 32x32 pattern
    /// (`((y & 31) >> 1) * 8 + ((x & 31) >> 2)`), the lanes the pattern
    /// keeps.  Filled triangles only (lines and points of unfilled polygons
    /// are not stippled, as in GL and draw's pstipple stage).
    pub poly_stipple: Option<Box<[u8; 128]>>,
    /// `line_stipple_enable`: `(pattern, factor)` with the factor already
    /// `line_stipple_factor + 1` (rasterizer.rst: each bit repeats N times).
    pub line_stipple: Option<(u16, u32)>,

    // --- raster / merge --------------------------------------------------
    /// The output merge plan: depth, stencil, alpha, blend and store per colour buffer.
    pub merge: MergePlan,
    /// Depth/stencil may be tested (and written) before shading: the shader
    /// neither discards nor writes depth nor has side effects, and no alpha
    /// test or alpha-to-coverage can kill fragments afterwards; or the
    /// shader forces early fragment tests.
    pub early_depth: bool,
    /// A full-tile primitive with this state overwrites everything earlier
    /// commands could have left in the tile (see bin.rs).
    pub opaque: bool,
    /// Floats per clipped vertex this state needs (before the scene pads
    /// every block's to the largest, [`DerivedState::stride`]).
    pub vertex_stride: usize,
}

impl DerivedState {
    /// Derives the per-block state from scratch (tests and benches; the
    /// pipeline takes the derived part from plans.rs' `PlanCache`).
    /// `block` must have passed the façade's draw validation.
    pub fn new(block: Arc<StateBlock>) -> Self {
        let shape = Arc::new(DerivedShape::new(&block));
        DerivedState::with_shape(block, shape)
    }

    /// The state of `block` with its derived part `shape` (derived from
    /// `block`'s state objects, or from a block with the same ones).
    pub(crate) fn with_shape(block: Arc<StateBlock>, shape: Arc<DerivedShape>) -> Self {
        DerivedState {
            block,
            stride: shape.vertex_stride,
            shape,
        }
    }

    /// The derived part, shared by blocks with the same state objects.
    pub fn shape(&self) -> &Arc<DerivedShape> {
        &self.shape
    }
}

impl DerivedShape {
    /// Derives the part of a block's state that its state objects and
    /// value states decide (the plan cache's unit).
    pub fn new(block: &StateBlock) -> Self {
        let vs_info = block.vs.info().clone();
        let rast = *block.rasterizer;
        let multisampled = rast.multisample
            && fb_samples(&block.framebuffer) as usize == ferropipe_components::batch::MS_SAMPLES;
        use ferropipe_components::enums::ConservativeRasterMode;
        let conservative = rast.conservative_raster_mode != ConservativeRasterMode::Off;
        let pre_snap = rast.conservative_raster_mode == ConservativeRasterMode::PreSnap;
        let bias = |b: u8| b.min(MAX_SUBPIXEL_PRECISION_BIAS);
        let fine_snap = (conservative
            && !pre_snap
            && (rast.subpixel_precision_x | rast.subpixel_precision_y) != 0)
            .then_some((
                bias(rast.subpixel_precision_x),
                bias(rast.subpixel_precision_y),
            ));
        let smooth_points = crate::aa_state::smooth_points(&rast);
        // poly_smooth (GL's analytic polygon coverage) likewise gives way
        // to multisample and conservative rasterization.
        let aa_wanted = !multisampled
            && !conservative
            && (rast.line_smooth || smooth_points || rast.poly_smooth);
        let fs: FragmentShaderRef = if aa_wanted {
            crate::aa_state::AaFragmentShader::wrap(
                block.fs.clone(),
                smooth_points,
                rast.poly_smooth,
            )
        } else {
            block.fs.clone()
        };
        let fs_info = fs.info().clone();

        let fetch = crate::fetch::plan_elements(block, &vs_info);

        let pos_slot = vs_info.output_slot(Semantic::Position);
        let psize_slot = vs_info.output_slot(Semantic::PointSize);
        let clamp_slots = if rast.clamp_vertex_color {
            vs_info
                .outputs
                .iter()
                .enumerate()
                .filter(|(_, o)| matches!(o.semantic, Semantic::Color(_) | Semantic::BColor(_)))
                .map(|(i, _)| i)
                .collect()
        } else {
            Vec::new()
        };

        // Clip half-spaces: shader clip distances take precedence over user
        // planes; distances not written count as disabled (rasterizer.rst).
        let mut clip_planes = Vec::new();
        let enable = rast.clip_plane_enable;
        if vs_info.num_clip_distances > 0 {
            for i in 0..(vs_info.num_clip_distances as usize).min(MAX_CLIP_PLANES) {
                if enable & (1 << i) == 0 {
                    continue;
                }
                if let Some(slot) = vs_info.output_slot(Semantic::ClipDistance((i / 4) as u8)) {
                    clip_planes.push(ClipPlane::Distance { slot, comp: i % 4 });
                }
            }
        } else {
            for i in 0..MAX_CLIP_PLANES {
                if enable & (1 << i) != 0 {
                    clip_planes.push(ClipPlane::User(block.clip.ucp[i]));
                }
            }
        }

        // Linkage by semantic (FORMAT.md "Shading linkage").
        let mut attrs: Vec<usize> = Vec::new();
        let mut attr_interp: Vec<Interpolation> = Vec::new();
        let mut attr_index = |slot: usize, interp: Interpolation| -> usize {
            if let Some(i) = attrs.iter().position(|&s| s == slot) {
                i
            } else {
                attrs.push(slot);
                attr_interp.push(interp);
                attrs.len() - 1
            }
        };
        let mut fs_inputs = Vec::with_capacity(fs_info.inputs.len());
        let mut next_plane = 2usize;
        // The wrapper's last inputs are the smooth-primitive varying and,
        // with poly_smooth, the two corner slots, linked below (they are no
        // VS outputs).
        let aa_inputs = if aa_wanted {
            1 + 2 * rast.poly_smooth as usize
        } else {
            0
        };
        let user_inputs = fs_info.inputs.len() - aa_inputs;
        for input in &fs_info.inputs[..user_inputs] {
            let src = match input.semantic {
                Semantic::Position => FsInputSource::FragCoord,
                Semantic::FrontFacing => FsInputSource::FrontFacing,
                Semantic::PointCoord => {
                    let plane = next_plane;
                    next_plane += 4;
                    FsInputSource::PointCoord { plane }
                }
                Semantic::SampleId => FsInputSource::SampleId,
                sem @ (Semantic::Color(_) | Semantic::BColor(_) | Semantic::Generic(_)) => {
                    let is_color = matches!(sem, Semantic::Color(_) | Semantic::BColor(_));
                    let interp = if is_color && rast.flatshade {
                        Interpolation::Flat
                    } else {
                        input.interpolation
                    };
                    match vs_info.output_slot(sem) {
                        Some(front_slot) => {
                            let front = attr_index(front_slot, interp);
                            let back = match sem {
                                Semantic::Color(n) if rast.light_twoside => vs_info
                                    .output_slot(Semantic::BColor(n))
                                    .map_or(front, |b| attr_index(b, interp)),
                                _ => front,
                            };
                            let plane = next_plane;
                            next_plane += 4;
                            let sprite = match sem {
                                Semantic::Generic(n) if n < 32 => Some(n),
                                _ => None,
                            };
                            FsInputSource::Attr {
                                front,
                                back,
                                interp,
                                plane,
                                sprite,
                                read: input.read,
                            }
                        }
                        // A GENERIC the vertex shader does not write still
                        // takes the sprite coordinates on points when its
                        // bit is set (a GLSL VS writing only gl_PointSize
                        // and a colour): the point-coordinate planes, which
                        // setup fills per point and zeroes for lines and
                        // triangles, where the input stays undefined.
                        None => match sem {
                            Semantic::Generic(n)
                                if n < 32 && rast.sprite_coord_enable & (1 << n) != 0 =>
                            {
                                let plane = next_plane;
                                next_plane += 4;
                                FsInputSource::PointCoord { plane }
                            }
                            _ => FsInputSource::Zero,
                        },
                    }
                }
                _ => FsInputSource::Zero,
            };
            fs_inputs.push(src);
        }
        let mut aa =
            crate::aa_state::AaState::new(&rast, !aa_wanted, attrs.len(), psize_slot.is_some());
        if let Some(aa) = aa.as_mut() {
            fs_inputs.push(FsInputSource::Attr {
                front: aa.attr,
                back: aa.attr,
                interp: Interpolation::Perspective,
                plane: next_plane,
                sprite: None,
                // The wrapper reads all four components.
                read: 0xf,
            });
            next_plane += 4;
            if aa.poly_smooth {
                // The corner slots: setup overwrites their planes for
                // smooth polygons (aa_state::polygon_planes); elsewhere
                // they interpolate clip's zeros, the "no polygon" marker.
                aa.poly_plane = next_plane;
                for k in 1..3 {
                    fs_inputs.push(FsInputSource::Attr {
                        front: aa.attr + k,
                        back: aa.attr + k,
                        interp: Interpolation::Linear,
                        plane: next_plane,
                        sprite: None,
                        read: 0xf,
                    });
                    next_plane += 4;
                }
            }
        }
        let stride = 4 + 4 * (attrs.len() + aa.map_or(0, |a| a.slots()));

        let fb = &*block.framebuffer;
        let fb_rect = Rect {
            x0: 0,
            y0: 0,
            x1: fb.width.min(16384) as i32,
            y1: fb.height.min(16384) as i32,
        };
        let mut draw_regions = [fb_rect; MAX_VIEWPORTS];
        let mut tri_regions = [fb_rect; MAX_VIEWPORTS];
        let mut depth_range = [(0.0, 1.0); MAX_VIEWPORTS];
        for i in 0..MAX_VIEWPORTS {
            if rast.scissor {
                let s = block.scissors[i];
                let r = Rect {
                    x0: s.minx.min(16384) as i32,
                    y0: s.miny.min(16384) as i32,
                    x1: s.maxx.min(16384) as i32,
                    y1: s.maxy.min(16384) as i32,
                };
                draw_regions[i] = fb_rect.intersect(&r);
            }
            let vp = window_viewport(&block.viewports[i], rast.half_pixel_center);
            tri_regions[i] =
                draw_regions[i].intersect(&viewport_pixels(&vp, 0.5, rast.bottom_edge_rule));
            let (a, b) = if rast.clip_halfz {
                (vp.translate[2], vp.translate[2] + vp.scale[2])
            } else {
                (vp.translate[2] - vp.scale[2], vp.translate[2] + vp.scale[2])
            };
            depth_range[i] = (a.min(b), a.max(b));
        }

        let merge = MergePlan::new(block, &fs_info);
        let kills = fs_info.uses_discard
            || rast.poly_stipple_enable
            || block.dsa.alpha_enabled
            || block.blend.alpha_to_coverage
            || fs_info.output_slot(Semantic::SampleMask).is_some();
        // A fragment shader with side effects runs before the depth test
        // (so every covered fragment writes), unless it forces early
        // tests; forced early tests ignore its depth output and discards
        // (GL 4.6 sections 14.9 and 15.2.4; llvmpipe's `lp_state_fs.c`).
        let early_depth = fs_info.early_fragment_tests
            || (!fs_info.writes_depth() && !kills && !fs_info.writes_memory);
        let opaque = !kills
            && !fs_info.writes_depth()
            && !fs_info.writes_memory
            && fb.zsbuf.is_none()
            && merge.overwrites_color();

        DerivedShape {
            vs_info,
            // (Before `fs` moves into its field.)
            fs_writes_all_outputs: fs.writes_all_outputs(),
            vs_writes_all_outputs: block.vs.writes_all_outputs(),
            fs,
            fs_info,
            aa,
            fetch,
            pos_slot,
            psize_slot,
            clamp_slots,
            clip_planes,
            clip_near: rast.depth_clip_near,
            clip_far: rast.depth_clip_far,
            attrs,
            attr_interp,
            tri_planes: [
                PlanePlan::new(&fs_inputs, false),
                PlanePlan::new(&fs_inputs, true),
            ],
            fs_inputs,
            planes_per_prim: next_plane,
            // Pixel centres are at +0.5 in window space; integer centres
            // (half_pixel_center off) shift the viewport instead
            // (`window_viewport`).
            pixel_offset: 0.5,
            bottom_edge_rule: rast.bottom_edge_rule,
            cull_face: rast.cull_face,
            front_ccw: rast.front_ccw,
            flatshade_first: rast.flatshade_first,
            rasterizer_discard: rast.rasterizer_discard,
            draw_regions,
            tri_regions,
            depth_range,
            offset_tri: PolygonOffset::enabled(&rast, rast.offset_tri, fb),
            unfilled: rast.fill_front != PolygonMode::Fill || rast.fill_back != PolygonMode::Fill,
            fb_samples: fb_samples(fb),
            ms_offsets: (rast.multisample
                && fb_samples(fb) as usize == ferropipe_components::batch::MS_SAMPLES)
                .then_some(STANDARD_4X),
            sample_mask: block.sample_mask as u8,
            sample_shading: rast.multisample
                && fb_samples(fb) as usize == ferropipe_components::batch::MS_SAMPLES
                && block.min_samples > 1,
            conservative: conservative.then(|| {
                let dilate = rast
                    .conservative_raster_dilate
                    .clamp(0.0, MAX_CONSERVATIVE_DILATE);
                // Snapping moves a vertex by at most 1/512 pixel per axis,
                // and so any point of the triangle: pre-snap coverage
                // dilates by that much more (rounded up to 1/256).
                128 + (dilate * 256.0).ceil() as i64 + (pre_snap || fine_snap.is_some()) as i64
            }),
            conservative_pre_snap: pre_snap,
            conservative_fine_snap: fine_snap,
            offset_line: PolygonOffset::enabled(&rast, rast.offset_line, fb),
            offset_point: PolygonOffset::enabled(&rast, rast.offset_point, fb),
            // rasterizer.rst: conservative rasterization ignores line
            // stipple (and the smooth flags, see `aa`).
            line_stipple: (rast.line_stipple_enable && !conservative).then_some((
                rast.line_stipple_pattern,
                rast.line_stipple_factor as u32 + 1,
            )),
            poly_stipple: rast
                .poly_stipple_enable
                .then(|| stipple_masks(&block.poly_stipple.stipple)),
            merge,
            early_depth,
            opaque,
            vertex_stride: stride,
        }
    }
}

impl DerivedState {
    /// Whether the depth or stencil buffer is tested or written at all.
    /// The depth bounds test reads the stored depth whether or not the
    /// depth test is on (EXT_depth_bounds_test, Vulkan's
    /// `depthBoundsTestEnable`), so it counts too.
    pub(crate) fn uses_depth_stencil(&self) -> bool {
        self.merge.depth.is_some()
            || self.merge.stencil_enabled
            || self.merge.depth_bounds.is_some()
    }
}

/// The polygon stipple pattern as 8-lane masks of 4x2 groups.  Row 0 of
/// the pattern is the top row of the window and bit 31 its left-most pixel
/// (FORMAT.md `set_polygon_stipple`); the pattern repeats every 32 pixels.
fn stipple_masks(rows: &[u32; 32]) -> Box<[u8; 128]> {
    use ferropipe_components::shader::{FRAG_LANE_X, FRAG_LANE_Y, LANES};
    Box::new(std::array::from_fn(|i| {
        let (gy, gx) = ((i / 8) * 2, (i % 8) * 4);
        (0..LANES).fold(0u8, |m, l| {
            let (x, y) = (gx + FRAG_LANE_X[l] as usize, gy + FRAG_LANE_Y[l] as usize);
            let on = rows[y] >> (31 - x) & 1 != 0;
            m | ((on as u8) << l)
        })
    }))
}

/// Polygon offset (rasterizer.rst `offset_*`) resolved against the depth
/// buffer, as llvmpipe's triangle setup (`lp_state_setup.c`) and draw's
/// offset stage compute it:
///
/// `zoffset = bias + max(|dz/dx|, |dz/dy|) * offset_scale`, clamped by
/// `offset_clamp` (upper bound when > 0, lower when < 0), where `bias` is
/// * `offset_units * 2 * mrd` for a unorm depth buffer (mrd, the minimum
///   resolvable difference, is `1 / (2^bits - 1)`: 1/65535 for Z16,
///   1/16777215 for Z24; with no depth buffer or a stencil-only one Mesa
///   assumes 24 bits) — the factor 2 is Mesa's, and the references are
///   rendered by it;
/// * `offset_units * 2^(e - 23)` for a float depth buffer, `e` the exponent of
///   the largest `|z|` of the triangle's vertices (the float's ulp there),
///   0 once `e < 23`;
/// * `offset_units` as is with `offset_units_unscaled` (D3D9).
///
/// The offset is added to the interpolated window z of every fragment,
/// before depth clamping and the depth test (llvmpipe adds it in the
/// fragment shader's position interpolation, after evaluating the plane;
/// ferropipe's setup folds it into the depth plane's `a0`, the same value
/// up to the last bit of the sum).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolygonOffset {
    /// The constant part (already scaled by the mrd unless `float_depth`).
    pub units: f32,
    /// Multiplies the triangle's maximum depth slope.
    pub scale: f32,
    /// Bound of the total offset (0: unbounded).
    pub clamp: f32,
    /// Scale `units` per triangle by the ulp of its largest |z|.
    pub float_depth: bool,
}

impl PolygonOffset {
    /// The offset when `flag` is on and it can move depth at all.
    fn enabled(rast: &RasterizerState, flag: bool, fb: &FramebufferState) -> Option<Self> {
        flag.then(|| PolygonOffset::new(rast, fb.zsbuf.as_ref().map(|z| z.desc.format)))
            .filter(|o| o.units != 0.0 || o.scale != 0.0)
    }

    /// The offset for `rast` drawing into a depth buffer of `zs` format.
    pub fn new(rast: &RasterizerState, zs: Option<Format>) -> PolygonOffset {
        let depth = zs
            .map(|f| f.desc())
            .filter(|d| matches!(d.kind, FormatKind::Depth | FormatKind::DepthStencil));
        let float_depth = depth.is_some_and(|d| d.channel_type == ChannelType::Float);
        let bits = depth
            .filter(|d| d.channel_type == ChannelType::Unorm)
            .map(|d| d.channel_bits[d.swizzle[0] as usize & 3] as u32)
            .unwrap_or(24);
        let mrd = 1.0 / ((1u64 << bits) - 1) as f64;
        let (units, float_depth) = if rast.offset_units_unscaled {
            (rast.offset_units, false)
        } else if float_depth {
            (rast.offset_units, true)
        } else {
            ((rast.offset_units as f64 * mrd * 2.0) as f32, false)
        };
        PolygonOffset {
            units,
            scale: rast.offset_scale,
            clamp: rast.offset_clamp,
            float_depth,
        }
    }

    /// The depth offset of a triangle with depth gradients `dzdx`, `dzdy`
    /// and vertex depths `z`.
    pub(crate) fn zoffset(&self, dzdx: f32, dzdy: f32, z: [f32; 3]) -> f32 {
        let slope = dzdx.abs().max(dzdy.abs()) * self.scale;
        let bias = if self.float_depth {
            let maxz = z[0].abs().max(z[1].abs()).max(z[2].abs());
            // 2^(e - 23): the exponent field moved down by 23, as bits.
            let e = (maxz.to_bits() & (0xff << 23)) as i32 - (23 << 23);
            self.units * f32::from_bits(e.max(0) as u32)
        } else {
            self.units
        };
        let z = bias + slope;
        if self.clamp > 0.0 {
            z.min(self.clamp)
        } else if self.clamp < 0.0 {
            z.max(self.clamp)
        } else {
            z
        }
    }
}

/// The pixels whose sample lies inside the viewport rectangle, with the
/// fill rule's tie-breaking: a sample exactly on the left (top) edge is
/// inside, on the right (bottom) edge outside, or top/bottom swapped under
/// `bottom_edge_rule`.  This is the coverage a triangle clipped to the
/// view volume's x/y planes would have at those edges.
/// The viewport transform setup sees: `half_pixel_center` off (pixel
/// centres at integer coordinates, D3D9) is the same picture as centres at
/// +0.5 with every window position moved by +0.5 (rasterizer.rst; the
/// llvmpipe reference tool renders it exactly so).  Shifting the geometry
/// rather than the sample grid keeps every rule that measures from pixel
/// centres — the fill rule, the lines' diamond-exit test, point and
/// sprite placement — consistent with the shifted centres.
/// The standard 4x sample positions (D3D / llvmpipe's `lp_sample_pos_4x`:
/// (0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875) in the
/// pixel), as offsets from the pixel centre in 1/256 pixel: exact in the
/// 8-bit fixed point.
pub(crate) const STANDARD_4X: [(i64, i64); 4] = [(-32, -96), (96, -32), (-96, 32), (32, 96)];

/// Samples per pixel of a framebuffer's colour buffers.
pub(crate) fn fb_samples(fb: &FramebufferState) -> u32 {
    fb.cbufs
        .iter()
        .flatten()
        .map(|s| s.resource.templ.samples())
        .max()
        .unwrap_or(1)
        .max(fb.samples.max(1))
}

pub(crate) fn window_viewport(vp: &ViewportState, half_pixel_center: bool) -> ViewportState {
    let mut vp = *vp;
    if !half_pixel_center {
        vp.translate[0] += 0.5;
        vp.translate[1] += 0.5;
    }
    vp
}

pub(crate) fn viewport_pixels(
    vp: &ViewportState,
    pixel_offset: f32,
    bottom_edge_rule: bool,
) -> Rect {
    let lim = 32768.0f32;
    let span = |t: f32, s: f32| {
        let (a, b) = (t - s.abs(), t + s.abs());
        let (a, b) = (a - pixel_offset, b - pixel_offset);
        (a.clamp(-lim, lim), b.clamp(-lim, lim))
    };
    let (x0, x1) = span(vp.translate[0], vp.scale[0]);
    let (y0, y1) = span(vp.translate[1], vp.scale[1]);
    let (ry0, ry1) = if bottom_edge_rule {
        (y0.floor() as i32 + 1, y1.floor() as i32 + 1)
    } else {
        (y0.ceil() as i32, y1.ceil() as i32)
    };
    Rect {
        x0: x0.ceil() as i32,
        x1: x1.ceil() as i32,
        y0: ry0,
        y1: ry1,
    }
}

/// Whether `format` is one the merge stage can write (used by the façade's
/// draw validation to reject the rest with a typed error).
pub fn render_target_supported(format: Format) -> bool {
    crate::merge::ColorFormat::classify(format).is_some()
}

/// Whether `format` is a depth/stencil format the merge stage handles.
pub fn depth_target_supported(format: Format) -> bool {
    crate::merge::DepthFormat::classify(format).is_some()
}

#[cfg(test)]
mod offset_tests {
    use super::*;

    fn rast(units: f32, unscaled: bool) -> RasterizerState {
        RasterizerState {
            offset_tri: true,
            offset_units: units,
            offset_units_unscaled: unscaled,
            ..Default::default()
        }
    }

    #[test]
    fn units_follow_the_depth_format() {
        let bias = |f: Option<Format>| {
            PolygonOffset::new(&rast(1.0, false), f).zoffset(0.0, 0.0, [0.5; 3])
        };
        assert_eq!(bias(Some(Format::Z16_UNORM)), (2.0f64 / 65535.0) as f32);
        assert_eq!(
            bias(Some(Format::Z24_UNORM_S8_UINT)),
            (2.0f64 / 16777215.0) as f32
        );
        assert_eq!(
            bias(Some(Format::X8Z24_UNORM)),
            (2.0f64 / 16777215.0) as f32
        );
        // No depth buffer, or stencil only: Mesa assumes 24 bits.
        assert_eq!(bias(None), (2.0f64 / 16777215.0) as f32);
        assert_eq!(bias(Some(Format::S8_UINT)), (2.0f64 / 16777215.0) as f32);
        // Float: one ulp of the largest |z| (0.5 → 2^-24), no factor 2.
        assert_eq!(bias(Some(Format::Z32_FLOAT)), 1.0 / (1u32 << 24) as f32);
        let f = PolygonOffset::new(&rast(1.0, false), Some(Format::Z32_FLOAT));
        // |z| = 4 has exponent 2: 2^(2 - 23).
        assert_eq!(
            f.zoffset(0.0, 0.0, [0.1, -4.0, 0.2]),
            4.0 / (1u32 << 23) as f32
        );
        // z = 0 (exponent field below 23): the bias saturates at 0.
        assert_eq!(f.zoffset(0.0, 0.0, [0.0; 3]), 0.0);
        // Unscaled: the units themselves, whatever the format.
        let u = PolygonOffset::new(&rast(0.5, true), Some(Format::Z32_FLOAT));
        assert_eq!(u.zoffset(0.0, 0.0, [0.5; 3]), 0.5);
        let u = PolygonOffset::new(&rast(0.5, true), Some(Format::Z16_UNORM));
        assert_eq!(u.zoffset(0.0, 0.0, [0.5; 3]), 0.5);
    }

    #[test]
    fn slope_and_clamp() {
        let mut r = rast(0.0, true);
        r.offset_scale = 2.0;
        let o = PolygonOffset::new(&r, None);
        assert_eq!(o.zoffset(-0.25, 0.125, [0.0; 3]), 0.5);
        r.offset_clamp = 0.1;
        assert_eq!(
            PolygonOffset::new(&r, None).zoffset(-0.25, 0.125, [0.0; 3]),
            0.1
        );
        r.offset_scale = -2.0;
        r.offset_clamp = -0.1;
        assert_eq!(
            PolygonOffset::new(&r, None).zoffset(-0.25, 0.125, [0.0; 3]),
            -0.1
        );
    }
}
