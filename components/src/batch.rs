//! The data the pipeline stages exchange: recorded scenes (state blocks and
//! commands) and the structure-of-arrays batches each stage hands the next.
//!
//! Pure data, as everything in this crate: the stages that fill and consume
//! these types live in `ferropipe-systems`, one file per stage.  The types
//! are documented with the stage that writes them and the stage that reads
//! them, which together form the extension points of the pipeline (a system
//! inserted between two `PipelineSet`s sees exactly these types).
//!
//! # Life of a scene
//! 1. The façade records [`Command`]s into [`RecordedScene`], each draw
//!    pointing at a deduplicated [`StateBlock`] (a snapshot of the bound
//!    state as `Arc`s).
//! 2. At flush the front end runs in *waves* of jobs; each job carries a
//!    [`VertexBatch`] (fetch → shade), then [`ClippedPrims`] (clip → setup),
//!    then [`SetupPrims`] and [`JobBins`] (setup → bin → raster).
//! 3. The back end walks each 64x64 tile's bins in job order.

use std::sync::Arc;

use bevy_ecs::resource::Resource;

use crate::draw::{
    ConstantBufferBinding, DrawInfo, FramebufferState, IndexBufferBinding, StreamOutputBinding,
    VertexBufferBinding,
};
use crate::enums::ClearFlags;
use crate::format::Format;
use crate::resource::ResourceRef;
use crate::shader::{FragmentShaderRef, Lanes, VertexShaderRef};
use crate::state::*;
use crate::view::SamplerViewRef;

/// log2 of the bin tile size (llvmpipe's `TILE_ORDER`).
pub const TILE_ORDER: u32 = 6;
/// Bin tile size in pixels: 64x64, 16 KiB of RGBA8, comfortably L1/L2 resident.
pub const TILE_SIZE: u32 = 1 << TILE_ORDER;
/// Sub-pixel bits of fixed-point positions (llvmpipe's `FIXED_ORDER`).
pub const FIXED_ORDER: u32 = 8;
/// One pixel in fixed point.
pub const FIXED_ONE: i32 = 1 << FIXED_ORDER;
/// Guard band: window coordinates are kept inside `[-GUARD_BAND, GUARD_BAND]`
/// pixels by clipping.  With 8 sub-pixel bits this keeps positions in 23 bits
/// and edge deltas in 24, so a tile's edge values fit in `i32` (see setup.rs).
/// 16384 is also the largest framebuffer dimension.
pub const GUARD_BAND: f32 = 16384.0;
/// Maximum edges of a set-up primitive (triangle 3, line or point quad 4).
pub const MAX_EDGES: usize = 4;

// ---------------------------------------------------------------------------
// Recorded state
// ---------------------------------------------------------------------------

/// Constant buffer slots of one stage (shared with the façade's bindings).
pub type ConstantBufferSlots = [ConstantBufferBinding; MAX_CONSTANT_BUFFERS];
/// Sampler view slots of one stage.
pub type SamplerViewSlots = [Option<SamplerViewRef>; MAX_SAMPLER_VIEWS];
/// Sampler state slots of one stage.
pub type SamplerSlots = [Option<Arc<SamplerState>>; MAX_SAMPLERS];
/// Vertex buffer slots (index = `vertex_buffer_index`).
pub type VertexBufferSlots = [VertexBufferBinding; MAX_VERTEX_BUFFERS];
/// `set_viewport_states` slots (16, `PIPE_MAX_VIEWPORTS`).
pub type ViewportSlots = [ViewportState; MAX_VIEWPORTS];
/// `set_scissor_states` slots (16).
pub type ScissorSlots = [ScissorState; MAX_VIEWPORTS];

/// One `set_shader_buffers` slot (`struct pipe_shader_buffer`), validated.
#[derive(Clone, Debug)]
pub struct ShaderBufferBinding {
    /// The bound buffer resource.
    pub buffer: ResourceRef,
    /// Byte offset (a multiple of 4: `PIPE_CAP_SHADER_BUFFER_OFFSET_ALIGNMENT`).
    pub offset: u32,
    /// Bytes visible to the shader from `offset` (clamped to the buffer at bind time).
    pub size: u32,
    /// Its bit of `set_shader_buffers`' `writable_bitmask`: a draw or
    /// launch whose shader stores to (or runs atomics on) this slot while
    /// it is clear is refused.
    pub writable: bool,
}

