//! The façade's typed errors.
//!
//! Validation happens once, here at the Gallium boundary (wgpu's rule); the
//! stages behind it assume valid input.  Every variant names the call and,
//! where there is one, the field at fault, so a host or the replayer can say
//! exactly what was wrong.

use thiserror::Error;

/// Everything a ferropipe call can fail with.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// An argument is out of range or inconsistent.
    #[error("{call}: invalid {field}: {reason}")]
    InvalidArgument {
        call: &'static str,
        field: &'static str,
        reason: String,
    },

    /// A handle refers to an object that was deleted, or belongs to another
    /// context.
    #[error("{call}: {field} refers to a {kind} that does not exist in this context")]
    InvalidHandle {
        call: &'static str,
        field: &'static str,
        kind: &'static str,
    },

    /// The call is valid Gallium but ferropipe does not implement it (yet).
    /// The replayer exits with status 3 on this error.
    #[error("{call}: unsupported: {what}")]
    Unsupported { call: &'static str, what: String },

    /// A resource (or scene memory) larger than the screen can allocate.
    #[error("{call}: out of memory allocating {bytes} bytes")]
    OutOfMemory { call: &'static str, bytes: u64 },

    /// The context is lost, as a GPU context is after its driver's timeout
    /// detection and recovery: a flush or `launch_grid` ran past the
    /// context's work budget ([`crate::Context::set_work_budget`]).  Every
    /// later call on that context returns this error; the host drops the
    /// context and creates a new one.  Other contexts of the screen, and
    /// resources the lost work was not writing, are unaffected.
    #[error("{call}: device lost: {reason}")]
    DeviceLost { call: &'static str, reason: String },

    /// A shader failed to compile or uses something not supported.
    #[error("{call}: shader: {source}")]
    Shader {
        call: &'static str,
        #[source]
        source: ferropipe_shader::ShaderError,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(call: &'static str, field: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
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
}

/// Result with the façade's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
