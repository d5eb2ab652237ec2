//! The values of `get_param`, `get_paramf`, `get_shader_param` and
//! `get_compute_param` (screen.rst), and the limits resource creation checks.
//!
//! **Honesty rule:** a cap says only what works *today*.  Each feature's caps
//! sit together below with a comment naming what makes them true; when a
//! feature lands, the engineer who lands it flips its caps here in the same
//! commit (and the conformance list shows the scenes it fixes).  A state
//! tracker that believes a cap must never meet `Error::Unsupported` for it.
//!
//! Today: resources of every target, transfers, clears, copies, blits, all
//! context state, drawing (issue 4), vertex and fragment shaders with
//! texturing (issue 3), queries, polygon offset, unfilled polygon modes,
//! fill rectangle, polygon and line stipple, post-snap conservative
//! rasterization and 4x multisampled colour and depth/stencil rendering
//! with blit resolve, sample mask, alpha-to-coverage, alpha-to-one,
//! sample shading, stream output (with its queries and draws counted
//! from a target) and compute (shader buffers, images, workgroup memory,
//! atomics) are implemented; smooth primitives are not
//! (issue 5).

use ferropipe_components::caps::{Cap, CapF, ComputeCap, ShaderCap};
use ferropipe_components::enums::{BindFlags, ShaderType, TextureTarget};
use ferropipe_components::format::{ChannelType, Format, FormatKind};
use ferropipe_components::state::{
    MAX_ATTRIBS, MAX_COLOR_BUFS, MAX_CONSTANT_BUFFERS, MAX_SAMPLER_VIEWS, MAX_SAMPLERS,
    MAX_VIEWPORTS,
};
use ferropipe_shader::{MAX_SHADER_BUFFERS, MAX_SHADER_IMAGES, MAX_SHARED_BYTES};
use ferropipe_shader::{MAX_WORKGROUP_INVOCATIONS, MAX_WORKGROUP_SIZE};

/// Largest width/height of 1D, 2D, RECT and cube textures (llvmpipe's 16384).
pub const MAX_TEXTURE_2D_SIZE: u32 = 1 << 14;
/// Mip levels of a 3D texture: 2048³ at most (llvmpipe's 12).
pub const MAX_TEXTURE_3D_LEVELS: u32 = 12;
/// Mip levels of a cube map: 8192² faces at most (llvmpipe's 14).
pub const MAX_TEXTURE_CUBE_LEVELS: u32 = 14;
/// Layers of array textures (and 6 × cubes of cube arrays).
pub const MAX_TEXTURE_ARRAY_LAYERS: u32 = 2048;
/// Largest buffer in bytes (`width0` is a `u32`; 2 GiB keeps every offset
/// in an `i32` box).
pub const MAX_BUFFER_SIZE: u32 = 1 << 31;
/// Bytes of a constant buffer a shader can address (64 KiB, like GL's
/// common `MAX_UNIFORM_BLOCK_SIZE` and llvmpipe).
pub const MAX_CONST_BUFFER_SIZE: u32 = 64 * 1024;
// Compute limits: `launch_grid`, `set_shader_buffers` and
// `set_global_binding` check them (context/compute.rs).
/// Largest grid per dimension (`PIPE_COMPUTE_CAP_MAX_GRID_SIZE`: 65535,
/// GL's minimum and llvmpipe's).
pub const MAX_GRID_SIZE: u32 = 65535;
/// Largest shader-buffer binding: 128 MiB (llvmpipe's
/// `LP_MAX_TGSI_SHADER_BUFFER_SIZE`); every valid byte offset inside it and
/// the 2 GiB buffers fits the lowering's 32-bit addresses.
pub const MAX_SHADER_BUFFER_SIZE: u32 = 1 << 27;
/// Largest INPUT: 4 KiB (a constant buffer the prologue reads once per
/// workgroup).
pub const MAX_INPUT_SIZE: u32 = 4096;
/// Largest buffer `set_global_binding` maps: 128 MiB, so every byte
/// offset fits the 27 offset bits of a global handle
/// ([`crate::context::global_handle`]).
pub const MAX_GLOBAL_BUFFER_SIZE: u32 = 1 << 27;
/// `PIPE_ENDIAN_LITTLE`.
const PIPE_ENDIAN_LITTLE: i32 = 0;