/// One `set_shader_images` slot (`struct pipe_image_view`), validated.
#[derive(Clone, Debug)]
pub struct ShaderImageBinding {
    /// The viewed texture or buffer.
    pub resource: ResourceRef,
    /// The view's format (texel size 4, 8 or 16 bytes; for a texture
    /// size-compatible with the resource's).
    pub format: Format,
    /// Textures: the viewed level and layers (cube faces are layers).
    pub level: u32,
    /// First viewed layer (textures).
    pub first_layer: u32,
    /// Last viewed layer, inclusive.
    pub last_layer: u32,
    /// Buffer images (`texture_storage_1d` over a `PIPE_BUFFER`): the
    /// viewed bytes, `(offset, size)`, offset a multiple of 4; the image
    /// is `size / texel bytes` texels wide.
    pub buffer_range: Option<(u32, u32)>,
    /// `pipe_image_view::access`: the loads and stores the view allows
    /// (checked against the shader at each draw and launch).
    pub access: crate::enums::ImageAccess,
}

/// Shader buffer slots of a stage, up to the last one ever bound.
pub type ShaderBufferSlots = Vec<Option<ShaderBufferBinding>>;
/// Shader image slots of a stage, up to the last one ever bound.
pub type ShaderImageSlots = Vec<Option<ShaderImageBinding>>;

/// What one shader stage may read (and write): its constant buffers, and
/// its other bindings behind one shared `Arc` (read through `Deref`:
/// `stage.sampler_views`).
///
/// Why two parts: games change per-object constants from draw to draw and
/// textures far less often.  Snapshotting five `Arc`s per stage was ten
/// atomic increments per new block and ten decrements at its drop; now it
/// is two of each, and blocks that change only constants share their
/// [`StageBindings`].
#[derive(Clone, Debug)]
pub struct StageResources {
    /// `set_constant_buffer` slots (16, `PIPE_MAX_CONSTANT_BUFFERS`).
    pub constant_buffers: Arc<ConstantBufferSlots>,
    /// Sampler views, samplers, shader buffers and images.
    pub bindings: Arc<StageBindings>,
}

impl std::ops::Deref for StageResources {
    type Target = StageBindings;

    fn deref(&self) -> &StageBindings {
        &self.bindings
    }
}

impl std::ops::DerefMut for StageResources {
    /// Copies the bindings first when another stage shares them.
    fn deref_mut(&mut self) -> &mut StageBindings {
        Arc::make_mut(&mut self.bindings)
    }
}

/// A stage's bindings other than constant buffers: the `Arc`s of the bound
/// slot arrays.
#[derive(Clone, Debug)]
pub struct StageBindings {
    /// `set_sampler_views` slots (128).
    pub sampler_views: Arc<SamplerViewSlots>,
    /// `bind_sampler_states` slots (32).
    pub samplers: Arc<SamplerSlots>,
    /// Vertex and fragment stages' shader buffers (the compute stage's
    /// live in the façade's `ComputeBindings`).
    pub shader_buffers: Arc<ShaderBufferSlots>,
    /// Vertex and fragment stages' shader images.
    pub shader_images: Arc<ShaderImageSlots>,
}

impl Default for StageBindings {
    fn default() -> Self {
        StageBindings {
            sampler_views: Arc::new(std::array::from_fn(|_| None)),
            samplers: Arc::new(std::array::from_fn(|_| None)),
            shader_buffers: Arc::default(),
            shader_images: Arc::default(),
        }
    }
}

impl StageBindings {
    /// Whether both hold the very same slot arrays.
    pub fn same_as(&self, o: &StageBindings) -> bool {
        Arc::ptr_eq(&self.sampler_views, &o.sampler_views)
            && Arc::ptr_eq(&self.samplers, &o.samplers)
            && Arc::ptr_eq(&self.shader_buffers, &o.shader_buffers)
            && Arc::ptr_eq(&self.shader_images, &o.shader_images)
    }
}

impl Default for StageResources {
    fn default() -> Self {
        StageResources {
            constant_buffers: Arc::new(std::array::from_fn(|_| ConstantBufferBinding::default())),
            bindings: Arc::default(),
        }
    }
}

