//! Constant state objects and non-CSO state, mirroring `p_state.h`.
//!
//! Field names are the C members' names.  `Default` is the zero-initialised C
//! struct, except where the scene format (FORMAT.md) documents a different
//! default; those fields say so.  CSOs are immutable once created: the context
//! stores them as `Arc`s inside ECS components, and recorded draws keep the
//! `Arc`, so deleting a CSO never disturbs a draw still in flight.

use crate::enums::*;
use crate::format::Format;

/// Maximum number of colour buffers (`PIPE_MAX_COLOR_BUFS`).
pub const MAX_COLOR_BUFS: usize = 8;
/// Maximum number of viewports/scissors (`PIPE_MAX_VIEWPORTS`).
pub const MAX_VIEWPORTS: usize = 16;
/// Maximum number of user clip planes (`PIPE_MAX_CLIP_PLANES`).
pub const MAX_CLIP_PLANES: usize = 8;
/// Maximum number of vertex buffers (`PIPE_MAX_ATTRIBS` slots).
pub const MAX_VERTEX_BUFFERS: usize = 32;
/// Maximum number of vertex elements / attributes (`PIPE_MAX_ATTRIBS`).
pub const MAX_ATTRIBS: usize = 32;
/// Maximum number of constant buffers per stage (`PIPE_MAX_CONSTANT_BUFFERS`).
pub const MAX_CONSTANT_BUFFERS: usize = 16;
/// Maximum sampler views per stage (`PIPE_MAX_SHADER_SAMPLER_VIEWS`).
pub const MAX_SAMPLER_VIEWS: usize = 128;
/// Maximum samplers per stage (`PIPE_MAX_SAMPLERS`).
pub const MAX_SAMPLERS: usize = 32;
/// Maximum stream-output buffers (`PIPE_MAX_SO_BUFFERS`).
pub const MAX_SO_BUFFERS: usize = 4;

/// `struct pipe_rt_blend_state`: blending for one colour buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RtBlendState {
    /// Blend this buffer; when false the shader's colour is written as is (logic op and colour mask still apply).
    pub blend_enable: bool,
    /// How the weighted source and destination RGB combine (`PIPE_BLEND_ADD`, ...).
    pub rgb_func: BlendFunc,
    /// The weight of the shader's RGB.
    pub rgb_src_factor: BlendFactor,
    /// The weight of the render target's RGB.
    pub rgb_dst_factor: BlendFactor,
    /// How the weighted source and destination alpha combine.
    pub alpha_func: BlendFunc,
    /// The weight of the shader's alpha.
    pub alpha_src_factor: BlendFactor,
    /// The weight of the render target's alpha.
    pub alpha_dst_factor: BlendFactor,
    /// `PIPE_MASK_R/G/B/A` bits: R=1, G=2, B=4, A=8.
    pub colormask: u8,
}

/// `struct pipe_blend_state`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlendState {
    /// Use `rt[i]` for colour buffer `i`; when false `rt[0]` applies to all eight.
    pub independent_blend_enable: bool,
    /// Replace blending by the bitwise `logicop_func` of the encoded source
    /// and destination bits, on every colour buffer (as llvmpipe does on
    /// packed values).
    pub logicop_enable: bool,
    /// The logic operation (`PIPE_LOGICOP_*`) when `logicop_enable`.
    pub logicop_func: LogicOp,
    /// Dither before the store.  Not dithering is a conforming dither (GL 4.6
    /// §17.3.10) and llvmpipe's, so the stores round without one (docs/state-audit.md).
    pub dither: bool,
    /// Derive the sample mask from colour 0's alpha (sample s kept where alpha > s/4 at 4x MSAA).
    pub alpha_to_coverage: bool,
    /// Dither the alpha-to-coverage mask across pixels; left to the
    /// implementation, and like llvmpipe ferropipe does not (docs/state-audit.md).
    pub alpha_to_coverage_dither: bool,
    /// With multisample rasterization, replace every colour output's alpha
    /// by 1 after alpha-to-coverage, before blending.
    pub alpha_to_one: bool,
    /// Number of render targets the state describes (`max_rt + 1`).
    pub rt: [RtBlendState; MAX_COLOR_BUFS],
}

impl BlendState {
    /// The blend state in effect for colour buffer `i`
    /// (`rt[0]` for every buffer unless `independent_blend_enable`).
    pub fn rt_state(&self, i: usize) -> &RtBlendState {
        if self.independent_blend_enable {
            &self.rt[i]
        } else {
            &self.rt[0]
        }
    }
}

