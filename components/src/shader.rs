//! The shader interface: what a vertex or fragment shader is to the pipeline.
//!
//! Both kinds of shader ferropipe runs implement the same two traits:
//! programs compiled from WGSL/GLSL by `ferropipe-shader` (naga front end,
//! lane interpreter), and Rust-native shaders written by an embedding host
//! (the zero-overhead path).  The pipeline sees only [`VertexShader`] /
//! [`FragmentShader`] and the [`ShaderInfo`] that describes their interface.
//!
//! # Lanes
//! Shaders run over SIMD *lanes*: one vertex or one pixel per lane, [`LANES`]
//! lanes per register ([`Lanes`] = `wide::f32x8`).  Integer and boolean values
//! travel bit-cast in the same registers (`Lanes::to_bits`/`from_bits`), so
//! one register file serves every type.  A call processes `groups` registers
//! per value so interpreter dispatch is paid once per `groups * 8` lanes.
//!
//! # Data layout (structure of arrays)
//! Values are stored *value-major*: component `c` of slot `s` for group `g`
//! is `data[(s * 4 + c) * groups + g]`.  A shader reads and writes whole rows
//! of `groups` registers, which keeps the inner loops contiguous.
//!
//! # Fragment lane order
//! One fragment group is a 4x2 pixel block made of two 2x2 quads (so
//! derivatives are lane differences inside a quad):
//!
//! ```text
//!   lane:  0 1 | 4 5        x offset: FRAG_LANE_X
//!          2 3 | 6 7        y offset: FRAG_LANE_Y
//! ```
//! A 4x4 raster block is two groups: rows 0-1, then rows 2-3.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use crate::enums::ShaderType;
use crate::format::Format;
use crate::resource::ResourceLayout;
use crate::state::SamplerState;
use crate::view::SamplerViewDesc;

/// Lanes per SIMD register (AVX2 f32x8; see `.cargo/config.toml`).
pub const LANES: usize = 8;

/// One SIMD register of [`LANES`] 32-bit values.
pub type Lanes = wide::f32x8;
/// Integer view of a register.
pub type ILanes = wide::i32x8;
/// Unsigned view of a register.
pub type ULanes = wide::u32x8;

/// Pixel x offset of each fragment lane inside its 4x2 group.
pub const FRAG_LANE_X: [u32; LANES] = [0, 1, 0, 1, 2, 3, 2, 3];
/// Pixel y offset of each fragment lane inside its 4x2 group.
pub const FRAG_LANE_Y: [u32; LANES] = [0, 0, 1, 1, 0, 0, 1, 1];

/// TGSI-style semantic of a shader input or output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Semantic {
    /// Clip-space position (VS output) / window position `frag_coord` (FS input).
    Position,
    /// `TGSI_SEMANTIC_COLOR[n]`: flatshade, two-side and colour clamping act on it.
    Color(u8),
    /// `TGSI_SEMANTIC_BCOLOR[n]`: back-face colour for `light_twoside`.
    BColor(u8),
    /// `TGSI_SEMANTIC_GENERIC[n]`.
    Generic(u8),
    /// Point size (`gl_PointSize`).
    PointSize,
    /// Clip distances `4n .. 4n+3`.
    ClipDistance(u8),
    /// Fragment shader: front-facing flag (bool lanes).
    FrontFacing,
    /// Fragment shader: point-sprite coordinate (`gl_PointCoord`).
    PointCoord,
    /// Fragment shader: sample index.
    SampleId,
    /// Fragment shader output: depth (`frag_depth`).
    Depth,
    /// Fragment shader output: sample mask.
    SampleMask,
}

/// How a varying is interpolated across a primitive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Perspective-correct (the default).
    #[default]
    Perspective,
    /// Linear in window space (`noperspective`).
    Linear,
    /// The provoking vertex's value (`flat`).
    Flat,
}

/// Where inside the pixel a varying is evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Sampling {
    /// At the pixel centre (the default).
    #[default]
    Center,
    /// At a covered sample of the pixel (centroid), for MSAA edges.
    Centroid,
    /// At each sample: the fragment shader runs per sample.
    Sample,
}

/// The scalar type of a value's components.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// 32-bit float.
    #[default]
    Float,
    /// 32-bit signed integer.
    Sint,
    /// 32-bit unsigned integer.
    Uint,
    /// Boolean (WGSL `bool`).
    Bool,
}

