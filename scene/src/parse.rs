//! Reading a `gallium-scene/1` file into a typed, fully validated call list
//! (`../shared/scenes/FORMAT.md`).
//!
//! The whole scene is parsed before anything executes: every op, field,
//! enum name, data array and file is checked, and every id is resolved
//! (created once, used only while alive, of the right kind), so a malformed
//! scene fails with exit status 2 and a message naming the call index and
//! the field before any work is done.  Fields FORMAT.md does not define are
//! refused as unsupported (exit 3), as the reference tool does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ferropipe_components::draw::DrawInfo;
use ferropipe_components::enums::*;
use ferropipe_components::format::Format;
use ferropipe_components::pack::f32_to_f16;
use ferropipe_components::resource::ResourceTemplate;
use ferropipe_components::shader::Semantic;
use ferropipe_components::state::*;
use serde_json::Value;

use super::SceneError;
use super::json::{Obj, short};
use ferropipe::{ShaderCode, ShaderState};

/// What kind of object an id names (the `kind` of FORMAT.md's `bind` and
/// `delete` ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub enum Kind {
    Resource,
    Surface,
    SamplerView,
    Blend,
    DepthStencilAlpha,
    Rasterizer,
    Sampler,
    VertexElements,
    VertexShader,
    FragmentShader,
    ComputeShader,
    Query,
    /// A stream output target (docs/scene-format-stream-output.md).
    StreamOutputTarget,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Resource => "resource",
            Kind::Surface => "surface",
            Kind::SamplerView => "sampler view",
            Kind::Blend => "blend state",
            Kind::DepthStencilAlpha => "depth_stencil_alpha state",
            Kind::Rasterizer => "rasterizer state",
            Kind::Sampler => "sampler state",
            Kind::VertexElements => "vertex elements state",
            Kind::VertexShader => "vertex shader",
            Kind::FragmentShader => "fragment shader",
            Kind::ComputeShader => "compute state",
            Kind::Query => "query",
            Kind::StreamOutputTarget => "stream output target",
        }
    }
}

/// `set_constant_buffer`'s source.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub enum ConstantSource {
    Unbind,
    Buffer {
        id: String,
        offset: u32,
        /// `None`: to the end of the buffer.
        size: Option<u32>,
    },
    User(Vec<u8>),
}

/// One side of a `blit`.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub struct BlitSide {
    pub resource: String,
    pub level: u32,
    pub format: Option<Format>,
    pub pbox: PipeBox,
}

/// `struct pipe_blit_info` as a scene writes it.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub struct BlitCall {
    pub dst: BlitSide,
    pub src: BlitSide,
    pub mask: BlitMask,
    pub filter: TexFilter,
    pub scissor: Option<ScissorState>,
    pub render_condition_enable: bool,
    pub alpha_blend: bool,
}

/// One `set_shader_images` entry (`struct pipe_image_view`), defaults not
/// yet resolved: they depend on the resource.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub struct ImageSpec {
    pub resource: String,
    /// `None`: the resource's format.
    pub format: Option<Format>,
    /// `PIPE_IMAGE_ACCESS_*` bits (READ = 1, WRITE = 2), at least one.
    pub access: u32,
    pub level: u32,
    pub first_layer: u32,
    /// `None`: the resource's last layer for array, cube and 3D resources,
    /// else `first_layer` (FORMAT.md).
    pub last_layer: Option<u32>,
}

/// `launch_grid`'s `struct pipe_grid_info` as a scene writes it.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub struct LaunchGridCall {
    pub block: [u32; 3],
    pub grid: [u32; 3],
    pub last_block: [u32; 3],
    pub grid_base: [u32; 3],
    /// INPUT memory bytes.
    pub input: Vec<u8>,
}

/// One validated call.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    missing_docs,
    reason = "variants and fields are FORMAT.md's ops and fields of the same names; FORMAT.md documents them"
)]
pub enum Call {
    ResourceCreate {
        id: String,
        templ: ResourceTemplate,
        /// Level 0, layer 0, tightly packed (buffers: the first bytes).
        data: Option<Vec<u8>>,
    },
    ResourceDestroy {
        id: String,
    },
    BufferSubdata {
        resource: String,
        offset: u32,
        data: Vec<u8>,
    },
    TextureSubdata {
        resource: String,
        level: u32,
        pbox: PipeBox,
        data: Vec<u8>,
        stride: usize,
        layer_stride: usize,
    },
    CreateSurface {
        id: String,
        resource: String,
        format: Option<Format>,
        level: u32,
        first_layer: u32,
        last_layer: Option<u32>,
    },
    SurfaceDestroy {
        id: String,
    },
    CreateSamplerView {
        id: String,
        resource: String,
        target: Option<TextureTarget>,
        format: Option<Format>,
        first_level: u32,
        last_level: Option<u32>,
        first_layer: u32,
        last_layer: Option<u32>,
        swizzle: [Swizzle; 4],
    },
    SamplerViewDestroy {
        id: String,
    },
    CreateBlendState {
        id: String,
        state: BlendState,
    },
    CreateDepthStencilAlphaState {
        id: String,
        state: DepthStencilAlphaState,
    },
    CreateRasterizerState {
        id: String,
        state: RasterizerState,
    },
    CreateSamplerState {
        id: String,
        state: SamplerState,
    },
    CreateVertexElementsState {
        id: String,
        elements: Vec<VertexElement>,
    },
    CreateShader {
        id: String,
        stage: ShaderType,
        state: ShaderState,
    },
    CreateComputeState {
        id: String,
        state: ferropipe::ComputeState,
    },
    /// `bind_*_state`; `id: None` unbinds.
    Bind {
        kind: Kind,
        id: Option<String>,
    },
    /// `delete_*_state`.
    Delete {
        kind: Kind,
        id: String,
    },
    BindSamplerStates {
        shader: ShaderType,
        start_slot: u32,
        samplers: Vec<Option<String>>,
    },
    SetFramebufferState {
        width: u32,
        height: u32,
        layers: u32,
        samples: u32,
        cbufs: Vec<Option<String>>,
        zsbuf: Option<String>,
    },
    SetViewportStates {
        start_slot: u32,
        viewports: Vec<ViewportState>,
    },
    SetScissorStates {
        start_slot: u32,
        scissors: Vec<ScissorState>,
    },
    SetVertexBuffers {
        start_slot: u32,
        /// (buffer id, stride, buffer_offset); `None` unbinds the slot.
        buffers: Vec<Option<(String, u32, u32)>>,
    },
    /// (buffer id, index size, offset); `None` unbinds.
    SetIndexBuffer(Option<(String, u32, u32)>),
    SetConstantBuffer {
        shader: ShaderType,
        index: u32,
        source: ConstantSource,
    },
    SetSamplerViews {
        shader: ShaderType,
        start_slot: u32,
        views: Vec<Option<String>>,
    },
    SetShaderBuffers {
        shader: ShaderType,
        start_slot: u32,
        /// (buffer id, buffer_offset, buffer_size: `None` = the rest of
        /// the buffer); `None` unbinds the slot.
        buffers: Vec<Option<(String, u32, Option<u32>)>>,
        writable_bitmask: u32,
    },
    SetShaderImages {
        shader: ShaderType,
        start_slot: u32,
        images: Vec<Option<ImageSpec>>,
    },
    LaunchGrid(Box<LaunchGridCall>),
    SetBlendColor([f32; 4]),
    SetStencilRef([u8; 2]),
    SetSampleMask(u32),
    SetMinSamples(u32),
    SetClipState(ClipState),
    SetPolygonStipple(PolyStipple),
    Clear {
        buffers: ClearFlags,
        /// As written; converted per surface format (floats, or integers
        /// for UINT/SINT formats).
        color: [f64; 4],
        depth: f64,
        stencil: u32,
    },
    ClearRenderTarget {
        surface: String,
        color: [f64; 4],
        dstx: u32,
        dsty: u32,
        width: u32,
        height: u32,
        render_condition_enabled: bool,
    },
    ClearDepthStencil {
        surface: String,
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
        resource: String,
        offset: u32,
        size: u32,
        value: Vec<u8>,
    },
    DrawVbo(DrawInfo),
    CreateQuery {
        id: String,
        query_type: QueryType,
        index: u32,
    },
    DestroyQuery {
        id: String,
    },
    BeginQuery {
        id: String,
    },
    EndQuery {
        id: String,
    },
    GetQueryResult {
        id: String,
        wait: bool,
        expect: Option<Value>,
    },
    RenderCondition {
        query: Option<String>,
        condition: bool,
        mode: RenderCondMode,
    },
    ResourceCopyRegion {
        dst: String,
        dst_level: u32,
        dstx: u32,
        dsty: u32,
        dstz: u32,
        src: String,
        src_level: u32,
        src_box: PipeBox,
    },
    Blit(Box<BlitCall>),
    /// Proposed (docs/scene-format-stream-output.md):
    /// `create_stream_output_target`.
    CreateStreamOutputTarget {
        id: String,
        buffer: String,
        buffer_offset: u32,
        buffer_size: u32,
    },
    StreamOutputTargetDestroy {
        id: String,
    },
    /// `set_stream_output_targets`: `offsets[i]` is a byte offset or
    /// `SO_APPEND` (written `"append"`).
    SetStreamOutputTargets {
        targets: Vec<Option<String>>,
        offsets: Vec<u32>,
    },
    Flush,
    FlushResource {
        resource: String,
    },
    TextureBarrier,
    MemoryBarrier(BarrierFlags),
    TimingBegin,
}