/// `struct pipe_stencil_state`: one face's stencil test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StencilState {
    /// Run this face's stencil test; when false the test passes and stencil is not written.
    pub enabled: bool,
    /// Comparison of `(ref & valuemask)` against `(stencil & valuemask)`.
    pub func: Func,
    /// Applied to the stencil value when the stencil test fails.
    pub fail_op: StencilOp,
    /// Applied when both the stencil and the depth test pass.
    pub zpass_op: StencilOp,
    /// Applied when the stencil test passes and the depth test fails.
    pub zfail_op: StencilOp,
    /// Mask ANDed into both the reference and the stored value before `func`.
    pub valuemask: u8,
    /// Bits of the stencil value the operations may change.
    pub writemask: u8,
}

/// `struct pipe_depth_stencil_alpha_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthStencilAlphaState {
    /// Run the depth test; when false it passes and depth is not written.
    pub depth_enabled: bool,
    /// Write the fragment's depth when it passes.
    pub depth_writemask: bool,
    /// Comparison of the fragment's depth against the stored one.
    pub depth_func: Func,
    /// Kill fragments whose *stored* depth lies outside `[depth_bounds_min, depth_bounds_max]`.
    pub depth_bounds_test: bool,
    /// Lower bound of the depth bounds test.
    pub depth_bounds_min: f32,
    /// Upper bound of the depth bounds test.
    pub depth_bounds_max: f32,
    /// `[front, back]`; back is used only when `stencil[1].enabled`.
    pub stencil: [StencilState; 2],
    /// Run the legacy alpha test on colour 0's alpha (before depth and stencil).
    pub alpha_enabled: bool,
    /// Comparison of colour 0's alpha against `alpha_ref_value`.
    pub alpha_func: Func,
    /// Reference of the alpha test, in `[0, 1]`.
    pub alpha_ref_value: f32,
}

