//! The Gallium enums (`p_defines.h`) as Rust enums and bitflags.
//!
//! Every enum knows its Gallium spelling (`Func::Less.gallium_name() ==
//! "PIPE_FUNC_LESS"`) so that the scene format, error messages and a Mesa
//! engineer all use the same words.  The `Default` of each enum is the value a
//! zero-initialised C struct would hold (the scene format's rule for omitted
//! fields).

/// Declares a Gallium enum with its `PIPE_*` spellings.
///
/// One list drives the Rust enum, `ALL`, `gallium_name` and
/// `from_gallium_name`, so they can never drift apart.
#[macro_export]
macro_rules! gallium_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $gname:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = concat!("`", $gname, "`.")]
                $variant
            ),*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The Gallium spelling, e.g. `PIPE_FUNC_LESS`.
            pub fn gallium_name(self) -> &'static str {
                match self { $($name::$variant => $gname),* }
            }

            /// Parses the Gallium spelling.
            pub fn from_gallium_name(name: &str) -> Option<Self> {
                match name { $($gname => Some($name::$variant),)* _ => None }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.gallium_name())
            }
        }
    };
}

gallium_enum! {
    /// `PIPE_FUNC_*`: comparison functions for depth, stencil, alpha and shadow tests.
    #[derive(Default)]
    pub enum Func {
        #[default]
        Never = "PIPE_FUNC_NEVER",
        Less = "PIPE_FUNC_LESS",
        Equal = "PIPE_FUNC_EQUAL",
        Lequal = "PIPE_FUNC_LEQUAL",
        Greater = "PIPE_FUNC_GREATER",
        Notequal = "PIPE_FUNC_NOTEQUAL",
        Gequal = "PIPE_FUNC_GEQUAL",
        Always = "PIPE_FUNC_ALWAYS",
    }
}

impl Func {
    /// Evaluates `a FUNC b` on scalars.
    #[inline]
    pub fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Func::Never => false,
            Func::Less => a < b,
            Func::Equal => a == b,
            Func::Lequal => a <= b,
            Func::Greater => a > b,
            Func::Notequal => a != b,
            Func::Gequal => a >= b,
            Func::Always => true,
        }
    }
}

gallium_enum! {
    /// `PIPE_PRIM_*` (`enum mesa_prim` in later Mesa): primitive topologies.
    #[derive(Default)]
    pub enum PrimType {
        #[default]
        Points = "PIPE_PRIM_POINTS",
        Lines = "PIPE_PRIM_LINES",
        LineLoop = "PIPE_PRIM_LINE_LOOP",
        LineStrip = "PIPE_PRIM_LINE_STRIP",
        Triangles = "PIPE_PRIM_TRIANGLES",
        TriangleStrip = "PIPE_PRIM_TRIANGLE_STRIP",
        TriangleFan = "PIPE_PRIM_TRIANGLE_FAN",
        Quads = "PIPE_PRIM_QUADS",
        QuadStrip = "PIPE_PRIM_QUAD_STRIP",
        Polygon = "PIPE_PRIM_POLYGON",
        LinesAdjacency = "PIPE_PRIM_LINES_ADJACENCY",
        LineStripAdjacency = "PIPE_PRIM_LINE_STRIP_ADJACENCY",
        TrianglesAdjacency = "PIPE_PRIM_TRIANGLES_ADJACENCY",
        TriangleStripAdjacency = "PIPE_PRIM_TRIANGLE_STRIP_ADJACENCY",
        Patches = "PIPE_PRIM_PATCHES",
    }
}