impl Call {
    /// The op name, as written in the scene.
    pub fn op(&self) -> &'static str {
        match self {
            Call::ResourceCreate { .. } => "resource_create",
            Call::ResourceDestroy { .. } => "resource_destroy",
            Call::BufferSubdata { .. } => "buffer_subdata",
            Call::TextureSubdata { .. } => "texture_subdata",
            Call::CreateSurface { .. } => "create_surface",
            Call::SurfaceDestroy { .. } => "surface_destroy",
            Call::CreateSamplerView { .. } => "create_sampler_view",
            Call::SamplerViewDestroy { .. } => "sampler_view_destroy",
            Call::CreateBlendState { .. } => "create_blend_state",
            Call::CreateDepthStencilAlphaState { .. } => "create_depth_stencil_alpha_state",
            Call::CreateRasterizerState { .. } => "create_rasterizer_state",
            Call::CreateSamplerState { .. } => "create_sampler_state",
            Call::CreateVertexElementsState { .. } => "create_vertex_elements_state",
            Call::CreateShader {
                stage: ShaderType::Vertex,
                ..
            } => "create_vs_state",
            Call::CreateShader { .. } => "create_fs_state",
            Call::CreateComputeState { .. } => "create_compute_state",
            Call::Bind { kind, .. } => bind_op(*kind),
            Call::Delete { kind, .. } => delete_op(*kind),
            Call::BindSamplerStates { .. } => "bind_sampler_states",
            Call::SetFramebufferState { .. } => "set_framebuffer_state",
            Call::SetViewportStates { .. } => "set_viewport_states",
            Call::SetScissorStates { .. } => "set_scissor_states",
            Call::SetVertexBuffers { .. } => "set_vertex_buffers",
            Call::SetIndexBuffer(_) => "set_index_buffer",
            Call::SetConstantBuffer { .. } => "set_constant_buffer",
            Call::SetSamplerViews { .. } => "set_sampler_views",
            Call::SetShaderBuffers { .. } => "set_shader_buffers",
            Call::SetShaderImages { .. } => "set_shader_images",
            Call::LaunchGrid(_) => "launch_grid",
            Call::SetBlendColor(_) => "set_blend_color",
            Call::SetStencilRef(_) => "set_stencil_ref",
            Call::SetSampleMask(_) => "set_sample_mask",
            Call::SetMinSamples(_) => "set_min_samples",
            Call::SetClipState(_) => "set_clip_state",
            Call::SetPolygonStipple(_) => "set_polygon_stipple",
            Call::Clear { .. } => "clear",
            Call::ClearRenderTarget { .. } => "clear_render_target",
            Call::ClearDepthStencil { .. } => "clear_depth_stencil",
            Call::ClearBuffer { .. } => "clear_buffer",
            Call::DrawVbo(_) => "draw_vbo",
            Call::CreateQuery { .. } => "create_query",
            Call::DestroyQuery { .. } => "destroy_query",
            Call::BeginQuery { .. } => "begin_query",
            Call::EndQuery { .. } => "end_query",
            Call::GetQueryResult { .. } => "get_query_result",
            Call::RenderCondition { .. } => "render_condition",
            Call::ResourceCopyRegion { .. } => "resource_copy_region",
            Call::Blit(_) => "blit",
            Call::CreateStreamOutputTarget { .. } => "create_stream_output_target",
            Call::StreamOutputTargetDestroy { .. } => "stream_output_target_destroy",
            Call::SetStreamOutputTargets { .. } => "set_stream_output_targets",
            Call::Flush => "flush",
            Call::FlushResource { .. } => "flush_resource",
            Call::TextureBarrier => "texture_barrier",
            Call::MemoryBarrier(_) => "memory_barrier",
            Call::TimingBegin => "timing_begin",
        }
    }
}

fn bind_op(kind: Kind) -> &'static str {
    match kind {
        Kind::Blend => "bind_blend_state",
        Kind::DepthStencilAlpha => "bind_depth_stencil_alpha_state",
        Kind::Rasterizer => "bind_rasterizer_state",
        Kind::VertexElements => "bind_vertex_elements_state",
        Kind::VertexShader => "bind_vs_state",
        Kind::ComputeShader => "bind_compute_state",
        _ => "bind_fs_state",
    }
}

fn delete_op(kind: Kind) -> &'static str {
    match kind {
        Kind::Blend => "delete_blend_state",
        Kind::DepthStencilAlpha => "delete_depth_stencil_alpha_state",
        Kind::Rasterizer => "delete_rasterizer_state",
        Kind::Sampler => "delete_sampler_state",
        Kind::VertexElements => "delete_vertex_elements_state",
        Kind::VertexShader => "delete_vs_state",
        Kind::ComputeShader => "delete_compute_state",
        _ => "delete_fs_state",
    }
}

/// What a scene reads back at the end.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputSource {
    /// A surface, by id: its level and layer, converted as FORMAT.md says.
    Surface(String),
    /// One level and layer of a texture resource.
    Resource {
        /// The resource's id.
        id: String,
        /// The mip level.
        level: u32,
        /// The layer (cube face, array layer or 3D slice).
        layer: u32,
    },
    /// A buffer's bytes, unconverted (`N.bin`): `offset` and `size` in
    /// bytes, checked against the buffer at parse time.
    Buffer {
        /// The buffer's id.
        id: String,
        /// First byte read.
        offset: u32,
        /// Bytes read.
        size: u32,
    },
}

/// One `outputs` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The file stem the output is written as (`color` → `color.png`).
    pub name: String,
    /// What it reads.
    pub source: OutputSource,
}

/// A parsed, validated scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// The file's `description`.
    pub description: String,
    /// Every call, validated, in file order.
    pub calls: Vec<Call>,
    /// What is read back after the last call.
    pub outputs: Vec<Output>,
    /// Index of the `timing_begin` call, if any.
    pub timing_begin: Option<usize>,
    /// Query ids and their types (for the manifest).
    pub query_types: Vec<(String, QueryType)>,
}

/// Objects that exist at a point of the call list (parse-time id tracking).
#[derive(Default)]
struct Ids {
    live: HashMap<String, Kind>,
    /// Every id ever created (FORMAT.md: ids are unique in the file).
    created: HashMap<String, usize>,
    /// Resource templates, for checks that need them (data sizes).
    templates: HashMap<String, ResourceTemplate>,
}

impl Ids {
    fn create(&mut self, o: &Obj, index: usize, kind: Kind) -> Result<String, SceneError> {
        let id = o.req_str("id")?;
        if let Some(prev) = self.created.get(id) {
            return Err(o.err("id", format!("{id:?} was already created by call {prev}")));
        }
        self.created.insert(id.to_string(), index);
        self.live.insert(id.to_string(), kind);
        Ok(id.to_string())
    }

    /// A reference to a live object of `kind`.
    fn use_id(&self, o: &Obj, key: &str, v: &Value, kind: Kind) -> Result<String, SceneError> {
        let id = o.str_of(key, v)?;
        match self.live.get(id) {
            Some(k) if *k == kind => Ok(id.to_string()),
            Some(k) => Err(o.err(
                key,
                format!("{id:?} is a {}, not a {}", k.name(), kind.name()),
            )),
            None if self.created.contains_key(id) => {
                Err(o.err(key, format!("{} {id:?} was destroyed earlier", kind.name())))
            }
            None => Err(o.err(key, format!("unknown {} id {id:?}", kind.name()))),
        }
    }

    fn req_use(&self, o: &Obj, key: &str, kind: Kind) -> Result<String, SceneError> {
        let v = o.req(key)?;
        self.use_id(o, key, v, kind)
    }

    /// An id or `null` (absent = null).
    fn opt_use(&self, o: &Obj, key: &str, kind: Kind) -> Result<Option<String>, SceneError> {
        match o.present(key) {
            Some(v) => Ok(Some(self.use_id(o, key, v, kind)?)),
            None => Ok(None),
        }
    }

    fn id_list(&self, o: &Obj, key: &str, kind: Kind) -> Result<Vec<Option<String>>, SceneError> {
        o.array_or_empty(key)?
            .iter()
            .map(|v| {
                if v.is_null() {
                    Ok(None)
                } else {
                    self.use_id(o, key, v, kind).map(Some)
                }
            })
            .collect()
    }

    fn destroy(&mut self, o: &Obj, kind: Kind) -> Result<String, SceneError> {
        let id = self.req_use(o, "id", kind)?;
        self.live.remove(&id);
        Ok(id)
    }
}

fn parse_format(s: &str) -> Option<Format> {
    Format::from_gallium_name(s)
}

fn shader_stage(o: &Obj) -> Result<ShaderType, SceneError> {
    let s = o.enum_or("shader", ShaderType::Vertex, ShaderType::from_gallium_name)?;
    match s {
        ShaderType::Vertex | ShaderType::Fragment | ShaderType::Compute => Ok(s),
        other => Err(o.unsupported("shader", format!("the {other} stage"))),
    }
}

/// Reads scene data: an inline array of numbers in `typ`, or a file slice.
/// Largest data or shader file a scene may reference: 1 GiB, far above
/// any real scene (the 1080p perf scenes' largest is a few MiB) and below
/// what would take the host down.
pub const MAX_SCENE_FILE_BYTES: u64 = 1 << 30;

/// Where a scene's data files and shader sources are read from.
///
/// `confined` is for scenes that are not trusted (fuzzing, files from the
/// network): paths must then be relative and stay inside `base` (no `..`,
/// no absolute paths).  In every mode only regular files up to
/// [`MAX_SCENE_FILE_BYTES`] are read, so `/dev/zero` or a FIFO named by a
/// scene is an error, not a hang or an out-of-memory abort.
#[derive(Clone, Copy, Debug)]
pub struct DataDir<'a> {
    /// The directory `file` references are relative to.
    pub base: &'a Path,
    /// Refuse absolute paths and `..` (untrusted scenes).
    pub confined: bool,
}

impl DataDir<'_> {
    /// Reads `rel` (relative to the scene) or says why not.
    fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        use std::path::Component;
        let relp = Path::new(rel);
        if self.confined
            && !relp
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(format!(
                "{rel:?} leaves the scene's directory (only plain relative paths are allowed here)"
            ));
        }
        let path: PathBuf = self.base.join(relp);
        let meta =
            std::fs::metadata(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{} is not a regular file", path.display()));
        }
        if meta.len() > MAX_SCENE_FILE_BYTES {
            return Err(format!(
                "{} holds {} bytes, more than the {MAX_SCENE_FILE_BYTES} a scene file may",
                path.display(),
                meta.len()
            ));
        }
        std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }
}

