//! Frame capture's hook (issue 18): a [`CallRecorder`] sees the work a
//! context is asked to do, and reads the state it runs with.
//!
//! Mesa's counterpart is `GALLIUM_TRACE` (`src/gallium/auxiliary/driver_trace`),
//! which wraps every `pipe_context` call.  Here the context calls the
//! recorder itself, so the core stays free of any file format: the
//! `ferropipe-scene` crate's writer turns what it sees into a
//! `gallium-scene/1` file, with JSON and PNG living there.
//!
//! **What the recorder sees.**  Every call that *does* something, with its
//! borrowed arguments ([`CapturedCall`]): draws, clears, uploads (including
//! the bytes a `WRITE` transfer writes back), copies, blits, launches,
//! barriers, flushes, queries and conditional rendering.  Binds and `set_*`
//! calls are not forwarded one by one: they only change [`BoundState`] and
//! [`ComputeBindings`], which the recorder reads (through the `&Context` it
//! is given) at the next call that uses them, and emits as the calls that
//! recreate them.  That is one mechanism for both jobs a capture has — the
//! start of a capture must recreate whatever is bound (issue 18: "records
//! from the current state"), and every later state change is the same
//! problem from a different starting point — and it cannot drift from the
//! context's own state, since it reads that state.  CSOs are recreated from
//! the state they hold (the `Arc`s in the bound state), shaders from the
//! source they were compiled from ([`Context::shader_source`]); a
//! Rust-native shader has none, and the writer fails with a typed error.
//!
//! **Cost.**  Without a capture each hooked call pays one `Option` check
//! ([`Context::record`]); shader creation keeps the source text (one
//! `Arc` per compiled shader, pruned as shaders die).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use ferropipe_components::draw::{DrawInfo, StreamOutputTargetRef};
use ferropipe_components::enums::{BarrierFlags, ClearFlags, QueryType, RenderCondMode};
use ferropipe_components::resource::ResourceRef;
use ferropipe_components::shader::{FragmentShader, Semantic, VertexShader};
use ferropipe_components::state::{ColorUnion, PipeBox, StreamOutputInfo};
use ferropipe_components::view::SurfaceRef;
use ferropipe_shader::ComputeShader;

use super::{BlitInfo, Context, GridInfo, QueryHandle, ShaderCode};
use crate::error::{CaptureError, Result};

/// A query as a capture names it: its handle (identity), type and index.
#[derive(Clone, Copy, Debug)]
pub struct CapturedQuery {
    /// The query's handle: its identity across calls.
    pub handle: QueryHandle,
    /// `PIPE_QUERY_*`.
    pub query_type: QueryType,
    /// The query's index (vertex stream or counter index).
    pub index: u32,
}