/// `get_param`.
pub fn get_param(cap: Cap) -> i32 {
    use Cap::*;
    match cap {
        // --- Resources, transfers, copies, clears (implemented) -------------
        MaxTexture2dSize => MAX_TEXTURE_2D_SIZE as i32,
        MaxTexture3dLevels => MAX_TEXTURE_3D_LEVELS as i32,
        MaxTextureCubeLevels => MAX_TEXTURE_CUBE_LEVELS as i32,
        MaxTextureArrayLayers => MAX_TEXTURE_ARRAY_LAYERS as i32,
        NpotTextures => 1,
        ResourceFromUserMemory => 1,
        // Any alignment works: storage is byte-addressed CPU memory.
        MinMapBufferAlignment => 64,
        ConstantBufferOffsetAlignment => 16,
        Endianness => PIPE_ENDIAN_LITTLE,
        Uma => 1,
        Accelerated => 0,
        VendorId | DeviceId => -1, // 0xFFFFFFFF: no PCI device
        // Video memory in MB: the host's memory; report 0 = unknown.
        VideoMemory => 0,
        MixedFramebufferSizes => 1,
        MixedColorbufferFormats => 1,
        MixedColorDepthBits => 1,
        FramebufferNoAttachment => 0,
        ClearTexture => 0,
        // Persistent maps work (writes publish at transfer_flush_region /
        // unmap), coherent ones do not yet: transfers are staged copies
        // (context/transfer.rs), and GL's ARB_buffer_storage needs both.
        BufferMapPersistentCoherent => 0,
        AllowMappedBuffersDuringExecution => 1,
        MaxRenderTargets => MAX_COLOR_BUFS as i32,
        MaxViewports => MAX_VIEWPORTS as i32,
        SignedVertexBufferOffset => 0,
        MaxVertexAttribStride => 2048,
        MaxVertexElementSrcOffset => 2047,
        MaxTextureUploadMemoryBudget => 64 * 1024 * 1024,
        MaxFramesInFlight => 1,

        // --- Drawing (issue 4: systems/, conformance scenes prove each) ---
        PrimitiveRestart                       // indexed_draws
        | VertexElementInstanceDivisor         // instancing
        | StartInstance
        | TgsiInstanceid
        | BlendEquationSeparate                // blend_equations
        | IndepBlendEnable                     // mrt
        | IndepBlendFunc
        | MaxDualSourceRenderTargets           // merge.rs SRC1_* factors
        | PointSprite                          // point_sprite
        | DepthClipDisable                     // depth_clamp
        | DepthClipDisableSeparate
        | ClipHalfz                            // clip_halfz
        | DepthBoundsTest                      // merge.rs
        | FragmentColorClamped                 // color_clamp
        | VertexColorClamped
        | VertexColorUnclamped
        | ConditionalRenderInverted            // render_condition
        | TgsiFsCoordOriginUpperLeft           // frag_coord as Gallium defines it
        | TgsiFsCoordPixelCenterHalfInteger
        | PolygonOffsetClamp                   // polygon_offset_clamp
        | PolygonOffsetUnitsUnscaled           // systems/src/tests.rs
        | PolygonModeFillRectangle => 1,       // setup_triangle_as

        // Not (yet) implemented: shader draw parameters (WGSL has no
        // base_vertex/draw_id), integer pixel centres for frag_coord, cull
        // distances.  Robust access is implemented (out-of-bounds vertex,
        // index and texel reads give zeros, engine/tests/draw_native.rs)
        // but the cap waits for a constant-buffer test too.
        DrawParameters
        | TgsiFsCoordPixelCenterInteger
        | RobustBufferAccessBehavior
        | CullDistance => 0,
        // Fixed point with 8 sub-pixel bits (ARCHITECTURE.md "Fixed point
        // and fill rules"), llvmpipe's FIXED_ORDER.
        RasterizerSubpixelBits | ViewportSubpixelBits => 8,
        // llvmpipe's answer, part of the scene format's contract.
        QuadsFollowProvokingVertexConvention => 0,

        // --- Shaders (issue 3) and texturing (systems/shader/src/texture.rs) --
        // Shaders arrive as WGSL or GLSL 450 source through naga, not as
        // TGSI/NIR, so no GLSL level is promised to a GL state tracker.
        GlslFeatureLevel | GlslFeatureLevelCompatibility | EsslFeatureLevel => 0,
        TextureSwizzle                         // tex_formats
        | TextureMirrorClampToEdge             // tex_wrap
        | TextureMirrorClamp
        | TextureFloatLinear
        | TextureHalfFloatLinear
        | AnisotropicFilter                    // texture.rs: EXT form, <= 16 probes
        | FragmentShaderTextureLod             // textureSampleLevel/Grad
        | FragmentShaderDerivatives            // shader_derivatives_discard
        | TgsiFsFineDerivative => 1,
        // textureGather of any one component.
        MaxTextureGatherComponents => 4,
        SamplerViewTarget
        | TextureQueryLod
        | TextureGatherSm5
        | TextureGatherOffsets
        | MinTextureGatherOffset
        | MaxTextureGatherOffset => 0,
        // VS outputs / FS inputs the linkage carries (vec4 slots), as the
        // shader caps' MaxOutputs.
        MaxVaryings => 32,

        // --- Queries (engine/src/context/query.rs; occlusion_query,
        // pipeline_stats, render_condition) -----------------------------------
        OcclusionQuery | QueryTimeElapsed | QueryTimestamp | QueryPipelineStatistics => 1,
        // get_query_result_resource is not implemented.
        QueryBufferObject => 0,

        // --- Stream output (systems/src/stream_out.rs,
        // context/stream_output.rs; engine/tests/stream_output.rs): 4
        // buffers, any output to any buffer (interleaving across buffers),
        // one vertex stream (no geometry shader), the overflow predicates
        // (with render_condition). ---
        MaxStreamOutputBuffers => ferropipe_components::state::MAX_SO_BUFFERS as i32,
        StreamOutputInterleaveBuffers | QuerySoOverflow => 1,
        MaxVertexStreams => 1,

        // --- Multisampling: 4x render targets (is_format_supported) with
        // sample shading (systems/src/raster.rs); sampling multisampled
        // textures is not implemented. ---
        SampleShading => 1,
        // --- Not implemented: MS textures, GS/TS ---
        TextureMultisample
        | ForcePersampleInterp
        | SurfaceSampleCount
        | MultisampleZResolve
        | ProgrammableSampleLocations
        | FramebufferMsaaConstraints => 0,
        MaxGeometryOutputVertices | MaxGeometryTotalOutputComponents | MaxGsInvocations => 0,
        MaxShaderPatchVaryings | PrimitiveRestartForPatches | GlslTessLevelsAsInputs => 0,
        // --- Compute (engine/src/context/compute.rs, systems/src/compute.rs):
        // WGSL/GLSL kernels with shader buffers, global bindings, images,
        // workgroup memory, barriers, integer atomics and f32 add/sub/
        // exchange atomics on storage buffers; the global/local/workgroup
        // ids are computed by ferropipe; partial last blocks
        // (`pipe_grid_info::last_block`).  No derivatives in compute (naga
        // refuses them). ---
        Compute | CsDerivedSystemValuesSupported | ComputeGridInfoLastBlock => 1,
        ComputeShaderDerivative => 0,
        MaxShaderBufferSize => MAX_SHADER_BUFFER_SIZE as i32,
        // Vertex and fragment shaders have their own 32 + 32 slots too
        // (context.rst: shader buffers and images of every stage): a draw
        // combines both stages' (8 colour buffers count as output
        // resources as well).
        MaxCombinedShaderBuffers => 2 * MAX_SHADER_BUFFERS as i32,
        MaxCombinedShaderOutputResources => {
            (2 * (MAX_SHADER_BUFFERS + MAX_SHADER_IMAGES)) as i32 + MAX_COLOR_BUFS as i32
        }
        // Kernels address 32-bit words.
        ShaderBufferOffsetAlignment => 4,
        // Atomic counters are shader-buffer atomics (0 = none separate).
        MaxCombinedHwAtomicCounters | MaxCombinedHwAtomicCounterBuffers => 0,
        ImageLoadFormatted => 0,
        DrawIndirect | MultiDrawIndirect | MultiDrawIndirectParams => 0,
        MaxTextureBufferSize | TextureBufferOffsetAlignment | BufferSamplerViewRgbaOnly => 0,
        UserVertexBuffers => 0,
        ShaderStencilExport
        | Fbfetch
        | FbfetchCoherent
        | PostDepthCoverage
        | FragmentShaderInterlock
        | TileRasterOrder => 0,
        // Conservative rasterization, post- and pre-snap, of triangles,
        // lines and points (systems/src/setup.rs `conservative_dilate`),
        // with a subpixel precision bias of up to 8 bits (systems/src/setup_plan.rs
        // `conservative_fine_snap`).
        ConservativeRasterPostSnapTriangles
        | ConservativeRasterPostSnapPointsLines
        | ConservativeRasterPreSnapTriangles
        | ConservativeRasterPreSnapPointsLines => 1,
        MaxConservativeRasterSubpixelPrecisionBias => {
            ferropipe_systems::setup_plan::MAX_SUBPIXEL_PRECISION_BIAS as i32
        }
        ConservativeRasterPostDepthCoverage | ConservativeRasterInnerCoverage => 0,
        MaxWindowRectangles => 0,
        Doubles | Int64 | Int64Divmod => 0,
        BindlessTexture | Memobj | Dmabuf | FenceSignal | DeviceResetStatusQuery => 0,
        SparseBufferPageSize => 0,
        GenerateMipmap
        | StringMarker
        | InvalidateBuffer
        | CopyBetweenCompressedAndPlainFormats
        | SurfaceReinterpretBlocks => 0,
        PciGroup | PciBus | PciDevice | PciFunction => 0,
        ContextPriorityMask => 0,
        Constbuf0Flags => 0,
        PackedUniforms => 0,

        // --- TGSI/NIR compiler hints: ferropipe compiles WGSL/GLSL with
        // naga, so the TGSI/NIR-specific answers are "no".
        VertexBufferOffset4byteAlignedOnly
        | VertexBufferStride4byteAlignedOnly
        | VertexElementSrcOffset4byteAlignedOnly => 0,
        TgsiFsCoordOriginLowerLeft
        | TgsiTexcoord
        | PreferBlitBasedTextureTransfer
        | TextureBorderColorQuirk
        | TgsiVsLayerViewport
        | TgsiVsWindowSpacePosition
        | VertexidNobase
        | TgsiTxqs
        | ShareableShaders
        | TgsiPackHalfFloat
        | TgsiFsPositionIsSysval
        | TgsiFsFaceIsIntegerSysval
        | TgsiVote
        | TgsiArrayComponents
        | TgsiCanReadOutputs
        | GlslOptimizeConservatively
        | TgsiMulZeroWins
        | TgsiTexTxfLz
        | TgsiClock
        | TgsiBallot
        | TgsiTesLayerViewport
        | CanBindConstBufferAsVertex
        | NirSamplersAsDeref
        | LoadConstbuf
        | TgsiAnyRegAsAddress
        // Float atomic add works on storage buffers only: naga refuses
        // f32 atomics in workgroup memory, and image atomics are not
        // lowered, while this cap promises all three.
        | TgsiAtomfadd
        | RgbOverrideDstAlphaBlend
        | DestSurfaceSrgbControl
        | NirCompactArrays
        | TgsiSkipShrinkIoArrays
        | PreferComputeBlitForMultimedia
        // naga's f32 atomics have no min, max or compare-exchange.
        | AtomicFloatMinmax
        | TgsiDiv
        | VertexShaderSaturate => 0,
    }
}