impl StageResources {
    /// Whether two stages hold the very same binding arrays.
    pub fn same_as(&self, o: &StageResources) -> bool {
        Arc::ptr_eq(&self.constant_buffers, &o.constant_buffers) && self.same_bindings(o)
    }

    /// Whether two stages hold the very same arrays but for the constant
    /// buffers (shared [`StageBindings`], or equal ones).
    pub fn same_bindings(&self, o: &StageResources) -> bool {
        Arc::ptr_eq(&self.bindings, &o.bindings) || self.bindings.same_as(&o.bindings)
    }

    /// The resources bound as shader buffers and images: what the stage
    /// may write.
    pub fn storage_refs(&self) -> impl Iterator<Item = &ResourceRef> {
        self.shader_buffers
            .iter()
            .flatten()
            .map(|b| &b.buffer)
            .chain(self.shader_images.iter().flatten().map(|i| &i.resource))
    }
}

/// A snapshot of everything a draw depends on (the "state block").
///
/// Recording clones `Arc`s of the bound state into a new block only when the
/// state changed since the previous draw, so consecutive draws share one
/// block and the derived state the pipeline computes per block (linkage,
/// fetch plans, blend plans) is computed once.
///
/// The block is the draw's [`PipelineState`], shared, plus what changes
/// from draw to draw in a typical frame: each stage's bindings (per-object
/// constants above all).  The pipeline's fields read through `Deref`
/// (`block.rasterizer`); `DerefMut` copies a shared pipeline state on
/// write.
#[derive(Clone)]
pub struct StateBlock {
    /// The CSOs, shaders, framebuffer, vertex input and fixed-function
    /// state: one `Arc` shared by consecutive blocks that differ only in
    /// their stage resources.
    ///
    /// Why shared: snapshotting its 11 `Arc`s one by one was 11 atomic
    /// increments per new block and 11 decrements when the block was
    /// dropped, ~20 % of many_draws' recording cycles (10,000 blocks a
    /// frame that change only a constant buffer), and the plan cache then
    /// compares one pointer instead of 17 fields.
    pub pipeline: Arc<PipelineState>,
    /// What the vertex shader may read and write.
    pub vs_resources: StageResources,
    /// What the fragment shader may read and write.
    pub fs_resources: StageResources,
    /// Stream output: `Some` when the vertex shader has stream-output
    /// outputs and at least one target is bound (the draw captures).
    pub stream_output: Option<Arc<StreamOutputBinding>>,
}

impl std::ops::Deref for StateBlock {
    type Target = PipelineState;

    fn deref(&self) -> &PipelineState {
        &self.pipeline
    }
}

impl std::ops::DerefMut for StateBlock {
    /// Copies the pipeline state first when another block shares it.
    fn deref_mut(&mut self) -> &mut PipelineState {
        Arc::make_mut(&mut self.pipeline)
    }
}

/// The part of a [`StateBlock`] that is not a stage's resource bindings:
/// what Vulkan would call the pipeline, plus the vertex input and the
/// dynamic fixed-function values (blend colour, stencil reference,
/// viewports, ...).
#[derive(Clone)]
pub struct PipelineState {
    /// The bound rasterizer CSO.
    pub rasterizer: Arc<RasterizerState>,
    /// The bound depth/stencil/alpha CSO.
    pub dsa: Arc<DepthStencilAlphaState>,
    /// The bound blend CSO.
    pub blend: Arc<BlendState>,
    /// The bound vertex elements CSO, one element per vertex shader input.
    pub velems: Arc<[VertexElement]>,
    /// The bound vertex shader.
    pub vs: VertexShaderRef,
    /// The bound fragment shader.
    pub fs: FragmentShaderRef,
    /// `set_framebuffer_state` at the draw (the scene's; a change starts a new scene).
    pub framebuffer: Arc<FramebufferState>,
    /// `set_vertex_buffers` slots (32).
    pub vertex_buffers: Arc<VertexBufferSlots>,
    /// The index buffer of indexed draws.
    pub index_buffer: IndexBufferBinding,
    /// `set_blend_color`.
    pub blend_color: BlendColor,
    /// `set_stencil_ref`.
    pub stencil_ref: StencilRef,
    /// `set_sample_mask`: bit s keeps sample s (4x MSAA reads bits 0-3).
    pub sample_mask: u32,
    /// `set_min_samples`: above 1 on a multisampled framebuffer, the
    /// fragment shader runs once per sample (sample shading).
    pub min_samples: u32,
    /// `set_clip_state`: the user clip planes.
    pub clip: ClipState,
    /// `set_polygon_stipple`.
    pub poly_stipple: PolyStipple,
    /// `set_viewport_states`, 16 slots (`PIPE_MAX_VIEWPORTS`).  Shared, not
    /// copied: 16 viewports and 16 scissors are 640 bytes, and a new
    /// pipeline state for another blend state keeps them.
    pub viewports: Arc<ViewportSlots>,
    /// `set_scissor_states`, 16 slots (shared like `viewports`).
    pub scissors: Arc<ScissorSlots>,
}