/// One input or output of a shader stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoSlot {
    /// What the value means to the pipeline (position, colour, generic varying, ...).
    pub semantic: Semantic,
    /// `@location(i)` for user values; for VS inputs, the vertex element index.
    pub location: u32,
    /// Components used (1..=4).
    pub components: u8,
    /// The scalar type of its components.
    pub kind: ScalarKind,
    /// How a fragment input is interpolated (perspective, linear or flat).
    pub interpolation: Interpolation,
    /// Where a fragment input is sampled (centre, centroid or sample).
    pub sampling: Sampling,
    /// Dual-source blending index (`@blend_src(1)`) for FS colour outputs.
    pub blend_src: u8,
    /// Fragment inputs: the components the shader reads (bit c: component
    /// c).  Setup and interpolation skip the others (a `vec4` varying of
    /// which only `.xy` is sampled costs two planes, not four).  `0xf`
    /// unless the shader compiler proved less; a native shader that sets
    /// fewer bits must not read the other components.
    pub read: u8,
}

impl IoSlot {
    /// A 4-component float slot with default interpolation.
    pub fn new(semantic: Semantic, location: u32) -> Self {
        IoSlot {
            semantic,
            location,
            components: 4,
            kind: ScalarKind::Float,
            interpolation: Interpolation::Perspective,
            sampling: Sampling::Center,
            blend_src: 0,
            read: 0xf,
        }
    }
}

impl IoSlot {
    /// Sets the number of components used (1..=4).
    pub fn with_components(mut self, components: u8) -> Self {
        self.components = components.clamp(1, 4);
        self
    }

    /// Sets the scalar kind of the components.
    pub fn with_kind(mut self, kind: ScalarKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the interpolation qualifier.
    pub fn with_interpolation(mut self, interpolation: Interpolation) -> Self {
        self.interpolation = interpolation;
        self
    }

    /// Sets the sampling qualifier.
    pub fn with_sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }
}

/// What one output component of a compiled shader is, when the compiler can
/// tell statically (see [`ShaderInfo::output_values`]).
///
/// The pipeline may use this to skip shading: a fragment shader whose colour
/// output is `Input` of a varying can take the interpolated varying
/// directly, and a vertex shader that only copies its attributes needs no
/// call at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutputValue {
    /// Computed by the shader (or not known): call `run`.
    #[default]
    Computed,
    /// An unmodified copy of input component `component` of input slot
    /// `slot` (VS: vertex element slot; FS: varying slot).
    Input {
        /// The input slot.
        slot: u32,
        /// The component of that slot, 0 to 3.
        component: u8,
    },
    /// The same constant bits in every lane.
    Constant(u32),
    /// Never written by the shader (reads as 0).
    Undefined,
}

