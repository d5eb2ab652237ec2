//! Shader CSOs: `create_vs_state` / `create_fs_state` and friends
//! (context.rst "CSO State", `pipe_shader_state`).

use std::sync::Arc;

use ferropipe_components::cso::{FragmentShaderCso, VertexShaderCso};
use ferropipe_components::shader::{FragmentShaderRef, Semantic, ShaderInfo, VertexShaderRef};
use ferropipe_components::state::{MAX_SO_BUFFERS, StreamOutputInfo};

use ferropipe_components::enums::ShaderType;
use ferropipe_shader::{Language, OverrideValue};

use super::{Context, Handle};
use crate::error::{Error, Result, StateError, StreamOutputError};

/// Handle to a vertex shader CSO.
pub type VsHandle = Handle<VertexShaderCso>;
/// Handle to a fragment shader CSO.
pub type FsHandle = Handle<FragmentShaderCso>;

/// Shader source code in a language naga reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShaderCode {
    /// WGSL source and the entry point to use.
    Wgsl {
        /// The source text.
        code: String,
        /// The entry point's name.
        entry_point: String,
    },
    /// Vulkan-style GLSL 450 source (naga's GLSL front end); entry `main`.
    Glsl {
        /// The source text.
        code: String,
        /// The entry point's name (GLSL: `main`).
        entry_point: String,
    },
}

/// `struct pipe_shader_state` for source-code shaders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderState {
    /// The source and entry point.
    pub code: ShaderCode,
    /// `@location(i)` → semantic for varyings that are COLORn / BCOLORn
    /// (FORMAT.md "Shaders"); unlisted locations are GENERIC i.
    pub semantics: Vec<(u32, Semantic)>,
    /// `pipe_stream_output_info`: which VS outputs stream output writes
    /// where (vertex shaders only; see `check_stream_output`).
    pub stream_output: StreamOutputInfo,
}

/// Most stream-output entries of one shader (`PIPE_MAX_SO_OUTPUTS`).
pub const MAX_SO_OUTPUTS: usize = 64;

/// Largest record stride, in dwords, per stream-output buffer (what
/// `PIPE_CAP_MAX_STREAM_OUTPUT_INTERLEAVED_COMPONENTS` would say: every
/// component of 32 vec4 outputs, llvmpipe's limit too).
pub const MAX_SO_STRIDE: u32 = 128;

/// Validates a vertex shader's `pipe_stream_output_info` against its
/// interface (`info`): at most [`MAX_SO_OUTPUTS`] entries, each naming an
/// output slot the shader has, components `start_component ..
/// start_component + num_components` inside the vec4 (1 to 4 of them),
/// a buffer below `PIPE_MAX_SO_BUFFERS`, stream 0 (no geometry shader,
/// `PIPE_CAP_MAX_VERTEX_STREAMS` = 1), and a record that fits the buffer's
/// stride; strides at most [`MAX_SO_STRIDE`] dwords, and no two entries
/// writing the same dwords of a buffer.  Returns the info to keep (`None`
/// when empty).
pub fn check_stream_output(
    call: &'static str,
    so: &StreamOutputInfo,
    info: &ShaderInfo,
) -> Result<Option<Arc<StreamOutputInfo>>> {
    if so.output.is_empty() {
        return Ok(None);
    }
    if so.output.len() > MAX_SO_OUTPUTS {
        return Err(StreamOutputError::TooManyOutputs {
            call,
            count: so.output.len(),
            limit: MAX_SO_OUTPUTS,
        }
        .into());
    }
    for (b, &stride) in so.stride.iter().enumerate() {
        if stride > MAX_SO_STRIDE {
            return Err(StreamOutputError::StrideTooLarge {
                call,
                buffer: b,
                stride,
                limit: MAX_SO_STRIDE,
            }
            .into());
        }
    }
    let mut used: [u128; MAX_SO_BUFFERS] = [0; MAX_SO_BUFFERS];
    for (i, o) in so.output.iter().enumerate() {
        if o.register_index as usize >= info.outputs.len() {
            return Err(StreamOutputError::RegisterIndex {
                call,
                output: i,
                register_index: o.register_index,
                outputs: info.outputs.len(),
            }
            .into());
        }
        if o.num_components == 0 || o.start_component as u64 + o.num_components as u64 > 4 {
            return Err(StreamOutputError::Components {
                call,
                output: i,
                start: o.start_component,
                end: o.start_component as u64 + o.num_components as u64,
            }
            .into());
        }
        if o.output_buffer as usize >= MAX_SO_BUFFERS {
            return Err(StreamOutputError::OutputBuffer {
                call,
                output: i,
                buffer: o.output_buffer,
                limit: MAX_SO_BUFFERS,
            }
            .into());
        }
        if o.stream != 0 {
            return Err(StreamOutputError::Stream {
                call,
                output: i,
                stream: o.stream,
            }
            .into());
        }
        let b = o.output_buffer as usize;
        let end = o.dst_offset as u64 + o.num_components as u64;
        if end > so.stride[b] as u64 {
            return Err(StreamOutputError::RecordOverflow {
                call,
                output: i,
                end,
                stride: so.stride[b],
                buffer: b,
            }
            .into());
        }
        let mask = ((1u128 << o.num_components) - 1) << o.dst_offset;
        if used[b] & mask != 0 {
            return Err(StreamOutputError::OutputOverlap {
                call,
                output: i,
                buffer: b,
            }
            .into());
        }
        used[b] |= mask;
    }
    Ok(Some(Arc::new(so.clone())))
}

