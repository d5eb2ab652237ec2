//! The façade's typed errors, one enum per operation family (as wgpu has
//! `CreateBufferError`, `RenderPassError`, ...).
//!
//! Validation happens once, here at the Gallium boundary (wgpu's rule); the
//! stages behind it assume valid input.  A failing call returns an
//! [`Error`](enum@Error), which either wraps a family's error (a [`ResourceError`] for a
//! box outside a level, a [`BindError`] for a slot past the limit, ...) or
//! is one of the conditions every call shares: [`Error::Unsupported`],
//! [`Error::InvalidHandle`], [`Error::OutOfMemory`], [`Error::DeviceLost`],
//! [`Error::Shader`].  Every variant carries the numbers that were wrong
//! (the slot and the limit, the box and the extent), and its `Display`
//! starts with the Gallium call (`"set_vertex_buffers: start_slot: slots
//! 30..34 exceed the 32 available"`), so a host can match on the variant
//! and a person can read the message.  [`Error::call`] and [`Error::field`]
//! name the call and the argument at fault for any variant.
//!
//! The families split by what was wrong, not by source file:
//!
//! | family | calls |
//! |---|---|
//! | [`ResourceError`] | a resource or view that does not fit its use: `resource_create`, views and surfaces, transfers, copies, blits, and buffers given to bind calls |
//! | [`BindError`] | `set_*` / `bind_*` arguments: slot ranges, strides, non-finite values |
//! | [`StateError`] | CSO and shader-state fields (`create_*_state`) |
//! | [`StreamOutputError`] | stream-output declarations and targets |
//! | [`DrawError`] | `draw_vbo` against the bound state, and clears |
//! | [`StorageError`] | shader buffers and images a draw or launch uses |
//! | [`QueryError`] | query objects used out of order or with a bad index |
//! | [`ComputeError`] | `create_compute_state` and `launch_grid` |
//! | [`ConfigError`] | `Screen::new`'s configuration and environment |
//! | [`CaptureError`] | `start_capture` / `stop_capture` out of order |
//!
//! All enums are `#[non_exhaustive]`: new checks add variants.  The one
//! variant with a free-text reason, [`Error::Invalid`], is for hosts that
//! report their own argument checks as a ferropipe error (the demo does);
//! ferropipe's own checks never return it.

#![warn(missing_docs)]

use ferropipe_components::enums::{PrimType, QueryType, TextureTarget, TransferFlags};
use ferropipe_components::format::Format;
use ferropipe_components::shader::Semantic;
use ferropipe_components::state::PipeBox;
use thiserror::Error;