fn load_data(
    o: &Obj,
    key: &str,
    v: &Value,
    typ: Option<&str>,
    default_type: &str,
    base: DataDir<'_>,
) -> Result<Vec<u8>, SceneError> {
    match v {
        Value::Array(items) => {
            let typ = typ.unwrap_or(default_type);
            let mut out = Vec::with_capacity(items.len() * 4);
            for it in items {
                let Some(f) = it.as_f64() else {
                    return Err(o.err(key, format!("expected numbers, got {}", short(it))));
                };
                let int = |min: f64, max: f64| -> Result<i64, SceneError> {
                    if f.fract() != 0.0 || f < min || f > max {
                        Err(o.err(key, format!("{f} does not fit type {typ}")))
                    } else {
                        Ok(f as i64)
                    }
                };
                match typ {
                    "f32" => out.extend_from_slice(&(f as f32).to_le_bytes()),
                    "f64" => out.extend_from_slice(&f.to_le_bytes()),
                    "f16" => out.extend_from_slice(&f32_to_f16(f as f32).to_le_bytes()),
                    "u8" => out.push(int(0.0, 255.0)? as u8),
                    "i8" => out.push(int(-128.0, 127.0)? as i8 as u8),
                    "u16" => out.extend_from_slice(&(int(0.0, 65535.0)? as u16).to_le_bytes()),
                    "i16" => out.extend_from_slice(&(int(-32768.0, 32767.0)? as i16).to_le_bytes()),
                    "u32" => {
                        out.extend_from_slice(&(int(0.0, u32::MAX as f64)? as u32).to_le_bytes())
                    }
                    "i32" => out.extend_from_slice(
                        &(int(i32::MIN as f64, i32::MAX as f64)? as i32).to_le_bytes(),
                    ),
                    other => {
                        return Err(o.err("type", format!("unknown data type {other:?}")));
                    }
                }
            }
            Ok(out)
        }
        Value::Object(_) => {
            let d = Obj::new(v, format!("{} {key}", o.what))?;
            d.check_fields(&["file", "offset", "size"])?;
            let file = d.req_str("file")?;
            let offset = d.u32_or("offset", 0)? as u64;
            let size = match d.present("size") {
                Some(s) => Some(d.int_of("size", s, 0, u32::MAX as i64)? as u64),
                None => None,
            };
            let bytes = base.read(file).map_err(|e| d.err("file", e))?;
            let len = bytes.len() as u64;
            let end = match size {
                Some(s) => offset + s,
                None => len,
            };
            if offset > len || end > len {
                return Err(d.err(
                    "size",
                    format!(
                        "{file} holds {len} bytes; offset {offset} + size {} is past its end",
                        end.saturating_sub(offset)
                    ),
                ));
            }
            Ok(bytes[offset as usize..end as usize].to_vec())
        }
        other => Err(o.err(
            key,
            format!(
                "data must be an array of numbers or {{\"file\": ...}}, got {}",
                super::json::type_name(other)
            ),
        )),
    }
}

fn parse_box(o: &Obj, key: &str) -> Result<PipeBox, SceneError> {
    let b = Obj::new(o.req(key)?, format!("{} {key}", o.what))?;
    b.check_fields(&["x", "y", "z", "width", "height", "depth"])?;
    Ok(PipeBox {
        x: b.i32_or("x", 0)?,
        y: b.i32_or("y", 0)?,
        z: b.i32_or("z", 0)?,
        width: b.i32_or("width", 1)?,
        height: b.i32_or("height", 1)?,
        depth: b.i32_or("depth", 1)?,
    })
}

fn parse_scissor(o: &Obj) -> Result<ScissorState, SceneError> {
    o.check_fields(&["minx", "miny", "maxx", "maxy"])?;
    Ok(ScissorState {
        minx: o.u32_or("minx", 0)?,
        miny: o.u32_or("miny", 0)?,
        maxx: o.u32_or("maxx", 0)?,
        maxy: o.u32_or("maxy", 0)?,
    })
}

fn blend_factor(o: &Obj, key: &str, enabled: bool) -> Result<BlendFactor, SceneError> {
    match o.present(key) {
        Some(v) => o.enum_of(key, v, BlendFactor::from_gallium_name),
        // The reference: a factor is needed when blending is on.
        None if enabled => Err(SceneError::Malformed(format!(
            "{}: missing field '{key}' (needed when blend_enable is set)",
            o.what
        ))),
        None => Ok(BlendFactor::One),
    }
}

fn parse_blend(st: &Obj) -> Result<BlendState, SceneError> {
    st.check_fields(&[
        "independent_blend_enable",
        "logicop_enable",
        "logicop_func",
        "dither",
        "alpha_to_coverage",
        "alpha_to_coverage_dither",
        "alpha_to_one",
        "rt",
        "max_rt",
    ])?;
    let mut b = BlendState {
        independent_blend_enable: st.bool_or("independent_blend_enable", false)?,
        logicop_enable: st.bool_or("logicop_enable", false)?,
        logicop_func: st.enum_or("logicop_func", LogicOp::Clear, LogicOp::from_gallium_name)?,
        dither: st.bool_or("dither", false)?,
        alpha_to_coverage: st.bool_or("alpha_to_coverage", false)?,
        alpha_to_coverage_dither: st.bool_or("alpha_to_coverage_dither", false)?,
        alpha_to_one: st.bool_or("alpha_to_one", false)?,
        rt: Default::default(),
    };
    if st.present("max_rt").is_some() {
        st.int_of("max_rt", st.req("max_rt")?, 0, MAX_COLOR_BUFS as i64 - 1)?;
    }
    let rts = st.array_or_empty("rt")?;
    if rts.len() > MAX_COLOR_BUFS {
        return Err(st.err(
            "rt",
            format!("{} entries; at most {MAX_COLOR_BUFS}", rts.len()),
        ));
    }
    for (i, v) in rts.iter().enumerate() {
        let r = Obj::new(v, format!("{} rt[{i}]", st.what))?;
        r.check_fields(&[
            "blend_enable",
            "rgb_func",
            "rgb_src_factor",
            "rgb_dst_factor",
            "alpha_func",
            "alpha_src_factor",
            "alpha_dst_factor",
            "colormask",
        ])?;
        let e = r.bool_or("blend_enable", false)?;
        let colormask = r.u32_or("colormask", 0)?;
        if colormask > 15 {
            return Err(r.err("colormask", format!("{colormask}; must be 0..=15")));
        }
        b.rt[i] = RtBlendState {
            blend_enable: e,
            rgb_func: r.enum_or("rgb_func", BlendFunc::Add, BlendFunc::from_gallium_name)?,
            rgb_src_factor: blend_factor(&r, "rgb_src_factor", e)?,
            rgb_dst_factor: blend_factor(&r, "rgb_dst_factor", e)?,
            alpha_func: r.enum_or("alpha_func", BlendFunc::Add, BlendFunc::from_gallium_name)?,
            alpha_src_factor: blend_factor(&r, "alpha_src_factor", e)?,
            alpha_dst_factor: blend_factor(&r, "alpha_dst_factor", e)?,
            colormask: colormask as u8,
        };
    }
    Ok(b)
}

fn parse_dsa(st: &Obj) -> Result<DepthStencilAlphaState, SceneError> {
    st.check_fields(&[
        "depth_enabled",
        "depth_writemask",
        "depth_func",
        "depth_bounds_test",
        "depth_bounds_min",
        "depth_bounds_max",
        "stencil",
        "alpha_enabled",
        "alpha_func",
        "alpha_ref_value",
    ])?;
    let faces = st.array_or_empty("stencil")?;
    if faces.len() > 2 {
        return Err(st.err("stencil", "must be [front, back]"));
    }
    let mut stencil = [StencilState::default(); 2];
    for (i, v) in faces.iter().enumerate() {
        let f = Obj::new(v, format!("{} stencil[{i}]", st.what))?;
        f.check_fields(&[
            "enabled",
            "func",
            "fail_op",
            "zpass_op",
            "zfail_op",
            "valuemask",
            "writemask",
        ])?;
        let op = |k| f.enum_or(k, StencilOp::Keep, StencilOp::from_gallium_name);
        stencil[i] = StencilState {
            enabled: f.bool_or("enabled", false)?,
            func: f.enum_or("func", Func::Never, Func::from_gallium_name)?,
            fail_op: op("fail_op")?,
            zpass_op: op("zpass_op")?,
            zfail_op: op("zfail_op")?,
            // Masks are 8 bits; wider values (0xFFFFFFFF from GL) keep
            // their low byte, as the reference does.
            valuemask: f.u32_or("valuemask", 0)? as u8,
            writemask: f.u32_or("writemask", 0)? as u8,
        };
    }
    Ok(DepthStencilAlphaState {
        depth_enabled: st.bool_or("depth_enabled", false)?,
        depth_writemask: st.bool_or("depth_writemask", false)?,
        depth_func: st.enum_or("depth_func", Func::Never, Func::from_gallium_name)?,
        depth_bounds_test: st.bool_or("depth_bounds_test", false)?,
        depth_bounds_min: st.f32_or("depth_bounds_min", 0.0)?,
        depth_bounds_max: st.f32_or("depth_bounds_max", 0.0)?,
        stencil,
        alpha_enabled: st.bool_or("alpha_enabled", false)?,
        alpha_func: st.enum_or("alpha_func", Func::Never, Func::from_gallium_name)?,
        alpha_ref_value: st.f32_or("alpha_ref_value", 0.0)?,
    })
}

