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
pub mod screen;
mod validate;

pub use context::{
    BlendHandle, BoundState, Context, Fence, FsHandle, Handle, QueryHandle, QueryObject,
    QueryResult, ShaderCode, ShaderState, VsHandle,
};
pub use error::{Error, Result};
pub use ferropipe_components as components;
pub use ferropipe_components::*;
pub use screen::{DEFAULT_MAX_RESOURCE_BYTES, Resource, Screen, ScreenConfig};