/// The value a clear writes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClearValue {
    /// `union pipe_color_union` as floats (for integer formats the f32 bits
    /// hold the integer, as Gallium's union does).
    pub color: [f32; 4],
    /// Depth written by a depth clear, in `[0, 1]`.
    pub depth: f64,
    /// Stencil written by a stencil clear (the low 8 bits).
    pub stencil: u32,
}

/// One recorded unit of work.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `draw_vbo` with the state block it was recorded with.
    Draw {
        /// Index into [`RecordedScene::states`].
        state: u32,
        /// The draw's parameters (`pipe_draw_info` and its start/count).
        info: DrawInfo,
    },
    /// `clear` of the scene's whole framebuffer (per-tile in the back end).
    Clear {
        /// Which buffers the clear writes (colour, depth, stencil).
        buffers: ClearFlags,
        /// What it writes.
        value: ClearValue,
    },
}

/// Counters collected per draw while a scene executes (queries read them).
///
/// Which events are counted is documented on each field; the back-end
/// counters are exact regardless of thread count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawCounters {
    /// Vertices read by primitive assembly (index buffer elements consumed,
    /// restart indices excluded), per instance.
    pub ia_vertices: u64,
    /// Primitives assembled (before clipping and culling), per instance.
    pub ia_primitives: u64,
    /// Vertex shader lanes run for real vertices (after per-job dedup).
    pub vs_invocations: u64,
    /// Primitives that entered the clipper.
    pub c_invocations: u64,
    /// Primitives that left the clipper (after clipping, before culling).
    pub c_primitives: u64,
    /// Fragment shader invocations: 16 per 4x4 block a primitive covers
    /// (llvmpipe's count), before early depth.
    pub ps_invocations: u64,
    /// Samples that passed the depth/stencil/alpha tests (occlusion).
    pub samples_passed: u64,
    /// Stream output: primitives written to the targets
    /// (`PIPE_QUERY_PRIMITIVES_EMITTED`).
    pub so_primitives_written: u64,
    /// Stream output: primitives that would have been written with
    /// unlimited space (`primitives_storage_needed`); more than
    /// `so_primitives_written` means a target overflowed.
    pub so_primitives_needed: u64,
    /// Compute shader invocations (`launch_grid`: workgroups x threads).
    pub cs_invocations: u64,
}

impl DrawCounters {
    /// Adds `other` into `self`.
    pub fn accumulate(&mut self, other: &DrawCounters) {
        self.ia_vertices += other.ia_vertices;
        self.ia_primitives += other.ia_primitives;
        self.vs_invocations += other.vs_invocations;
        self.c_invocations += other.c_invocations;
        self.c_primitives += other.c_primitives;
        self.ps_invocations += other.ps_invocations;
        self.samples_passed += other.samples_passed;
        self.so_primitives_written += other.so_primitives_written;
        self.so_primitives_needed += other.so_primitives_needed;
        self.cs_invocations += other.cs_invocations;
    }
}

/// Everything recorded since the last flush, and its results once run.
#[derive(Resource, Default)]
pub struct RecordedScene {
    /// Deduplicated state blocks; commands refer to them by index.
    pub states: Vec<Arc<StateBlock>>,
    /// Draws and clears in submission order.
    pub commands: Vec<Command>,
    /// The framebuffer every command of the scene renders to (a framebuffer
    /// change starts a new scene).
    pub framebuffer: Option<Arc<FramebufferState>>,
    /// Per command, filled while the scene executes.
    pub counters: Vec<DrawCounters>,
}