/// `struct pipe_rasterizer_state`: every member named in rasterizer.rst.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterizerState {
    /// Flat shading: colour inputs take the provoking vertex's value.
    pub flatshade: bool,
    /// The provoking vertex is the first of a primitive (GL's last-vertex convention otherwise).
    pub flatshade_first: bool,
    /// Back faces read the back colour outputs (`BCOLOR`) instead of the front ones.
    pub light_twoside: bool,
    /// Clamp vertex shader colour outputs to `[0, 1]`.
    pub clamp_vertex_color: bool,
    /// Clamp fragment shader colour outputs to `[0, 1]` before blending.
    pub clamp_fragment_color: bool,
    /// Counter-clockwise triangles (in window space, y down) are front facing.
    pub front_ccw: bool,
    /// `cull_face` in p_state.h (`cull_mode` in rasterizer.rst).
    pub cull_face: Face,
    /// How front-facing triangles are drawn: filled, as lines or as points.
    pub fill_front: PolygonMode,
    /// How back-facing triangles are drawn.
    pub fill_back: PolygonMode,
    /// Apply the 32x32 polygon stipple (`set_polygon_stipple`) to triangles.
    pub poly_stipple_enable: bool,
    /// Antialiased polygon edges (coverage into alpha; see ARCHITECTURE.md "Smooth primitives").
    pub poly_smooth: bool,
    /// Apply polygon offset to triangles drawn as points.
    pub offset_point: bool,
    /// Apply polygon offset to triangles drawn as lines.
    pub offset_line: bool,
    /// Apply polygon offset to filled triangles.
    pub offset_tri: bool,
    /// Constant part of the depth offset, in minimum resolvable depth units.
    pub offset_units: f32,
    /// `offset_units` is an absolute depth, not a multiple of the format's resolvable unit.
    pub offset_units_unscaled: bool,
    /// Slope part of the depth offset: multiplies the triangle's max depth slope.
    pub offset_scale: f32,
    /// Bound of the total offset (0: unbounded).
    pub offset_clamp: f32,
    /// Default 1 (FORMAT.md).
    pub line_width: f32,
    /// Antialiased lines (coverage into alpha).
    pub line_smooth: bool,
    /// Apply `line_stipple_pattern` along lines.
    pub line_stipple_enable: bool,
    /// Default 0xFFFF (FORMAT.md).
    pub line_stipple_pattern: u16,
    /// Each pattern bit covers `factor + 1` pixels.
    pub line_stipple_factor: u8,
    /// Draw the last pixel of a line (the diamond-exit rule omits it otherwise).
    pub line_last_pixel: bool,
    /// Must equal `multisample || line_smooth` when taken from GL (FORMAT.md).
    pub line_rectangular: bool,
    /// Bit i: generic input i of a point sprite is replaced by its point coordinate.
    pub sprite_coord_enable: u32,
    /// Origin of the point coordinate (upper or lower left).
    pub sprite_coord_mode: SpriteCoordMode,
    /// Rasterize points as quads (sprites) rather than with the legacy point rule.
    pub point_quad_rasterization: bool,
    /// `point_tri_clip` (`point_line_tri_clip` in p_state.h).
    pub point_tri_clip: bool,
    /// Antialiased (round) points.
    pub point_smooth: bool,
    /// Point size comes from the vertex shader's `PSIZE` output instead of `point_size`.
    pub point_size_per_vertex: bool,
    /// Default 1 (FORMAT.md).
    pub point_size: f32,
    /// Clip fragments to the scissor rectangle of the viewport index.
    pub scissor: bool,
    /// Rasterize per sample when the framebuffer is multisampled (1 sample otherwise).
    pub multisample: bool,
    /// Default true (FORMAT.md).
    pub half_pixel_center: bool,
    /// Bottom-left fill convention (pixels on bottom edges are owned); top-left otherwise.
    pub bottom_edge_rule: bool,
    /// Discard every primitive after stream output: nothing is rasterized.
    pub rasterizer_discard: bool,
    /// Clip-space depth is `[0, w]` (D3D/Vulkan) instead of `[-w, w]` (GL).
    pub clip_halfz: bool,
    /// Default true (FORMAT.md).
    pub depth_clip_near: bool,
    /// Default true (FORMAT.md).
    pub depth_clip_far: bool,
    /// Clamp fragment depth to the viewport's depth range before the depth
    /// test (clipping against near and far is `depth_clip_near` / `_far`).
    pub depth_clamp: bool,
    /// Bit i enables user clip plane i (`set_clip_state`) or clip distance i.
    pub clip_plane_enable: u8,
    /// Conservative rasterization mode (off, post- or pre-snap).
    pub conservative_raster_mode: ConservativeRasterMode,
    /// Extra dilation of conservative primitives, in pixels.
    pub conservative_raster_dilate: f32,
    /// Extra subpixel bits in x for conservative rasterization
    /// (`PIPE_CAP_MAX_SUBPIXEL_PRECISION_BIAS` bounds it).
    pub subpixel_precision_x: u8,
    /// Extra subpixel bits in y, as `subpixel_precision_x`.
    pub subpixel_precision_y: u8,
}

impl Default for RasterizerState {
    fn default() -> Self {
        RasterizerState {
            flatshade: false,
            flatshade_first: false,
            light_twoside: false,
            clamp_vertex_color: false,
            clamp_fragment_color: false,
            front_ccw: false,
            cull_face: Face::None,
            fill_front: PolygonMode::Fill,
            fill_back: PolygonMode::Fill,
            poly_stipple_enable: false,
            poly_smooth: false,
            offset_point: false,
            offset_line: false,
            offset_tri: false,
            offset_units: 0.0,
            offset_units_unscaled: false,
            offset_scale: 0.0,
            offset_clamp: 0.0,
            line_width: 1.0,
            line_smooth: false,
            line_stipple_enable: false,
            line_stipple_pattern: 0xffff,
            line_stipple_factor: 0,
            line_last_pixel: false,
            line_rectangular: false,
            sprite_coord_enable: 0,
            sprite_coord_mode: SpriteCoordMode::UpperLeft,
            point_quad_rasterization: false,
            point_tri_clip: false,
            point_smooth: false,
            point_size_per_vertex: false,
            point_size: 1.0,
            scissor: false,
            multisample: false,
            half_pixel_center: true,
            bottom_edge_rule: false,
            rasterizer_discard: false,
            clip_halfz: false,
            depth_clip_near: true,
            depth_clip_far: true,
            depth_clamp: false,
            clip_plane_enable: 0,
            conservative_raster_mode: ConservativeRasterMode::Off,
            conservative_raster_dilate: 0.0,
            subpixel_precision_x: 0,
            subpixel_precision_y: 0,
        }
    }
}