gallium_enum! {
    /// `PIPE_BLENDFACTOR_*`.
    ///
    /// Gallium numbers these from 1 (ONE) and 0x11 (ZERO); a zero-initialised
    /// struct holds no valid factor.  We default to `Zero`, which is what a
    /// disabled blend unit is equivalent to for the destination factor; the
    /// façade rejects no factor, so omitted source factors also read `Zero`.
    #[derive(Default)]
    pub enum BlendFactor {
        One = "PIPE_BLENDFACTOR_ONE",
        SrcColor = "PIPE_BLENDFACTOR_SRC_COLOR",
        SrcAlpha = "PIPE_BLENDFACTOR_SRC_ALPHA",
        DstAlpha = "PIPE_BLENDFACTOR_DST_ALPHA",
        DstColor = "PIPE_BLENDFACTOR_DST_COLOR",
        SrcAlphaSaturate = "PIPE_BLENDFACTOR_SRC_ALPHA_SATURATE",
        ConstColor = "PIPE_BLENDFACTOR_CONST_COLOR",
        ConstAlpha = "PIPE_BLENDFACTOR_CONST_ALPHA",
        Src1Color = "PIPE_BLENDFACTOR_SRC1_COLOR",
        Src1Alpha = "PIPE_BLENDFACTOR_SRC1_ALPHA",
        #[default]
        Zero = "PIPE_BLENDFACTOR_ZERO",
        InvSrcColor = "PIPE_BLENDFACTOR_INV_SRC_COLOR",
        InvSrcAlpha = "PIPE_BLENDFACTOR_INV_SRC_ALPHA",
        InvDstAlpha = "PIPE_BLENDFACTOR_INV_DST_ALPHA",
        InvDstColor = "PIPE_BLENDFACTOR_INV_DST_COLOR",
        InvConstColor = "PIPE_BLENDFACTOR_INV_CONST_COLOR",
        InvConstAlpha = "PIPE_BLENDFACTOR_INV_CONST_ALPHA",
        InvSrc1Color = "PIPE_BLENDFACTOR_INV_SRC1_COLOR",
        InvSrc1Alpha = "PIPE_BLENDFACTOR_INV_SRC1_ALPHA",
    }
}

impl BlendFactor {
    /// Whether the factor reads the second (dual-source) colour output.
    pub fn is_dual_source(self) -> bool {
        matches!(
            self,
            BlendFactor::Src1Color
                | BlendFactor::Src1Alpha
                | BlendFactor::InvSrc1Color
                | BlendFactor::InvSrc1Alpha
        )
    }
}

gallium_enum! {
    /// `PIPE_BLEND_*`: blend equations.
    #[derive(Default)]
    pub enum BlendFunc {
        #[default]
        Add = "PIPE_BLEND_ADD",
        Subtract = "PIPE_BLEND_SUBTRACT",
        ReverseSubtract = "PIPE_BLEND_REVERSE_SUBTRACT",
        Min = "PIPE_BLEND_MIN",
        Max = "PIPE_BLEND_MAX",
    }
}

gallium_enum! {
    /// `PIPE_LOGICOP_*`, in Gallium's (and GL's) numeric order 0..15.
    #[derive(Default)]
    pub enum LogicOp {
        #[default]
        Clear = "PIPE_LOGICOP_CLEAR",
        Nor = "PIPE_LOGICOP_NOR",
        AndInverted = "PIPE_LOGICOP_AND_INVERTED",
        CopyInverted = "PIPE_LOGICOP_COPY_INVERTED",
        AndReverse = "PIPE_LOGICOP_AND_REVERSE",
        Invert = "PIPE_LOGICOP_INVERT",
        Xor = "PIPE_LOGICOP_XOR",
        Nand = "PIPE_LOGICOP_NAND",
        And = "PIPE_LOGICOP_AND",
        Equiv = "PIPE_LOGICOP_EQUIV",
        Noop = "PIPE_LOGICOP_NOOP",
        OrInverted = "PIPE_LOGICOP_OR_INVERTED",
        Copy = "PIPE_LOGICOP_COPY",
        OrReverse = "PIPE_LOGICOP_OR_REVERSE",
        Or = "PIPE_LOGICOP_OR",
        Set = "PIPE_LOGICOP_SET",
    }
}

impl LogicOp {
    /// Applies the operation to source `s` and destination `d` bits.
    #[inline]
    pub fn apply(self, s: u32, d: u32) -> u32 {
        match self {
            LogicOp::Clear => 0,
            LogicOp::Nor => !(s | d),
            LogicOp::AndInverted => !s & d,
            LogicOp::CopyInverted => !s,
            LogicOp::AndReverse => s & !d,
            LogicOp::Invert => !d,
            LogicOp::Xor => s ^ d,
            LogicOp::Nand => !(s & d),
            LogicOp::And => s & d,
            LogicOp::Equiv => !(s ^ d),
            LogicOp::Noop => d,
            LogicOp::OrInverted => !s | d,
            LogicOp::Copy => s,
            LogicOp::OrReverse => s | !d,
            LogicOp::Or => s | d,
            LogicOp::Set => !0,
        }
    }
}