impl ShaderCode {
    pub(crate) fn parts(&self) -> (Language, &str, &str) {
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
            return Err(StateError::SemanticNotVarying {
                call,
                location: *loc,
                semantic: *sem,
            }
            .into());
        }
        if state.semantics[..i].iter().any(|(l, _)| l == loc) {
            return Err(StateError::SemanticTwice {
                call,
                location: *loc,
            }
            .into());
        }
    }
    Ok(())
}

/// What capture keeps of a source shader (capture.rs).
fn source_of(state: &ShaderState, overrides: &[OverrideValue<'_>]) -> super::ShaderSource {
    super::ShaderSource {
        code: state.code.clone(),
        semantics: state.semantics.clone(),
        stream_output: state.stream_output.clone(),
        overrides: super::capture::owned_overrides(overrides),
        req_local_mem: 0,
        req_input_mem: 0,
    }
}

impl Context {
    /// `create_vs_state` from WGSL or GLSL source: parsed, validated and
    /// compiled to a lane program now, so every error (and every construct
    /// ferropipe cannot run) surfaces here, not at draw time.
    pub fn create_vs_state(&mut self, state: &ShaderState) -> Result<VsHandle> {
        self.create_vs_state_with_overrides(state, &[])
    }

    /// `create_vs_state` with values for the WGSL `override` constants
    /// (WebGPU's `GPUProgrammableStage.constants`): `(name or numeric @id,
    /// value)`, converted to each override's type.  Overrides not listed
    /// take their initializer; one without an initializer, a name the
    /// shader does not declare, or a value that does not fit is a typed
    /// `Error::Shader`.
    pub fn create_vs_state_with_overrides(
        &mut self,
        state: &ShaderState,
        overrides: &[OverrideValue<'_>],
    ) -> Result<VsHandle> {
        self.alive("create_vs_state")?;
        const CALL: &str = "create_vs_state";
        check_semantics(CALL, state)?;
        let (lang, code, entry) = state.code.parts();
        let shader: VertexShaderRef = Arc::new(
            ferropipe_shader::compile_with_backend(
                lang,
                code,
                entry,
                ShaderType::Vertex,
                &state.semantics,
                overrides,
                self.screen.shader_backend(),
            )
            .map_err(|source| Error::Shader { call: CALL, source })?,
        );
        let stream_output = check_stream_output(CALL, &state.stream_output, shader.info())?;
        self.shader_sources
            .add_vs(&shader, source_of(state, overrides));
        Ok(self.spawn(VertexShaderCso {
            shader,
            stream_output,
        }))
    }

    /// `create_fs_state` from WGSL or GLSL source (see `create_vs_state`).
    pub fn create_fs_state(&mut self, state: &ShaderState) -> Result<FsHandle> {
        self.create_fs_state_with_overrides(state, &[])
    }

    /// `create_fs_state` with values for WGSL `override`s (see
    /// [`Context::create_vs_state_with_overrides`]).
    pub fn create_fs_state_with_overrides(
        &mut self,
        state: &ShaderState,
        overrides: &[OverrideValue<'_>],
    ) -> Result<FsHandle> {
        self.alive("create_fs_state")?;
        const CALL: &str = "create_fs_state";
        check_semantics(CALL, state)?;
        if !state.stream_output.output.is_empty() {
            return Err(StreamOutputError::FragmentShader.into());
        }
        let (lang, code, entry) = state.code.parts();
        let shader: FragmentShaderRef = Arc::new(
            ferropipe_shader::compile_with_backend(
                lang,
                code,
                entry,
                ShaderType::Fragment,
                &state.semantics,
                overrides,
                self.screen.shader_backend(),
            )
            .map_err(|source| Error::Shader { call: CALL, source })?,
        );
        self.shader_sources
            .add_fs(&shader, source_of(state, overrides));
        Ok(self.spawn(FragmentShaderCso(shader)))
    }

    /// A Rust-native vertex shader as a CSO (the zero-overhead path).
    pub fn create_vs_state_native(&mut self, shader: VertexShaderRef) -> Result<VsHandle> {
        self.alive("create_vs_state_native")?;
        Ok(self.spawn(VertexShaderCso {
            shader,
            stream_output: None,
        }))
    }

    /// A Rust-native vertex shader with `pipe_stream_output_info`:
    /// `register_index` counts the shader's `ShaderInfo::outputs` slots,
    /// exactly as for compiled shaders (validated as in
    /// `create_vs_state`).
    pub fn create_vs_state_native_with_stream_output(
        &mut self,
        shader: VertexShaderRef,
        stream_output: &StreamOutputInfo,
    ) -> Result<VsHandle> {
        self.alive("create_vs_state_native_with_stream_output")?;
        const CALL: &str = "create_vs_state_native_with_stream_output";
        let stream_output = check_stream_output(CALL, stream_output, shader.info())?;
        Ok(self.spawn(VertexShaderCso {
            shader,
            stream_output,
        }))
    }

    /// A Rust-native fragment shader as a CSO.
    pub fn create_fs_state_native(&mut self, shader: FragmentShaderRef) -> Result<FsHandle> {
        self.alive("create_fs_state_native")?;
        Ok(self.spawn(FragmentShaderCso(shader)))
    }

    /// `bind_vs_state`; `None` unbinds.
    pub fn bind_vs_state(&mut self, handle: Option<VsHandle>) -> Result<()> {
        self.alive("bind_vs_state")?;
        let (shader, so) = match handle {
            Some(h) => {
                let cso = self.get("bind_vs_state", "handle", h)?;
                (Some(cso.shader.clone()), cso.stream_output.clone())
            }
            None => (None, None),
        };
        let mut b = self.bound_mut();
        b.vs = shader;
        b.vs_stream_output = so;
        Ok(())
    }

    /// `bind_fs_state`; `None` unbinds.
    pub fn bind_fs_state(&mut self, handle: Option<FsHandle>) -> Result<()> {
        self.alive("bind_fs_state")?;
        let shader = match handle {
            Some(h) => Some(self.get("bind_fs_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().fs = shader;
        Ok(())
    }

    /// `delete_vs_state`.
    pub fn delete_vs_state(&mut self, handle: VsHandle) -> Result<()> {
        self.alive("delete_vs_state")?;
        self.despawn("delete_vs_state", handle)
    }

    /// `delete_fs_state`.
    pub fn delete_fs_state(&mut self, handle: FsHandle) -> Result<()> {
        self.alive("delete_fs_state")?;
        self.despawn("delete_fs_state", handle)
    }
}