/// `struct pipe_sampler_state`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerState {
    /// Wrap mode for the s (x) coordinate.
    pub wrap_s: TexWrap,
    /// Wrap mode for the t (y) coordinate.
    pub wrap_t: TexWrap,
    /// Wrap mode for the r (z, cube face) coordinate.
    pub wrap_r: TexWrap,
    /// Texel filter when minifying (lod > 0).
    pub min_img_filter: TexFilter,
    /// Filter between mip levels (none, nearest or linear).
    pub min_mip_filter: TexMipFilter,
    /// Texel filter when magnifying (lod <= 0).
    pub mag_img_filter: TexFilter,
    /// Shadow comparison: compare the coordinate's reference against the texel.
    pub compare_mode: TexCompareMode,
    /// The comparison of the shadow test.
    pub compare_func: Func,
    /// Default true (FORMAT.md).
    pub normalized_coords: bool,
    /// Maximum anisotropy (0 or 1: isotropic).
    pub max_anisotropy: u32,
    /// Cube map filtering reads across face edges.
    pub seamless_cube_map: bool,
    /// Added to the computed level of detail.
    pub lod_bias: f32,
    /// Lower clamp of the level of detail.
    pub min_lod: f32,
    /// Default 1000 (FORMAT.md).
    pub max_lod: f32,
    /// Colour of `CLAMP_TO_BORDER` texels, as floats (RGBA).
    pub border_color: [f32; 4],
}

impl Default for SamplerState {
    fn default() -> Self {
        SamplerState {
            wrap_s: TexWrap::Repeat,
            wrap_t: TexWrap::Repeat,
            wrap_r: TexWrap::Repeat,
            min_img_filter: TexFilter::Nearest,
            min_mip_filter: TexMipFilter::Nearest,
            mag_img_filter: TexFilter::Nearest,
            compare_mode: TexCompareMode::None,
            compare_func: Func::Never,
            normalized_coords: true,
            max_anisotropy: 0,
            seamless_cube_map: false,
            lod_bias: 0.0,
            min_lod: 0.0,
            max_lod: 1000.0,
            border_color: [0.0; 4],
        }
    }
}

/// `struct pipe_vertex_element`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexElement {
    /// Byte offset of the attribute inside one vertex of its buffer.
    pub src_offset: u32,
    /// The vertex buffer slot the attribute reads.
    pub vertex_buffer_index: u32,
    /// Format of the attribute in memory (converted to floats or integers on fetch).
    pub src_format: Format,
    /// 0: per vertex; d > 0: advance every d instances.
    pub instance_divisor: u32,
}

/// `struct pipe_viewport_state`: window = ndc * scale + translate.
#[derive(Clone, Copy, Debug, Default)]
pub struct ViewportState {
    /// Half the viewport's width, height and depth range.
    pub scale: [f32; 3],
    /// The viewport's centre in window coordinates, and the depth range's middle.
    pub translate: [f32; 3],
}

/// `==` of every lane, without stopping at the first difference: the
/// derived `PartialEq` branches per float, and the pipeline compares each
/// state block's 16 viewports and 8 clip planes with its predecessor's
/// (many_draws: ~680 instructions of a block's ~900 were those branches).
/// Same result as the derived `==` (NaN unequal, -0 equal to +0).
#[inline]
fn all_lanes_eq<const N: usize>(a: &[f32; N], b: &[f32; N]) -> bool {
    a.iter().zip(b).fold(true, |eq, (x, y)| eq & (x == y))
}

impl PartialEq for ViewportState {
    #[inline]
    fn eq(&self, o: &Self) -> bool {
        // Eight lanes (two padding zeros): two 4-wide compares.
        let [s0, s1, s2] = self.scale;
        let [t0, t1, t2] = self.translate;
        let [u0, u1, u2] = o.scale;
        let [v0, v1, v2] = o.translate;
        all_lanes_eq(
            &[s0, s1, s2, t0, t1, t2, 0.0, 0.0],
            &[u0, u1, u2, v0, v1, v2, 0.0, 0.0],
        )
    }
}

/// `struct pipe_scissor_state`: min inclusive, max exclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScissorState {
    /// Left edge, inclusive.
    pub minx: u32,
    /// Top edge, inclusive.
    pub miny: u32,
    /// Right edge, exclusive.
    pub maxx: u32,
    /// Bottom edge, exclusive.
    pub maxy: u32,
}

/// `struct pipe_clip_state`: user clip planes in clip space.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClipState {
    /// Plane i is `(a, b, c, d)`: a vertex is inside where `a*x + b*y + c*z + d*w >= 0`.
    pub ucp: [[f32; 4]; MAX_CLIP_PLANES],
}

