//! Shader CSOs: `create_vs_state` / `create_fs_state` and friends
//! (context.rst "CSO State", `pipe_shader_state`).

use ferropipe_components::cso::{FragmentShaderCso, VertexShaderCso};
use ferropipe_components::shader::{FragmentShaderRef, Semantic, VertexShaderRef};
use ferropipe_components::state::StreamOutputInfo;

use ferropipe_shader::Language;

use super::{Context, Handle};
use crate::error::{Error, Result};

/// Handle to a vertex shader CSO.
pub type VsHandle = Handle<VertexShaderCso>;
/// Handle to a fragment shader CSO.
pub type FsHandle = Handle<FragmentShaderCso>;

/// Shader source code in a language naga reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShaderCode {
    /// WGSL source and the entry point to use.
    Wgsl { code: String, entry_point: String },
    /// Vulkan-style GLSL 450 source (naga's GLSL front end); entry `main`.
    Glsl { code: String, entry_point: String },
}

/// `struct pipe_shader_state` for source-code shaders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderState {
    pub code: ShaderCode,
    /// `@location(i)` → semantic for varyings that are COLORn / BCOLORn
    /// (FORMAT.md "Shaders"); unlisted locations are GENERIC i.
    pub semantics: Vec<(u32, Semantic)>,
    pub stream_output: StreamOutputInfo,
}

impl ShaderCode {
    fn parts(&self) -> (Language, &str, &str) {
        match self {
            ShaderCode::Wgsl { code, entry_point } => (Language::Wgsl, code, entry_point),
            ShaderCode::Glsl { code, entry_point } => (Language::Glsl, code, entry_point),
        }
    }
}

/// Checks what the shader compiler cannot: the semantics map itself.
fn check_semantics(call: &'static str, state: &ShaderState) -> Result<()> {
    for (i, (loc, sem)) in state.semantics.iter().enumerate() {
        if !matches!(
            sem,
            Semantic::Color(_) | Semantic::BColor(_) | Semantic::Generic(_)
        ) {
            return Err(Error::invalid(
                call,
                "semantics",
                format!(
                    "location {loc} maps to {sem:?}; only COLORn, BCOLORn and GENERICn name varyings"
                ),
            ));
        }
        if state.semantics[..i].iter().any(|(l, _)| l == loc) {
            return Err(Error::invalid(
                call,
                "semantics",
                format!("location {loc} is listed twice"),
            ));
        }
    }
    if !state.stream_output.output.is_empty() {
        return Err(Error::unsupported(call, "stream output"));
    }
    Ok(())
}

impl Context {
    /// `create_vs_state` from WGSL or GLSL source: parsed, validated and
    /// compiled to a lane program now, so every error (and every construct
    /// ferropipe cannot run) surfaces here, not at draw time.
    pub fn create_vs_state(&mut self, state: &ShaderState) -> Result<VsHandle> {
        const CALL: &str = "create_vs_state";
        check_semantics(CALL, state)?;
        let (lang, code, entry) = state.code.parts();
        let shader = ferropipe_shader::compile_vertex(lang, code, entry, &state.semantics)
            .map_err(|source| Error::Shader { call: CALL, source })?;
        Ok(self.spawn(VertexShaderCso(shader)))
    }

    /// `create_fs_state` from WGSL or GLSL source (see `create_vs_state`).
    pub fn create_fs_state(&mut self, state: &ShaderState) -> Result<FsHandle> {
        const CALL: &str = "create_fs_state";
        check_semantics(CALL, state)?;
        let (lang, code, entry) = state.code.parts();
        let shader = ferropipe_shader::compile_fragment(lang, code, entry, &state.semantics)
            .map_err(|source| Error::Shader { call: CALL, source })?;
        Ok(self.spawn(FragmentShaderCso(shader)))
    }

    /// A Rust-native vertex shader as a CSO (the zero-overhead path).
    pub fn create_vs_state_native(&mut self, shader: VertexShaderRef) -> Result<VsHandle> {
        Ok(self.spawn(VertexShaderCso(shader)))
    }

    /// A Rust-native fragment shader as a CSO.
    pub fn create_fs_state_native(&mut self, shader: FragmentShaderRef) -> Result<FsHandle> {
        Ok(self.spawn(FragmentShaderCso(shader)))
    }

    /// `bind_vs_state`; `None` unbinds.
    pub fn bind_vs_state(&mut self, handle: Option<VsHandle>) -> Result<()> {
        let shader = match handle {
            Some(h) => Some(self.get("bind_vs_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().vs = shader;
        Ok(())
    }

    /// `bind_fs_state`; `None` unbinds.
    pub fn bind_fs_state(&mut self, handle: Option<FsHandle>) -> Result<()> {
        let shader = match handle {
            Some(h) => Some(self.get("bind_fs_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().fs = shader;
        Ok(())
    }

    /// `delete_vs_state`.
    pub fn delete_vs_state(&mut self, handle: VsHandle) -> Result<()> {
        self.despawn("delete_vs_state", handle)
    }

    /// `delete_fs_state`.
    pub fn delete_fs_state(&mut self, handle: FsHandle) -> Result<()> {
        self.despawn("delete_fs_state", handle)
    }
}