gallium_enum! {
    /// `PIPE_STENCIL_OP_*`.
    #[derive(Default)]
    pub enum StencilOp {
        #[default]
        Keep = "PIPE_STENCIL_OP_KEEP",
        Zero = "PIPE_STENCIL_OP_ZERO",
        Replace = "PIPE_STENCIL_OP_REPLACE",
        Incr = "PIPE_STENCIL_OP_INCR",
        Decr = "PIPE_STENCIL_OP_DECR",
        IncrWrap = "PIPE_STENCIL_OP_INCR_WRAP",
        DecrWrap = "PIPE_STENCIL_OP_DECR_WRAP",
        Invert = "PIPE_STENCIL_OP_INVERT",
    }
}

gallium_enum! {
    /// `PIPE_FACE_*`: which polygon faces a cull mode removes.
    #[derive(Default)]
    pub enum Face {
        #[default]
        None = "PIPE_FACE_NONE",
        Front = "PIPE_FACE_FRONT",
        Back = "PIPE_FACE_BACK",
        FrontAndBack = "PIPE_FACE_FRONT_AND_BACK",
    }
}

gallium_enum! {
    /// `PIPE_POLYGON_MODE_*`: how front/back polygons are filled.
    #[derive(Default)]
    pub enum PolygonMode {
        #[default]
        Fill = "PIPE_POLYGON_MODE_FILL",
        Line = "PIPE_POLYGON_MODE_LINE",
        Point = "PIPE_POLYGON_MODE_POINT",
        FillRectangle = "PIPE_POLYGON_MODE_FILL_RECTANGLE",
    }
}

gallium_enum! {
    /// `enum pipe_texture_target`.
    #[derive(Default)]
    pub enum TextureTarget {
        #[default]
        Buffer = "PIPE_BUFFER",
        Texture1D = "PIPE_TEXTURE_1D",
        Texture2D = "PIPE_TEXTURE_2D",
        Texture3D = "PIPE_TEXTURE_3D",
        TextureCube = "PIPE_TEXTURE_CUBE",
        TextureRect = "PIPE_TEXTURE_RECT",
        Texture1DArray = "PIPE_TEXTURE_1D_ARRAY",
        Texture2DArray = "PIPE_TEXTURE_2D_ARRAY",
        TextureCubeArray = "PIPE_TEXTURE_CUBE_ARRAY",
    }
}

impl TextureTarget {
    /// Whether `array_size` counts layers (arrays and cubes).
    pub fn is_layered(self) -> bool {
        matches!(
            self,
            TextureTarget::Texture1DArray
                | TextureTarget::Texture2DArray
                | TextureTarget::TextureCube
                | TextureTarget::TextureCubeArray
        )
    }

    /// Whether the target is a cube or cube array.
    pub fn is_cube(self) -> bool {
        matches!(
            self,
            TextureTarget::TextureCube | TextureTarget::TextureCubeArray
        )
    }

    /// Whether the target is 1D (height is always 1).
    pub fn is_1d(self) -> bool {
        matches!(
            self,
            TextureTarget::Texture1D | TextureTarget::Texture1DArray | TextureTarget::Buffer
        )
    }
}

gallium_enum! {
    /// `PIPE_TEX_WRAP_*`.
    #[derive(Default)]
    pub enum TexWrap {
        #[default]
        Repeat = "PIPE_TEX_WRAP_REPEAT",
        Clamp = "PIPE_TEX_WRAP_CLAMP",
        ClampToEdge = "PIPE_TEX_WRAP_CLAMP_TO_EDGE",
        ClampToBorder = "PIPE_TEX_WRAP_CLAMP_TO_BORDER",
        MirrorRepeat = "PIPE_TEX_WRAP_MIRROR_REPEAT",
        MirrorClamp = "PIPE_TEX_WRAP_MIRROR_CLAMP",
        MirrorClampToEdge = "PIPE_TEX_WRAP_MIRROR_CLAMP_TO_EDGE",
        MirrorClampToBorder = "PIPE_TEX_WRAP_MIRROR_CLAMP_TO_BORDER",
    }
}