impl PartialEq for ClipState {
    fn eq(&self, o: &Self) -> bool {
        let planes = self.ucp.iter().zip(&o.ucp);
        planes.fold(true, |eq, (a, b)| eq & all_lanes_eq(a, b))
    }
}

/// `struct pipe_poly_stipple`: 32 rows; bit 31 of row 0 is the top-left pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyStipple {
    /// Row r's bit (31 - x % 32) keeps the pixel at column x of rows congruent to r mod 32.
    pub stipple: [u32; 32],
}

impl Default for PolyStipple {
    fn default() -> Self {
        PolyStipple { stipple: [!0; 32] }
    }
}

/// `struct pipe_blend_color`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlendColor {
    /// The constant colour of the `CONST_COLOR` / `CONST_ALPHA` blend factors (RGBA).
    pub color: [f32; 4],
}

/// `struct pipe_stencil_ref`: `[front, back]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StencilRef {
    /// Reference values of the front and back stencil tests.
    pub ref_value: [u8; 2],
}

/// `struct pipe_box`: a region of a resource.
///
/// For 1D/2D arrays `z`/`depth` are layers; for cubes faces; for cube arrays
/// `face = z % 6, layer = z / 6` (context.rst "Transfers").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PipeBox {
    /// Left column (texels; bytes for buffers).
    pub x: i32,
    /// Top row.
    pub y: i32,
    /// First slice, layer or face.
    pub z: i32,
    /// Columns.
    pub width: i32,
    /// Rows.
    pub height: i32,
    /// Slices, layers or faces.
    pub depth: i32,
}

impl PipeBox {
    /// A 1D box (buffers): `height = depth = 1`.
    pub fn new_1d(x: i32, width: i32) -> Self {
        PipeBox {
            x,
            y: 0,
            z: 0,
            width,
            height: 1,
            depth: 1,
        }
    }

    /// A 2D box at layer/slice `z`.
    pub fn new_2d(x: i32, y: i32, width: i32, height: i32) -> Self {
        PipeBox {
            x,
            y,
            z: 0,
            width,
            height,
            depth: 1,
        }
    }

    /// A 3D box.
    pub fn new_3d(x: i32, y: i32, z: i32, width: i32, height: i32, depth: i32) -> Self {
        PipeBox {
            x,
            y,
            z,
            width,
            height,
            depth,
        }
    }
}

/// One entry of `struct pipe_stream_output_info`: which shader output goes
/// where in which stream-output buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamOutput {
    /// Index of the shader output slot (in `ShaderInfo::outputs` order).
    pub register_index: u32,
    /// First component of the output written (0 = x).
    pub start_component: u32,
    /// Components written, 1 to 4.
    pub num_components: u32,
    /// The stream-output buffer the components go to.
    pub output_buffer: u32,
    /// Offset in dwords inside the vertex's record.
    pub dst_offset: u32,
    /// Vertex stream (0: the only one without geometry shaders).
    pub stream: u32,
}

/// `struct pipe_stream_output_info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOutputInfo {
    /// Record stride per buffer, in dwords.
    pub stride: [u32; MAX_SO_BUFFERS],
    /// What each captured output writes, in record order.
    pub output: Vec<StreamOutput>,
}

/// `union pipe_color_union`: a clear colour, read as floats, unsigned or
/// signed integers according to the format it is applied to (`ui` for
/// `UINT` formats, `i` for `SINT`, `f` otherwise), exactly as Gallium's
/// union is.  The constructors store each view's bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ColorUnion(pub [u32; 4]);

impl ColorUnion {
    /// From floats (`union.f`).
    pub fn float(c: [f32; 4]) -> Self {
        ColorUnion(c.map(f32::to_bits))
    }

    /// From unsigned integers (`union.ui`).
    pub fn uint(c: [u32; 4]) -> Self {
        ColorUnion(c)
    }

    /// From signed integers (`union.i`).
    pub fn sint(c: [i32; 4]) -> Self {
        ColorUnion(c.map(|v| v as u32))
    }

    /// The float view.
    pub fn f(&self) -> [f32; 4] {
        self.0.map(f32::from_bits)
    }

    /// The unsigned view.
    pub fn ui(&self) -> [u32; 4] {
        self.0
    }

    /// The signed view.
    pub fn i(&self) -> [i32; 4] {
        self.0.map(|v| v as i32)
    }
}
