//! The loader's typed errors.

use std::path::PathBuf;

/// What went wrong loading or drawing a glTF model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the file (or a buffer or image it references) failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid glTF 2.0 (JSON, GLB container, validation,
    /// buffer or image decoding), as the `gltf` crate reports it.
    #[error("glTF: {0}")]
    Gltf(#[source] gltf::Error),
    /// The file is valid but uses something this loader does not draw
    /// (skinning, morph targets, a required extension, ...): rejected rather
    /// than drawn wrongly.
    #[error("unsupported glTF feature: {feature}")]
    Unsupported {
        /// The feature, naming where in the file it is used.
        feature: String,
    },
    /// The file is well-formed JSON but its data contradicts itself (an
    /// accessor reading past its buffer, an attribute count mismatch, ...).
    #[error("invalid glTF content: {0}")]
    Invalid(String),
    /// ferropipe refused a call (resource creation, state, draw).
    #[error("ferropipe: {0}")]
    Ferropipe(#[from] ferropipe::Error),
}

impl Error {
    /// Whether the failure is a feature this loader (or ferropipe) does not
    /// support yet, as opposed to a broken file or an I/O failure.
    pub fn is_unsupported(&self) -> bool {
        match self {
            Error::Unsupported { .. } => true,
            Error::Ferropipe(e) => e.is_unsupported(),
            _ => false,
        }
    }

    pub(crate) fn unsupported(feature: impl Into<String>) -> Self {
        Error::Unsupported {
            feature: feature.into(),
        }
    }

    /// `gltf::Error` with I/O failures and unsupported required extensions
    /// turned into [`Error::Io`] and [`Error::Unsupported`].
    pub(crate) fn from_gltf(e: gltf::Error, path: Option<&std::path::Path>) -> Self {
        match e {
            gltf::Error::Io(source) => Error::Io {
                path: path.map(PathBuf::from).unwrap_or_default(),
                source,
            },
            gltf::Error::Validation(errors)
                if errors
                    .iter()
                    .any(|(_, e)| matches!(e, gltf::json::validation::Error::Unsupported)) =>
            {
                let what: Vec<String> = errors
                    .iter()
                    .filter(|(_, e)| matches!(e, gltf::json::validation::Error::Unsupported))
                    .map(|(p, _)| p.to_string())
                    .collect();
                Error::unsupported(what.join(", "))
            }
            other => Error::Gltf(other),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