/// A shader's interface, as the pipeline needs to know it.
///
/// `inputs` and `outputs` fix the slot order of the SoA buffers passed to
/// `run`: slot `i` of [`VertexIo::inputs`] is `inputs[i]`, and so on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShaderInfo {
    /// Vertex or fragment.
    pub stage: ShaderType,
    /// VS: vertex attributes (location = vertex element index).
    /// FS: varyings and system values, in slot order.
    pub inputs: Vec<IoSlot>,
    /// VS: position, varyings, point size, clip distances, in slot order.
    /// FS: colour outputs (location = colour buffer), depth, sample mask.
    pub outputs: Vec<IoSlot>,
    /// Number of clip distances written (0..=8), VS only.
    pub num_clip_distances: u8,
    /// FS may kill lanes (`discard`): early depth writes are not allowed.
    pub uses_discard: bool,
    /// FS reads screen-space derivatives (needs whole quads, helper lanes).
    pub uses_derivatives: bool,
    /// Bit i: constant buffer i is read.
    pub const_buffers_used: u32,
    /// Bit i: sampler view i is read.
    pub sampler_views_used: u128,
    /// Bit i: sampler state i is read.
    pub samplers_used: u32,
    /// FS: bit c set when component c of `frag_coord` (x, y, z, 1/w) is read.
    pub frag_coord_mask: u8,
    /// VS: reads `vertex_index`.
    pub reads_vertex_id: bool,
    /// VS: reads `instance_index`.
    pub reads_instance_id: bool,
    /// Bit i: shader buffer i (`@group(3) @binding(i)`) is read or written.
    pub shader_buffers_used: u32,
    /// Bit i: shader image i (`@group(4) @binding(i)`) is read or written.
    pub shader_images_used: u32,
    /// Bit i: the shader stores to shader buffer i or runs atomics on it
    /// (checked against `set_shader_buffers`' `writable_bitmask`).
    pub shader_buffers_written: u32,
    /// Bit i: the shader loads from shader image i (`textureLoad`; checked
    /// against the view's `PIPE_IMAGE_ACCESS_READ`).
    pub shader_images_read: u32,
    /// Bit i: the shader stores to shader image i (`textureStore`; checked
    /// against the view's `PIPE_IMAGE_ACCESS_WRITE`).
    pub shader_images_written: u32,
    /// The shader has side effects: it stores to shader buffers or images
    /// or runs atomics on them.  A fragment shader that does runs for every
    /// covered fragment before the depth test (late depth), unless it asks
    /// for [`ShaderInfo::early_fragment_tests`] (GL 4.6 section 14.9: early
    /// tests only when the shader cannot tell; llvmpipe's `lp_state_fs.c`
    /// decides the same way from `info.writes_memory`).
    pub writes_memory: bool,
    /// FS: `@early_depth_test(force)` / `layout(early_fragment_tests) in`:
    /// depth, stencil and occlusion counting happen before the shader, and
    /// its depth output and discards do not change them (GL 4.6 section
    /// 15.2.4).
    pub early_fragment_tests: bool,
    /// Per output slot, what each of its 4 components is (filled by the
    /// shader compiler; empty means every output is `Computed`).  Lets the
    /// pipeline detect pass-through shaders, see [`OutputValue`] and
    /// [`ShaderInfo::is_passthrough`].
    pub output_values: Vec<[OutputValue; 4]>,
}

impl ShaderInfo {
    /// Index of the output slot with this semantic, if any.
    pub fn output_slot(&self, semantic: Semantic) -> Option<usize> {
        self.outputs.iter().position(|o| o.semantic == semantic)
    }

    /// Index of the input slot with this semantic, if any.
    pub fn input_slot(&self, semantic: Semantic) -> Option<usize> {
        self.inputs.iter().position(|o| o.semantic == semantic)
    }

    /// FS writes depth (disables early depth).
    pub fn writes_depth(&self) -> bool {
        self.output_slot(Semantic::Depth).is_some()
    }

    /// An empty interface for `stage` (builder start for Rust-native shaders).
    pub fn new(stage: ShaderType) -> Self {
        ShaderInfo {
            stage,
            ..Default::default()
        }
    }

    /// Appends an input slot (builder style).
    pub fn with_input(mut self, slot: IoSlot) -> Self {
        self.inputs.push(slot);
        self
    }

    /// Appends an output slot (builder style).
    pub fn with_output(mut self, slot: IoSlot) -> Self {
        self.outputs.push(slot);
        self
    }

    /// What component `component` of output slot `slot` is (`Computed` when
    /// unknown).
    pub fn output_value(&self, slot: usize, component: usize) -> OutputValue {
        self.output_values
            .get(slot)
            .map_or(OutputValue::Computed, |v| v[component & 3])
    }

    /// Whether every output component is a copy of an input, a constant or
    /// undefined, and nothing else is observable (no discard, no depth or
    /// sample-mask output): the pipeline can then route data instead of
    /// calling `run`.
    pub fn is_passthrough(&self) -> bool {
        !self.uses_discard
            && !self.writes_memory
            && !self.outputs.is_empty()
            && self.output_values.len() == self.outputs.len()
            && self
                .output_values
                .iter()
                .flatten()
                .all(|v| !matches!(v, OutputValue::Computed))
    }
}

/// A sampler view bound to a shader stage, with the bytes it reads.
#[derive(Clone, Copy, Debug)]
pub struct BoundTexture<'a> {
    /// The view: levels, layers, format, swizzle.
    pub view: &'a SamplerViewDesc,
    /// The viewed resource's layout and format (the view's format may differ).
    pub layout: &'a ResourceLayout,
    /// The resource's own format (the view's may be a cast of it).
    pub resource_format: Format,
    /// The resource's bytes.
    pub data: &'a [u8],
}