gallium_enum! {
    /// `PIPE_TEX_FILTER_*`: image filters (also the `blit` filter).
    #[derive(Default)]
    pub enum TexFilter {
        #[default]
        Nearest = "PIPE_TEX_FILTER_NEAREST",
        Linear = "PIPE_TEX_FILTER_LINEAR",
    }
}

gallium_enum! {
    /// `PIPE_TEX_MIPFILTER_*`.
    #[derive(Default)]
    pub enum TexMipFilter {
        #[default]
        Nearest = "PIPE_TEX_MIPFILTER_NEAREST",
        Linear = "PIPE_TEX_MIPFILTER_LINEAR",
        None = "PIPE_TEX_MIPFILTER_NONE",
    }
}

gallium_enum! {
    /// `PIPE_TEX_COMPARE_*`: shadow comparison mode.
    #[derive(Default)]
    pub enum TexCompareMode {
        #[default]
        None = "PIPE_TEX_COMPARE_NONE",
        RToTexture = "PIPE_TEX_COMPARE_R_TO_TEXTURE",
    }
}

gallium_enum! {
    /// `PIPE_SWIZZLE_*`: sampler-view channel selection.
    #[derive(Default)]
    pub enum Swizzle {
        #[default]
        X = "PIPE_SWIZZLE_X",
        Y = "PIPE_SWIZZLE_Y",
        Z = "PIPE_SWIZZLE_Z",
        W = "PIPE_SWIZZLE_W",
        Zero = "PIPE_SWIZZLE_0",
        One = "PIPE_SWIZZLE_1",
        None = "PIPE_SWIZZLE_NONE",
    }
}

gallium_enum! {
    /// `enum pipe_shader_type`.
    #[derive(Default)]
    pub enum ShaderType {
        #[default]
        Vertex = "PIPE_SHADER_VERTEX",
        Fragment = "PIPE_SHADER_FRAGMENT",
        Geometry = "PIPE_SHADER_GEOMETRY",
        TessCtrl = "PIPE_SHADER_TESS_CTRL",
        TessEval = "PIPE_SHADER_TESS_EVAL",
        Compute = "PIPE_SHADER_COMPUTE",
    }
}

gallium_enum! {
    /// `PIPE_QUERY_*`.
    #[derive(Default)]
    pub enum QueryType {
        #[default]
        OcclusionCounter = "PIPE_QUERY_OCCLUSION_COUNTER",
        OcclusionPredicate = "PIPE_QUERY_OCCLUSION_PREDICATE",
        OcclusionPredicateConservative = "PIPE_QUERY_OCCLUSION_PREDICATE_CONSERVATIVE",
        Timestamp = "PIPE_QUERY_TIMESTAMP",
        TimestampDisjoint = "PIPE_QUERY_TIMESTAMP_DISJOINT",
        TimeElapsed = "PIPE_QUERY_TIME_ELAPSED",
        PrimitivesGenerated = "PIPE_QUERY_PRIMITIVES_GENERATED",
        PrimitivesEmitted = "PIPE_QUERY_PRIMITIVES_EMITTED",
        SoStatistics = "PIPE_QUERY_SO_STATISTICS",
        SoOverflowPredicate = "PIPE_QUERY_SO_OVERFLOW_PREDICATE",
        SoOverflowAnyPredicate = "PIPE_QUERY_SO_OVERFLOW_ANY_PREDICATE",
        GpuFinished = "PIPE_QUERY_GPU_FINISHED",
        PipelineStatistics = "PIPE_QUERY_PIPELINE_STATISTICS",
        PipelineStatisticsSingle = "PIPE_QUERY_PIPELINE_STATISTICS_SINGLE",
    }
}

gallium_enum! {
    /// `PIPE_RENDER_COND_*`.
    #[derive(Default)]
    pub enum RenderCondMode {
        #[default]
        Wait = "PIPE_RENDER_COND_WAIT",
        NoWait = "PIPE_RENDER_COND_NO_WAIT",
        ByRegionWait = "PIPE_RENDER_COND_BY_REGION_WAIT",
        ByRegionNoWait = "PIPE_RENDER_COND_BY_REGION_NO_WAIT",
    }
}