/// `get_paramf`.
pub fn get_paramf(cap: CapF) -> f32 {
    match cap {
        // Lines and points are rasterized by the pipeline (issue 5); these
        // are the limits the state accepts, not yet a promise of output.
        CapF::MaxLineWidth | CapF::MaxLineWidthAa => 255.0,
        CapF::MaxPointWidth | CapF::MaxPointWidthAa => 255.0,
        // Sampling (issue 3): anisotropy up to 16 probes (cso.rs checks it);
        // LOD bias as llvmpipe.
        CapF::MaxTextureAnisotropy => 16.0,
        CapF::MaxTextureLodBias => 16.0,
        CapF::MinConservativeRasterDilate => 0.0,
        CapF::MaxConservativeRasterDilate => ferropipe_systems::setup_plan::MAX_CONSERVATIVE_DILATE,
        // Dilation is applied in 1/256 pixel steps.
        CapF::ConservativeRasterDilateGranularity => 1.0 / 256.0,
    }
}

/// `get_shader_param`.  Geometry and tessellation report 0 for everything
/// (screen.rst: a stage with `MAX_INSTRUCTIONS` 0 does not exist).
pub fn get_shader_param(shader: ShaderType, cap: ShaderCap) -> i32 {
    use ShaderCap::*;
    let compute = shader == ShaderType::Compute;
    // Vertex, fragment (issue 3) and compute shaders run; other stages do
    // not exist.
    if !matches!(
        shader,
        ShaderType::Vertex | ShaderType::Fragment | ShaderType::Compute
    ) {
        return 0;
    }
    match cap {
        // Compute has no varyings.  Shader buffers and images exist in
        // every stage (vertex and fragment: storage reads, writes and
        // atomics; helper and killed fragments never write; a fragment
        // shader with side effects tests depth late unless it forces early
        // fragment tests).
        MaxInputs | MaxOutputs if compute => 0,
        MaxShaderBuffers => MAX_SHADER_BUFFERS as i32,
        MaxShaderImages => MAX_SHADER_IMAGES as i32,
        MaxInstructions | MaxAluInstructions | MaxTexInstructions | MaxTexIndirections => i32::MAX,
        MaxControlFlowDepth => i32::MAX,
        MaxInputs => MAX_ATTRIBS as i32,
        MaxOutputs => 32,
        MaxConstBufferSize => MAX_CONST_BUFFER_SIZE as i32,
        MaxConstBuffers => MAX_CONSTANT_BUFFERS as i32,
        MaxTemps => i32::MAX,
        TgsiContSupported | IndirectInputAddr | IndirectOutputAddr | IndirectTempAddr
        | IndirectConstAddr | Integers | TgsiLdexpSupported | TgsiFmaSupported => 1,
        // WGSL `enable f16;` (and GLSL float16_t) runs with half precision
        // results: every f16 operation rounds to the nearest half
        // (docs/shaders.md "f16"), not lowered to f32 precision.
        Fp16 => 1,
        MaxTextureSamplers => MAX_SAMPLERS as i32,
        MaxSamplerViews => MAX_SAMPLER_VIEWS as i32,
        _ => 0,
    }
}