impl RecordedScene {
    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Forgets the recorded work (after it ran).
    pub fn clear(&mut self) {
        self.states.clear();
        self.commands.clear();
        self.framebuffer = None;
        self.counters.clear();
    }
}

// ---------------------------------------------------------------------------
// Front-end batches
// ---------------------------------------------------------------------------

/// The kind of primitive a draw assembles into (after decomposition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PrimKind {
    /// One vertex.
    Point,
    /// Two vertices.
    Line,
    /// Three vertices.
    #[default]
    Triangle,
}

impl PrimKind {
    /// Vertices per primitive.
    pub fn vertices(self) -> usize {
        match self {
            PrimKind::Point => 1,
            PrimKind::Line => 2,
            PrimKind::Triangle => 3,
        }
    }
}

/// Edge-flag bits of an assembled primitive (`DRAW_PIPE_EDGE_FLAG_*`): bit i
/// set when edge i (vertex i to i+1) is a real polygon edge, which unfilled
/// polygon modes draw.
pub const EDGE_FLAGS_ALL: u8 = 0b111;

/// Flag bit of an assembled line (`DRAW_PIPE_RESET_STIPPLE`): the line
/// starts a new line-stipple pattern (every line of `LINES`, the first of a
/// strip or loop run).
pub const RESET_STIPPLE: u8 = 0b1000;

/// The vertices of one job segment, structure of arrays (written by fetch,
/// shaded by shade, read by clip).
///
/// Layout is the shader interface's: component `c` of slot `s` for group `g`
/// is `inputs[(s * 4 + c) * groups + g]` (see `shader.rs`).
#[derive(Default)]
pub struct VertexBatch {
    /// Registers per value (`ceil(count / LANES)`).
    pub groups: usize,
    /// Real vertices; lanes past `count` are padding.
    pub count: usize,
    /// Vertex shader inputs, `groups` registers per component (written by fetch).
    pub inputs: Vec<Lanes>,
    /// `gl_VertexID` per lane (index buffer value or vertex number).
    pub vertex_id: Vec<Lanes>,
    /// `gl_InstanceID` per lane.
    pub instance_id: Vec<Lanes>,
    /// Vertex shader outputs, same layout as `inputs` (written by shade).
    pub outputs: Vec<Lanes>,
}

impl VertexBatch {
    /// Component `c` of output slot `s` of vertex `v`.
    #[inline]
    pub fn output(&self, s: usize, c: usize, v: usize) -> f32 {
        let g = v / crate::shader::LANES;
        self.outputs[(s * 4 + c) * self.groups + g].as_array()[v % crate::shader::LANES]
    }
}

/// Primitives after clipping, in window space, ready for setup (written by
/// clip, read by setup).
///
/// `verts` is array-of-structs with `stride` floats per vertex:
/// `[x, y, z, 1/w, attr...]`, where x, y, z are window coordinates (viewport
/// applied) and the attributes are the values the fragment shader's inputs
/// link to, in the order of the state's linkage (see `clip.rs`).  Setup reads
/// three vertices of a triangle, so AoS keeps each read in one or two cache
/// lines.
#[derive(Default)]
pub struct ClippedPrims {
    /// Floats per vertex in `verts`: 4 for the position, then one per linked attribute component.
    pub stride: usize,
    /// The vertices, `stride` floats each.
    pub verts: Vec<f32>,
    /// Vertex indices (into `verts` / `stride`), 1-3 used by kind.
    pub prims: Vec<ClippedPrim>,
}

/// One primitive leaving the clipper.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClippedPrim {
    /// Indices of its vertices in [`ClippedPrims::verts`] (by `stride`); 1 to 3 used by `kind`.
    pub v: [u32; 3],
    /// The vertex whose values flat inputs take (after the provoking-vertex
    /// rules and clipping).
    pub provoking: u32,
    /// Point, line or triangle.
    pub kind: PrimKind,
    /// Edge flags (bit i: edge from `v[i]` to `v[i+1]` is a polygon edge).
    pub edge_flags: u8,
    /// Command (draw) index the primitive belongs to.
    pub command: u32,
    /// State block index.
    pub state: u32,
    /// Viewport the primitive was transformed with.
    pub viewport: u8,
    /// Point size in pixels (points only).
    pub point_size: f32,
}

