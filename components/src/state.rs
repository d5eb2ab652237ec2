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
    pub blend_enable: bool,
    pub rgb_func: BlendFunc,
    pub rgb_src_factor: BlendFactor,
    pub rgb_dst_factor: BlendFactor,
    pub alpha_func: BlendFunc,
    pub alpha_src_factor: BlendFactor,
    pub alpha_dst_factor: BlendFactor,
    /// `PIPE_MASK_R/G/B/A` bits: R=1, G=2, B=4, A=8.
    pub colormask: u8,
}

/// `struct pipe_blend_state`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlendState {
    pub independent_blend_enable: bool,
    pub logicop_enable: bool,
    pub logicop_func: LogicOp,
    pub dither: bool,
    pub alpha_to_coverage: bool,
    pub alpha_to_coverage_dither: bool,
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
    pub enabled: bool,
    pub func: Func,
    pub fail_op: StencilOp,
    pub zpass_op: StencilOp,
    pub zfail_op: StencilOp,
    pub valuemask: u8,
    pub writemask: u8,
}

/// `struct pipe_depth_stencil_alpha_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthStencilAlphaState {
    pub depth_enabled: bool,
    pub depth_writemask: bool,
    pub depth_func: Func,
    pub depth_bounds_test: bool,
    pub depth_bounds_min: f32,
    pub depth_bounds_max: f32,
    /// `[front, back]`; back is used only when `stencil[1].enabled`.
    pub stencil: [StencilState; 2],
    pub alpha_enabled: bool,
    pub alpha_func: Func,
    pub alpha_ref_value: f32,
}

/// `struct pipe_rasterizer_state`: every member named in rasterizer.rst.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterizerState {
    pub flatshade: bool,
    pub flatshade_first: bool,
    pub light_twoside: bool,
    pub clamp_vertex_color: bool,
    pub clamp_fragment_color: bool,
    pub front_ccw: bool,
    /// `cull_face` in p_state.h (`cull_mode` in rasterizer.rst).
    pub cull_face: Face,
    pub fill_front: PolygonMode,
    pub fill_back: PolygonMode,
    pub poly_stipple_enable: bool,
    pub poly_smooth: bool,
    pub offset_point: bool,
    pub offset_line: bool,
    pub offset_tri: bool,
    pub offset_units: f32,
    pub offset_units_unscaled: bool,
    pub offset_scale: f32,
    pub offset_clamp: f32,
    /// Default 1 (FORMAT.md).
    pub line_width: f32,
    pub line_smooth: bool,
    pub line_stipple_enable: bool,
    /// Default 0xFFFF (FORMAT.md).
    pub line_stipple_pattern: u16,
    pub line_stipple_factor: u8,
    pub line_last_pixel: bool,
    /// Must equal `multisample || line_smooth` when taken from GL (FORMAT.md).
    pub line_rectangular: bool,
    pub sprite_coord_enable: u32,
    pub sprite_coord_mode: SpriteCoordMode,
    pub point_quad_rasterization: bool,
    /// `point_tri_clip` (`point_line_tri_clip` in p_state.h).
    pub point_tri_clip: bool,
    pub point_smooth: bool,
    pub point_size_per_vertex: bool,
    /// Default 1 (FORMAT.md).
    pub point_size: f32,
    pub scissor: bool,
    pub multisample: bool,
    /// Default true (FORMAT.md).
    pub half_pixel_center: bool,
    pub bottom_edge_rule: bool,
    pub rasterizer_discard: bool,
    pub clip_halfz: bool,
    /// Default true (FORMAT.md).
    pub depth_clip_near: bool,
    /// Default true (FORMAT.md).
    pub depth_clip_far: bool,
    pub depth_clamp: bool,
    pub clip_plane_enable: u8,
    pub conservative_raster_mode: ConservativeRasterMode,
    pub conservative_raster_dilate: f32,
    pub subpixel_precision_x: u8,
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
    pub wrap_s: TexWrap,
    pub wrap_t: TexWrap,
    pub wrap_r: TexWrap,
    pub min_img_filter: TexFilter,
    pub min_mip_filter: TexMipFilter,
    pub mag_img_filter: TexFilter,
    pub compare_mode: TexCompareMode,
    pub compare_func: Func,
    /// Default true (FORMAT.md).
    pub normalized_coords: bool,
    pub max_anisotropy: u32,
    pub seamless_cube_map: bool,
    pub lod_bias: f32,
    pub min_lod: f32,
    /// Default 1000 (FORMAT.md).
    pub max_lod: f32,
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
    pub src_offset: u32,
    pub vertex_buffer_index: u32,
    pub src_format: Format,
    /// 0: per vertex; d > 0: advance every d instances.
    pub instance_divisor: u32,
}

/// `struct pipe_viewport_state`: window = ndc * scale + translate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewportState {
    pub scale: [f32; 3],
    pub translate: [f32; 3],
}

/// `struct pipe_scissor_state`: min inclusive, max exclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScissorState {
    pub minx: u32,
    pub miny: u32,
    pub maxx: u32,
    pub maxy: u32,
}

/// `struct pipe_clip_state`: user clip planes in clip space.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClipState {
    pub ucp: [[f32; 4]; MAX_CLIP_PLANES],
}

/// `struct pipe_poly_stipple`: 32 rows; bit 31 of row 0 is the top-left pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyStipple {
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
    pub color: [f32; 4],
}

/// `struct pipe_stencil_ref`: `[front, back]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StencilRef {
    pub ref_value: [u8; 2],
}

/// `struct pipe_box`: a region of a resource.
///
/// For 1D/2D arrays `z`/`depth` are layers; for cubes faces; for cube arrays
/// `face = z % 6, layer = z / 6` (context.rst "Transfers").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PipeBox {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub width: i32,
    pub height: i32,
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
    pub start_component: u32,
    pub num_components: u32,
    pub output_buffer: u32,
    /// Offset in dwords inside the vertex's record.
    pub dst_offset: u32,
    pub stream: u32,
}

/// `struct pipe_stream_output_info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOutputInfo {
    /// Record stride per buffer, in dwords.
    pub stride: [u32; MAX_SO_BUFFERS],
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
