//! ferropipe: a CPU renderer behind the Gallium3D `pipe_screen` /
//! `pipe_context` interface.
//!
//! ```no_run
//! use ferropipe::{Screen, ScreenConfig};
//! let screen = Screen::new(ScreenConfig::default())?;
//! let mut ctx = screen.context_create()?;
//! # Ok::<(), ferropipe::Error>(())
//! ```
//!
//! Start with ARCHITECTURE.md for where a draw goes.  The façade validates
//! every argument once and returns typed [`Error`]s, one enum per operation
//! family ([`ResourceError`], [`BindError`], [`DrawError`], ...) with the
//! numbers that were wrong; nothing behind it re-checks, and nothing panics
//! on user input.
//!
//! # Public API
//! The crate root is the API an embedder uses, listed deliberately below
//! rather than re-exporting whole crates: the façade ([`Screen`],
//! [`Context`], their configuration, handles and call arguments), the
//! Gallium vocabulary its calls take (every enum and flag set, every CSO
//! and state struct, [`Format`], templates and draw parameters from
//! `ferropipe-components`), the native shader interface ([`VertexShader`],
//! [`FragmentShader`] and their I/O), the extension points for custom
//! pipeline systems ([`PipelineSet`], [`FrontEnd`] / [`BackEnd`],
//! [`SceneExecution`], ...; ARCHITECTURE.md "Extending the pipeline") and
//! [`Error`].  [`caps`] (the limits and `get_param` tables) and
//! [`driver_query`] are modules of their own; everything else is private.
//! A host that replaces a whole stage depends on `ferropipe-systems`
//! itself, whose stage modules and kernels are its public API.
#![warn(missing_docs)]

pub mod caps;
mod context;
pub mod driver_query;
pub mod error;
mod screen;
mod validate;

// The façade: screen, context, their configuration, handles and the
// argument structs of their calls.
pub use context::{
    BOUND_STAGES, BlendHandle, BlitInfo, BlitSide, BoundState, CallRecorder, CapturedCall,
    CapturedQuery, ComputeBindings, ComputeState, ConstantBuffer, Context, CsHandle,
    DrawIndirectInfo, DsaHandle, Fence, FramebufferTemplate, FsHandle, GridInfo, Handle, ImageView,
    IndexBuffer, MAX_GRID_SIZE, MAX_INPUT_SIZE, MAX_SHADER_BUFFER_SIZE, MAX_SO_OUTPUTS,
    MAX_SO_STRIDE, QueryHandle, QueryObject, QueryResult, RasterizerHandle, SO_APPEND,
    SamplerHandle, SamplerViewHandle, ShaderBuffer, ShaderCode, ShaderRef, ShaderSource,
    ShaderState, StreamOutputTargetHandle, SurfaceHandle, Transfer, TransferMapping, VertexBuffer,
    VertexElementsHandle, VsHandle, WorkBudget, read_box,
};
pub use error::{
    BindError, CaptureError, ComputeError, ConfigError, DrawError, Error, QueryError,
    ResourceError, Result, StateError, StorageError, StorageKind, StreamOutputError,
};
pub use screen::{
    DEBUG_ENV, DEFAULT_MAX_RESOURCE_BYTES, MAX_ENV_THREADS, NUM_THREADS_ENV, POLY_SMOOTH_ENV,
    PolySmooth, Resource, SHADER_ENV, Screen, ScreenConfig, ShaderBackend,
};

// GLOBAL addresses of `set_global_binding` (docs/shaders.md "Compute").
pub use context::{
    GLOBAL_HANDLE_OFFSET_MASK, GLOBAL_HANDLE_SLOT_SHIFT, GLOBAL_HANDLE_VALID,
    MAX_GLOBAL_BUFFER_SIZE, global_handle,
};

// The Gallium vocabulary the calls take: every enum and flag set
// (`PIPE_FUNC_*`, `PIPE_BIND_*`, ...) and every CSO and state struct of
// `p_state.h` with the limits that size them (the two modules hold
// nothing else), formats, templates and draw parameters.
pub use ferropipe_components::{
    caps::{Cap, CapF, ComputeCap, ShaderCap},
    draw::DrawInfo,
    enums::*,
    format::{ChannelType, Format, FormatDesc, FormatKind},
    resource::ResourceTemplate,
    state::*,
    view::{SamplerViewDesc, SurfaceTemplate},
};