/// A plane equation `value(px, py) = a0 + dadx * (px - ref_x) + dady * (py - ref_y)`
/// over integer pixel coordinates, with the pixel-centre offset folded in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Plane {
    /// The value at the reference pixel `(ref_x, ref_y)`.
    pub a0: f32,
    /// Change per pixel in x.
    pub dadx: f32,
    /// Change per pixel in y.
    pub dady: f32,
}

/// A set-up primitive (written by setup, read by bin, raster and fragment).
///
/// Coverage: edge `i` is `E(x, y) = c[i] + a[i] * x + b[i] * y` at integer
/// pixel `(x, y)` (the sample position, with `half_pixel_center` folded in);
/// a pixel is covered iff `E > 0` for every edge.  The fill rule's
/// tie-breaking is folded into `c` (see setup.rs), so the test is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct SetupPrim {
    /// Per edge, the step of `E` per pixel in x (a difference of two
    /// fixed-point y coordinates, 8 sub-pixel bits; setup.rs derives it).
    pub a: [i32; MAX_EDGES],
    /// Per edge, the step of `E` per pixel in y.
    pub b: [i32; MAX_EDGES],
    /// Per edge, `E` at pixel (0, 0), with the fill rule's tie-break folded
    /// in; 64-bit because over a 2^14-pixel guard band it exceeds 2^31 (bin
    /// and raster narrow it per tile).
    pub c: [i64; MAX_EDGES],
    /// Edges in use.
    pub num_edges: u8,
    /// Point, line or triangle (after unfilled modes are decomposed).
    pub kind: PrimKind,
    /// Whether the primitive faces front (`gl_FrontFacing`, and the stencil face).
    pub front_facing: bool,
    /// Viewport index the primitive was transformed with (selects its scissor).
    pub viewport: u8,
    /// Pixel bounding box (inclusive min, exclusive max), already clipped to
    /// the framebuffer and, with `scissor`, to the scissor rectangle.
    pub x0: i32,
    /// Top edge of the bounding box, inclusive.
    pub y0: i32,
    /// Right edge, exclusive.
    pub x1: i32,
    /// Bottom edge, exclusive.
    pub y1: i32,
    /// Reference pixel of the plane equations.
    pub ref_x: i32,
    /// Reference row of the plane equations.
    pub ref_y: i32,
    /// State block index ([`RecordedScene::states`]).
    pub state: u32,
    /// Command index ([`RecordedScene::commands`]).
    pub command: u32,
    /// Index of the first plane in [`SetupPrims::planes`]: depth, then 1/w,
    /// then one plane per linked fragment-input component (4 per slot).
    pub planes: u32,
    /// Multisample rasterization: 1 + index into [`SetupPrims::sample_c`]
    /// (0: single-sample).  `c` then holds, per edge, the most inclusive
    /// of the samples' values, so binning stays conservative.
    pub ms: u32,
}

/// Samples per pixel of multisample rasterization (PIPE 4x; the only count
/// `is_format_supported` reports besides 1).
pub const MS_SAMPLES: usize = 4;

/// The set-up primitives of one job.
#[derive(Default)]
pub struct SetupPrims {
    /// The primitives, in submission order.
    pub prims: Vec<SetupPrim>,
    /// Plane equations, addressed by [`SetupPrim::planes`].
    pub planes: Vec<Plane>,
    /// Per multisampled primitive, per sample, the edges' `c` evaluated at
    /// that sample's position (reduced form, as `SetupPrim::c`).
    pub sample_c: Vec<[[i64; MAX_EDGES]; MS_SAMPLES]>,
}

impl SetupPrims {
    /// Empties every array (keeping their allocations).
    pub fn clear(&mut self) {
        self.prims.clear();
        self.planes.clear();
        self.sample_c.clear();
    }
}

/// Flags of a bin entry.
pub mod bin_flags {
    /// The entry covers the whole tile (all edges trivially accepted).
    pub const FULL_TILE: u16 = 1 << 0;
    /// Full-tile and opaque: replaces everything earlier in the bin
    /// (nothing earlier needs to run).
    pub const OPAQUE: u16 = 1 << 1;
    /// The entry is a clear (`prim` indexes [`super::JobBins::clears`]).
    pub const CLEAR: u16 = 1 << 2;
    /// The entry's draw counts samples or pipeline statistics, or its
    /// fragment shader has side effects (shader buffer or image writes):
    /// earlier entries must not be skipped past it... and it may not be
    /// skipped.
    pub const COUNTED: u16 = 1 << 3;
}