gallium_enum! {
    /// `PIPE_SPRITE_COORD_*`.
    #[derive(Default)]
    pub enum SpriteCoordMode {
        #[default]
        UpperLeft = "PIPE_SPRITE_COORD_UPPER_LEFT",
        LowerLeft = "PIPE_SPRITE_COORD_LOWER_LEFT",
    }
}

gallium_enum! {
    /// `PIPE_CONSERVATIVE_RASTER_*`.
    #[derive(Default)]
    pub enum ConservativeRasterMode {
        #[default]
        Off = "PIPE_CONSERVATIVE_RASTER_OFF",
        PostSnap = "PIPE_CONSERVATIVE_RASTER_POST_SNAP",
        PreSnap = "PIPE_CONSERVATIVE_RASTER_PRE_SNAP",
    }
}

gallium_enum! {
    /// `PIPE_USAGE_*`: allocation hints (all usages allow CPU access).
    #[derive(Default)]
    pub enum Usage {
        #[default]
        Default = "PIPE_USAGE_DEFAULT",
        Immutable = "PIPE_USAGE_IMMUTABLE",
        Dynamic = "PIPE_USAGE_DYNAMIC",
        Stream = "PIPE_USAGE_STREAM",
        Staging = "PIPE_USAGE_STAGING",
    }
}