/// One call a context was asked to do, with its arguments borrowed (see
/// the module docs for which calls appear).  Each is reported after its
/// arguments were validated and before it changes any resource, so a
/// recorder that reads a resource sees its contents from before the call.
#[derive(Debug)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "each variant is the `pipe_context` call of the same name and its fields are that call's parameters, as context.rst documents them"
)]
pub enum CapturedCall<'a> {
    /// `draw_vbo` with the bound state ([`Context::bound`]).
    DrawVbo(&'a DrawInfo),
    /// `clear` of the bound framebuffer.
    Clear {
        buffers: ClearFlags,
        color: &'a ColorUnion,
        depth: f64,
        stencil: u32,
    },
    ClearRenderTarget {
        surface: &'a SurfaceRef,
        color: &'a ColorUnion,
        dstx: u32,
        dsty: u32,
        width: u32,
        height: u32,
        render_condition_enabled: bool,
    },
    ClearDepthStencil {
        surface: &'a SurfaceRef,
        clear_flags: ClearFlags,
        depth: f64,
        stencil: u32,
        dstx: u32,
        dsty: u32,
        width: u32,
        height: u32,
        render_condition_enabled: bool,
    },
    ClearBuffer {
        resource: &'a ResourceRef,
        offset: u32,
        size: u32,
        value: &'a [u8],
    },
    /// `buffer_subdata`, or the bytes a `WRITE` transfer of a buffer
    /// writes back.
    BufferSubdata {
        resource: &'a ResourceRef,
        offset: u32,
        data: &'a [u8],
    },
    /// `texture_subdata`, or the bytes a `WRITE` transfer of a texture
    /// writes back: row `y` of slice `z` of `pbox` at
    /// `z * layer_stride + y * stride`.
    TextureSubdata {
        resource: &'a ResourceRef,
        level: u32,
        pbox: PipeBox,
        data: &'a [u8],
        stride: usize,
        layer_stride: usize,
    },
    ResourceCopyRegion {
        dst: &'a ResourceRef,
        dst_level: u32,
        dstx: u32,
        dsty: u32,
        dstz: u32,
        src: &'a ResourceRef,
        src_level: u32,
        src_box: PipeBox,
    },
    Blit(&'a BlitInfo<'a>),
    /// `set_stream_output_targets` (validated targets by slot; offsets as
    /// given, `SO_APPEND` included).  Reported because an offset resets a
    /// target's filled size, which the bound state does not show.
    SetStreamOutputTargets {
        targets: &'a [Option<StreamOutputTargetRef>],
        offsets: &'a [u32],
    },
    /// `launch_grid` with the compute bindings
    /// ([`Context::compute_bindings`]).
    LaunchGrid(&'a GridInfo<'a>),
    MemoryBarrier(BarrierFlags),
    TextureBarrier,
    Flush,
    CreateQuery(CapturedQuery),
    DestroyQuery(CapturedQuery),
    BeginQuery(CapturedQuery),
    EndQuery(CapturedQuery),
    GetQueryResult {
        query: CapturedQuery,
        wait: bool,
    },
    RenderCondition {
        query: Option<CapturedQuery>,
        condition: bool,
        mode: RenderCondMode,
    },
    /// A call the capture cannot express (`draw_vbo_indirect`,
    /// `set_global_binding`, ...): the recorder should fail.
    Inexpressible {
        call: &'static str,
        why: &'static str,
    },
}

/// What a capture is given: the hook of issue 18 (see the module docs).
///
/// The context owns the recorder between [`Context::start_capture`] and
/// [`Context::stop_capture`]; it lends itself read-only to each call, so
/// the recorder can read the bound state, the compute bindings, shader
/// sources and resource contents.
pub trait CallRecorder: Send + 'static {
    /// The capture starts: record what recreates `ctx`'s current state.
    /// Recorded work was executed first, so resources hold their contents.
    fn begin(&mut self, ctx: &Context);
    /// One call (see [`CapturedCall`]).
    fn record(&mut self, ctx: &Context, call: &CapturedCall<'_>);
    /// The capture stops (nothing was executed that the recorder did not
    /// see: recorded work is executed first).
    fn end(&mut self, ctx: &Context);
    /// The recorder as `Any`, so its owner gets its own type back from
    /// [`Context::stop_capture`].
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// The source a shader was compiled from, for capture
/// ([`Context::shader_source`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ShaderSource {
    /// The WGSL or GLSL source and entry point.
    pub code: ShaderCode,
    /// `@location` → COLOR/BCOLOR semantics it was created with.
    pub semantics: Vec<(u32, Semantic)>,
    /// Its stream-output info (vertex shaders; empty otherwise).
    pub stream_output: StreamOutputInfo,
    /// WGSL `override` values it was created with (name, value).
    pub overrides: Vec<(String, f64)>,
    /// Compute kernels: `req_local_mem`, `req_input_mem`.
    pub req_local_mem: u32,
    /// Compute kernels: bytes of INPUT a launch provides.
    pub req_input_mem: u32,
}

enum Compiled {
    Vs(Weak<dyn VertexShader>),
    Fs(Weak<dyn FragmentShader>),
    Cs(Weak<ComputeShader>),
}

impl Compiled {
    fn alive(&self) -> bool {
        match self {
            Compiled::Vs(w) => w.strong_count() > 0,
            Compiled::Fs(w) => w.strong_count() > 0,
            Compiled::Cs(w) => w.strong_count() > 0,
        }
    }
}

/// Compiled shader (by address) → its source.  An entry whose shader died
/// is never returned (its address may be reused by a native shader), and
/// dead entries are pruned whenever the table doubles.
#[derive(Default)]
pub(crate) struct ShaderSources {
    map: HashMap<usize, (Compiled, Arc<ShaderSource>)>,
    prune_at: usize,
}