/// One bound shader buffer (`set_shader_buffers`): the words of its range.
///
/// Shader memory is 32-bit words: every location WGSL can name in storage
/// is 4-byte aligned, and invocations on different threads may touch the
/// same words (atomics, or racy shaders), which relaxed atomics make
/// defined behaviour (plain `mov`s on x86-64).
#[derive(Clone, Copy, Debug)]
pub struct WordBuffer<'a> {
    /// `floor(bytes / 4)` words; a trailing partial word is unreachable.
    pub words: &'a [AtomicU32],
    /// The bound size in bytes (what `arrayLength` divides).
    pub bytes: u32,
}

/// One bound storage image (`set_shader_images`): a level (and a range of
/// layers) of a texture, or a range of a buffer.
#[derive(Clone, Copy, Debug)]
pub struct StorageImage<'a> {
    /// The whole resource's words.
    pub words: &'a [AtomicU32],
    /// The view's format (its texel size is a multiple of 4 bytes; the
    /// façade refuses others).
    pub format: Format,
    /// Width of the level (or the buffer image's texel count).
    pub width: u32,
    /// Height of the level (1 for buffers).
    pub height: u32,
    /// Depth of a 3D level, or the number of layers of the view.
    pub depth: u32,
    /// Byte offset of texel (0, 0) of the first layer of the level.
    pub offset: usize,
    /// Bytes between rows.
    pub row_stride: usize,
    /// Bytes between layers (or 3D slices).
    pub slice_stride: usize,
    /// Bytes per texel.
    pub bpp: usize,
}

/// The resources a shader invocation may read (and, for shader buffers
/// and images, write).
#[derive(Clone, Copy, Debug, Default)]
pub struct ShaderResources<'a> {
    /// Constant buffer bytes per slot (empty when unbound).
    pub constants: &'a [&'a [u8]],
    /// Sampler views per slot.
    pub textures: &'a [Option<BoundTexture<'a>>],
    /// Sampler states per slot.
    pub samplers: &'a [Option<&'a SamplerState>],
    /// Shader buffers per slot (`@group(3)`; a slot past the end is
    /// unbound).
    pub buffers: &'a [Option<WordBuffer<'a>>],
    /// Shader images per slot (`@group(4)`).
    pub images: &'a [Option<StorageImage<'a>>],
}

/// The lanes of one vertex-shader call.
pub struct VertexIo<'a> {
    /// Registers per value (`ceil(count / LANES)`).
    pub groups: usize,
    /// Vertices that are real; lanes past `count` are padding whose results
    /// are ignored.
    pub count: usize,
    /// `[input slot][component][group]`, see the module docs.  Integer
    /// formats arrive bit-cast.
    pub inputs: &'a [Lanes],
    /// `@builtin(vertex_index)` per lane (i32 bits).
    pub vertex_id: &'a [Lanes],
    /// `@builtin(instance_index)` per lane (i32 bits).
    pub instance_id: &'a [Lanes],
    /// `[output slot][component][group]`.
    pub outputs: &'a mut [Lanes],
}

/// The lanes of one fragment-shader call.
pub struct FragmentIo<'a> {
    /// Registers per value; each group is one 4x2 block (see module docs).
    pub groups: usize,
    /// `[input slot][component][group]`: interpolated varyings and system
    /// values (front-facing as bool lanes, point coordinates, ...).
    pub inputs: &'a [Lanes],
    /// `[component][group]`: window x, y of the pixel centre, z, and 1/w.
    pub frag_coord: &'a [Lanes],
    /// Per group, the live-lane mask (all bits set = live).  Lanes that are
    /// not live are helper lanes: still computed, so derivatives work, never
    /// written.  `discard` clears lanes here.
    pub mask: &'a mut [Lanes],
    /// `[output slot][component][group]`.
    pub outputs: &'a mut [Lanes],
}

/// Row `[slot][component]` (all groups) of a value-major SoA buffer.
#[inline]
fn soa_row(data: &[Lanes], groups: usize, slot: usize, component: usize) -> &[Lanes] {
    let start = (slot * 4 + component) * groups;
    &data[start..start + groups]
}