/// Everything a ferropipe call can fail with.
///
/// The replayer's exit codes follow [`Error::is_unsupported`] (3), and
/// [`Error::OutOfMemory`] (3) and [`Error::DeviceLost`] (5); every other
/// variant is input the caller got wrong (2).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A resource, view or box does not fit the call.
    #[error(transparent)]
    Resource(#[from] ResourceError),

    /// A binding call's argument is out of range.
    #[error(transparent)]
    Bind(#[from] BindError),

    /// A CSO or shader state has an invalid field.
    #[error(transparent)]
    State(#[from] StateError),

    /// A stream-output declaration or target is invalid.
    #[error(transparent)]
    StreamOutput(#[from] StreamOutputError),

    /// A draw or clear is inconsistent with the bound state.
    #[error(transparent)]
    Draw(#[from] DrawError),

    /// A shader buffer or image a draw or launch uses is unbound or bound
    /// without the access the shader needs.
    #[error(transparent)]
    Storage(#[from] StorageError),

    /// A query is used out of order or with a bad index.
    #[error(transparent)]
    Query(#[from] QueryError),

    /// A compute state or grid launch is invalid.
    #[error(transparent)]
    Compute(#[from] ComputeError),

    /// The screen's configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// A capture is started or stopped out of order.
    #[error(transparent)]
    Capture(#[from] CaptureError),

    /// A handle refers to an object that was deleted, or belongs to another
    /// context.
    #[error("{call}: {field} refers to a {kind} that does not exist in this context")]
    InvalidHandle {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the handle.
        field: &'static str,
        /// The kind of object the handle names (`BlendCso`, `Transfer`, ...).
        kind: &'static str,
    },

    /// The call is valid Gallium but ferropipe does not implement it (yet);
    /// `what` names the feature.  The replayer exits with status 3 on this
    /// error.
    #[error("{call}: unsupported: {what}")]
    Unsupported {
        /// The Gallium call.
        call: &'static str,
        /// The feature ferropipe lacks.
        what: String,
    },

    /// A resource (or scene memory) larger than the screen can allocate.
    #[error("{call}: out of memory allocating {bytes} bytes")]
    OutOfMemory {
        /// The Gallium call.
        call: &'static str,
        /// The size asked for (`u64::MAX` when it overflows).
        bytes: u64,
    },

    /// The context is lost, as a GPU context is after its driver's timeout
    /// detection and recovery: a flush or `launch_grid` ran past the
    /// context's work budget ([`crate::Context::set_work_budget`]).  Every
    /// later call on that context returns this error; the host drops the
    /// context and creates a new one.  Other contexts of the screen, and
    /// resources the lost work was not writing, are unaffected.
    #[error("{call}: device lost: {reason}")]
    DeviceLost {
        /// The call that found the context lost.
        call: &'static str,
        /// Why the context was lost (the budget and what exceeded it).
        reason: String,
    },

    /// Input a host's own check found wrong, for hosts that report their
    /// argument errors through this type (the demo's `buffer_with_data`,
    /// a glTF file it cannot load).  ferropipe's own checks never return
    /// it: they return the typed families above.  Made with
    /// [`Error::invalid`].
    #[error("{call}: invalid {field}: {reason}")]
    Invalid {
        /// The host's call.
        call: &'static str,
        /// The argument at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// A shader failed to compile or uses something not supported.
    #[error("{call}: shader: {source}")]
    Shader {
        /// The Gallium call (`create_vs_state`, `launch_grid`, ...).
        call: &'static str,
        /// The compiler's or interpreter's error.
        #[source]
        source: ferropipe_shader::ShaderError,
    },
}

impl Error {
    /// Shorthand for [`Error::Invalid`] (host-side checks).
    pub fn invalid(call: &'static str, field: &'static str, reason: impl Into<String>) -> Self {
        Error::Invalid {
            call,
            field,
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::Unsupported`].
    pub fn unsupported(call: &'static str, what: impl Into<String>) -> Self {
        Error::Unsupported {
            call,
            what: what.into(),
        }
    }

    /// Whether this is "not implemented" rather than "wrong input".
    pub fn is_unsupported(&self) -> bool {
        match self {
            Error::Unsupported { .. } => true,
            Error::Shader { source, .. } => {
                matches!(source, ferropipe_shader::ShaderError::Unsupported { .. })
            }
            _ => false,
        }
    }

    /// Whether the caller's input was wrong (a family error or a stale
    /// handle), as opposed to unsupported, out of memory, a lost device or
    /// a shader error.
    pub fn is_invalid_input(&self) -> bool {
        !matches!(
            self,
            Error::Unsupported { .. }
                | Error::OutOfMemory { .. }
                | Error::DeviceLost { .. }
                | Error::Shader { .. }
        )
    }

    /// The Gallium call that failed.
    pub fn call(&self) -> &'static str {
        match self {
            Error::Resource(e) => e.call(),
            Error::Bind(e) => e.call(),
            Error::State(e) => e.call(),
            Error::StreamOutput(e) => e.call(),
            Error::Draw(e) => e.call(),
            Error::Storage(e) => e.call(),
            Error::Query(e) => e.call(),
            Error::Compute(e) => e.call(),
            Error::Config(_) => "Screen::new",
            Error::Capture(e) => e.call(),
            Error::InvalidHandle { call, .. }
            | Error::Invalid { call, .. }
            | Error::Unsupported { call, .. }
            | Error::OutOfMemory { call, .. }
            | Error::DeviceLost { call, .. }
            | Error::Shader { call, .. } => call,
        }
    }

    /// The argument (or state field) at fault, where there is one: the
    /// field of the Gallium structure, `"box.x/width"`, `"start_slot"`, ...
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Error::Resource(e) => Some(e.field()),
            Error::Bind(e) => Some(e.field()),
            Error::State(e) => Some(e.field()),
            Error::StreamOutput(e) => Some(e.field()),
            Error::Draw(e) => Some(e.field()),
            Error::Storage(e) => Some(e.field()),
            Error::Query(e) => Some(e.field()),
            Error::Compute(e) => Some(e.field()),
            Error::Config(e) => Some(e.field()),
            Error::Capture(e) => Some(e.field()),
            Error::InvalidHandle { field, .. } | Error::Invalid { field, .. } => Some(*field),
            Error::Unsupported { .. }
            | Error::OutOfMemory { .. }
            | Error::DeviceLost { .. }
            | Error::Shader { .. } => None,
        }
    }
}

/// Result with the façade's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A resource, view, surface or box that does not fit the call: template
/// checks of `resource_create`, level / layer / box ranges of views,
/// transfers and copies, formats that cannot view or be bound, buffer
/// ranges of bind calls.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceError {
    /// A template dimension is 0.
    #[error("{call}: {field} is 0; must be at least 1")]
    ZeroExtent {
        /// The Gallium call.
        call: &'static str,
        /// `width0`, `height0`, `depth0` or `array_size`.
        field: &'static str,
    },

    /// A dimension the target does not have is not 1.
    #[error("{call}: {field} is {value} for a {target}; must be 1")]
    ExtentMustBeOne {
        /// The Gallium call.
        call: &'static str,
        /// `height0`, `depth0` or `array_size`.
        field: &'static str,
        /// The value given.
        value: u32,
        /// The template's target.
        target: TextureTarget,
    },

    /// A dimension exceeds the cap for the target
    /// (`PIPE_CAP_MAX_TEXTURE_*`).
    #[error("{call}: {field} {value} exceeds the {limit} limit for {target}")]
    ExtentTooLarge {
        /// The Gallium call.
        call: &'static str,
        /// `width0`, `height0` or `depth0`.
        field: &'static str,
        /// The value given.
        value: u32,
        /// The largest allowed.
        limit: u32,
        /// The template's target.
        target: TextureTarget,
    },

    /// `last_level` names a level the texture cannot have (buffers and
    /// RECT textures have one).
    #[error("{call}: last_level {last_level}, but the {target} has only {levels} level(s)")]
    TooManyLevels {
        /// The Gallium call.
        call: &'static str,
        /// The template's `last_level`.
        last_level: u32,
        /// How many levels its size and target allow.
        levels: u32,
        /// The template's target.
        target: TextureTarget,
    },

    /// A cube has other than 6 layers, or a cube array not a multiple of 6.
    #[error("{call}: array_size {array_size} for a {target}; cubes need 6 layers per cube")]
    CubeLayers {
        /// The Gallium call.
        call: &'static str,
        /// The template's `array_size`.
        array_size: u32,
        /// `PIPE_TEXTURE_CUBE` or `PIPE_TEXTURE_CUBE_ARRAY`.
        target: TextureTarget,
    },

    /// A cube's faces are not square.
    #[error("{call}: height0 {height}: cube faces must be square (width0 {width})")]
    CubeNotSquare {
        /// The Gallium call.
        call: &'static str,
        /// `width0`.
        width: u32,
        /// `height0`.
        height: u32,
    },

    /// More array layers than `PIPE_CAP_MAX_TEXTURE_ARRAY_LAYERS`.
    #[error("{call}: array_size {array_size} exceeds the {limit} layer limit")]
    TooManyLayers {
        /// The Gallium call.
        call: &'static str,
        /// The template's `array_size`.
        array_size: u32,
        /// The cap.
        limit: u32,
    },

    /// More samples than any format supports.
    #[error("{call}: nr_samples {nr_samples}; at most {limit}")]
    TooManySamples {
        /// The Gallium call.
        call: &'static str,
        /// The template's `nr_samples`.
        nr_samples: u32,
        /// The most samples a resource may have.
        limit: u32,
    },

    /// The format cannot be used with these bindings, target or sample
    /// count, and never will be (`is_format_supported` says no for a
    /// reason that is not "not implemented").
    #[error("{call}: {field}: {format}: {reason}")]
    FormatNotSupported {
        /// The Gallium call.
        call: &'static str,
        /// `format/bind` for templates, `format` for views.
        field: &'static str,
        /// The format.
        format: Format,
        /// What rules it out (from [`crate::caps::format_support`]).
        reason: String,
    },

    /// A view format that cannot view the resource's format (the block
    /// sizes or kinds differ).
    #[error("{call}: {field}: {format} cannot view a {resource_format} resource")]
    FormatIncompatible {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the view format.
        field: &'static str,
        /// The view's format.
        format: Format,
        /// The resource's format.
        resource_format: Format,
    },

    /// A surface of the wrong kind: a depth format where a colour buffer
    /// goes, or the reverse.
    #[error("{call}: {field}: {format} is not a {expected} format")]
    FormatKind {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the surface.
        field: &'static str,
        /// The surface's format.
        format: Format,
        /// `"colour"` or `"depth/stencil"`.
        expected: &'static str,
    },

    /// A view's target cannot view the resource's.
    #[error("create_sampler_view: target: {view} cannot view a {resource}")]
    TargetIncompatible {
        /// The view's target.
        view: TextureTarget,
        /// The resource's target.
        resource: TextureTarget,
    },

    /// A view's layer count does not fit its target (a cube view needs 6).
    #[error("create_sampler_view: first_layer/last_layer: {layers} layers for a {target} view")]
    ViewLayerCount {
        /// How many layers the view spans.
        layers: u32,
        /// The view's target.
        target: TextureTarget,
    },

    /// A cube view of a texture whose levels are not square.
    #[error("create_sampler_view: target: a cube view of a {width}x{height} texture")]
    CubeViewNotSquare {
        /// The resource's `width0`.
        width: u32,
        /// The resource's `height0`.
        height: u32,
    },

    /// The resource is not a buffer where the call takes one.
    #[error("{call}: {field}: a {target} is not a buffer")]
    NotABuffer {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the resource.
        field: &'static str,
        /// The resource's target.
        target: TextureTarget,
    },

    /// A buffer where the call takes a texture.
    #[error("{call}: {field}: a buffer ({hint})")]
    IsABuffer {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the resource.
        field: &'static str,
        /// What to use instead.
        hint: &'static str,
    },

    /// The resource was created without the bind flag this use needs.
    #[error("{call}: {field}: the resource was created without {bind}")]
    MissingBind {
        /// The Gallium call.
        call: &'static str,
        /// The argument holding the resource.
        field: &'static str,
        /// The flag, as Gallium spells it (`PIPE_BIND_RENDER_TARGET`).
        bind: &'static str,
    },

    /// A byte range past the end of its buffer.
    #[error("{call}: {field}: {offset}+{size} is past the end of the {buffer_size}-byte buffer")]
    RangePastEnd {
        /// The Gallium call.
        call: &'static str,
        /// The offset and size arguments (`buffer_offset/buffer_size`).
        field: &'static str,
        /// The range's first byte.
        offset: u64,
        /// The range's length in bytes.
        size: u64,
        /// The buffer's `width0`.
        buffer_size: u64,
    },

    /// An offset or size that must be aligned is not.
    #[error("{call}: {field}: {value} is not a multiple of {align}")]
    Misaligned {
        /// The Gallium call.
        call: &'static str,
        /// The argument.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The alignment it needs.
        align: u32,
    },

    /// A value above the call's limit (a size, an offset beyond 2 GiB).
    #[error("{call}: {field}: {value}; at most {limit}")]
    TooLarge {
        /// The Gallium call.
        call: &'static str,
        /// The argument.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest allowed.
        limit: u64,
    },

    /// Host data shorter than the call reads.
    #[error("{call}: {field}: {len} bytes, the call needs {needed}")]
    DataTooSmall {
        /// The Gallium call.
        call: &'static str,
        /// The argument (`data`, `len`).
        field: &'static str,
        /// The bytes given.
        len: usize,
        /// The bytes needed.
        needed: usize,
    },

    /// A mip level past the resource's last.
    #[error("{call}: {field} {level}; the resource's last level is {last_level}")]
    LevelOutOfRange {
        /// The Gallium call.
        call: &'static str,
        /// The argument (`level`, `src.level`, ...).
        field: &'static str,
        /// The level asked for.
        level: u32,
        /// The resource's `last_level`.
        last_level: u32,
    },

    /// A sampler view's level range is empty or past the resource's levels.
    #[error(
        "create_sampler_view: first_level/last_level: {first}..={last} outside the resource's 0..={last_level}"
    )]
    LevelRangeOutOfRange {
        /// `first_level`.
        first: u32,
        /// `last_level` of the view.
        last: u32,
        /// The resource's `last_level`.
        last_level: u32,
    },

    /// A layer range that is empty or past the layers there are.
    #[error("{call}: first_layer/last_layer: {first}..={last} outside the {layers} layers")]
    LayersOutOfRange {
        /// The Gallium call.
        call: &'static str,
        /// `first_layer`.
        first: u32,
        /// `last_layer`.
        last: u32,
        /// The layers of the resource or level.
        layers: u32,
    },

    /// A box outside the level along one axis (an empty or negative extent
    /// included).
    #[error("{call}: {field}: {pos}+{size} outside 0..{extent} of level {level}")]
    BoxOutOfBounds {
        /// The Gallium call.
        call: &'static str,
        /// `box.x/width`, `box.y/height` or `box.z/depth` (with `src.` /
        /// `dst.` for blits).
        field: &'static str,
        /// The box's start along the axis.
        pos: i64,
        /// The box's extent along the axis.
        size: i64,
        /// The level's extent along the axis.
        extent: u32,
        /// The level.
        level: u32,
    },

    /// `transfer_flush_region`'s box is not inside the mapped box.
    #[error(
        "transfer_flush_region: box: {region:?} is not inside the mapped {width}x{height}x{depth}"
    )]
    FlushRegionOutside {
        /// The box, relative to the mapped one.
        region: PipeBox,
        /// The mapped box's width.
        width: i32,
        /// Its height.
        height: i32,
        /// Its depth.
        depth: i32,
    },

    /// `transfer_map` usage with neither `PIPE_MAP_READ` nor `WRITE`.
    #[error("transfer_map: usage: neither READ nor WRITE")]
    NoReadWrite,

    /// `transfer_map` reading with flags that only make sense for writes.
    #[error("transfer_map: usage: READ with {flags:?}")]
    ReadWithWriteOnlyFlags {
        /// The write-only flags given.
        flags: TransferFlags,
    },

    /// A `PERSISTENT` map of a resource created without
    /// `PIPE_RESOURCE_FLAG_MAP_PERSISTENT`.
    #[error(
        "transfer_map: usage: PERSISTENT needs PIPE_RESOURCE_FLAG_MAP_PERSISTENT on the resource"
    )]
    NotPersistentResource,

    /// `transfer_refresh` of a map that is not persistent.
    #[error("transfer_refresh: transfer: not a PERSISTENT map")]
    NotPersistentMap,

    /// `texture_subdata` strides smaller than a row or slice of the box.
    #[error(
        "texture_subdata: stride/layer_stride: {stride}/{layer_stride} smaller than a row ({row_bytes} bytes) or slice ({slice_bytes} bytes) of the box"
    )]
    StrideTooSmall {
        /// The row stride (after defaulting).
        stride: usize,
        /// The slice stride (after defaulting).
        layer_stride: usize,
        /// Bytes in one row of the box.
        row_bytes: usize,
        /// Bytes in one slice of the box.
        slice_bytes: usize,
    },

    /// `clear_buffer` with a clear value of other than 1 to 16 bytes.
    #[error("clear_buffer: value: {len} bytes; must be 1..=16")]
    ClearValueSize {
        /// The value's length.
        len: usize,
    },

    /// `resource_copy_region` between formats of different block sizes.
    #[error("resource_copy_region: dst/src: {dst} and {src} differ in size")]
    BlockSizeMismatch {
        /// The destination's format.
        dst: Format,
        /// The source's format.
        src: Format,
    },

    /// A copy or blit between resources of different sample counts.
    #[error("{call}: {field}: {src} samples copied to {dst} samples")]
    SampleCountMismatch {
        /// The Gallium call.
        call: &'static str,
        /// The argument reported.
        field: &'static str,
        /// The destination's samples per pixel.
        dst: u32,
        /// The source's samples per pixel.
        src: u32,
    },

    /// `resource_copy_region` whose source and destination overlap.
    #[error("resource_copy_region: src_box: source and destination overlap")]
    CopyOverlap,

    /// A blit mask asking for depth or stencil the source lacks.
    #[error("blit: mask: {mask} but {format} has no {aspect}")]
    MaskWithoutAspect {
        /// `PIPE_MASK_Z` or `PIPE_MASK_S`.
        mask: &'static str,
        /// `depth` or `stencil`.
        aspect: &'static str,
        /// The source format.
        format: Format,
    },

    /// A blit between integer and non-integer colour.
    #[error("blit: dst.format: {src} and {dst}: integer and non-integer colour do not convert")]
    IntegerConversion {
        /// The source format.
        src: Format,
        /// The destination format.
        dst: Format,
    },
}

impl ResourceError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use ResourceError::*;
        match self {
            ZeroExtent { call, .. }
            | ExtentMustBeOne { call, .. }
            | ExtentTooLarge { call, .. }
            | TooManyLevels { call, .. }
            | CubeLayers { call, .. }
            | CubeNotSquare { call, .. }
            | TooManyLayers { call, .. }
            | TooManySamples { call, .. }
            | FormatNotSupported { call, .. }
            | FormatIncompatible { call, .. }
            | FormatKind { call, .. }
            | NotABuffer { call, .. }
            | IsABuffer { call, .. }
            | MissingBind { call, .. }
            | RangePastEnd { call, .. }
            | Misaligned { call, .. }
            | TooLarge { call, .. }
            | DataTooSmall { call, .. }
            | LevelOutOfRange { call, .. }
            | LayersOutOfRange { call, .. }
            | BoxOutOfBounds { call, .. }
            | SampleCountMismatch { call, .. } => call,
            TargetIncompatible { .. }
            | ViewLayerCount { .. }
            | CubeViewNotSquare { .. }
            | LevelRangeOutOfRange { .. } => "create_sampler_view",
            FlushRegionOutside { .. } => "transfer_flush_region",
            NoReadWrite | ReadWithWriteOnlyFlags { .. } | NotPersistentResource => "transfer_map",
            NotPersistentMap => "transfer_refresh",
            StrideTooSmall { .. } => "texture_subdata",
            ClearValueSize { .. } => "clear_buffer",
            BlockSizeMismatch { .. } | CopyOverlap => "resource_copy_region",
            MaskWithoutAspect { .. } | IntegerConversion { .. } => "blit",
        }
    }

    /// The argument at fault.
    pub fn field(&self) -> &'static str {
        use ResourceError::*;
        match self {
            ZeroExtent { field, .. }
            | ExtentMustBeOne { field, .. }
            | ExtentTooLarge { field, .. }
            | FormatNotSupported { field, .. }
            | FormatIncompatible { field, .. }
            | FormatKind { field, .. }
            | NotABuffer { field, .. }
            | IsABuffer { field, .. }
            | MissingBind { field, .. }
            | RangePastEnd { field, .. }
            | Misaligned { field, .. }
            | TooLarge { field, .. }
            | DataTooSmall { field, .. }
            | LevelOutOfRange { field, .. }
            | BoxOutOfBounds { field, .. }
            | SampleCountMismatch { field, .. } => field,
            TooManyLevels { .. } => "last_level",
            CubeLayers { .. } | TooManyLayers { .. } => "array_size",
            CubeNotSquare { .. } => "height0",
            TooManySamples { .. } => "nr_samples",
            TargetIncompatible { .. } | CubeViewNotSquare { .. } => "target",
            ViewLayerCount { .. } | LayersOutOfRange { .. } => "first_layer/last_layer",
            LevelRangeOutOfRange { .. } => "first_level/last_level",
            FlushRegionOutside { .. } => "box",
            NoReadWrite | ReadWithWriteOnlyFlags { .. } | NotPersistentResource => "usage",
            NotPersistentMap => "transfer",
            StrideTooSmall { .. } => "stride/layer_stride",
            ClearValueSize { .. } => "value",
            BlockSizeMismatch { .. } => "dst/src",
            CopyOverlap => "src_box",
            MaskWithoutAspect { .. } => "mask",
            IntegerConversion { .. } => "dst.format",
        }
    }
}

/// An argument of a binding call (`set_*`, `bind_*`) out of range.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum BindError {
    /// Slots `start..start + count` run past the `limit` slots there are.
    #[error("{call}: {field}: slots {start}..{end} exceed the {limit} available", end = *start as u64 + *count as u64)]
    SlotOutOfRange {
        /// The Gallium call.
        call: &'static str,
        /// `start_slot` or `index`.
        field: &'static str,
        /// The first slot.
        start: u32,
        /// How many slots the call binds.
        count: usize,
        /// How many slots the stage has.
        limit: usize,
    },

    /// More colour buffers than `PIPE_MAX_COLOR_BUFS`.
    #[error("set_framebuffer_state: cbufs: {count} colour buffers; at most {limit}")]
    TooManyColorBuffers {
        /// The colour buffers given.
        count: usize,
        /// The cap.
        limit: usize,
    },

    /// A framebuffer larger than `PIPE_CAP_MAX_TEXTURE_2D_SIZE`.
    #[error("set_framebuffer_state: width/height: {width}x{height} exceeds {limit}x{limit}")]
    FramebufferTooLarge {
        /// The framebuffer's width.
        width: u32,
        /// Its height.
        height: u32,
        /// The cap, per side.
        limit: u32,
    },

    /// A vertex buffer stride above `PIPE_CAP_MAX_VERTEX_ATTRIB_STRIDE`.
    #[error("set_vertex_buffers: stride: {stride}; at most {limit}")]
    StrideTooLarge {
        /// The stride given.
        stride: u32,
        /// The cap.
        limit: u32,
    },

    /// An index size other than 1, 2 or 4.
    #[error("set_index_buffer: index_size: {index_size}; must be 1, 2 or 4")]
    IndexSize {
        /// The size given.
        index_size: u32,
    },

    /// User constants larger than a constant buffer may be.
    #[error("set_constant_buffer: data: {len} bytes; at most {limit}")]
    UserConstantsTooLarge {
        /// The bytes given.
        len: usize,
        /// `PIPE_SHADER_CAP_MAX_CONST_BUFFER0_SIZE`.
        limit: u32,
    },

    /// A NaN where a number is needed.
    #[error("{call}: {field}: NaN component")]
    Nan {
        /// The Gallium call.
        call: &'static str,
        /// The argument.
        field: &'static str,
    },

    /// A NaN or infinity where a finite number is needed.
    #[error("{call}: {field}: non-finite value")]
    NotFinite {
        /// The Gallium call.
        call: &'static str,
        /// The argument.
        field: &'static str,
    },

    /// `set_min_samples` outside 1..=32.
    #[error("set_min_samples: min_samples: {min_samples}; must be 1..=32")]
    MinSamples {
        /// The value given.
        min_samples: u32,
    },

    /// A shader image view with neither read nor write access.
    #[error("{call}: access: neither PIPE_IMAGE_ACCESS_READ nor PIPE_IMAGE_ACCESS_WRITE")]
    ImageAccessNone {
        /// The Gallium call.
        call: &'static str,
    },
}

impl BindError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use BindError::*;
        match self {
            SlotOutOfRange { call, .. }
            | Nan { call, .. }
            | NotFinite { call, .. }
            | ImageAccessNone { call } => call,
            TooManyColorBuffers { .. } | FramebufferTooLarge { .. } => "set_framebuffer_state",
            StrideTooLarge { .. } => "set_vertex_buffers",
            IndexSize { .. } => "set_index_buffer",
            UserConstantsTooLarge { .. } => "set_constant_buffer",
            MinSamples { .. } => "set_min_samples",
        }
    }

    /// The argument at fault.
    pub fn field(&self) -> &'static str {
        use BindError::*;
        match self {
            SlotOutOfRange { field, .. } | Nan { field, .. } | NotFinite { field, .. } => field,
            TooManyColorBuffers { .. } => "cbufs",
            FramebufferTooLarge { .. } => "width/height",
            StrideTooLarge { .. } => "stride",
            IndexSize { .. } => "index_size",
            UserConstantsTooLarge { .. } => "data",
            MinSamples { .. } => "min_samples",
            ImageAccessNone { .. } => "access",
        }
    }
}

/// A field of a CSO or shader state (`create_*_state`) that is invalid.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StateError {
    /// A NaN or infinity where the state needs a finite number.
    #[error("{call}: {field}: {value} is not finite")]
    NotFinite {
        /// The Gallium call.
        call: &'static str,
        /// The state's field.
        field: &'static str,
        /// The value given.
        value: f32,
    },

    /// A negative size (`line_width`, `point_size`).
    #[error("{call}: {field}: {value} must not be negative")]
    Negative {
        /// The Gallium call.
        call: &'static str,
        /// The state's field.
        field: &'static str,
        /// The value given.
        value: f32,
    },

    /// A NaN component of a colour (`border_color`).
    #[error("{call}: {field}: NaN component")]
    Nan {
        /// The Gallium call.
        call: &'static str,
        /// The state's field.
        field: &'static str,
    },

    /// An integer field above its limit (`colormask`, `max_anisotropy`,
    /// `vertex_buffer_index`, `src_offset`, the number of elements).
    #[error("{call}: {field}: {value}; at most {limit}")]
    ValueTooLarge {
        /// The Gallium call.
        call: &'static str,
        /// The state's field.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest allowed.
        limit: u64,
    },

    /// A vertex element format vertex fetch cannot read.
    #[error("create_vertex_elements_state: src_format: {format}: {reason}")]
    VertexFormat {
        /// The element's format.
        format: Format,
        /// Why it is refused (from [`crate::caps::format_support`]).
        reason: String,
    },

    /// A semantics entry naming something other than a varying.
    #[error(
        "{call}: semantics: location {location} maps to {semantic:?}; only COLORn, BCOLORn and GENERICn name varyings"
    )]
    SemanticNotVarying {
        /// The Gallium call.
        call: &'static str,
        /// The shader location.
        location: u32,
        /// The semantic it was mapped to.
        semantic: Semantic,
    },

    /// A location listed twice in the semantics map.
    #[error("{call}: semantics: location {location} is listed twice")]
    SemanticTwice {
        /// The Gallium call.
        call: &'static str,
        /// The shader location.
        location: u32,
    },
}

impl StateError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use StateError::*;
        match self {
            NotFinite { call, .. }
            | Negative { call, .. }
            | Nan { call, .. }
            | ValueTooLarge { call, .. }
            | SemanticNotVarying { call, .. }
            | SemanticTwice { call, .. } => call,
            VertexFormat { .. } => "create_vertex_elements_state",
        }
    }

    /// The state field at fault.
    pub fn field(&self) -> &'static str {
        use StateError::*;
        match self {
            NotFinite { field, .. }
            | Negative { field, .. }
            | Nan { field, .. }
            | ValueTooLarge { field, .. } => field,
            VertexFormat { .. } => "src_format",
            SemanticNotVarying { .. } | SemanticTwice { .. } => "semantics",
        }
    }
}

/// A stream-output declaration (`pipe_stream_output_info`) or target that
/// is invalid.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamOutputError {
    /// More outputs than `PIPE_MAX_SO_OUTPUTS`.
    #[error("{call}: stream_output: {count} outputs; at most {limit}")]
    TooManyOutputs {
        /// The Gallium call.
        call: &'static str,
        /// The outputs declared.
        count: usize,
        /// The cap.
        limit: usize,
    },

    /// A buffer stride above `PIPE_CAP_MAX_STREAM_OUTPUT_INTERLEAVED_COMPONENTS`.
    #[error("{call}: stream_output: stride[{buffer}] = {stride} dwords; at most {limit}")]
    StrideTooLarge {
        /// The Gallium call.
        call: &'static str,
        /// The buffer.
        buffer: usize,
        /// Its stride in dwords.
        stride: u32,
        /// The cap.
        limit: u32,
    },

    /// An output naming a register the shader does not write.
    #[error(
        "{call}: stream_output: output[{output}].register_index {register_index} but the shader has {outputs} outputs"
    )]
    RegisterIndex {
        /// The Gallium call.
        call: &'static str,
        /// The output entry.
        output: usize,
        /// Its register.
        register_index: u32,
        /// The shader's outputs.
        outputs: usize,
    },

    /// An output's components outside a vec4, or none.
    #[error(
        "{call}: stream_output: output[{output}]: components {start}..{end} outside a vec4 (or none)"
    )]
    Components {
        /// The Gallium call.
        call: &'static str,
        /// The output entry.
        output: usize,
        /// Its first component.
        start: u32,
        /// One past its last.
        end: u64,
    },

    /// An output naming a buffer past `PIPE_MAX_SO_BUFFERS`.
    #[error(
        "{call}: stream_output: output[{output}].output_buffer {buffer}; at most {limit} buffers"
    )]
    OutputBuffer {
        /// The Gallium call.
        call: &'static str,
        /// The output entry.
        output: usize,
        /// Its buffer.
        buffer: u32,
        /// The cap.
        limit: usize,
    },

    /// An output on a stream other than 0 (only a geometry shader has more).
    #[error(
        "{call}: stream_output: output[{output}].stream {stream}; only stream 0 exists without a geometry shader"
    )]
    Stream {
        /// The Gallium call.
        call: &'static str,
        /// The output entry.
        output: usize,
        /// Its stream.
        stream: u32,
    },

    /// An output running past its buffer's record.
    #[error(
        "{call}: stream_output: output[{output}] ends at dword {end} of a {stride}-dword record (stride[{buffer}])"
    )]
    RecordOverflow {
        /// The Gallium call.
        call: &'static str,
        /// The output entry.
        output: usize,
        /// One past its last dword.
        end: u64,
        /// The buffer's stride in dwords.
        stride: u32,
        /// The buffer.
        buffer: usize,
    },

    /// Two outputs writing the same dwords of a buffer.
    #[error(
        "{call}: stream_output: output[{output}] overlaps an earlier output in buffer {buffer}"
    )]
    OutputOverlap {
        /// The Gallium call.
        call: &'static str,
        /// The later output entry.
        output: usize,
        /// The buffer.
        buffer: usize,
    },

    /// A fragment shader declaring stream output.
    #[error("create_fs_state: stream_output: fragment shaders have no stream output")]
    FragmentShader,

    /// More targets than `PIPE_MAX_SO_BUFFERS`.
    #[error("set_stream_output_targets: targets: {count} targets; at most {limit}")]
    TooManyTargets {
        /// The targets given.
        count: usize,
        /// The cap.
        limit: usize,
    },

    /// A different number of offsets than targets.
    #[error("set_stream_output_targets: offsets: {offsets} offsets for {targets} targets")]
    OffsetCount {
        /// The offsets given.
        offsets: usize,
        /// The targets given.
        targets: usize,
    },

    /// An offset that is not a dword inside its target (nor `SO_APPEND`,
    /// `u32::MAX`).
    #[error(
        "set_stream_output_targets: offsets: offsets[{index}] = {offset}: not a dword offset inside the {size}-byte target (or {append} to append)",
        append = u32::MAX
    )]
    TargetOffset {
        /// The target.
        index: usize,
        /// Its offset.
        offset: u32,
        /// The target's size in bytes.
        size: u32,
    },

    /// Two bound targets overlapping in one buffer.
    #[error(
        "set_stream_output_targets: targets: targets {first} and {second} overlap in one buffer"
    )]
    TargetsOverlap {
        /// The earlier target.
        first: usize,
        /// The later target.
        second: usize,
    },
}

impl StreamOutputError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use StreamOutputError::*;
        match self {
            TooManyOutputs { call, .. }
            | StrideTooLarge { call, .. }
            | RegisterIndex { call, .. }
            | Components { call, .. }
            | OutputBuffer { call, .. }
            | Stream { call, .. }
            | RecordOverflow { call, .. }
            | OutputOverlap { call, .. } => call,
            FragmentShader => "create_fs_state",
            TooManyTargets { .. }
            | OffsetCount { .. }
            | TargetOffset { .. }
            | TargetsOverlap { .. } => "set_stream_output_targets",
        }
    }

    /// The argument at fault.
    pub fn field(&self) -> &'static str {
        use StreamOutputError::*;
        match self {
            TooManyTargets { .. } | TargetsOverlap { .. } => "targets",
            OffsetCount { .. } | TargetOffset { .. } => "offsets",
            _ => "stream_output",
        }
    }
}

/// A draw (or clear) inconsistent with the bound state.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum DrawError {
    /// A state the draw needs is not bound.
    #[error("draw_vbo: {what}: nothing bound")]
    NotBound {
        /// `rasterizer`, `depth_stencil_alpha`, `blend`,
        /// `vertex_elements`, `vs` or `fs`.
        what: &'static str,
    },

    /// An indexed draw with no index buffer bound.
    #[error("draw_vbo: indexed: no index buffer bound")]
    NoIndexBuffer,

    /// An adjacency topology captured by stream output without a geometry
    /// shader (draw_so_emit_tmp.h refuses it).
    #[error("draw_vbo: mode: {mode} with stream output and no geometry shader")]
    AdjacencyWithStreamOutput {
        /// The draw's topology.
        mode: PrimType,
    },

    /// A draw counted from stream output that is indexed.
    #[error("draw_vbo: indexed: a draw counted from stream output is not indexed")]
    IndexedStreamOutputCount,

    /// A draw counted from stream output with vertex buffer 0's stride 0.
    #[error(
        "draw_vbo: count_from_stream_output: vertex buffer 0 has stride 0: no vertex count to derive"
    )]
    ZeroStrideStreamOutputCount,

    /// A NaN clear depth.
    #[error("{call}: depth: NaN")]
    NanDepth {
        /// `clear` or `clear_depth_stencil`.
        call: &'static str,
    },
}

impl DrawError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        match self {
            DrawError::NanDepth { call } => call,
            _ => "draw_vbo",
        }
    }

    /// The argument or bound state at fault.
    pub fn field(&self) -> &'static str {
        use DrawError::*;
        match self {
            NotBound { what } => what,
            NoIndexBuffer | IndexedStreamOutputCount => "indexed",
            AdjacencyWithStreamOutput { .. } => "mode",
            ZeroStrideStreamOutputCount => "count_from_stream_output",
            NanDepth { .. } => "depth",
        }
    }
}

/// The kinds of storage binding a shader addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageKind {
    /// A shader buffer, `@group(3)`.
    Buffer,
    /// A shader image, `@group(4)`.
    Image,
    /// A `set_global_binding` buffer, `@group(6)`.
    Global,
}

impl StorageKind {
    /// The WGSL bind group of this kind.
    pub fn group(self) -> u32 {
        match self {
            StorageKind::Buffer => 3,
            StorageKind::Image => 4,
            StorageKind::Global => 6,
        }
    }

    /// The bindings' name in messages (and [`StorageError::field`]).
    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Buffer => "shader buffers",
            StorageKind::Image => "shader images",
            StorageKind::Global => "global bindings",
        }
    }
}

/// A shader buffer or image that a draw's or launch's shader uses is
/// unbound, or bound without the access the shader needs (Gallium leaves
/// that undefined; ferropipe refuses it).  Checked once per draw and
/// launch.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum StorageError {
    /// A slot the shader uses has nothing bound.
    #[error(
        "{call}: {name}: slot {slot} (@group({group}) @binding({slot})) is used by the {stage} shader but unbound",
        name = kind.name(), group = kind.group()
    )]
    Unbound {
        /// `draw_vbo` or `launch_grid`.
        call: &'static str,
        /// `vertex`, `fragment` or `compute`.
        stage: &'static str,
        /// What kind of binding.
        kind: StorageKind,
        /// The slot.
        slot: u32,
    },

    /// A shader buffer the shader writes, bound without its
    /// `writable_bitmask` bit.
    #[error(
        "{call}: writable_bitmask: shader buffer slot {slot} (@group(3) @binding({slot})) of the {stage} stage is written by its shader but was bound without its writable_bitmask bit"
    )]
    NotWritable {
        /// `draw_vbo` or `launch_grid`.
        call: &'static str,
        /// `vertex`, `fragment` or `compute`.
        stage: &'static str,
        /// The slot.
        slot: u32,
    },

    /// A shader image the shader reads (writes) whose view lacks
    /// `PIPE_IMAGE_ACCESS_READ` (`WRITE`).
    #[error(
        "{call}: access: shader image slot {slot} (@group(4) @binding({slot})) of the {stage} stage is {used} by its shader but its view's access lacks {lacks}"
    )]
    ImageAccess {
        /// `draw_vbo` or `launch_grid`.
        call: &'static str,
        /// `vertex`, `fragment` or `compute`.
        stage: &'static str,
        /// The slot.
        slot: u32,
        /// `read (textureLoad)` or `written (textureStore)`.
        used: &'static str,
        /// The missing flag, as Gallium spells it.
        lacks: &'static str,
    },
}

impl StorageError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        match self {
            StorageError::Unbound { call, .. }
            | StorageError::NotWritable { call, .. }
            | StorageError::ImageAccess { call, .. } => call,
        }
    }

    /// The binding at fault.
    pub fn field(&self) -> &'static str {
        match self {
            StorageError::Unbound { kind, .. } => kind.name(),
            StorageError::NotWritable { .. } => "writable_bitmask",
            StorageError::ImageAccess { .. } => "access",
        }
    }
}

/// A query created with a bad index or used out of order.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum QueryError {
    /// A per-stream query of a stream other than 0.
    #[error("create_query: index: stream {index}; only stream 0 exists (no geometry shader)")]
    StreamIndex {
        /// The index given.
        index: u32,
    },

    /// `PIPE_QUERY_PIPELINE_STATISTICS_SINGLE` of a counter that does not
    /// exist.
    #[error("create_query: index: {index}; pipeline statistics have 11 counters")]
    StatisticIndex {
        /// The index given.
        index: u32,
    },

    /// A driver query type outside the driver's counters.
    #[error(
        "create_query: query_type: {query_type}; driver queries are PIPE_QUERY_DRIVER_SPECIFIC ({first}) + 0..{count}"
    )]
    UnknownDriverQuery {
        /// The type given.
        query_type: u32,
        /// `PIPE_QUERY_DRIVER_SPECIFIC`.
        first: u32,
        /// How many driver counters there are.
        count: usize,
    },

    /// `begin_query` of a query that is only ended (`TIMESTAMP`,
    /// `GPU_FINISHED`).
    #[error("begin_query: query: {query_type} is ended without being begun")]
    NotBegun {
        /// The query's type.
        query_type: QueryType,
    },

    /// `begin_query` of a query already active.
    #[error("{call}: query: already active")]
    AlreadyActive {
        /// The Gallium call.
        call: &'static str,
    },

    /// `end_query` of a query that is not active.
    #[error("{call}: query: not active")]
    NotActive {
        /// The Gallium call.
        call: &'static str,
    },

    /// `get_query_result` of a query still active.
    #[error("{call}: query: still active")]
    StillActive {
        /// The Gallium call.
        call: &'static str,
    },
}

impl QueryError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use QueryError::*;
        match self {
            StreamIndex { .. } | StatisticIndex { .. } | UnknownDriverQuery { .. } => {
                "create_query"
            }
            NotBegun { .. } => "begin_query",
            AlreadyActive { call } | NotActive { call } | StillActive { call } => call,
        }
    }

    /// The argument at fault.
    pub fn field(&self) -> &'static str {
        use QueryError::*;
        match self {
            StreamIndex { .. } | StatisticIndex { .. } => "index",
            UnknownDriverQuery { .. } => "query_type",
            NotBegun { .. } | AlreadyActive { .. } | NotActive { .. } | StillActive { .. } => {
                "query"
            }
        }
    }
}

/// A compute state or grid launch that is invalid.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ComputeError {
    /// More LOCAL (workgroup) memory than `PIPE_COMPUTE_CAP_MAX_LOCAL_SIZE`.
    #[error("{call}: {field}: {bytes} bytes of LOCAL memory; at most {limit}")]
    LocalMemory {
        /// `create_compute_state` or `launch_grid`.
        call: &'static str,
        /// `req_local_mem` or `variable_shared_mem`.
        field: &'static str,
        /// The shader's, the state's and the launch's bytes together.
        bytes: u64,
        /// The cap.
        limit: u32,
    },

    /// More kernel input than `PIPE_COMPUTE_CAP_MAX_INPUT_SIZE`.
    #[error("{call}: {field}: {len} bytes; at most {limit}")]
    InputTooLarge {
        /// `create_compute_state` or `launch_grid`.
        call: &'static str,
        /// `req_input_mem` or `input`.
        field: &'static str,
        /// The bytes given.
        len: u64,
        /// The cap.
        limit: u32,
    },

    /// Less kernel input than the compute state requires.
    #[error("launch_grid: input: {len} bytes; the compute state requires {required}")]
    InputTooSmall {
        /// The bytes given.
        len: usize,
        /// The state's `req_input_mem`.
        required: u32,
    },

    /// `launch_grid` with no compute state bound.
    #[error("launch_grid: compute state: none is bound")]
    NoComputeState,

    /// A `pc` other than 0 (entry points are chosen by name).
    #[error("launch_grid: pc: {pc}; entry points are chosen by name, pc must be 0")]
    ProgramCounter {
        /// The `pc` given.
        pc: u32,
    },

    /// A `work_dim` outside 1..=3.
    #[error("launch_grid: work_dim: {work_dim}; must be 1, 2 or 3")]
    WorkDim {
        /// The value given.
        work_dim: u32,
    },

    /// A block with a zero dimension.
    #[error("launch_grid: block: {block:?} has a zero dimension")]
    EmptyBlock {
        /// The block given.
        block: [u32; 3],
    },

    /// A block above `PIPE_COMPUTE_CAP_MAX_THREADS_PER_BLOCK` or
    /// `MAX_BLOCK_SIZE`.
    #[error(
        "launch_grid: block: {block:?}: at most {max_invocations} threads and {max_size:?} per dimension"
    )]
    BlockTooLarge {
        /// The block given.
        block: [u32; 3],
        /// Invocations per workgroup allowed.
        max_invocations: u32,
        /// Size per dimension allowed.
        max_size: [u32; 3],
    },

    /// A block other than the shader's `@workgroup_size`.
    #[error(
        "launch_grid: block: {block:?} differs from the shader's @workgroup_size {workgroup_size:?} (sizes are fixed at compile time)"
    )]
    BlockMismatch {
        /// The block given.
        block: [u32; 3],
        /// The shader's workgroup size.
        workgroup_size: [u32; 3],
    },

    /// A `last_block` dimension larger than the block.
    #[error("launch_grid: last_block: {last_block:?}: dimension {dim} exceeds the block {block:?}")]
    LastBlock {
        /// The `last_block` given.
        last_block: [u32; 3],
        /// The block.
        block: [u32; 3],
        /// The first dimension that exceeds it.
        dim: usize,
    },

    /// A grid dimension above `PIPE_COMPUTE_CAP_MAX_GRID_SIZE`.
    #[error("{call}: grid: {grid:?}: dimension {dim} exceeds {limit}")]
    GridTooLarge {
        /// `launch_grid`.
        call: &'static str,
        /// The grid (read from the indirect buffer for indirect launches).
        grid: [u32; 3],
        /// The first dimension too large.
        dim: usize,
        /// The cap.
        limit: u32,
    },

    /// `grid_base + grid` overflowing 32 bits.
    #[error("launch_grid: grid_base: {grid_base:?} + {grid:?} overflows 32 bits")]
    GridBaseOverflow {
        /// The base given.
        grid_base: [u32; 3],
        /// The grid.
        grid: [u32; 3],
    },

    /// An indirect grid offset that is unaligned or whose 12 bytes do not
    /// fit the buffer.
    #[error(
        "{call}: indirect_offset: {offset}: 12 aligned bytes must fit the {buffer_size}-byte buffer"
    )]
    IndirectOffset {
        /// `launch_grid`.
        call: &'static str,
        /// The offset given.
        offset: u32,
        /// The indirect buffer's size.
        buffer_size: u32,
    },

    /// The kernel executed a barrier in non-uniform control flow; what the
    /// launch wrote is undefined (found while running it).
    #[error(
        "launch_grid: compute state: the kernel executed a barrier in non-uniform control flow (some invocations of a workgroup skipped it); WGSL forbids that, and what the launch wrote is undefined"
    )]
    DivergentBarrier,
}

impl ComputeError {
    /// The Gallium call.
    pub fn call(&self) -> &'static str {
        use ComputeError::*;
        match self {
            LocalMemory { call, .. }
            | InputTooLarge { call, .. }
            | GridTooLarge { call, .. }
            | IndirectOffset { call, .. } => call,
            _ => "launch_grid",
        }
    }

    /// The argument at fault.
    pub fn field(&self) -> &'static str {
        use ComputeError::*;
        match self {
            LocalMemory { field, .. } | InputTooLarge { field, .. } => field,
            InputTooSmall { .. } => "input",
            NoComputeState | DivergentBarrier => "compute state",
            ProgramCounter { .. } => "pc",
            WorkDim { .. } => "work_dim",
            EmptyBlock { .. } | BlockTooLarge { .. } | BlockMismatch { .. } => "block",
            LastBlock { .. } => "last_block",
            GridTooLarge { .. } => "grid",
            GridBaseOverflow { .. } => "grid_base",
            IndirectOffset { .. } => "indirect_offset",
        }
    }
}

/// `Screen::new`'s configuration, or the environment it reads, is invalid.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The worker pool could not be built.
    #[error("Screen::new: threads: {reason}")]
    Threads {
        /// The pool's error.
        reason: String,
    },

    /// An environment variable has a value ferropipe does not know.
    #[error("Screen::new: {var}: {reason}")]
    Env {
        /// The variable (`FERROPIPE_SHADER`, `FERROPIPE_POLY_SMOOTH`).
        var: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

impl ConfigError {
    /// The setting at fault.
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::Threads { .. } => "threads",
            ConfigError::Env { var, .. } => var,
        }
    }
}

/// A capture started while one runs, or stopped while none does.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CaptureError {
    /// `start_capture` while a capture is running.
    #[error("start_capture: recorder: a capture is already running")]
    AlreadyRunning,

    /// `stop_capture` with no capture running.
    #[error("stop_capture: capture: no capture is running")]
    NotRunning,
}

impl CaptureError {
    /// The call.
    pub fn call(&self) -> &'static str {
        match self {
            CaptureError::AlreadyRunning => "start_capture",
            CaptureError::NotRunning => "stop_capture",
        }
    }

    /// The argument or state at fault.
    pub fn field(&self) -> &'static str {
        match self {
            CaptureError::AlreadyRunning => "recorder",
            CaptureError::NotRunning => "capture",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ConstantBuffer, VertexBuffer};
    use crate::test_util::setup;
    use ferropipe_components::enums::{BindFlags, ShaderType};
    use ferropipe_components::resource::ResourceTemplate;

    /// Representative bad calls of each family: the variant, its numbers,
    /// and a message that starts with the Gallium call and names the
    /// argument [`Error::field`] reports.
    #[test]
    fn bad_calls_are_typed_with_their_numbers() {
        let (s, mut c) = setup();
        let vb = s
            .resource_create(&ResourceTemplate::buffer(48, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let tex = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                8,
                4,
                BindFlags::SAMPLER_VIEW,
            ))
            .unwrap();
        let at = |buffer| VertexBuffer {
            buffer,
            stride: 16,
            buffer_offset: 0,
        };
        let errors = [
            (
                c.set_vertex_buffers(30, &[at(Some(&vb)); 4]).unwrap_err(),
                Error::Bind(BindError::SlotOutOfRange {
                    call: "set_vertex_buffers",
                    field: "start_slot",
                    start: 30,
                    count: 4,
                    limit: 32,
                }),
                "set_vertex_buffers: start_slot: slots 30..34 exceed the 32 available",
            ),
            (
                c.set_vertex_buffers(0, &[at(Some(&tex))]).unwrap_err(),
                Error::Resource(ResourceError::NotABuffer {
                    call: "set_vertex_buffers",
                    field: "buffer",
                    target: TextureTarget::Texture2D,
                }),
                "set_vertex_buffers: buffer: a PIPE_TEXTURE_2D is not a buffer",
            ),
            (
                c.set_constant_buffer(
                    ShaderType::Fragment,
                    0,
                    Some(ConstantBuffer::Buffer {
                        resource: &vb,
                        offset: 32,
                        size: 32,
                    }),
                )
                .unwrap_err(),
                Error::Resource(ResourceError::RangePastEnd {
                    call: "set_constant_buffer",
                    field: "buffer_offset/buffer_size",
                    offset: 32,
                    size: 32,
                    buffer_size: 48,
                }),
                "set_constant_buffer: buffer_offset/buffer_size: 32+32 is past the end of the 48-byte buffer",
            ),
            (
                c.transfer_map(&tex, 0, TransferFlags::READ, &PipeBox::new_2d(6, 0, 4, 4))
                    .unwrap_err(),
                Error::Resource(ResourceError::BoxOutOfBounds {
                    call: "transfer_map",
                    field: "box.x/width",
                    pos: 6,
                    size: 4,
                    extent: 8,
                    level: 0,
                }),
                "transfer_map: box.x/width: 6+4 outside 0..8 of level 0",
            ),
            (
                c.texture_subdata(&tex, 0, &PipeBox::new_2d(0, 0, 8, 4), &[0; 100], 0, 0)
                    .unwrap_err(),
                Error::Resource(ResourceError::DataTooSmall {
                    call: "texture_subdata",
                    field: "data",
                    len: 100,
                    needed: 128,
                }),
                "texture_subdata: data: 100 bytes, the call needs 128",
            ),
            (
                c.set_viewport_states(
                    0,
                    &[ferropipe_components::state::ViewportState {
                        scale: [1.0, f32::INFINITY, 1.0],
                        translate: [0.0; 3],
                    }],
                )
                .unwrap_err(),
                Error::Bind(BindError::NotFinite {
                    call: "set_viewport_states",
                    field: "viewports",
                }),
                "set_viewport_states: viewports: non-finite value",
            ),
        ];
        for (got, want, text) in errors {
            assert_eq!(got, want);
            assert_eq!(got.to_string(), text);
            assert_eq!(got.call(), text.split(':').next().unwrap());
            assert_eq!(
                got.field(),
                Some(text.split(": ").nth(1).unwrap()),
                "{text}"
            );
            assert!(got.is_invalid_input() && !got.is_unsupported());
        }
    }

    /// Query order errors name the call that found them.
    #[test]
    fn query_misuse_is_typed() {
        let (_s, mut c) = setup();
        let q = c.create_query(QueryType::OcclusionCounter, 0).unwrap();
        c.begin_query(q).unwrap();
        assert_eq!(
            c.begin_query(q).unwrap_err(),
            Error::Query(QueryError::AlreadyActive {
                call: "begin_query"
            })
        );
        assert_eq!(
            c.get_query_result(q, false).unwrap_err(),
            Error::Query(QueryError::StillActive {
                call: "get_query_result"
            })
        );
        c.end_query(q).unwrap();
        let e = c.end_query(q).unwrap_err();
        assert_eq!(e, Error::Query(QueryError::NotActive { call: "end_query" }));
        assert_eq!(e.to_string(), "end_query: query: not active");
        let e = c.create_query(QueryType::Timestamp, 0).unwrap();
        assert_eq!(
            c.begin_query(e).unwrap_err(),
            Error::Query(QueryError::NotBegun {
                query_type: QueryType::Timestamp
            })
        );
    }

    /// The shared variants keep their meaning for the replayer's exit
    /// codes: unsupported (3) is only `Unsupported` and unsupported shader
    /// constructs, everything a family reports is invalid input (2).
    #[test]
    fn classification() {
        let unsupported = Error::unsupported("draw_vbo", "PIPE_PRIM_PATCHES");
        assert!(unsupported.is_unsupported() && !unsupported.is_invalid_input());
        assert_eq!(unsupported.call(), "draw_vbo");
        assert_eq!(unsupported.field(), None);
        let oom = Error::OutOfMemory {
            call: "resource_create",
            bytes: 1 << 40,
        };
        assert!(!oom.is_unsupported() && !oom.is_invalid_input());
        let draw: Error = DrawError::NotBound { what: "blend" }.into();
        assert!(draw.is_invalid_input() && !draw.is_unsupported());
        assert_eq!((draw.call(), draw.field()), ("draw_vbo", Some("blend")));
        let host = Error::invalid("buffer_with_data", "data", "larger than 4 GiB");
        assert_eq!(
            host.to_string(),
            "buffer_with_data: invalid data: larger than 4 GiB"
        );
        assert!(host.is_invalid_input());
    }
}
