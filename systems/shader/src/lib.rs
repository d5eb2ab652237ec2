//! ferropipe-shader: shaders from source to lanes.
//!
//! WGSL and Vulkan-style GLSL 450 are parsed and validated by naga, lowered
//! once at CSO creation into a compact register program, and executed over
//! SIMD lanes.  The compiled program implements the pipeline's
//! `VertexShader` / `FragmentShader` traits from `ferropipe-components`, the
//! same traits Rust-native shaders implement.

use thiserror::Error;

/// Shader source languages the front end accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Wgsl,
    /// Vulkan-style GLSL 450 (naga's GLSL front end).
    Glsl,
}

/// Why a shader could not be created.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ShaderError {
    /// naga rejected the source; `line`/`column` are 1-based when known.
    #[error("{language:?} parse error at {line}:{column}: {message}")]
    Parse {
        language: Language,
        message: String,
        line: u32,
        column: u32,
    },
    /// naga's validator rejected the module.
    #[error("validation error: {message}")]
    Validation { message: String },
    /// The entry point does not exist for the requested stage.
    #[error("no {stage} entry point named `{name}`")]
    MissingEntryPoint { stage: &'static str, name: String },
    /// A construct ferropipe does not execute yet.
    #[error("unsupported: {construct}")]
    Unsupported { construct: String },
}