fn parse_rasterizer(st: &Obj) -> Result<RasterizerState, SceneError> {
    st.check_fields(&[
        "flatshade",
        "flatshade_first",
        "light_twoside",
        "clamp_vertex_color",
        "clamp_fragment_color",
        "front_ccw",
        "cull_face",
        "cull_mode",
        "fill_front",
        "fill_back",
        "poly_stipple_enable",
        "poly_smooth",
        "offset_point",
        "offset_line",
        "offset_tri",
        "offset_units",
        "offset_units_unscaled",
        "offset_scale",
        "offset_clamp",
        "line_width",
        "line_smooth",
        "line_stipple_enable",
        "line_stipple_pattern",
        "line_stipple_factor",
        "line_last_pixel",
        "line_rectangular",
        "sprite_coord_enable",
        "sprite_coord_mode",
        "point_quad_rasterization",
        "point_tri_clip",
        "point_line_tri_clip",
        "point_smooth",
        "point_size_per_vertex",
        "point_size",
        "scissor",
        "multisample",
        "force_persample_interp",
        "half_pixel_center",
        "bottom_edge_rule",
        "rasterizer_discard",
        "clip_halfz",
        "depth_clip_near",
        "depth_clip_far",
        "depth_clamp",
        "clip_plane_enable",
        "conservative_raster_mode",
        "conservative_raster_dilate",
        "subpixel_precision_x",
        "subpixel_precision_y",
        "unclamped_fragment_depth_values",
    ])?;
    for k in ["force_persample_interp", "unclamped_fragment_depth_values"] {
        if st.bool_or(k, false)? {
            return Err(st.unsupported(k, "not implemented"));
        }
    }
    let d = RasterizerState::default();
    let cull_key = if st.present("cull_face").is_some() {
        "cull_face"
    } else {
        "cull_mode"
    };
    let poly = |k| st.enum_or(k, PolygonMode::Fill, PolygonMode::from_gallium_name);
    let small = |k: &str, max: i64| -> Result<i64, SceneError> {
        match st.present(k) {
            Some(v) => st.int_of(k, v, 0, max),
            None => Ok(0),
        }
    };
    let multisample = st.bool_or("multisample", false)?;
    let line_smooth = st.bool_or("line_smooth", false)?;
    Ok(RasterizerState {
        flatshade: st.bool_or("flatshade", false)?,
        flatshade_first: st.bool_or("flatshade_first", false)?,
        light_twoside: st.bool_or("light_twoside", false)?,
        clamp_vertex_color: st.bool_or("clamp_vertex_color", false)?,
        clamp_fragment_color: st.bool_or("clamp_fragment_color", false)?,
        front_ccw: st.bool_or("front_ccw", false)?,
        cull_face: st.enum_or(cull_key, Face::None, Face::from_gallium_name)?,
        fill_front: poly("fill_front")?,
        fill_back: poly("fill_back")?,
        poly_stipple_enable: st.bool_or("poly_stipple_enable", false)?,
        poly_smooth: st.bool_or("poly_smooth", false)?,
        offset_point: st.bool_or("offset_point", false)?,
        offset_line: st.bool_or("offset_line", false)?,
        offset_tri: st.bool_or("offset_tri", false)?,
        offset_units: st.f32_or("offset_units", 0.0)?,
        offset_units_unscaled: st.bool_or("offset_units_unscaled", false)?,
        offset_scale: st.f32_or("offset_scale", 0.0)?,
        offset_clamp: st.f32_or("offset_clamp", 0.0)?,
        line_width: st.f32_or("line_width", d.line_width)?,
        line_smooth,
        line_stipple_enable: st.bool_or("line_stipple_enable", false)?,
        // `unsigned line_stipple_pattern:16` in p_state.h keeps the low 16
        // bits (as the reference's `& 0xFFFF` does).
        line_stipple_pattern: st.u32_or("line_stipple_pattern", 0xffff)? as u16,
        line_stipple_factor: small("line_stipple_factor", 255)? as u8,
        line_last_pixel: st.bool_or("line_last_pixel", false)?,
        line_rectangular: st.bool_or("line_rectangular", multisample || line_smooth)?,
        sprite_coord_enable: st.u32_or("sprite_coord_enable", 0)?,
        sprite_coord_mode: st.enum_or(
            "sprite_coord_mode",
            SpriteCoordMode::UpperLeft,
            SpriteCoordMode::from_gallium_name,
        )?,
        point_quad_rasterization: st.bool_or("point_quad_rasterization", false)?,
        point_tri_clip: st.bool_or("point_tri_clip", false)?
            || st.bool_or("point_line_tri_clip", false)?,
        point_smooth: st.bool_or("point_smooth", false)?,
        point_size_per_vertex: st.bool_or("point_size_per_vertex", false)?,
        point_size: st.f32_or("point_size", d.point_size)?,
        scissor: st.bool_or("scissor", false)?,
        multisample,
        half_pixel_center: st.bool_or("half_pixel_center", true)?,
        bottom_edge_rule: st.bool_or("bottom_edge_rule", false)?,
        rasterizer_discard: st.bool_or("rasterizer_discard", false)?,
        clip_halfz: st.bool_or("clip_halfz", false)?,
        depth_clip_near: st.bool_or("depth_clip_near", true)?,
        depth_clip_far: st.bool_or("depth_clip_far", true)?,
        depth_clamp: st.bool_or("depth_clamp", false)?,
        clip_plane_enable: small("clip_plane_enable", 255)? as u8,
        conservative_raster_mode: st.enum_or(
            "conservative_raster_mode",
            ConservativeRasterMode::Off,
            ConservativeRasterMode::from_gallium_name,
        )?,
        conservative_raster_dilate: st.f32_or("conservative_raster_dilate", 0.0)?,
        subpixel_precision_x: small("subpixel_precision_x", 255)? as u8,
        subpixel_precision_y: small("subpixel_precision_y", 255)? as u8,
    })
}

fn parse_sampler(st: &Obj) -> Result<SamplerState, SceneError> {
    st.check_fields(&[
        "wrap_s",
        "wrap_t",
        "wrap_r",
        "min_img_filter",
        "mag_img_filter",
        "min_mip_filter",
        "normalized_coords",
        "lod_bias",
        "min_lod",
        "max_lod",
        "compare_mode",
        "compare_func",
        "max_anisotropy",
        "border_color",
        "seamless_cube_map",
    ])?;
    let wrap = |k| st.enum_or(k, TexWrap::Repeat, TexWrap::from_gallium_name);
    let filt = |k| st.enum_or(k, TexFilter::Nearest, TexFilter::from_gallium_name);
    Ok(SamplerState {
        wrap_s: wrap("wrap_s")?,
        wrap_t: wrap("wrap_t")?,
        wrap_r: wrap("wrap_r")?,
        min_img_filter: filt("min_img_filter")?,
        min_mip_filter: st.enum_or(
            "min_mip_filter",
            TexMipFilter::Nearest,
            TexMipFilter::from_gallium_name,
        )?,
        mag_img_filter: filt("mag_img_filter")?,
        compare_mode: st.enum_or(
            "compare_mode",
            TexCompareMode::None,
            TexCompareMode::from_gallium_name,
        )?,
        compare_func: st.enum_or("compare_func", Func::Never, Func::from_gallium_name)?,
        normalized_coords: st.bool_or("normalized_coords", true)?,
        max_anisotropy: st.u32_or("max_anisotropy", 0)?,
        seamless_cube_map: st.bool_or("seamless_cube_map", false)?,
        lod_bias: st.f32_or("lod_bias", 0.0)?,
        min_lod: st.f32_or("min_lod", 0.0)?,
        max_lod: st.f32_or("max_lod", 1000.0)?,
        border_color: st.f32_array_or("border_color", [0.0; 4])?,
    })
}

fn parse_semantics(o: &Obj) -> Result<Vec<(u32, Semantic)>, SceneError> {
    let Some(v) = o.present("semantics") else {
        return Ok(Vec::new());
    };
    let m = Obj::new(v, format!("{} semantics", o.what))?;
    let mut out = Vec::new();
    for (k, v) in m.map {
        let loc: u32 = k
            .parse()
            .map_err(|_| o.err("semantics", format!("location {k:?} is not a number")))?;
        let s = m.str_of(k, v)?;
        let num = |p: &str| s.strip_prefix(p).and_then(|n| n.parse::<u8>().ok());
        let sem = if let Some(n) = num("BCOLOR") {
            Semantic::BColor(n)
        } else if let Some(n) = num("COLOR") {
            Semantic::Color(n)
        } else if let Some(n) = num("GENERIC") {
            Semantic::Generic(n)
        } else {
            return Err(o.unsupported(
                "semantics",
                format!("{s:?} (COLORn, BCOLORn, GENERICn only)"),
            ));
        };
        if matches!(sem, Semantic::Color(n) | Semantic::BColor(n) if n > 1) {
            return Err(o.unsupported("semantics", format!("{s:?} (COLOR0/1 only)")));
        }
        out.push((loc, sem));
    }
    out.sort_by_key(|(l, _)| *l);
    Ok(out)
}

/// The proposed `stream_output` member of `create_vs_state`
/// (`pipe_stream_output_info`; docs/scene-format-stream-output.md).
fn parse_stream_output(o: &Obj) -> Result<StreamOutputInfo, SceneError> {
    let Some(v) = o.present("stream_output") else {
        return Ok(StreamOutputInfo::default());
    };
    let so = Obj::new(v, format!("{} stream_output", o.what))?;
    so.check_fields(&["stride", "output"])?;
    let mut info = StreamOutputInfo::default();
    let strides = so.array_or_empty("stride")?;
    if strides.len() > MAX_SO_BUFFERS {
        return Err(so.err(
            "stride",
            format!("{} strides; at most {MAX_SO_BUFFERS}", strides.len()),
        ));
    }
    for (k, s) in strides.iter().enumerate() {
        info.stride[k] = so.int_of("stride", s, 0, u32::MAX as i64)? as u32;
    }
    for (k, e) in so.array_or_empty("output")?.iter().enumerate() {
        let e = Obj::new(e, format!("{} output[{k}]", so.what))?;
        e.check_fields(&[
            "register_index",
            "start_component",
            "num_components",
            "output_buffer",
            "dst_offset",
            "stream",
        ])?;
        info.output.push(StreamOutput {
            register_index: e.u32_or("register_index", 0)?,
            start_component: e.u32_or("start_component", 0)?,
            num_components: e.req_u32("num_components")?,
            output_buffer: e.u32_or("output_buffer", 0)?,
            dst_offset: e.u32_or("dst_offset", 0)?,
            stream: e.u32_or("stream", 0)?,
        });
    }
    Ok(info)
}

/// A shader's `language`, `source` (or inline `code`) and `entry_point`.
fn shader_code(o: &Obj, base: DataDir<'_>) -> Result<ShaderCode, SceneError> {
    let language = o.opt_str("language")?.unwrap_or("wgsl");
    let text = match (o.opt_str("code")?, o.opt_str("source")?) {
        (Some(code), _) => code.to_string(),
        (None, Some(src)) => {
            let bytes = base.read(src).map_err(|e| o.err("source", e))?;
            String::from_utf8(bytes)
                .map_err(|_| o.err("source", format!("{src:?} is not UTF-8 text")))?
        }
        (None, None) => return Err(o.err("source", "missing (give 'source' or 'code')")),
    };
    let entry_point = o.opt_str("entry_point")?.unwrap_or("main").to_string();
    Ok(match language {
        "wgsl" => ShaderCode::Wgsl {
            code: text,
            entry_point,
        },
        "glsl" => ShaderCode::Glsl {
            code: text,
            entry_point,
        },
        other => return Err(o.unsupported("language", format!("{other:?}"))),
    })
}

/// Parses scene JSON text.  `base` is the scene's directory (data files and
/// shader sources are relative to it).
pub fn parse_scene(text: &str, base: &Path) -> Result<Scene, SceneError> {
    parse_scene_in(
        text,
        DataDir {
            base,
            confined: false,
        },
    )
}