// The native shader interface: a Rust type implementing `VertexShader` or
// `FragmentShader` is bound like a compiled one
// (`Context::create_vs_state_native`, `create_fs_state_native`), reading
// and writing SIMD lanes.
pub use ferropipe_components::shader::{
    BoundTexture, FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, FragmentShader, FragmentShaderRef, ILanes,
    Interpolation, IoSlot, LANES, Lanes, OutputValue, Sampling, ScalarKind, Semantic, ShaderInfo,
    ShaderResources, StorageImage, ULanes, VertexIo, VertexShader, VertexShaderRef, WordBuffer,
};

// Extension points for custom pipeline systems (ARCHITECTURE.md,
// "Extending the pipeline"): the schedules and sets to order a system
// against, the data it sees there, the worker pool, the compute launch,
// and the rasterizer's coverage kernel with the flags of a tile's bin.
pub use ferropipe_components::batch::bin_flags;
pub use ferropipe_systems::compute::{ComputeDispatch, ComputeGrid, ComputeOutcome, DispatchSet};
pub use ferropipe_systems::raster::{Coverage, cover_prim};
pub use ferropipe_systems::{
    BackEnd, FrontEnd, PipelineCounters, PipelineExecutor, PipelineSet, SceneExecution,
};

/// The ECS the pipeline runs on.  Custom systems ([`Context::add_systems`])
/// are `bevy_ecs` systems and custom resources derive its `Resource`, which
/// must come from the very `bevy_ecs` the context's `World` is built with:
/// re-exporting it keeps the host on that version without a second
/// dependency line to keep in step.
pub use bevy_ecs;

#[cfg(test)]
pub(crate) mod test_util {
    use crate::{Context, Screen, ScreenConfig};

    /// A single-threaded screen and one of its contexts.
    pub(crate) fn setup() -> (Screen, Context) {
        let s = Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let c = s.context_create().unwrap();
        (s, c)
    }

    /// Every byte of `level` of `r` (all slices) through a READ transfer.
    pub(crate) fn read_level(c: &mut Context, r: &crate::Resource, level: u32) -> Vec<u8> {
        use ferropipe_components::enums::TransferFlags;
        let l = r.layout().levels[level as usize];
        let b = ferropipe_components::state::PipeBox::new_3d(
            0,
            0,
            0,
            l.width as i32,
            l.height as i32,
            l.depth as i32,
        );
        c.transfer_map(r, level, TransferFlags::READ, &b)
            .unwrap()
            .data()
            .to_vec()
    }

    /// A multisampled 2D resource built directly (`resource_create`
    /// refuses MSAA until the pipeline rasterizes it), with `samples[s]`
    /// filling sample plane `s` of level 0.
    pub(crate) fn msaa(
        format: ferropipe_components::format::Format,
        w: u32,
        h: u32,
        samples: &[Vec<u8>],
    ) -> crate::Resource {
        use ferropipe_components::enums::BindFlags;
        use ferropipe_components::resource::{
            PipeResource, ResourceLayout, ResourceStorage, ResourceTemplate,
        };
        use std::sync::atomic::{AtomicU64, Ordering};
        // Ids far above the screen's counter keep lock ordering unique.
        static NEXT: AtomicU64 = AtomicU64::new(u64::MAX / 2);
        let templ = ResourceTemplate {
            nr_samples: samples.len() as u32,
            ..ResourceTemplate::texture_2d(format, w, h, BindFlags::RENDER_TARGET)
        };
        let layout = ResourceLayout::new(&templ).unwrap();
        let storage = ResourceStorage::new_zeroed(layout.size).unwrap();
        {
            let mut b = storage.write();
            let l = layout.levels[0];
            for (s, plane) in samples.iter().enumerate() {
                let at = l.offset + s * l.sample_stride;
                b[at..at + plane.len()].copy_from_slice(plane);
            }
        }
        crate::Resource {
            inner: std::sync::Arc::new(PipeResource {
                id: NEXT.fetch_add(1, Ordering::Relaxed),
                templ,
                layout,
                storage,
            }),
            entity: bevy_ecs::entity::Entity::PLACEHOLDER,
        }
    }
}