/// A `get_compute_param` answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ComputeParam {
    /// Scalar or vector values (grid sizes are 3 values).
    U64(Vec<u64>),
    /// `PIPE_COMPUTE_CAP_IR_TARGET`.
    Str(String),
}

/// `get_compute_param` (screen.rst "PIPE_COMPUTE_CAP_*").  `threads` is
/// the screen's worker count (`MAX_COMPUTE_UNITS`: workgroups that run at
/// once).
pub fn get_compute_param(cap: ComputeCap, threads: usize) -> Option<ComputeParam> {
    use ComputeCap::*;
    let one = |v: u64| Some(ComputeParam::U64(vec![v]));
    match cap {
        // Kernels are WGSL/GLSL compiled to lane programs, not native code.
        IrTarget => Some(ComputeParam::Str("x86_64-ferropipe-lanes-wgsl".into())),
        GridDimension => one(3),
        MaxGridSize => Some(ComputeParam::U64(vec![u64::from(MAX_GRID_SIZE); 3])),
        MaxBlockSize => Some(ComputeParam::U64(
            MAX_WORKGROUP_SIZE.iter().map(|&v| u64::from(v)).collect(),
        )),
        MaxThreadsPerBlock => one(u64::from(MAX_WORKGROUP_INVOCATIONS)),
        // GLOBAL is shader buffers and `set_global_binding` buffers in
        // resources up to the buffer limit; one global binding is at most
        // 128 MiB, what a 32-bit handle's 27 offset bits address.
        MaxGlobalSize => one(u64::from(MAX_BUFFER_SIZE)),
        MaxMemAllocSize => one(u64::from(MAX_GLOBAL_BUFFER_SIZE)),
        MaxLocalSize => one(u64::from(MAX_SHARED_BYTES)),
        // Private values live in registers: 4096 scalars per invocation.
        MaxPrivateSize => one(4 * 4096),
        MaxInputSize => one(u64::from(MAX_INPUT_SIZE)),
        // A CPU has no fixed shader clock; 0 says "unknown".
        MaxClockFrequency => one(0),
        MaxComputeUnits => one(threads.max(1) as u64),
        ImagesSupported => one(1),
        // Invocations run 8 to a SIMD register (ARCHITECTURE.md "SIMD width").
        SubgroupSize => one(ferropipe_components::shader::LANES as u64),
        // `set_global_binding` handles are 32-bit (context/compute.rs
        // `global_handle`).
        AddressBits => one(32),
        // Block sizes are fixed by @workgroup_size.
        MaxVariableThreadsPerBlock => one(0),
    }
}

