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
//! every argument once and returns typed [`Error`]s; nothing behind it
//! re-checks, and nothing panics on user input.

pub mod caps;
pub mod context;
pub mod error;
pub mod scene;
pub mod screen;
mod validate;

pub use context::{
    BlendHandle, BoundState, ConstantBuffer, Context, DsaHandle, Fence, FramebufferTemplate,
    FsHandle, Handle, IndexBuffer, QueryHandle, QueryObject, QueryResult, RasterizerHandle,
    SamplerHandle, SamplerViewHandle, ShaderCode, ShaderState, SurfaceHandle, Transfer,
    TransferMapping, VertexBuffer, VertexElementsHandle, VsHandle, stage_index,
};
pub use error::{Error, Result};
pub use ferropipe_components as components;
pub use ferropipe_components::*;
pub use screen::{DEFAULT_MAX_RESOURCE_BYTES, Resource, Screen, ScreenConfig};

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
}