/// [`parse_scene`] with the file policy spelled out (see [`DataDir`]).
pub fn parse_scene_in(text: &str, base: DataDir<'_>) -> Result<Scene, SceneError> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| SceneError::Malformed(format!("not valid JSON: {e}")))?;
    let top = Obj::new(&root, "scene")?;
    top.check_fields(&["format", "description", "calls", "outputs", "reference"])?;
    match top.get("format") {
        Some(Value::String(s)) if s == "gallium-scene/1" => {}
        Some(v) => {
            return Err(top.err("format", format!("{} is not \"gallium-scene/1\"", short(v))));
        }
        None => return Err(top.err("format", "missing (expected \"gallium-scene/1\")")),
    }
    let description = top.opt_str("description")?.unwrap_or("").to_string();
    if let Some(r) = top.present("reference") {
        Obj::new(r, "scene reference")?;
    }
    let calls_v = top.array_of("calls", top.req("calls")?)?;
    let mut ids = Ids::default();
    let mut calls = Vec::with_capacity(calls_v.len());
    let mut timing_begin = None;
    let mut query_types = Vec::new();
    for (i, v) in calls_v.iter().enumerate() {
        let op = match v.get("op") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(SceneError::Malformed(format!(
                    "call {i}: field 'op': expected a string, got {}",
                    short(other)
                )));
            }
            None if v.is_object() => {
                return Err(SceneError::Malformed(format!(
                    "call {i}: missing field 'op'"
                )));
            }
            None => {
                return Err(SceneError::Malformed(format!(
                    "call {i}: expected an object, got {}",
                    super::json::type_name(v)
                )));
            }
        };
        let o = Obj::new(v, format!("call {i} ({op})"))?;
        let call = parse_call(&o, op, i, &mut ids, base)?;
        match &call {
            Call::TimingBegin => {
                if let Some(prev) = timing_begin {
                    return Err(SceneError::Malformed(format!(
                        "call {i} (timing_begin): a second timing_begin (the first is call {prev})"
                    )));
                }
                timing_begin = Some(i);
            }
            Call::CreateQuery { id, query_type, .. } => query_types.push((id.clone(), *query_type)),
            _ => {}
        }
        calls.push(call);
    }
    let mut outputs = Vec::new();
    for (i, v) in top.array_or_empty("outputs")?.iter().enumerate() {
        let o = Obj::new(v, format!("output {i}"))?;
        o.check_fields(&[
            "name", "surface", "resource", "level", "layer", "buffer", "offset", "size",
        ])?;
        let name = o.req_str("name")?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            || name.starts_with('.')
        {
            return Err(o.err("name", format!("{name:?} (letters, digits, _ . - only)")));
        }
        if outputs.iter().any(|x: &Output| x.name == name) {
            return Err(o.err("name", format!("{name:?} is used twice")));
        }
        let given = ["surface", "resource", "buffer"]
            .iter()
            .filter(|k| o.present(k).is_some())
            .count();
        if given > 1 {
            return Err(o.err("resource", "give one of 'surface', 'resource' and 'buffer'"));
        }
        if o.present("buffer").is_none() {
            for k in ["offset", "size"] {
                if o.present(k).is_some() {
                    return Err(o.err(k, "only buffer outputs take 'offset' and 'size'"));
                }
            }
        }
        let source = if o.present("surface").is_some() {
            OutputSource::Surface(ids.req_use(&o, "surface", Kind::Surface)?)
        } else if o.present("buffer").is_some() {
            let id = ids.req_use(&o, "buffer", Kind::Resource)?;
            let t = ids.templates[&id];
            if t.target != TextureTarget::Buffer {
                return Err(o.err("buffer", format!("{id:?} is not a PIPE_BUFFER")));
            }
            let offset = o.u32_or("offset", 0)?;
            let size = o.u32_or("size", t.width0.saturating_sub(offset))?;
            if u64::from(offset) + u64::from(size) > u64::from(t.width0) {
                return Err(o.err(
                    "size",
                    format!("{offset}+{size} is past the {}-byte buffer", t.width0),
                ));
            }
            OutputSource::Buffer { id, offset, size }
        } else {
            let id = ids.req_use(&o, "resource", Kind::Resource)?;
            let t = ids.templates[&id];
            if t.target == TextureTarget::Buffer {
                return Err(o.err(
                    "resource",
                    format!("{id:?} is a PIPE_BUFFER (name buffers with 'buffer')"),
                ));
            }
            let level = o.u32_or("level", 0)?;
            let layer = o.u32_or("layer", 0)?;
            if level > t.last_level {
                return Err(o.err("level", format!("{level}; last level is {}", t.last_level)));
            }
            let layers = ferropipe_components::resource::level_extent(&t, level).2;
            if layer >= layers {
                return Err(o.err("layer", format!("{layer}; the level has {layers} layers")));
            }
            OutputSource::Resource { id, level, layer }
        };
        outputs.push(Output {
            name: name.to_string(),
            source,
        });
    }
    Ok(Scene {
        description,
        calls,
        outputs,
        timing_begin,
        query_types,
    })
}