fn addr<T: ?Sized>(a: &Arc<T>) -> usize {
    Arc::as_ptr(a) as *const u8 as usize
}

impl ShaderSources {
    fn insert(&mut self, key: usize, shader: Compiled, source: ShaderSource) {
        if self.map.len() >= self.prune_at {
            self.map.retain(|_, (c, _)| c.alive());
            self.prune_at = (self.map.len() * 2).max(64);
        }
        self.map.insert(key, (shader, Arc::new(source)));
    }

    pub(crate) fn add_vs(&mut self, s: &Arc<dyn VertexShader>, source: ShaderSource) {
        self.insert(addr(s), Compiled::Vs(Arc::downgrade(s)), source);
    }

    pub(crate) fn add_fs(&mut self, s: &Arc<dyn FragmentShader>, source: ShaderSource) {
        self.insert(addr(s), Compiled::Fs(Arc::downgrade(s)), source);
    }

    pub(crate) fn add_cs(&mut self, s: &Arc<ComputeShader>, source: ShaderSource) {
        self.insert(addr(s), Compiled::Cs(Arc::downgrade(s)), source);
    }

    fn get(&self, key: usize) -> Option<&Arc<ShaderSource>> {
        self.map
            .get(&key)
            .filter(|(c, _)| c.alive())
            .map(|(_, s)| s)
    }
}

/// A compiled shader whose source [`Context::shader_source`] looks up.
pub enum ShaderRef<'a> {
    /// A vertex shader.
    Vertex(&'a Arc<dyn VertexShader>),
    /// A fragment shader.
    Fragment(&'a Arc<dyn FragmentShader>),
    /// A compute kernel.
    Compute(&'a Arc<ComputeShader>),
}

/// Converts `create_*_with_overrides`' values to owned pairs.
pub(crate) fn owned_overrides(o: &[ferropipe_shader::OverrideValue<'_>]) -> Vec<(String, f64)> {
    o.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

impl Context {
    /// Starts capturing into `recorder` (issue 18; docs/capture.md):
    /// executes recorded work, lets the recorder record the current state
    /// ([`CallRecorder::begin`]), then reports every call to it until
    /// [`Context::stop_capture`].  One capture at a time.
    pub fn start_capture(&mut self, mut recorder: Box<dyn CallRecorder>) -> Result<()> {
        self.alive("start_capture")?;
        if self.capture.is_some() {
            return Err(CaptureError::AlreadyRunning.into());
        }
        self.flush_recorded()?;
        recorder.begin(self);
        self.capture = Some(recorder);
        Ok(())
    }

    /// Stops the capture and hands the recorder back (downcast it with
    /// `into_any().downcast::<T>()`).  Recorded work is executed first, so
    /// the resources hold the captured frame.
    pub fn stop_capture(&mut self) -> Result<Box<dyn CallRecorder>> {
        let Some(mut recorder) = self.capture.take() else {
            return Err(CaptureError::NotRunning.into());
        };
        let flushed = self.flush_recorded();
        recorder.end(self);
        flushed.map(|()| recorder)
    }

    /// Whether a capture is running.
    pub fn is_capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// The source `shader` was compiled from, or `None` for a Rust-native
    /// shader (or one created by another context).
    pub fn shader_source(&self, shader: ShaderRef<'_>) -> Option<&Arc<ShaderSource>> {
        let key = match shader {
            ShaderRef::Vertex(s) => addr(s),
            ShaderRef::Fragment(s) => addr(s),
            ShaderRef::Compute(s) => addr(s),
        };
        self.shader_sources.get(key)
    }

    /// Reports `call` to the running capture, if any: the only cost of
    /// capture when none runs.
    #[inline]
    pub(crate) fn record(&mut self, call: CapturedCall<'_>) {
        if let Some(mut recorder) = self.capture.take() {
            recorder.record(self, &call);
            self.capture = Some(recorder);
        }
    }

    /// The query's identity for [`CapturedCall`]s.
    pub(crate) fn captured_query(&self, q: QueryHandle) -> Option<CapturedQuery> {
        let o = self.world.get::<super::QueryObject>(q.entity)?;
        Some(CapturedQuery {
            handle: q,
            query_type: o.query_type,
            index: o.index,
        })
    }
}