/// One entry of a tile's bin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BinEntry {
    /// Index into the job's [`SetupPrims::prims`] (or clears).
    pub prim: u32,
    /// Edges that are not trivially accepted for this tile (bit i = edge i).
    pub edge_mask: u8,
    /// Padding to 8 bytes (always 0).
    pub _pad: u8,
    /// [`bin_flags`] bits.
    pub flags: u16,
}

/// A job's binned primitives, compressed by tile (CSR): the entries of tile
/// `t` are `entries[tile_start[t] .. tile_start[t + 1]]`, in submission order.
#[derive(Default)]
pub struct JobBins {
    /// Per tile, the first entry of its bin; `tiles + 1` values.
    pub tile_start: Vec<u32>,
    /// All tiles' entries, tile after tile.
    pub entries: Vec<BinEntry>,
    /// Clears recorded in this job (a clear is its own job).
    pub clears: Vec<ClearValue>,
    /// The buffers of this job's clears (`ClearFlags::empty()` for a draw job).
    pub clear_buffers: ClearFlags,
}

/// A front-end job's output, kept until the back end has run (written by
/// setup and bin, read by raster and fragment).
#[derive(Default)]
pub struct BinnedJob {
    /// The job's set-up primitives.
    pub prims: SetupPrims,
    /// Its per-tile bins over `prims`.
    pub bins: JobBins,
}

impl BinnedJob {
    /// The bin entries of tile `t`, in submission order.
    #[inline]
    pub fn tile_entries(&self, t: usize) -> &[BinEntry] {
        let b = &self.bins;
        match (b.tile_start.get(t), b.tile_start.get(t + 1)) {
            (Some(&s), Some(&e)) => &b.entries[s as usize..e as usize],
            _ => &[],
        }
    }
}

/// A primitive over a segment's local vertices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AssembledPrim {
    /// Its local vertices (1 to 3 used, by the segment's kind).
    pub v: [u16; 3],
    /// The local vertex flat inputs take their value from.
    pub provoking: u16,
    /// Edge-flag bits ([`EDGE_FLAGS_ALL`]).
    pub edge_flags: u8,
}

/// What a front-end job part asks for: primitives `first_prim ..
/// first_prim + num_prims` of one restart run of one instance of one draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobPart {
    /// Command (draw) index in the scene.
    pub command: u32,
    /// State block index of the draw.
    pub state: u32,
    /// Instance number within the draw (0-based; `instance_index` is
    /// `start_instance + instance`).
    pub instance: u32,
    /// First element of the run, relative to `DrawInfo::start`.
    pub run_start: u32,
    /// Elements in the run.
    pub run_len: u32,
    /// First primitive of the run this part assembles.
    pub first_prim: u32,
    /// Primitives it assembles.
    pub num_prims: u32,
}

/// A batch of assembled primitives and the vertices they use: the unit the
/// VS runs over (at most 256 vertices, the fetch stage's `SEGMENT_MAX_VERTS`).
///
/// Fetch fills it, shade writes its outputs, stream output and clip read
/// it: like [`ClippedPrims`] and [`SetupPrims`], it is data between stages,
/// so it lives here, below every stage.
#[derive(Default)]
pub struct Segment {
    /// The job part the primitives come from.
    pub part: JobPart,
    /// Point, line or triangle.
    pub kind: PrimKind,
    /// Per local vertex, its vertex id (index + bias, or the element
    /// number): feeds `vertex_index` and the vertex-buffer address.
    pub vids: Vec<i64>,
    /// The assembled primitives over local vertices.
    pub prims: Vec<AssembledPrim>,
    /// The local vertices' inputs and, once shaded, outputs.
    pub batch: VertexBatch,
}

impl Segment {
    /// Empties the segment for `part`'s primitives of `kind`, keeping its
    /// allocations.
    pub fn reset(&mut self, part: JobPart, kind: PrimKind) {
        self.part = part;
        self.kind = kind;
        self.vids.clear();
        self.prims.clear();
        self.batch.count = 0;
        self.batch.groups = 0;
    }
}