fn parse_call(
    o: &Obj,
    op: &str,
    index: usize,
    ids: &mut Ids,
    base: DataDir<'_>,
) -> Result<Call, SceneError> {
    let data = |o: &Obj, key: &str, default_type: &str| -> Result<Vec<u8>, SceneError> {
        let v = o.req(key)?;
        load_data(o, key, v, o.opt_str("type")?, default_type, base)
    };
    let cso_kind = |name: &str| -> Option<Kind> {
        Some(match name {
            "blend" => Kind::Blend,
            "depth_stencil_alpha" => Kind::DepthStencilAlpha,
            "rasterizer" => Kind::Rasterizer,
            "sampler" => Kind::Sampler,
            "vertex_elements" => Kind::VertexElements,
            "vs" => Kind::VertexShader,
            "fs" => Kind::FragmentShader,
            "compute" => Kind::ComputeShader,
            _ => return None,
        })
    };
    Ok(match op {
        "resource_create" => {
            o.check_fields(&[
                "id",
                "target",
                "format",
                "width0",
                "height0",
                "depth0",
                "array_size",
                "last_level",
                "nr_samples",
                "nr_storage_samples",
                "usage",
                "bind",
                "flags",
                "data",
                "type",
            ])?;
            let target = o.enum_or(
                "target",
                TextureTarget::Buffer,
                TextureTarget::from_gallium_name,
            )?;
            let format = match o.opt_str("format")? {
                None | Some("PIPE_FORMAT_NONE") if target == TextureTarget::Buffer => {
                    Format::R8_UNORM
                }
                None => return Err(o.err("format", "missing (textures need a format)")),
                Some(s) => parse_format(s)
                    .ok_or_else(|| o.err("format", format!("unknown value {s:?}")))?,
            };
            let bind = o.mask_or("bind", 0, |n| {
                BindFlags::from_gallium_name(n).map(|f| f.bits())
            })?;
            let flags = o.mask_or("flags", 0, |n| {
                ResourceFlags::from_gallium_name(n).map(|f| f.bits())
            })?;
            let templ = ResourceTemplate {
                target,
                format,
                width0: o.req_u32("width0")?,
                height0: o.u32_or("height0", 1)?,
                depth0: o.u32_or("depth0", 1)?,
                array_size: o.u32_or("array_size", 1)?,
                last_level: o.u32_or("last_level", 0)?,
                nr_samples: o.u32_or("nr_samples", 0)?,
                nr_storage_samples: o.u32_or("nr_storage_samples", 0)?,
                usage: o.enum_or("usage", Usage::Default, Usage::from_gallium_name)?,
                bind: BindFlags::from_bits_retain(bind),
                flags: ResourceFlags::from_bits_retain(flags),
            };
            let data = match o.present("data") {
                Some(v) => {
                    let d = load_data(o, "data", v, o.opt_str("type")?, "f32", base)?;
                    let (w, h, _) = ferropipe_components::resource::level_extent(&templ, 0);
                    if target == TextureTarget::Buffer {
                        if d.len() as u64 > u64::from(templ.width0) {
                            return Err(o.err(
                                "data",
                                format!("{} bytes for a {}-byte buffer", d.len(), templ.width0),
                            ));
                        }
                    } else {
                        let want =
                            u64::from(w) * u64::from(h) * u64::from(format.desc().block_bytes);
                        if d.len() as u64 != want {
                            return Err(o.err(
                                "data",
                                format!(
                                    "{} bytes; level 0 layer 0 ({w}x{h} {format}) needs {want}",
                                    d.len()
                                ),
                            ));
                        }
                    }
                    Some(d)
                }
                None => None,
            };
            let id = ids.create(o, index, Kind::Resource)?;
            ids.templates.insert(id.clone(), templ);
            Call::ResourceCreate { id, templ, data }
        }
        "resource_destroy" => {
            o.check_fields(&["id"])?;
            Call::ResourceDestroy {
                id: ids.destroy(o, Kind::Resource)?,
            }
        }
        "buffer_subdata" => {
            o.check_fields(&["resource", "offset", "data", "type", "usage"])?;
            Call::BufferSubdata {
                resource: ids.req_use(o, "resource", Kind::Resource)?,
                offset: o.u32_or("offset", 0)?,
                data: data(o, "data", "f32")?,
            }
        }
        "texture_subdata" => {
            o.check_fields(&[
                "resource",
                "level",
                "box",
                "data",
                "type",
                "usage",
                "stride",
                "layer_stride",
            ])?;
            let resource = ids.req_use(o, "resource", Kind::Resource)?;
            let pbox = parse_box(o, "box")?;
            let bytes = data(o, "data", "f32")?;
            let t = ids.templates[&resource];
            let bpp = t.format.desc().block_bytes as usize;
            let row = pbox.width.max(0) as usize * bpp;
            let stride = o.u32_or("stride", row as u32)? as usize;
            let layer_stride = o.u32_or(
                "layer_stride",
                (stride * pbox.height.max(0) as usize) as u32,
            )? as usize;
            if o.present("stride").is_none() && o.present("layer_stride").is_none() {
                let want = row * pbox.height.max(0) as usize * pbox.depth.max(0) as usize;
                if bytes.len() != want {
                    return Err(o.err(
                        "data",
                        format!("{} bytes; the box needs {want}", bytes.len()),
                    ));
                }
            }
            Call::TextureSubdata {
                resource,
                level: o.u32_or("level", 0)?,
                pbox,
                data: bytes,
                stride,
                layer_stride,
            }
        }
        "create_surface" => {
            o.check_fields(&[
                "id",
                "resource",
                "format",
                "level",
                "first_layer",
                "last_layer",
            ])?;
            let resource = ids.req_use(o, "resource", Kind::Resource)?;
            let format = match o.opt_str("format")? {
                Some(s) => Some(
                    parse_format(s)
                        .ok_or_else(|| o.err("format", format!("unknown value {s:?}")))?,
                ),
                None => None,
            };
            let level = o.u32_or("level", 0)?;
            let first_layer = o.u32_or("first_layer", 0)?;
            let last_layer = match o.present("last_layer") {
                Some(_) => Some(o.u32_or("last_layer", 0)?),
                None => None,
            };
            Call::CreateSurface {
                id: ids.create(o, index, Kind::Surface)?,
                resource,
                format,
                level,
                first_layer,
                last_layer,
            }
        }
        "surface_destroy" => {
            o.check_fields(&["id"])?;
            Call::SurfaceDestroy {
                id: ids.destroy(o, Kind::Surface)?,
            }
        }
        "create_sampler_view" => {
            o.check_fields(&[
                "id",
                "resource",
                "format",
                "target",
                "first_level",
                "last_level",
                "first_layer",
                "last_layer",
                "swizzle_r",
                "swizzle_g",
                "swizzle_b",
                "swizzle_a",
            ])?;
            let resource = ids.req_use(o, "resource", Kind::Resource)?;
            let sw = |k, d| o.enum_or(k, d, Swizzle::from_gallium_name);
            let opt_u32 = |k: &str| -> Result<Option<u32>, SceneError> {
                match o.present(k) {
                    Some(_) => Ok(Some(o.u32_or(k, 0)?)),
                    None => Ok(None),
                }
            };
            let format = match o.opt_str("format")? {
                Some(s) => Some(
                    parse_format(s)
                        .ok_or_else(|| o.err("format", format!("unknown value {s:?}")))?,
                ),
                None => None,
            };
            let target = match o.present("target") {
                Some(v) => Some(o.enum_of("target", v, TextureTarget::from_gallium_name)?),
                None => None,
            };
            Call::CreateSamplerView {
                id: ids.create(o, index, Kind::SamplerView)?,
                resource,
                target,
                format,
                first_level: o.u32_or("first_level", 0)?,
                last_level: opt_u32("last_level")?,
                first_layer: o.u32_or("first_layer", 0)?,
                last_layer: opt_u32("last_layer")?,
                swizzle: [
                    sw("swizzle_r", Swizzle::X)?,
                    sw("swizzle_g", Swizzle::Y)?,
                    sw("swizzle_b", Swizzle::Z)?,
                    sw("swizzle_a", Swizzle::W)?,
                ],
            }
        }
        "sampler_view_destroy" => {
            o.check_fields(&["id"])?;
            Call::SamplerViewDestroy {
                id: ids.destroy(o, Kind::SamplerView)?,
            }
        }
        "create_blend_state"
        | "create_depth_stencil_alpha_state"
        | "create_rasterizer_state"
        | "create_sampler_state" => {
            o.check_fields(&["id", "state"])?;
            let st = match o.present("state") {
                Some(v) => Obj::new(v, format!("{} state", o.what))?,
                None => return Err(o.err("state", "missing")),
            };
            match op {
                "create_blend_state" => {
                    let state = parse_blend(&st)?;
                    Call::CreateBlendState {
                        id: ids.create(o, index, Kind::Blend)?,
                        state,
                    }
                }
                "create_depth_stencil_alpha_state" => {
                    let state = parse_dsa(&st)?;
                    Call::CreateDepthStencilAlphaState {
                        id: ids.create(o, index, Kind::DepthStencilAlpha)?,
                        state,
                    }
                }
                "create_rasterizer_state" => {
                    let state = parse_rasterizer(&st)?;
                    Call::CreateRasterizerState {
                        id: ids.create(o, index, Kind::Rasterizer)?,
                        state,
                    }
                }
                _ => {
                    let state = parse_sampler(&st)?;
                    Call::CreateSamplerState {
                        id: ids.create(o, index, Kind::Sampler)?,
                        state,
                    }
                }
            }
        }
        "create_vertex_elements_state" => {
            o.check_fields(&["id", "elements", "state"])?;
            let (holder, list) = match (o.present("elements"), o.present("state")) {
                (Some(v), _) => (o, o.array_of("elements", v)?),
                (None, Some(s)) => {
                    let st = Obj::new(s, format!("{} state", o.what))?;
                    st.check_fields(&["elements"])?;
                    let v = st.req("elements")?;
                    let list = st.array_of("elements", v)?;
                    (o, list)
                }
                (None, None) => return Err(o.err("elements", "missing")),
            };
            let _ = holder;
            let mut elements = Vec::with_capacity(list.len());
            for (k, e) in list.iter().enumerate() {
                let e = Obj::new(e, format!("{} elements[{k}]", o.what))?;
                e.check_fields(&[
                    "src_offset",
                    "vertex_buffer_index",
                    "src_format",
                    "instance_divisor",
                    "dual_slot",
                ])?;
                if e.bool_or("dual_slot", false)? {
                    return Err(e.unsupported("dual_slot", "64-bit vertex attributes"));
                }
                elements.push(VertexElement {
                    src_offset: e.u32_or("src_offset", 0)?,
                    vertex_buffer_index: e.u32_or("vertex_buffer_index", 0)?,
                    src_format: e.enum_of("src_format", e.req("src_format")?, parse_format)?,
                    instance_divisor: e.u32_or("instance_divisor", 0)?,
                });
            }
            Call::CreateVertexElementsState {
                id: ids.create(o, index, Kind::VertexElements)?,
                elements,
            }
        }
        "create_vs_state" | "create_fs_state" => {
            o.check_fields(&[
                "id",
                "language",
                "source",
                "code",
                "entry_point",
                "semantics",
                "stream_output",
            ])?;
            let code = shader_code(o, base)?;
            let (stage, kind) = if op == "create_vs_state" {
                (ShaderType::Vertex, Kind::VertexShader)
            } else {
                (ShaderType::Fragment, Kind::FragmentShader)
            };
            let state = ShaderState {
                code,
                semantics: parse_semantics(o)?,
                stream_output: parse_stream_output(o)?,
            };
            Call::CreateShader {
                id: ids.create(o, index, kind)?,
                stage,
                state,
            }
        }
        "create_compute_state" => {
            o.check_fields(&[
                "id",
                "language",
                "source",
                "code",
                "entry_point",
                "req_local_mem",
                "req_input_mem",
            ])?;
            let code = shader_code(o, base)?;
            let state = ferropipe::ComputeState {
                code,
                req_local_mem: o.u32_or("req_local_mem", 0)?,
                req_input_mem: o.u32_or("req_input_mem", 0)?,
            };
            Call::CreateComputeState {
                id: ids.create(o, index, Kind::ComputeShader)?,
                state,
            }
        }
        "set_shader_buffers" => {
            o.check_fields(&["shader", "start_slot", "buffers", "writable_bitmask"])?;
            let mut buffers = Vec::new();
            for (k, v) in o.array_or_empty("buffers")?.iter().enumerate() {
                if v.is_null() {
                    buffers.push(None);
                    continue;
                }
                let b = Obj::new(v, format!("{} buffers[{k}]", o.what))?;
                b.check_fields(&["buffer", "buffer_offset", "buffer_size"])?;
                buffers.push(match ids.opt_use(&b, "buffer", Kind::Resource)? {
                    Some(id) => {
                        let t = ids.templates[&id];
                        if t.target != TextureTarget::Buffer {
                            return Err(b.err("buffer", format!("{id:?} is not a PIPE_BUFFER")));
                        }
                        let size = match b.present("buffer_size") {
                            Some(_) => Some(b.u32_or("buffer_size", 0)?),
                            None => None,
                        };
                        Some((id, b.u32_or("buffer_offset", 0)?, size))
                    }
                    None => None,
                });
            }
            Call::SetShaderBuffers {
                shader: o.enum_or("shader", ShaderType::Compute, ShaderType::from_gallium_name)?,
                start_slot: o.u32_or("start_slot", 0)?,
                buffers,
                writable_bitmask: o.u32_or("writable_bitmask", 0)?,
            }
        }
        "set_shader_images" => {
            o.check_fields(&["shader", "start_slot", "images"])?;
            let mut images = Vec::new();
            for (k, v) in o.array_or_empty("images")?.iter().enumerate() {
                if v.is_null() {
                    images.push(None);
                    continue;
                }
                let m = Obj::new(v, format!("{} images[{k}]", o.what))?;
                m.check_fields(&[
                    "resource",
                    "format",
                    "access",
                    "level",
                    "first_layer",
                    "last_layer",
                ])?;
                let Some(resource) = ids.opt_use(&m, "resource", Kind::Resource)? else {
                    images.push(None);
                    continue;
                };
                let format = match m.opt_str("format")? {
                    Some(f) => Some(
                        parse_format(f)
                            .ok_or_else(|| m.err("format", format!("unknown value {f:?}")))?,
                    ),
                    None => None,
                };
                let access = m.mask_or("access", 3, |n| match n {
                    "PIPE_IMAGE_ACCESS_READ" => Some(1),
                    "PIPE_IMAGE_ACCESS_WRITE" => Some(2),
                    "PIPE_IMAGE_ACCESS_READ_WRITE" => Some(3),
                    _ => None,
                })?;
                if access & 3 == 0 || access > 3 {
                    return Err(m.err(
                        "access",
                        format!("{access}: READ, WRITE or both (PIPE_IMAGE_ACCESS_*)"),
                    ));
                }
                let last_layer = match m.present("last_layer") {
                    Some(_) => Some(m.u32_or("last_layer", 0)?),
                    None => None,
                };
                images.push(Some(ImageSpec {
                    resource,
                    format,
                    access,
                    level: m.u32_or("level", 0)?,
                    first_layer: m.u32_or("first_layer", 0)?,
                    last_layer,
                }));
            }
            Call::SetShaderImages {
                shader: o.enum_or("shader", ShaderType::Compute, ShaderType::from_gallium_name)?,
                start_slot: o.u32_or("start_slot", 0)?,
                images,
            }
        }
        "launch_grid" => {
            o.check_fields(&["block", "grid", "input", "type", "last_block", "grid_base"])?;
            let dims = |k: &str, default: Option<[u32; 3]>| -> Result<[u32; 3], SceneError> {
                let v = match (o.present(k), default) {
                    (Some(v), _) => v,
                    (None, Some(d)) => return Ok(d),
                    (None, None) => o.req(k)?,
                };
                let a = o.array_of(k, v)?;
                if a.len() != 3 {
                    return Err(o.err(k, format!("{} numbers; expected [x, y, z]", a.len())));
                }
                let mut out = [0u32; 3];
                for (d, x) in out.iter_mut().zip(a) {
                    *d = o.int_of(k, x, 0, u32::MAX as i64)? as u32;
                }
                Ok(out)
            };
            let input = match o.present("input") {
                Some(_) => data(o, "input", "f32")?,
                None => Vec::new(),
            };
            Call::LaunchGrid(Box::new(LaunchGridCall {
                block: dims("block", None)?,
                grid: dims("grid", None)?,
                last_block: dims("last_block", Some([0; 3]))?,
                grid_base: dims("grid_base", Some([0; 3]))?,
                input,
            }))
        }
        _ if op.starts_with("bind_") && op.ends_with("_state") && op != "bind_sampler_states" => {
            let name = &op["bind_".len()..op.len() - "_state".len()];
            let kind = cso_kind(name)
                .filter(|k| *k != Kind::Sampler)
                .ok_or_else(|| {
                    SceneError::Unsupported(format!(
                        "call {index}: unknown op {op:?}{}",
                        super::json::did_you_mean(op, KNOWN_OPS.iter().copied())
                    ))
                })?;
            o.check_fields(&["id"])?;
            Call::Bind {
                kind,
                id: ids.opt_use(o, "id", kind)?,
            }
        }
        _ if op.starts_with("delete_") && op.ends_with("_state") => {
            let name = &op["delete_".len()..op.len() - "_state".len()];
            let kind = cso_kind(name).ok_or_else(|| {
                SceneError::Unsupported(format!(
                    "call {index}: unknown op {op:?}{}",
                    super::json::did_you_mean(op, KNOWN_OPS.iter().copied())
                ))
            })?;
            o.check_fields(&["id"])?;
            Call::Delete {
                kind,
                id: ids.destroy(o, kind)?,
            }
        }
        "bind_sampler_states" => {
            o.check_fields(&["shader", "start_slot", "samplers"])?;
            Call::BindSamplerStates {
                shader: shader_stage(o)?,
                start_slot: o.u32_or("start_slot", 0)?,
                samplers: ids.id_list(o, "samplers", Kind::Sampler)?,
            }
        }
        "set_framebuffer_state" => {
            o.check_fields(&["width", "height", "cbufs", "zsbuf", "samples", "layers"])?;
            Call::SetFramebufferState {
                width: o.req_u32("width")?,
                height: o.req_u32("height")?,
                layers: o.u32_or("layers", 0)?,
                samples: o.u32_or("samples", 0)?,
                cbufs: ids.id_list(o, "cbufs", Kind::Surface)?,
                zsbuf: ids.opt_use(o, "zsbuf", Kind::Surface)?,
            }
        }
        "set_viewport_states" => {
            o.check_fields(&["start_slot", "viewports"])?;
            let list = o.array_of("viewports", o.req("viewports")?)?;
            let mut viewports = Vec::with_capacity(list.len());
            for (k, v) in list.iter().enumerate() {
                let vp = Obj::new(v, format!("{} viewports[{k}]", o.what))?;
                vp.check_fields(&["scale", "translate"])?;
                viewports.push(ViewportState {
                    scale: vp
                        .f64_array::<3>("scale", vp.req("scale")?)?
                        .map(|f| f as f32),
                    translate: vp
                        .f64_array::<3>("translate", vp.req("translate")?)?
                        .map(|f| f as f32),
                });
            }
            Call::SetViewportStates {
                start_slot: o.u32_or("start_slot", 0)?,
                viewports,
            }
        }
        "set_scissor_states" => {
            o.check_fields(&["start_slot", "scissors"])?;
            let list = o.array_of("scissors", o.req("scissors")?)?;
            let mut scissors = Vec::with_capacity(list.len());
            for (k, v) in list.iter().enumerate() {
                scissors.push(parse_scissor(&Obj::new(
                    v,
                    format!("{} scissors[{k}]", o.what),
                )?)?);
            }
            Call::SetScissorStates {
                start_slot: o.u32_or("start_slot", 0)?,
                scissors,
            }
        }
        "set_vertex_buffers" => {
            o.check_fields(&["start_slot", "buffers"])?;
            let mut buffers = Vec::new();
            for (k, v) in o.array_or_empty("buffers")?.iter().enumerate() {
                if v.is_null() {
                    buffers.push(None);
                    continue;
                }
                let b = Obj::new(v, format!("{} buffers[{k}]", o.what))?;
                b.check_fields(&["buffer", "stride", "buffer_offset", "is_user_buffer"])?;
                if b.bool_or("is_user_buffer", false)? {
                    return Err(b.unsupported("is_user_buffer", "user vertex buffers"));
                }
                buffers.push(match ids.opt_use(&b, "buffer", Kind::Resource)? {
                    Some(id) => Some((id, b.u32_or("stride", 0)?, b.u32_or("buffer_offset", 0)?)),
                    None => None,
                });
            }
            Call::SetVertexBuffers {
                start_slot: o.u32_or("start_slot", 0)?,
                buffers,
            }
        }
        "set_index_buffer" => {
            o.check_fields(&["buffer", "index_size", "offset"])?;
            Call::SetIndexBuffer(match ids.opt_use(o, "buffer", Kind::Resource)? {
                Some(id) => {
                    let size = o.req_u32("index_size")?;
                    if !matches!(size, 1 | 2 | 4) {
                        return Err(o.err("index_size", format!("{size}; must be 1, 2 or 4")));
                    }
                    Some((id, size, o.u32_or("offset", 0)?))
                }
                None => None,
            })
        }
        "set_constant_buffer" => {
            o.check_fields(&[
                "shader",
                "index",
                "buffer",
                "buffer_offset",
                "buffer_size",
                "data",
                "type",
            ])?;
            let source = if o.present("data").is_some() {
                ConstantSource::User(data(o, "data", "f32")?)
            } else if let Some(id) = ids.opt_use(o, "buffer", Kind::Resource)? {
                ConstantSource::Buffer {
                    id,
                    offset: o.u32_or("buffer_offset", 0)?,
                    size: match o.present("buffer_size") {
                        Some(_) => Some(o.u32_or("buffer_size", 0)?),
                        None => None,
                    },
                }
            } else {
                ConstantSource::Unbind
            };
            Call::SetConstantBuffer {
                shader: shader_stage(o)?,
                index: o.u32_or("index", 0)?,
                source,
            }
        }
        "set_sampler_views" => {
            o.check_fields(&["shader", "start_slot", "views"])?;
            Call::SetSamplerViews {
                shader: shader_stage(o)?,
                start_slot: o.u32_or("start_slot", 0)?,
                views: ids.id_list(o, "views", Kind::SamplerView)?,
            }
        }
        "set_blend_color" => {
            o.check_fields(&["color"])?;
            Call::SetBlendColor(
                o.f64_array::<4>("color", o.req("color")?)?
                    .map(|f| f as f32),
            )
        }
        "set_stencil_ref" => {
            o.check_fields(&["ref_value"])?;
            let v = o.req("ref_value")?;
            let arr = o.array_of("ref_value", v)?;
            if arr.len() != 2 {
                return Err(o.err("ref_value", "expected [front, back]"));
            }
            let f = o.int_of("ref_value", &arr[0], 0, u32::MAX as i64)?;
            let b = o.int_of("ref_value", &arr[1], 0, u32::MAX as i64)?;
            Call::SetStencilRef([f as u8, b as u8])
        }
        "set_sample_mask" => {
            o.check_fields(&["sample_mask"])?;
            Call::SetSampleMask(o.req_u32("sample_mask")?)
        }
        "set_min_samples" => {
            o.check_fields(&["min_samples"])?;
            Call::SetMinSamples(o.req_u32("min_samples")?)
        }
        "set_clip_state" => {
            o.check_fields(&["ucp"])?;
            let planes = o.array_of("ucp", o.req("ucp")?)?;
            if planes.len() > MAX_CLIP_PLANES {
                return Err(o.err("ucp", format!("{} planes; at most 8", planes.len())));
            }
            let mut clip = ClipState::default();
            for (k, p) in planes.iter().enumerate() {
                clip.ucp[k] = o.f64_array::<4>("ucp", p)?.map(|f| f as f32);
            }
            Call::SetClipState(clip)
        }
        "set_polygon_stipple" => {
            o.check_fields(&["stipple"])?;
            let rows = o.array_of("stipple", o.req("stipple")?)?;
            if rows.len() != 32 {
                return Err(o.err("stipple", format!("{} rows; must be 32", rows.len())));
            }
            let mut s = PolyStipple::default();
            for (k, r) in rows.iter().enumerate() {
                s.stipple[k] = o.int_of("stipple", r, 0, u32::MAX as i64)? as u32;
            }
            Call::SetPolygonStipple(s)
        }
        "clear" => {
            o.check_fields(&["buffers", "color", "depth", "stencil"])?;
            let buffers = o.mask_of("buffers", o.req("buffers")?, |n| {
                ClearFlags::from_gallium_name(n).map(|f| f.bits())
            })?;
            Call::Clear {
                buffers: ClearFlags::from_bits_truncate(buffers),
                color: match o.present("color") {
                    Some(v) => o.f64_array::<4>("color", v)?,
                    None => [0.0; 4],
                },
                depth: o.f64_or("depth", 0.0)?,
                stencil: o.u32_or("stencil", 0)?,
            }
        }
        "clear_render_target" => {
            o.check_fields(&[
                "surface",
                "color",
                "dstx",
                "dsty",
                "width",
                "height",
                "render_condition_enabled",
            ])?;
            Call::ClearRenderTarget {
                surface: ids.req_use(o, "surface", Kind::Surface)?,
                color: o.f64_array::<4>("color", o.req("color")?)?,
                dstx: o.u32_or("dstx", 0)?,
                dsty: o.u32_or("dsty", 0)?,
                width: o.req_u32("width")?,
                height: o.req_u32("height")?,
                render_condition_enabled: o.bool_or("render_condition_enabled", false)?,
            }
        }
        "clear_depth_stencil" => {
            o.check_fields(&[
                "surface",
                "clear_flags",
                "depth",
                "stencil",
                "dstx",
                "dsty",
                "width",
                "height",
                "render_condition_enabled",
            ])?;
            let flags = o.mask_of("clear_flags", o.req("clear_flags")?, |n| {
                ClearFlags::from_gallium_name(n).map(|f| f.bits())
            })?;
            Call::ClearDepthStencil {
                surface: ids.req_use(o, "surface", Kind::Surface)?,
                clear_flags: ClearFlags::from_bits_truncate(flags),
                depth: o.f64_or("depth", 0.0)?,
                stencil: o.u32_or("stencil", 0)?,
                dstx: o.u32_or("dstx", 0)?,
                dsty: o.u32_or("dsty", 0)?,
                width: o.req_u32("width")?,
                height: o.req_u32("height")?,
                render_condition_enabled: o.bool_or("render_condition_enabled", false)?,
            }
        }
        "clear_buffer" => {
            o.check_fields(&["resource", "offset", "size", "value", "type"])?;
            let value = data(o, "value", "u32")?;
            let size = o.req_u32("size")?;
            if value.is_empty() || !(size as usize).is_multiple_of(value.len()) {
                return Err(o.err(
                    "size",
                    format!("{size} is not a multiple of the {}-byte value", value.len()),
                ));
            }
            Call::ClearBuffer {
                resource: ids.req_use(o, "resource", Kind::Resource)?,
                offset: o.u32_or("offset", 0)?,
                size,
                value,
            }
        }
        "draw_vbo" => {
            o.check_fields(&[
                "mode",
                "start",
                "count",
                "indexed",
                "index_bias",
                "min_index",
                "max_index",
                "start_instance",
                "instance_count",
                "primitive_restart",
                "restart_index",
                "index_size",
            ])?;
            if o.present("index_size").is_some() {
                let s = o.u32_or("index_size", 0)?;
                if !matches!(s, 1 | 2 | 4) {
                    return Err(o.err("index_size", format!("{s}; must be 1, 2 or 4")));
                }
            }
            Call::DrawVbo(DrawInfo {
                mode: o.enum_or("mode", PrimType::Points, PrimType::from_gallium_name)?,
                start: o.u32_or("start", 0)?,
                count: o.u32_or("count", 0)?,
                indexed: o.bool_or("indexed", false)?,
                index_bias: o.i32_or("index_bias", 0)?,
                min_index: o.u32_or("min_index", 0)?,
                max_index: o.u32_or("max_index", 0xffff_ffff)?,
                start_instance: o.u32_or("start_instance", 0)?,
                instance_count: o.u32_or("instance_count", 1)?,
                primitive_restart: o.bool_or("primitive_restart", false)?,
                restart_index: o.u32_or("restart_index", 0)?,
            })
        }
        "create_query" => {
            o.check_fields(&["id", "query_type", "index"])?;
            let query_type = o.enum_of(
                "query_type",
                o.req("query_type")?,
                QueryType::from_gallium_name,
            )?;
            Call::CreateQuery {
                id: ids.create(o, index, Kind::Query)?,
                query_type,
                index: o.u32_or("index", 0)?,
            }
        }
        "destroy_query" => {
            o.check_fields(&["id"])?;
            Call::DestroyQuery {
                id: ids.destroy(o, Kind::Query)?,
            }
        }
        "begin_query" | "end_query" => {
            o.check_fields(&["id"])?;
            let id = ids.req_use(o, "id", Kind::Query)?;
            if op == "begin_query" {
                Call::BeginQuery { id }
            } else {
                Call::EndQuery { id }
            }
        }
        "get_query_result" => {
            o.check_fields(&["id", "wait", "expect"])?;
            Call::GetQueryResult {
                id: ids.req_use(o, "id", Kind::Query)?,
                wait: o.bool_or("wait", true)?,
                expect: o.get("expect").cloned(),
            }
        }
        "render_condition" => {
            o.check_fields(&["query", "condition", "mode"])?;
            Call::RenderCondition {
                query: ids.opt_use(o, "query", Kind::Query)?,
                condition: o.bool_or("condition", false)?,
                mode: o.enum_or(
                    "mode",
                    RenderCondMode::Wait,
                    RenderCondMode::from_gallium_name,
                )?,
            }
        }
        "resource_copy_region" => {
            o.check_fields(&[
                "dst",
                "dst_level",
                "dstx",
                "dsty",
                "dstz",
                "src",
                "src_level",
                "src_box",
            ])?;
            Call::ResourceCopyRegion {
                dst: ids.req_use(o, "dst", Kind::Resource)?,
                dst_level: o.u32_or("dst_level", 0)?,
                dstx: o.u32_or("dstx", 0)?,
                dsty: o.u32_or("dsty", 0)?,
                dstz: o.u32_or("dstz", 0)?,
                src: ids.req_use(o, "src", Kind::Resource)?,
                src_level: o.u32_or("src_level", 0)?,
                src_box: parse_box(o, "src_box")?,
            }
        }
        "blit" => {
            o.check_fields(&[
                "dst",
                "src",
                "mask",
                "filter",
                "scissor_enable",
                "scissor",
                "render_condition_enable",
                "alpha_blend",
            ])?;
            let side = |key: &str| -> Result<BlitSide, SceneError> {
                let s = Obj::new(o.req(key)?, format!("{} {key}", o.what))?;
                s.check_fields(&["resource", "level", "format", "box"])?;
                Ok(BlitSide {
                    resource: ids.req_use(&s, "resource", Kind::Resource)?,
                    level: s.u32_or("level", 0)?,
                    format: match s.opt_str("format")? {
                        Some(f) => Some(
                            parse_format(f)
                                .ok_or_else(|| s.err("format", format!("unknown value {f:?}")))?,
                        ),
                        None => None,
                    },
                    pbox: parse_box(&s, "box")?,
                })
            };
            let mask = o.mask_or("mask", BlitMask::RGBA.bits(), |n| {
                BlitMask::from_gallium_name(n).map(|f| f.bits())
            })?;
            let scissor_enable = o.bool_or("scissor_enable", false)?;
            let scissor = if scissor_enable {
                Some(parse_scissor(&Obj::new(
                    o.req("scissor")?,
                    format!("{} scissor", o.what),
                )?)?)
            } else {
                None
            };
            Call::Blit(Box::new(BlitCall {
                dst: side("dst")?,
                src: side("src")?,
                mask: BlitMask::from_bits_truncate(mask),
                filter: o.enum_or("filter", TexFilter::Nearest, TexFilter::from_gallium_name)?,
                scissor,
                render_condition_enable: o.bool_or("render_condition_enable", false)?,
                alpha_blend: o.bool_or("alpha_blend", false)?,
            }))
        }
        "flush" => {
            o.check_fields(&["flags"])?;
            Call::Flush
        }
        "create_stream_output_target" => {
            o.check_fields(&["id", "buffer", "buffer_offset", "buffer_size"])?;
            let buffer = ids.req_use(o, "buffer", Kind::Resource)?;
            Call::CreateStreamOutputTarget {
                buffer,
                buffer_offset: o.u32_or("buffer_offset", 0)?,
                buffer_size: o.req_u32("buffer_size")?,
                id: ids.create(o, index, Kind::StreamOutputTarget)?,
            }
        }
        "stream_output_target_destroy" => {
            o.check_fields(&["id"])?;
            Call::StreamOutputTargetDestroy {
                id: ids.destroy(o, Kind::StreamOutputTarget)?,
            }
        }
        "set_stream_output_targets" => {
            o.check_fields(&["targets", "offsets"])?;
            let targets = ids.id_list(o, "targets", Kind::StreamOutputTarget)?;
            let list = o.array_or_empty("offsets")?;
            if list.len() != targets.len() {
                return Err(o.err(
                    "offsets",
                    format!("{} offsets for {} targets", list.len(), targets.len()),
                ));
            }
            let mut offsets = Vec::with_capacity(list.len());
            for v in list {
                offsets.push(if v.as_str() == Some("append") {
                    ferropipe::SO_APPEND
                } else {
                    o.int_of("offsets", v, 0, u32::MAX as i64)? as u32
                });
            }
            Call::SetStreamOutputTargets { targets, offsets }
        }
        "flush_resource" => {
            o.check_fields(&["resource"])?;
            Call::FlushResource {
                resource: ids.req_use(o, "resource", Kind::Resource)?,
            }
        }
        "texture_barrier" => {
            o.check_fields(&["flags"])?;
            Call::TextureBarrier
        }
        "memory_barrier" => {
            o.check_fields(&["flags"])?;
            let f = o.mask_or("flags", BarrierFlags::ALL.bits(), |n| {
                BarrierFlags::from_gallium_name(n).map(|f| f.bits())
            })?;
            Call::MemoryBarrier(BarrierFlags::from_bits_truncate(f))
        }
        "timing_begin" => {
            o.check_fields(&[])?;
            Call::TimingBegin
        }
        other => {
            // FORMAT.md: a call a driver does not support exits 3.
            return Err(SceneError::Unsupported(format!(
                "call {index}: unknown op {other:?}{}",
                super::json::did_you_mean(other, KNOWN_OPS.iter().copied())
            )));
        }
    })
}