/// Why a format × target × samples × bindings combination is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSupported {
    /// What is missing, for error messages ("PIPE_BIND_SHADER_IMAGE", ...).
    pub what: String,
    /// True when the combination is valid Gallium that ferropipe merely does
    /// not implement yet (`Error::Unsupported`), false when it can never be
    /// valid (`ResourceError::FormatNotSupported`: a depth format as a vertex buffer).
    pub unimplemented: bool,
}

fn refuse(what: impl Into<String>, unimplemented: bool) -> Result<(), NotSupported> {
    Err(NotSupported {
        what: what.into(),
        unimplemented,
    })
}

/// `is_format_supported` with the reason when the answer is no.
///
/// The rules, by binding (screen.rst "PIPE_BIND_*"):
/// * `VERTEX_BUFFER`, `INDEX_BUFFER`, `CONSTANT_BUFFER`: buffers only; as a
///   vertex-buffer *format* every colour format fetch can unpack
///   (`ferropipe_components::pack`).
/// * `RENDER_TARGET`: textures in colour formats the output stage can pack,
///   except the vertex-only ones (`USCALED`/`SSCALED`, 32-bit
///   `UNORM`/`SNORM`) and `R9G9B9E5`; `BLENDABLE` additionally excludes
///   pure integer formats.
/// * `DEPTH_STENCIL`: depth/stencil formats, not on buffers or 3D textures.
/// * `SAMPLER_VIEW`: textures in any format except the vertex-only ones;
///   buffer sampler views (texture buffers) are not implemented.
/// * `LINEAR`, `CUSTOM`: fine (storage is linear).  `DISPLAY_TARGET`,
///   `SCANOUT`, `SHARED`, `CURSOR`: no window system.  `GLOBAL`: buffers
///   (`set_global_binding`).  `COMPUTE_RESOURCE` (`set_compute_resources`,
///   TGSI surfaces WGSL cannot name), query buffers, indirect arguments:
///   not implemented.
/// * `STREAM_OUTPUT`: buffers only, in any colour format (stream output
///   writes dwords whatever the buffer's format says).
/// * `SHADER_BUFFER`: buffers.  `SHADER_IMAGE`: buffers, 1D, 2D, 3D,
///   array, cube and cube-array textures in colour formats with 4-, 8- or
///   16-byte texels, not sRGB, not the packed floats `R11G11B10`,
///   `R9G9B9E5` (for a buffer, the format asked about is the image view's:
///   `resource_create` does not check a buffer's own format for it).
/// * More than one sample: 4x, for 2D colour render targets only.
pub fn format_support(
    format: Format,
    target: TextureTarget,
    sample_count: u32,
    storage_sample_count: u32,
    bind: BindFlags,
) -> Result<(), NotSupported> {
    let d = format.desc();
    if sample_count > 32 {
        return refuse(format!("{sample_count} samples (at most 32)"), false);
    }
    if storage_sample_count > sample_count.max(1) {
        return refuse(
            format!("{storage_sample_count} storage samples > {sample_count} samples"),
            false,
        );
    }
    if storage_sample_count != 0 && storage_sample_count != sample_count.max(1) {
        // EQAA: fewer stored than rasterized samples.  The pipeline stores
        // every sample it covers, one plane each.
        return refuse(
            format!(
                "nr_storage_samples {storage_sample_count} below nr_samples {sample_count} (EQAA)"
            ),
            true,
        );
    }
    if sample_count > 1 {
        // 4x multisampled colour render targets (standard sample
        // positions, resolved by blit); multisampled depth/stencil and
        // sampling from multisampled textures are not implemented.
        let attachment = if d.kind == FormatKind::Color {
            BindFlags::RENDER_TARGET
        } else {
            BindFlags::DEPTH_STENCIL
        };
        let ms_ok = sample_count as usize == ferropipe_components::batch::MS_SAMPLES
            && matches!(
                target,
                TextureTarget::Texture2D | TextureTarget::TextureRect
            )
            && bind.contains(attachment)
            && !bind.intersects(!(attachment | BindFlags::BLENDABLE));
        if !ms_ok {
            return refuse(
                format!(
                    "{sample_count}x multisampling here (4x render targets and depth/stencil only)"
                ),
                true,
            );
        }
    }
    let unimplemented = BindFlags::COMPUTE_RESOURCE
        | BindFlags::COMMAND_ARGS_BUFFER
        | BindFlags::QUERY_BUFFER
        | BindFlags::VERTEX_STATE
        | BindFlags::DISPLAY_TARGET
        | BindFlags::SCANOUT
        | BindFlags::SHARED
        | BindFlags::CURSOR;
    if let Some((name, _)) = BindFlags::NAMED.iter().find(|(_, f)| {
        f.bits().count_ones() == 1 && bind.contains(*f) && unimplemented.contains(*f)
    }) {
        return refuse(*name, true);
    }
    let buffer_only = BindFlags::VERTEX_BUFFER
        | BindFlags::INDEX_BUFFER
        | BindFlags::CONSTANT_BUFFER
        | BindFlags::STREAM_OUTPUT;
    let is_buffer = target == TextureTarget::Buffer;
    if !is_buffer && bind.intersects(buffer_only) {
        return refuse(format!("{bind:?} on a {target}"), false);
    }
    let vertex_only = matches!(d.channel_type, ChannelType::Uscaled | ChannelType::Sscaled)
        || (matches!(d.channel_type, ChannelType::Unorm | ChannelType::Snorm)
            && d.kind == FormatKind::Color
            && d.channel_bits[0] == 32);
    if bind.contains(BindFlags::VERTEX_BUFFER) && d.kind != FormatKind::Color {
        return refuse(format!("{format} as a vertex format"), false);
    }
    if bind.contains(BindFlags::STREAM_OUTPUT) && d.kind != FormatKind::Color {
        return refuse(format!("{format} as a stream output buffer"), false);
    }
    if bind.intersects(BindFlags::RENDER_TARGET | BindFlags::BLENDABLE) {
        if is_buffer {
            return refuse("a buffer as a render target", false);
        }
        if d.kind != FormatKind::Color || vertex_only || format == Format::R9G9B9E5_FLOAT {
            return refuse(format!("{format} as a render target"), false);
        }
        if bind.contains(BindFlags::BLENDABLE) && d.is_integer() {
            return refuse(format!("blending on {format}"), false);
        }
    }
    if bind.contains(BindFlags::DEPTH_STENCIL) {
        if d.kind == FormatKind::Color {
            return refuse(format!("{format} as a depth/stencil buffer"), false);
        }
        if is_buffer || target == TextureTarget::Texture3D {
            return refuse(format!("a depth/stencil {target}"), false);
        }
    }
    if bind.contains(BindFlags::SHADER_BUFFER) && !is_buffer {
        return refuse(format!("a {target} as a shader buffer"), false);
    }
    if bind.contains(BindFlags::GLOBAL) && !is_buffer {
        return refuse(format!("a {target} as GLOBAL memory"), false);
    }
    if bind.contains(BindFlags::SHADER_IMAGE) {
        // kernels read and write whole 32-bit words (systems/shader's
        // memory.rs): 4-, 8- and 16-byte colour texels that pack.rs
        // converts, no sRGB (WGSL has no sRGB storage formats)
        if d.kind != FormatKind::Color
            || vertex_only
            || d.srgb
            || !matches!(d.block_bytes, 4 | 8 | 16)
            || matches!(format, Format::R9G9B9E5_FLOAT | Format::R11G11B10_FLOAT)
        {
            return refuse(format!("{format} as a shader image"), true);
        }
    }
    if bind.contains(BindFlags::SAMPLER_VIEW) {
        if is_buffer {
            return refuse("buffer sampler views (texture buffers)", true);
        }
        if vertex_only {
            return refuse(format!("sampling {format}"), false);
        }
    }
    if !is_buffer && d.kind != FormatKind::Color && target == TextureTarget::Texture3D {
        return refuse(format!("a 3D texture in {format}"), false);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cap_has_a_value_and_unimplemented_features_say_zero() {
        for &c in Cap::ALL {
            let _ = get_param(c);
        }
        for &c in CapF::ALL {
            assert!(get_paramf(c) >= 0.0);
        }
        assert_eq!(get_param(Cap::MaxStreamOutputBuffers), 4);
        assert_eq!(get_param(Cap::MaxVertexStreams), 1);
        assert_eq!(get_param(Cap::QuerySoOverflow), 1);
        assert_eq!(get_param(Cap::TextureMultisample), 0);
        assert_eq!(get_param(Cap::MaxRenderTargets), 8);
        // What has landed says so.
        assert_eq!(get_param(Cap::PrimitiveRestart), 1);
        assert_eq!(get_param(Cap::OcclusionQuery), 1);
        assert_eq!(get_param(Cap::RasterizerSubpixelBits), 8);
        assert_eq!(get_param(Cap::PolygonModeFillRectangle), 1);
        assert_eq!(get_param(Cap::SampleShading), 1);
        assert_eq!(get_param(Cap::ConservativeRasterPostSnapTriangles), 1);
        assert!(get_shader_param(ShaderType::Fragment, ShaderCap::MaxInstructions) > 0);
        assert!(get_shader_param(ShaderType::Vertex, ShaderCap::MaxInputs) > 0);
        assert_eq!(
            get_shader_param(ShaderType::Geometry, ShaderCap::MaxInstructions),
            0
        );
        // compute has landed: every compute parameter has a value
        assert_eq!(get_param(Cap::Compute), 1);
        assert!(
            ComputeCap::ALL
                .iter()
                .all(|&c| get_compute_param(c, 4).is_some())
        );
        assert_eq!(
            get_compute_param(ComputeCap::MaxThreadsPerBlock, 4),
            Some(ComputeParam::U64(vec![1024]))
        );
        assert_eq!(
            get_shader_param(ShaderType::Compute, ShaderCap::MaxShaderBuffers),
            32
        );
        for stage in [ShaderType::Vertex, ShaderType::Fragment] {
            assert_eq!(get_shader_param(stage, ShaderCap::MaxShaderBuffers), 32);
            assert_eq!(get_shader_param(stage, ShaderCap::MaxShaderImages), 32);
        }
        // f16 runs in every stage that exists (half-precision results)
        for stage in [
            ShaderType::Vertex,
            ShaderType::Fragment,
            ShaderType::Compute,
        ] {
            assert_eq!(get_shader_param(stage, ShaderCap::Fp16), 1);
        }
        assert_eq!(get_shader_param(ShaderType::Geometry, ShaderCap::Fp16), 0);
    }

    #[test]
    fn format_support_rules() {
        use TextureTarget::*;
        let ok = |f, t, b| format_support(f, t, 0, 0, b).is_ok();
        assert!(ok(
            Format::R8G8B8A8_UNORM,
            Texture2D,
            BindFlags::RENDER_TARGET | BindFlags::SAMPLER_VIEW
        ));
        assert!(ok(
            Format::R32G32B32_FLOAT,
            Buffer,
            BindFlags::VERTEX_BUFFER
        ));
        assert!(ok(
            Format::R8G8B8A8_USCALED,
            Buffer,
            BindFlags::VERTEX_BUFFER
        ));
        assert!(!ok(
            Format::R8G8B8A8_USCALED,
            Texture2D,
            BindFlags::RENDER_TARGET
        ));
        assert!(!ok(
            Format::R32G32B32A32_UINT,
            Texture2D,
            BindFlags::BLENDABLE
        ));
        assert!(ok(
            Format::Z24_UNORM_S8_UINT,
            TextureCube,
            BindFlags::DEPTH_STENCIL
        ));
        assert!(!ok(
            Format::Z24_UNORM_S8_UINT,
            Texture3D,
            BindFlags::DEPTH_STENCIL
        ));
        assert!(!ok(
            Format::R8G8B8A8_UNORM,
            Texture2D,
            BindFlags::DEPTH_STENCIL
        ));
        assert!(!ok(Format::Z32_FLOAT, Buffer, BindFlags::VERTEX_BUFFER));
        assert!(!ok(Format::R8_UNORM, Texture2D, BindFlags::VERTEX_BUFFER));
        // 4x colour render targets; other counts, multisampled depth and
        // sampling multisampled textures are unimplemented.
        let ms = |f, n, b| format_support(f, Texture2D, n, n, b);
        assert!(ms(Format::R8G8B8A8_UNORM, 4, BindFlags::RENDER_TARGET).is_ok());
        assert!(ms(Format::R16G16B16A16_FLOAT, 4, BindFlags::RENDER_TARGET).is_ok());
        assert!(ms(Format::Z24_UNORM_S8_UINT, 4, BindFlags::DEPTH_STENCIL).is_ok());
        for (f, n, b) in [
            (Format::R8G8B8A8_UNORM, 8, BindFlags::RENDER_TARGET),
            (Format::R8G8B8A8_UNORM, 2, BindFlags::RENDER_TARGET),
            (Format::Z24_UNORM_S8_UINT, 4, BindFlags::SAMPLER_VIEW),
            (
                Format::R8G8B8A8_UNORM,
                4,
                BindFlags::RENDER_TARGET | BindFlags::SAMPLER_VIEW,
            ),
        ] {
            assert!(ms(f, n, b).unwrap_err().unimplemented, "{f} {n}x {b:?}");
        }
        // Stream output: buffers (of colour formats) only.
        assert!(ok(Format::R8_UNORM, Buffer, BindFlags::STREAM_OUTPUT));
        assert!(ok(
            Format::R32G32B32A32_FLOAT,
            Buffer,
            BindFlags::STREAM_OUTPUT | BindFlags::VERTEX_BUFFER
        ));
        let so2d = format_support(Format::R8_UNORM, Texture2D, 0, 0, BindFlags::STREAM_OUTPUT);
        assert!(!so2d.unwrap_err().unimplemented);
        assert!(!ok(Format::Z32_FLOAT, Buffer, BindFlags::STREAM_OUTPUT));
        let tb = format_support(Format::R32_FLOAT, Buffer, 0, 0, BindFlags::SAMPLER_VIEW);
        assert!(tb.unwrap_err().unimplemented);
        assert!(format_support(Format::R8_UNORM, Texture2D, 4, 8, BindFlags::empty()).is_err());
        // shader buffers are buffers; shader images word-sized colour
        // texels in textures
        let img = |f, t| format_support(f, t, 0, 0, BindFlags::SHADER_IMAGE);
        assert!(format_support(Format::R8_UNORM, Buffer, 0, 0, BindFlags::SHADER_BUFFER).is_ok());
        assert!(
            !format_support(Format::R8_UNORM, Texture2D, 0, 0, BindFlags::SHADER_BUFFER)
                .unwrap_err()
                .unimplemented
        );
        for f in [
            Format::R8G8B8A8_UNORM,
            Format::R32G32B32A32_FLOAT,
            Format::R32_UINT,
            Format::R16G16B16A16_FLOAT,
        ] {
            for t in [
                Texture2D,
                Texture2DArray,
                Buffer,
                TextureCube,
                TextureCubeArray,
            ] {
                assert!(img(f, t).is_ok(), "{f} {t}");
            }
        }
        for (f, t) in [
            (Format::R8_UNORM, Texture2D),
            (Format::R8G8B8A8_SRGB, Texture2D),
            (Format::R8_UNORM, Buffer),
        ] {
            assert!(img(f, t).unwrap_err().unimplemented, "{f} {t}");
        }
        // GLOBAL memory is buffers
        let global = |t| format_support(Format::R8_UNORM, t, 0, 0, BindFlags::GLOBAL);
        assert!(global(Buffer).is_ok());
        assert!(!global(Texture2D).unwrap_err().unimplemented);
    }
}