/// Declares Gallium bit flags with their `PIPE_*` spellings.
#[macro_export]
macro_rules! gallium_flags {
    (
        $(#[$meta:meta])*
        pub struct $name:ident: $ty:ty {
            $( $(#[$vmeta:meta])* const $flag:ident = $value:expr => $gname:literal; )*
        }
    ) => {
        bitflags::bitflags! {
            $(#[$meta])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
            pub struct $name: $ty {
                $(
                    $(#[$vmeta])*
                    #[doc = concat!("`", $gname, "`.")]
                    const $flag = $value;
                )*
            }
        }

        impl $name {
            /// Each single flag with its Gallium spelling.
            pub const NAMED: &'static [(&'static str, $name)] = &[$(($gname, $name::$flag)),*];

            /// Parses one Gallium flag name (`PIPE_BIND_RENDER_TARGET`).
            pub fn from_gallium_name(name: &str) -> Option<Self> {
                Self::NAMED.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
            }
        }
    };
}

gallium_flags! {
    /// `PIPE_BIND_*`: how a resource may be used (cumulative).
    pub struct BindFlags: u32 {
        const DEPTH_STENCIL = 1 << 0 => "PIPE_BIND_DEPTH_STENCIL";
        const RENDER_TARGET = 1 << 1 => "PIPE_BIND_RENDER_TARGET";
        const BLENDABLE = 1 << 2 => "PIPE_BIND_BLENDABLE";
        const SAMPLER_VIEW = 1 << 3 => "PIPE_BIND_SAMPLER_VIEW";
        const VERTEX_BUFFER = 1 << 4 => "PIPE_BIND_VERTEX_BUFFER";
        const INDEX_BUFFER = 1 << 5 => "PIPE_BIND_INDEX_BUFFER";
        const CONSTANT_BUFFER = 1 << 6 => "PIPE_BIND_CONSTANT_BUFFER";
        const DISPLAY_TARGET = 1 << 7 => "PIPE_BIND_DISPLAY_TARGET";
        const VERTEX_STATE = 1 << 8 => "PIPE_BIND_VERTEX_STATE";
        const STREAM_OUTPUT = 1 << 10 => "PIPE_BIND_STREAM_OUTPUT";
        const CURSOR = 1 << 11 => "PIPE_BIND_CURSOR";
        const CUSTOM = 1 << 12 => "PIPE_BIND_CUSTOM";
        const GLOBAL = 1 << 13 => "PIPE_BIND_GLOBAL";
        const SHADER_BUFFER = 1 << 14 => "PIPE_BIND_SHADER_BUFFER";
        const SHADER_IMAGE = 1 << 15 => "PIPE_BIND_SHADER_IMAGE";
        const COMPUTE_RESOURCE = 1 << 16 => "PIPE_BIND_COMPUTE_RESOURCE";
        const COMMAND_ARGS_BUFFER = 1 << 17 => "PIPE_BIND_COMMAND_ARGS_BUFFER";
        const QUERY_BUFFER = 1 << 18 => "PIPE_BIND_QUERY_BUFFER";
        const SCANOUT = 1 << 19 => "PIPE_BIND_SCANOUT";
        const SHARED = 1 << 20 => "PIPE_BIND_SHARED";
        const LINEAR = 1 << 21 => "PIPE_BIND_LINEAR";
    }
}

gallium_flags! {
    /// `PIPE_CLEAR_*`: which framebuffer attachments `clear` touches.
    pub struct ClearFlags: u32 {
        const DEPTH = 1 << 0 => "PIPE_CLEAR_DEPTH";
        const STENCIL = 1 << 1 => "PIPE_CLEAR_STENCIL";
        const COLOR0 = 1 << 2 => "PIPE_CLEAR_COLOR0";
        const COLOR1 = 1 << 3 => "PIPE_CLEAR_COLOR1";
        const COLOR2 = 1 << 4 => "PIPE_CLEAR_COLOR2";
        const COLOR3 = 1 << 5 => "PIPE_CLEAR_COLOR3";
        const COLOR4 = 1 << 6 => "PIPE_CLEAR_COLOR4";
        const COLOR5 = 1 << 7 => "PIPE_CLEAR_COLOR5";
        const COLOR6 = 1 << 8 => "PIPE_CLEAR_COLOR6";
        const COLOR7 = 1 << 9 => "PIPE_CLEAR_COLOR7";
        const COLOR = 0xff << 2 => "PIPE_CLEAR_COLOR";
        const DEPTHSTENCIL = 0b11 => "PIPE_CLEAR_DEPTHSTENCIL";
    }
}

gallium_flags! {
    /// `PIPE_MASK_*`: channel masks for `blit`.
    pub struct BlitMask: u32 {
        const R = 1 << 0 => "PIPE_MASK_R";
        const G = 1 << 1 => "PIPE_MASK_G";
        const B = 1 << 2 => "PIPE_MASK_B";
        const A = 1 << 3 => "PIPE_MASK_A";
        const RGBA = 0xf => "PIPE_MASK_RGBA";
        const Z = 1 << 4 => "PIPE_MASK_Z";
        const S = 1 << 5 => "PIPE_MASK_S";
        const ZS = 0x30 => "PIPE_MASK_ZS";
    }
}

gallium_flags! {
    /// `PIPE_MAP_*` (formerly `PIPE_TRANSFER_*`): transfer behaviour.
    pub struct TransferFlags: u32 {
        const READ = 1 << 0 => "PIPE_TRANSFER_READ";
        const WRITE = 1 << 1 => "PIPE_TRANSFER_WRITE";
        const READ_WRITE = 0b11 => "PIPE_TRANSFER_READ_WRITE";
        const DIRECTLY = 1 << 2 => "PIPE_TRANSFER_MAP_DIRECTLY";
        const DISCARD_RANGE = 1 << 8 => "PIPE_TRANSFER_DISCARD_RANGE";
        const DONTBLOCK = 1 << 9 => "PIPE_TRANSFER_DONTBLOCK";
        const UNSYNCHRONIZED = 1 << 10 => "PIPE_TRANSFER_UNSYNCHRONIZED";
        const FLUSH_EXPLICIT = 1 << 11 => "PIPE_TRANSFER_FLUSH_EXPLICIT";
        const DISCARD_WHOLE_RESOURCE = 1 << 12 => "PIPE_TRANSFER_DISCARD_WHOLE_RESOURCE";
        const PERSISTENT = 1 << 13 => "PIPE_TRANSFER_PERSISTENT";
        const COHERENT = 1 << 14 => "PIPE_TRANSFER_COHERENT";
    }
}

gallium_flags! {
    /// `PIPE_RESOURCE_FLAG_*`.
    pub struct ResourceFlags: u32 {
        const MAP_PERSISTENT = 1 << 0 => "PIPE_RESOURCE_FLAG_MAP_PERSISTENT";
        const MAP_COHERENT = 1 << 1 => "PIPE_RESOURCE_FLAG_MAP_COHERENT";
        const TEXTURING_MORE_LIKELY = 1 << 2 => "PIPE_RESOURCE_FLAG_TEXTURING_MORE_LIKELY";
        const SPARSE = 1 << 3 => "PIPE_RESOURCE_FLAG_SPARSE";
        const SINGLE_THREAD_USE = 1 << 4 => "PIPE_RESOURCE_FLAG_SINGLE_THREAD_USE";
    }
}

gallium_flags! {
    /// `PIPE_IMAGE_ACCESS_*`: what a shader may do with a bound image
    /// (`pipe_image_view::access`).  A draw or launch whose shader reads
    /// an image bound without `READ`, or writes one bound without `WRITE`,
    /// is refused (GL: `imageLoad` on a `GL_WRITE_ONLY` unit is undefined).
    pub struct ImageAccess: u32 {
        const READ = 1 << 0 => "PIPE_IMAGE_ACCESS_READ";
        const WRITE = 1 << 1 => "PIPE_IMAGE_ACCESS_WRITE";
        const READ_WRITE = (1 << 0) | (1 << 1) => "PIPE_IMAGE_ACCESS_READ_WRITE";
    }
}

gallium_flags! {
    /// `PIPE_BARRIER_*` for `memory_barrier`.
    pub struct BarrierFlags: u32 {
        const MAPPED_BUFFER = 1 << 0 => "PIPE_BARRIER_MAPPED_BUFFER";
        const SHADER_BUFFER = 1 << 1 => "PIPE_BARRIER_SHADER_BUFFER";
        const QUERY_BUFFER = 1 << 2 => "PIPE_BARRIER_QUERY_BUFFER";
        const VERTEX_BUFFER = 1 << 3 => "PIPE_BARRIER_VERTEX_BUFFER";
        const INDEX_BUFFER = 1 << 4 => "PIPE_BARRIER_INDEX_BUFFER";
        const CONSTANT_BUFFER = 1 << 5 => "PIPE_BARRIER_CONSTANT_BUFFER";
        const INDIRECT_BUFFER = 1 << 6 => "PIPE_BARRIER_INDIRECT_BUFFER";
        const TEXTURE = 1 << 7 => "PIPE_BARRIER_TEXTURE";
        const IMAGE = 1 << 8 => "PIPE_BARRIER_IMAGE";
        const FRAMEBUFFER = 1 << 9 => "PIPE_BARRIER_FRAMEBUFFER";
        const STREAMOUT_BUFFER = 1 << 10 => "PIPE_BARRIER_STREAMOUT_BUFFER";
        const GLOBAL_BUFFER = 1 << 11 => "PIPE_BARRIER_GLOBAL_BUFFER";
        const ALL = (1 << 12) - 1 => "PIPE_BARRIER_ALL";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Func::ALL {
            assert_eq!(Func::from_gallium_name(f.gallium_name()), Some(*f));
        }
        for p in PrimType::ALL {
            assert_eq!(PrimType::from_gallium_name(p.gallium_name()), Some(*p));
        }
        assert_eq!(Func::from_gallium_name("PIPE_FUNC_BOGUS"), None);
        assert_eq!(
            BindFlags::from_gallium_name("PIPE_BIND_SAMPLER_VIEW"),
            Some(BindFlags::SAMPLER_VIEW)
        );
    }

    #[test]
    fn logicop_matches_truth_table() {
        // Gallium's LOGICOP numbering is a truth table: bit (2*s + d) of the
        // op's number is the result for source bit s and destination bit d
        // (CLEAR = 0b0000, NOR = 0b0001, AND = 0b1000, SET = 0b1111).
        for (code, op) in LogicOp::ALL.iter().enumerate() {
            for s in 0..2u32 {
                for d in 0..2u32 {
                    let r = op.apply(s.wrapping_neg(), d.wrapping_neg()) & 1;
                    let expected = (code as u32 >> (2 * s + d)) & 1;
                    assert_eq!(r, expected, "{op} s={s} d={d}");
                }
            }
        }
    }
}