/// Every op the reader knows, for "did you mean" hints.
const KNOWN_OPS: &[&str] = &[
    "resource_create",
    "resource_destroy",
    "buffer_subdata",
    "texture_subdata",
    "create_surface",
    "surface_destroy",
    "create_sampler_view",
    "sampler_view_destroy",
    "create_blend_state",
    "create_depth_stencil_alpha_state",
    "create_rasterizer_state",
    "create_sampler_state",
    "create_vertex_elements_state",
    "create_vs_state",
    "create_fs_state",
    "create_compute_state",
    "bind_blend_state",
    "bind_depth_stencil_alpha_state",
    "bind_rasterizer_state",
    "bind_vertex_elements_state",
    "bind_vs_state",
    "bind_fs_state",
    "bind_compute_state",
    "bind_sampler_states",
    "delete_blend_state",
    "delete_depth_stencil_alpha_state",
    "delete_rasterizer_state",
    "delete_sampler_state",
    "delete_vertex_elements_state",
    "delete_vs_state",
    "delete_fs_state",
    "delete_compute_state",
    "set_framebuffer_state",
    "set_viewport_states",
    "set_scissor_states",
    "set_vertex_buffers",
    "set_index_buffer",
    "set_constant_buffer",
    "set_sampler_views",
    "set_shader_buffers",
    "set_shader_images",
    "set_blend_color",
    "set_stencil_ref",
    "set_sample_mask",
    "set_min_samples",
    "set_clip_state",
    "set_polygon_stipple",
    "clear",
    "clear_render_target",
    "clear_depth_stencil",
    "clear_buffer",
    "draw_vbo",
    "launch_grid",
    "create_query",
    "destroy_query",
    "begin_query",
    "end_query",
    "get_query_result",
    "render_condition",
    "resource_copy_region",
    "blit",
    "create_stream_output_target",
    "stream_output_target_destroy",
    "set_stream_output_targets",
    "flush",
    "flush_resource",
    "texture_barrier",
    "memory_barrier",
    "timing_begin",
];
