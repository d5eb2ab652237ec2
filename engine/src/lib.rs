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

pub mod caps;
pub mod context;
pub mod driver_query;
pub mod error;
pub mod screen;
mod validate;

/// The ECS the pipeline runs on, for extensions ([`Context::add_systems`]).
pub use bevy_ecs;
pub use context::{
    BlendHandle, BlitInfo, BlitSide, BoundState, CallRecorder, CapturedCall, CapturedQuery,
    ComputeBindings, ComputeState, ConstantBuffer, Context, CsHandle, DrawIndirectInfo, DsaHandle,
    Fence, FramebufferTemplate, FsHandle, GridInfo, Handle, ImageView, IndexBuffer, MAX_SO_OUTPUTS,
    MAX_SO_STRIDE, QueryHandle, QueryObject, QueryResult, RasterizerHandle, SO_APPEND,
    SamplerHandle, SamplerViewHandle, ShaderBuffer, ShaderCode, ShaderRef, ShaderSource,
    ShaderState, StreamOutputTargetHandle, SurfaceHandle, Transfer, TransferMapping, VertexBuffer,
    VertexElementsHandle, VsHandle, WorkBudget, check_stream_output, stage_index,
};
/// GLOBAL addresses of `set_global_binding` (docs/shaders.md "Compute").
pub use context::{
    GLOBAL_HANDLE_OFFSET_MASK, GLOBAL_HANDLE_SLOT_SHIFT, GLOBAL_HANDLE_VALID,
    MAX_GLOBAL_BUFFER_SIZE, global_handle,
};
pub use error::{
    BindError, CaptureError, ComputeError, ConfigError, DrawError, Error, QueryError,
    ResourceError, Result, StateError, StorageError, StorageKind, StreamOutputError,
};
pub use ferropipe_components as components;
pub use ferropipe_components::*;
/// The pipeline stages, schedules and their data, for extensions
/// ([`Context::add_systems`]; ARCHITECTURE.md, "Extending the pipeline").
pub use ferropipe_systems as systems;
pub use screen::{
    DEFAULT_MAX_RESOURCE_BYTES, POLY_SMOOTH_ENV, PolySmooth, Resource, SHADER_ENV, Screen,
    ScreenConfig, ShaderBackend,
};

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