/// Mutable row `[slot][component]` of a value-major SoA buffer.
#[inline]
fn soa_row_mut(data: &mut [Lanes], groups: usize, slot: usize, component: usize) -> &mut [Lanes] {
    let start = (slot * 4 + component) * groups;
    &mut data[start..start + groups]
}

impl VertexIo<'_> {
    /// Component `component` of input slot `slot`, one register per group.
    #[inline]
    pub fn input(&self, slot: usize, component: usize) -> &[Lanes] {
        soa_row(self.inputs, self.groups, slot, component)
    }

    /// Component `component` of output slot `slot`, one register per group.
    #[inline]
    pub fn output(&mut self, slot: usize, component: usize) -> &mut [Lanes] {
        soa_row_mut(self.outputs, self.groups, slot, component)
    }
}

impl FragmentIo<'_> {
    /// Component `component` of input slot `slot`, one register per group.
    #[inline]
    pub fn input(&self, slot: usize, component: usize) -> &[Lanes] {
        soa_row(self.inputs, self.groups, slot, component)
    }

    /// Component `component` (x, y, z, 1/w) of the window position.
    #[inline]
    pub fn frag_coord(&self, component: usize) -> &[Lanes] {
        let start = component * self.groups;
        &self.frag_coord[start..start + self.groups]
    }

    /// Component `component` of output slot `slot`, one register per group.
    #[inline]
    pub fn output(&mut self, slot: usize, component: usize) -> &mut [Lanes] {
        soa_row_mut(self.outputs, self.groups, slot, component)
    }
}

/// A vertex shader the pipeline can run.
///
/// Implement this for a Rust-native shader; `ferropipe-shader` implements it
/// for naga-compiled programs.
pub trait VertexShader: Send + Sync {
    /// The shader's interface.  Must not change after creation.
    fn info(&self) -> &ShaderInfo;
    /// Shades `io.groups * LANES` vertices.
    fn run(&self, resources: &ShaderResources<'_>, io: &mut VertexIo<'_>);
    /// Whether `run` writes every component of every output slot for every
    /// lane.  When it does, the pipeline skips clearing the output buffer
    /// before the call (otherwise unwritten outputs read as 0).  The
    /// default, `false`, is always safe.
    fn writes_all_outputs(&self) -> bool {
        false
    }
    /// Whether a `run` since the last call stopped before finishing (a
    /// compiled shader's runaway-loop limit), clearing the flag.  The
    /// engine's flush asks every shader it ran and reports `true` as an
    /// error instead of a normal completion.  Rust-native shaders always
    /// finish: the default is `false`.
    fn take_incomplete(&self) -> bool {
        false
    }
}

/// A fragment shader the pipeline can run.
pub trait FragmentShader: Send + Sync {
    /// The shader's interface.  Must not change after creation.
    fn info(&self) -> &ShaderInfo;
    /// Shades `io.groups` 4x2 pixel blocks.
    fn run(&self, resources: &ShaderResources<'_>, io: &mut FragmentIo<'_>);
    /// Whether `run` writes every component of every output slot for every
    /// group.  When it does, the pipeline skips clearing the output buffer
    /// before the call (otherwise unwritten outputs read as 0).  The
    /// default, `false`, is always safe.
    fn writes_all_outputs(&self) -> bool {
        false
    }
    /// Whether a `run` since the last call stopped before finishing (a
    /// compiled shader's runaway-loop limit), clearing the flag.  The
    /// engine's flush asks every shader it ran and reports `true` as an
    /// error instead of a normal completion.  Rust-native shaders always
    /// finish: the default is `false`.
    fn take_incomplete(&self) -> bool {
        false
    }
    /// When `run` does nothing but copy input rows to output rows, those
    /// copies as `(output row, input row)` pairs, rows numbered `slot * 4
    /// + component` (`run` then leaves every other output row as it
    /// found it, and never clears mask lanes).  The pipeline may then
    /// interpolate the inputs straight into the output rows and not call
    /// `run`, as llvmpipe's fs variant folds such a shader into its
    /// interpolation.  The default, `None`, always calls `run`.
    fn interface_copies(&self) -> Option<&[(u32, u32)]> {
        None
    }
}

/// A shader CSO's program, shared between the CSO and recorded draws.
pub type VertexShaderRef = Arc<dyn VertexShader>;
/// A fragment shader CSO's program.
pub type FragmentShaderRef = Arc<dyn FragmentShader>;
