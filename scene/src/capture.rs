//! Frame capture to `gallium-scene/1` files (issue 18; docs/capture.md):
//! the writer behind the core's [`CallRecorder`] hook.
//!
//! ```no_run
//! # fn frame(ctx: &mut ferropipe::Context) -> ferropipe::Result<()> { Ok(()) }
//! use ferropipe_scene::capture::SceneCapture;
//! # let screen = ferropipe::Screen::new(Default::default()).unwrap();
//! # let mut ctx = screen.context_create().unwrap();
//! SceneCapture::start(&mut ctx, "capture/")?;
//! frame(&mut ctx)?;
//! let summary = SceneCapture::finish(&mut ctx)?;
//! println!("{} calls in {}", summary.calls, summary.scene.display());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **How state is written.**  The hook reports work calls; before each one
//! the writer compares the state the call runs with ([`Context::bound`],
//! [`Context::compute_bindings`]) with what the file has bound so far (a
//! shadow copy of the same types, starting as a fresh context's), and
//! writes the `create_*`, `bind_*` and `set_*` calls that make them equal.
//! So the first work call of a capture writes everything it needs, which
//! is how a capture "begins with the calls that recreate the bound state"
//! (at [`CallRecorder::begin`] the writer does the same for all bound
//! state at once).  Objects are named by identity (the `Arc` a CSO, view,
//! surface or shader lives in; the resource's screen id) and defined the
//! first time they are seen; the writer keeps those `Arc`s so an address
//! is never reused under it.
//!
//! **Resource contents** are read when a resource is first seen — before
//! the call that uses it, and after all earlier work executed (the context
//! executes recorded work when the capture starts, and every resource a
//! later draw writes was seen by that draw) — and written into the side
//! file `NAME.bin` (FORMAT.md's `{"file", "offset", "size"}` data), one
//! `texture_subdata` per level (all layers), skipped when all zero (a new
//! resource is zero on ferropipe and llvmpipe).  Identical byte strings are
//! stored once.  Resources from `resource_from_user_memory` are ordinary
//! resources here; since the host may write their memory between calls,
//! their bytes are compared (by hash) before every work call and
//! re-uploaded when they changed.
//!
//! **What cannot be captured** fails the capture with a typed
//! [`CaptureError`] at [`SceneCapture::stop`]: Rust-native shaders (no
//! source), shaders created with `override` values, indirect draws and
//! launches, global bindings, buffer sampler views and buffer images, and
//! multisampled contents that are not all zero (FORMAT.md has no way to
//! upload samples).

use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferropipe::bevy_ecs::entity::Entity;
use ferropipe::{
    BOUND_STAGES, BoundState, CallRecorder, CapturedCall, CapturedQuery, ComputeBindings, Context,
    ShaderCode, ShaderRef, ShaderSource, read_box,
};
use ferropipe_components::draw::{
    ConstantBufferBinding, FramebufferState, IndexBufferBinding, StreamOutputTargetRef,
};
use ferropipe_components::enums::{
    BarrierFlags, BindFlags, BlitMask, ClearFlags, ImageAccess, ResourceFlags, ShaderType,
    TextureTarget,
};
use ferropipe_components::format::ChannelType;
use ferropipe_components::resource::{ResourceRef, level_extent};
use ferropipe_components::shader::Semantic;
use ferropipe_components::state::*;
use ferropipe_components::view::{SamplerViewRef, SurfaceRef};
use serde_json::{Map, Value, json};

/// Why a capture failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// A bound shader was created from Rust code, not from WGSL/GLSL
    /// source: a scene file can only name shader source.
    #[error(
        "capture: the bound {stage} shader is Rust-native (create_{stage}_state_native); only shaders created from WGSL or GLSL source can be captured"
    )]
    NativeShader {
        /// `vs` or `fs`.
        stage: &'static str,
    },
    /// A call, or a state the calls use, that `gallium-scene/1` cannot
    /// express.
    #[error("capture: {call}: {why}")]
    Inexpressible {
        /// The Gallium call.
        call: &'static str,
        /// What the format lacks.
        why: String,
    },
    /// The capture could not be started or stopped.
    #[error("capture: {0}")]
    Context(String),
    /// The files could not be written.
    #[error("capture: cannot write {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
}

/// What a finished capture wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSummary {
    /// The scene file.
    pub scene: PathBuf,
    /// Calls in it.
    pub calls: usize,
    /// Bytes of its side file.
    pub data_bytes: usize,
    /// Its output names.
    pub outputs: Vec<String>,
}

/// A resource the file has created.
struct ResEntry {
    id: String,
    res: ResourceRef,
    /// Host memory: the hash of the bytes last written into the file.
    user_hash: Option<u64>,
}

/// The `gallium-scene/1` writer (module docs).
pub struct SceneCapture {
    dir: PathBuf,
    name: String,
    calls: Vec<Value>,
    blob: Vec<u8>,
    /// Hash of stored bytes → (offset, size), so equal data is stored once.
    stored: HashMap<u64, Vec<(usize, usize)>>,
    /// Shader source text → file name.
    shader_files: HashMap<String, String>,
    error: Option<CaptureError>,
    resources: HashMap<u64, ResEntry>,
    /// Objects by the address of the `Arc` they live in, with the `Arc`
    /// kept (so the address stays theirs).
    objects: HashMap<usize, (String, Box<dyn Any + Send>)>,
    queries: HashMap<Entity, String>,
    counters: HashMap<&'static str, u32>,
    /// What the file has bound (starts as a fresh context's state).
    shadow: BoundState,
    compute_shadow: ComputeBindings,
    /// The framebuffer of the last draw or clear: the default outputs.
    frame: Option<Arc<FramebufferState>>,
    outputs: Vec<Value>,
    output_names: Vec<String>,
    /// The last blit from a multisampled resource: (source id, destination,
    /// level, format, layer), the frame's resolve.
    resolve: Option<(
        u64,
        ResourceRef,
        u32,
        ferropipe_components::format::Format,
        u32,
    )>,
}

fn addr<T: ?Sized>(a: &Arc<T>) -> usize {
    Arc::as_ptr(a) as *const u8 as usize
}

fn opt_eq<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// Names of the flags set in `bits` (FORMAT.md: bit masks are arrays of
/// names), or the integer when a bit has no name.
fn flag_names(named: &[(&'static str, u32)], bits: u32) -> Value {
    let mut left = bits;
    let mut names = Vec::new();
    for (n, f) in named {
        if *f != 0 && bits & f == *f && left & f != 0 {
            names.push(Value::from(*n));
            left &= !f;
        }
    }
    if left == 0 {
        Value::Array(names)
    } else {
        Value::from(bits)
    }
}

macro_rules! names_of {
    ($t:ty, $v:expr) => {
        flag_names(
            &<$t>::NAMED
                .iter()
                .map(|(n, f)| (*n, f.bits()))
                .collect::<Vec<_>>(),
            $v.bits(),
        )
    };
}

/// Puts `key: value` unless it equals the reader's default (keeps files
/// small and free of fields another reader may not know).
fn put<T: PartialEq + Into<Value>>(m: &mut Map<String, Value>, key: &str, v: T, default: T) {
    if v != default {
        m.insert(key.to_string(), v.into());
    }
}

fn f(v: f32) -> Value {
    Value::from(f64::from(v))
}

fn stage_name(i: usize) -> &'static str {
    BOUND_STAGES[i].gallium_name()
}

fn semantic_name(s: &Semantic) -> Option<String> {
    match s {
        Semantic::Color(n) => Some(format!("COLOR{n}")),
        Semantic::BColor(n) => Some(format!("BCOLOR{n}")),
        Semantic::Generic(n) => Some(format!("GENERIC{n}")),
        _ => None,
    }
}

fn blend_json(b: &BlendState) -> Value {
    let mut m = Map::new();
    put(
        &mut m,
        "independent_blend_enable",
        b.independent_blend_enable,
        false,
    );
    put(&mut m, "logicop_enable", b.logicop_enable, false);
    if b.logicop_enable {
        m.insert("logicop_func".into(), b.logicop_func.gallium_name().into());
    }
    put(&mut m, "dither", b.dither, false);
    put(&mut m, "alpha_to_coverage", b.alpha_to_coverage, false);
    put(
        &mut m,
        "alpha_to_coverage_dither",
        b.alpha_to_coverage_dither,
        false,
    );
    put(&mut m, "alpha_to_one", b.alpha_to_one, false);
    // Every entry up to the last one that is not default (at least rt[0]).
    let n =
        b.rt.iter()
            .rposition(|r| *r != RtBlendState::default())
            .map_or(1, |k| k + 1);
    let rts: Vec<Value> = b.rt[..n]
        .iter()
        .map(|r| {
            json!({
                "blend_enable": r.blend_enable,
                "rgb_func": r.rgb_func.gallium_name(),
                "rgb_src_factor": r.rgb_src_factor.gallium_name(),
                "rgb_dst_factor": r.rgb_dst_factor.gallium_name(),
                "alpha_func": r.alpha_func.gallium_name(),
                "alpha_src_factor": r.alpha_src_factor.gallium_name(),
                "alpha_dst_factor": r.alpha_dst_factor.gallium_name(),
                "colormask": r.colormask,
            })
        })
        .collect();
    m.insert("rt".into(), Value::Array(rts));
    Value::Object(m)
}

fn dsa_json(d: &DepthStencilAlphaState) -> Value {
    let face = |s: &StencilState| {
        json!({
            "enabled": s.enabled,
            "func": s.func.gallium_name(),
            "fail_op": s.fail_op.gallium_name(),
            "zpass_op": s.zpass_op.gallium_name(),
            "zfail_op": s.zfail_op.gallium_name(),
            "valuemask": s.valuemask,
            "writemask": s.writemask,
        })
    };
    let mut m = Map::new();
    m.insert("depth_enabled".into(), d.depth_enabled.into());
    m.insert("depth_writemask".into(), d.depth_writemask.into());
    m.insert("depth_func".into(), d.depth_func.gallium_name().into());
    put(&mut m, "depth_bounds_test", d.depth_bounds_test, false);
    if d.depth_bounds_test {
        m.insert("depth_bounds_min".into(), f(d.depth_bounds_min));
        m.insert("depth_bounds_max".into(), f(d.depth_bounds_max));
    }
    m.insert(
        "stencil".into(),
        Value::Array(d.stencil.iter().map(face).collect()),
    );
    m.insert("alpha_enabled".into(), d.alpha_enabled.into());
    m.insert("alpha_func".into(), d.alpha_func.gallium_name().into());
    m.insert("alpha_ref_value".into(), f(d.alpha_ref_value));
    Value::Object(m)
}

fn rasterizer_json(r: &RasterizerState) -> Value {
    let d = RasterizerState::default();
    let mut m = Map::new();
    macro_rules! b {
        ($($k:ident),*) => { $( put(&mut m, stringify!($k), r.$k, d.$k); )* };
    }
    macro_rules! fl {
        ($($k:ident),*) => { $( if r.$k.to_bits() != d.$k.to_bits() { m.insert(stringify!($k).into(), f(r.$k)); } )* };
    }
    macro_rules! e {
        ($($k:ident),*) => { $( if r.$k != d.$k { m.insert(stringify!($k).into(), r.$k.gallium_name().into()); } )* };
    }
    b!(
        flatshade,
        flatshade_first,
        light_twoside,
        clamp_vertex_color,
        clamp_fragment_color,
        front_ccw,
        poly_stipple_enable,
        poly_smooth,
        offset_point,
        offset_line,
        offset_tri,
        offset_units_unscaled,
        line_smooth,
        line_stipple_enable,
        line_last_pixel,
        point_quad_rasterization,
        point_tri_clip,
        point_smooth,
        point_size_per_vertex,
        scissor,
        multisample,
        half_pixel_center,
        bottom_edge_rule,
        rasterizer_discard,
        clip_halfz,
        depth_clip_near,
        depth_clip_far,
        depth_clamp,
        sprite_coord_enable,
        line_stipple_pattern,
        line_stipple_factor,
        clip_plane_enable,
        subpixel_precision_x,
        subpixel_precision_y
    );
    fl!(
        offset_units,
        offset_scale,
        offset_clamp,
        line_width,
        point_size,
        conservative_raster_dilate
    );
    e!(
        cull_face,
        fill_front,
        fill_back,
        sprite_coord_mode,
        conservative_raster_mode
    );
    // Written only where it differs from what a reader derives.
    put(
        &mut m,
        "line_rectangular",
        r.line_rectangular,
        r.multisample || r.line_smooth,
    );
    Value::Object(m)
}

fn sampler_json(s: &SamplerState) -> Value {
    let mut m = Map::new();
    m.insert("wrap_s".into(), s.wrap_s.gallium_name().into());
    m.insert("wrap_t".into(), s.wrap_t.gallium_name().into());
    m.insert("wrap_r".into(), s.wrap_r.gallium_name().into());
    m.insert(
        "min_img_filter".into(),
        s.min_img_filter.gallium_name().into(),
    );
    m.insert(
        "mag_img_filter".into(),
        s.mag_img_filter.gallium_name().into(),
    );
    m.insert(
        "min_mip_filter".into(),
        s.min_mip_filter.gallium_name().into(),
    );
    put(&mut m, "normalized_coords", s.normalized_coords, true);
    m.insert("lod_bias".into(), f(s.lod_bias));
    m.insert("min_lod".into(), f(s.min_lod));
    m.insert("max_lod".into(), f(s.max_lod));
    m.insert("compare_mode".into(), s.compare_mode.gallium_name().into());
    m.insert("compare_func".into(), s.compare_func.gallium_name().into());
    put(&mut m, "max_anisotropy", s.max_anisotropy, 0);
    put(&mut m, "seamless_cube_map", s.seamless_cube_map, false);
    if s.border_color.iter().any(|c| c.to_bits() != 0) {
        m.insert(
            "border_color".into(),
            Value::Array(s.border_color.iter().map(|c| f(*c)).collect()),
        );
    }
    Value::Object(m)
}

fn box_json(b: &PipeBox) -> Value {
    json!({"x": b.x, "y": b.y, "z": b.z, "width": b.width, "height": b.height, "depth": b.depth})
}

fn scissor_json(s: &ScissorState) -> Value {
    json!({"minx": s.minx, "miny": s.miny, "maxx": s.maxx, "maxy": s.maxy})
}

/// The proposed `stream_output` member of `create_vs_state`
/// (docs/scene-format-stream-output.md).
fn stream_output_json(so: &StreamOutputInfo) -> Value {
    json!({
        "stride": so.stride,
        "output": so.output.iter().map(|o| json!({
            "register_index": o.register_index,
            "start_component": o.start_component,
            "num_components": o.num_components,
            "output_buffer": o.output_buffer,
            "dst_offset": o.dst_offset,
            "stream": o.stream,
        })).collect::<Vec<_>>(),
    })
}

/// The numbers of a `ColorUnion` as a reader converts them for `format`'s
/// channel type (FORMAT.md writes colours as numbers).
fn color_json(c: &ColorUnion, ty: ChannelType) -> Value {
    Value::Array(
        c.0.iter()
            .map(|&bits| match ty {
                ChannelType::Uint => Value::from(bits),
                ChannelType::Sint => Value::from(bits as i32),
                _ => f(f32::from_bits(bits)),
            })
            .collect(),
    )
}

/// Integer, signed integer or float: how a clear colour is interpreted.
fn channel_class(ty: ChannelType) -> ChannelType {
    match ty {
        ChannelType::Uint | ChannelType::Sint => ty,
        _ => ChannelType::Float,
    }
}

impl SceneCapture {
    /// A writer for `dir/capture.json` (and `dir/capture.bin`, shader
    /// files).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self::named(dir, "capture")
    }

    /// A writer for `dir/NAME.json`.
    pub fn named(dir: impl Into<PathBuf>, name: &str) -> Self {
        SceneCapture {
            dir: dir.into(),
            name: name.to_string(),
            calls: Vec::new(),
            blob: Vec::new(),
            stored: HashMap::new(),
            shader_files: HashMap::new(),
            error: None,
            resources: HashMap::new(),
            objects: HashMap::new(),
            queries: HashMap::new(),
            counters: HashMap::new(),
            shadow: BoundState::default(),
            compute_shadow: ComputeBindings::default(),
            frame: None,
            outputs: Vec::new(),
            output_names: Vec::new(),
            resolve: None,
        }
    }

    /// Starts capturing `ctx` into `dir/capture.json`.
    pub fn start(ctx: &mut Context, dir: impl Into<PathBuf>) -> Result<(), CaptureError> {
        ctx.start_capture(Box::new(SceneCapture::new(dir)))
            .map_err(|e| CaptureError::Context(e.to_string()))
    }

    /// Stops the capture and returns the writer, files not yet written:
    /// add outputs ([`SceneCapture::add_output`], ...), then
    /// [`SceneCapture::write`].  A capture that met something it cannot
    /// express fails here.
    pub fn stop(ctx: &mut Context) -> Result<SceneCapture, CaptureError> {
        let rec = ctx
            .stop_capture()
            .map_err(|e| CaptureError::Context(e.to_string()))?;
        let w = rec.into_any().downcast::<SceneCapture>().map_err(|_| {
            CaptureError::Context("the running capture is not a SceneCapture".into())
        })?;
        match w.error {
            Some(e) => Err(e),
            None => Ok(*w),
        }
    }

    /// Stops the capture and writes it, with the frame's outputs: `color`
    /// (colour buffer 0 of the last draw's or clear's framebuffer) and
    /// `depth` (its depth/stencil buffer, if bound).
    pub fn finish(ctx: &mut Context) -> Result<CaptureSummary, CaptureError> {
        let mut w = Self::stop(ctx)?;
        w.add_frame_outputs()?;
        w.write()
    }

    /// Adds the frame outputs [`SceneCapture::finish`] names.
    pub fn add_frame_outputs(&mut self) -> Result<(), CaptureError> {
        let Some(fb) = self.frame.clone() else {
            return Ok(());
        };
        if let Some(Some(c)) = fb.cbufs.first() {
            match &self.resolve {
                Some((src, dst, level, format, layer))
                    if c.resource.templ.samples() > 1 && *src == c.resource.id =>
                {
                    let (dst, level, format, layer) = (dst.clone(), *level, *format, *layer);
                    self.add_output_view("color", &dst, format, level, layer)?;
                }
                _ => self.add_output_surface("color", c)?,
            }
        }
        if let Some(z) = &fb.zsbuf
            && z.resource.templ.samples() <= 1
        {
            self.add_output_surface("depth", z)?;
        }
        Ok(())
    }

    /// Names surface `s` as output `name` (`NAME.png`, or depth/stencil
    /// files).  Multisampled surfaces cannot be outputs (FORMAT.md).
    pub fn add_output_surface(&mut self, name: &str, s: &SurfaceRef) -> Result<(), CaptureError> {
        if s.resource.templ.samples() > 1 {
            return Err(CaptureError::Inexpressible {
                call: "outputs",
                why: format!("{name}: a multisampled surface (resolve it with a blit first)"),
            });
        }
        let id = self.surface_id(s);
        self.push_output(name, json!({"name": name, "surface": id}));
        Ok(())
    }

    /// Names layer `layer` of `level` of `r`, read as `format`, as output
    /// `name`, through a surface of its own (FORMAT.md's `surface`
    /// outputs also write depth and stencil files).
    pub fn add_output_view(
        &mut self,
        name: &str,
        r: &ResourceRef,
        format: ferropipe_components::format::Format,
        level: u32,
        layer: u32,
    ) -> Result<(), CaptureError> {
        if r.templ.samples() > 1 {
            return Err(CaptureError::Inexpressible {
                call: "outputs",
                why: format!("{name}: a multisampled resource (resolve it with a blit first)"),
            });
        }
        let res = self.resource_id(r);
        let id = self.fresh("out_surf");
        self.emit(
            "create_surface",
            json!({"id": id, "resource": res, "format": format.gallium_name(),
                   "level": level, "first_layer": layer, "last_layer": layer}),
        );
        self.push_output(name, json!({"name": name, "surface": id}));
        Ok(())
    }

    /// Names level `level`, layer `layer` of `r` as output `name`.
    pub fn add_output(
        &mut self,
        name: &str,
        r: &ResourceRef,
        level: u32,
        layer: u32,
    ) -> Result<(), CaptureError> {
        let id = self.resource_id(r);
        self.push_output(
            name,
            json!({"name": name, "resource": id, "level": level, "layer": layer}),
        );
        Ok(())
    }

    /// Names bytes `offset .. offset + size` of buffer `r` as output
    /// `name` (`NAME.bin`).
    pub fn add_output_buffer(
        &mut self,
        name: &str,
        r: &ResourceRef,
        offset: u32,
        size: u32,
    ) -> Result<(), CaptureError> {
        let id = self.resource_id(r);
        self.push_output(
            name,
            json!({"name": name, "buffer": id, "offset": offset, "size": size}),
        );
        Ok(())
    }

    fn push_output(&mut self, name: &str, v: Value) {
        self.outputs.push(v);
        self.output_names.push(name.to_string());
    }

    /// Writes `NAME.json`, `NAME.bin` and the shader files.
    pub fn write(self) -> Result<CaptureSummary, CaptureError> {
        let io = |path: &Path, e: std::io::Error| CaptureError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
        let bin = self.dir.join(format!("{}.bin", self.name));
        std::fs::write(&bin, &self.blob).map_err(|e| io(&bin, e))?;
        for (text, file) in &self.shader_files {
            let p = self.dir.join(file);
            std::fs::write(&p, text).map_err(|e| io(&p, e))?;
        }
        let scene = json!({
            "format": "gallium-scene/1",
            "description": "captured by ferropipe (ferropipe_scene::capture)",
            "calls": self.calls,
            "outputs": self.outputs,
        });
        let path = self.dir.join(format!("{}.json", self.name));
        let text = serde_json::to_string_pretty(&scene).unwrap_or_default();
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        Ok(CaptureSummary {
            scene: path,
            calls: self.calls.len(),
            data_bytes: self.blob.len(),
            outputs: self.output_names,
        })
    }

    // --- Plumbing --------------------------------------------------------

    fn fail(&mut self, e: CaptureError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn inexpressible(&mut self, call: &'static str, why: impl Into<String>) {
        self.fail(CaptureError::Inexpressible {
            call,
            why: why.into(),
        });
    }

    fn fresh(&mut self, prefix: &'static str) -> String {
        let n = self.counters.entry(prefix).or_insert(0);
        *n += 1;
        format!("{prefix}{}", *n - 1)
    }

    fn emit(&mut self, op: &str, fields: Value) {
        let mut m = Map::new();
        m.insert("op".into(), op.into());
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.calls.push(Value::Object(m));
    }

    /// Stores `bytes` in the side file: FORMAT.md's `{"file", "offset",
    /// "size"}`.
    fn data(&mut self, bytes: &[u8]) -> Value {
        let h = hash_bytes(bytes);
        let at = self.stored.get(&h).and_then(|v| {
            v.iter()
                .find(|(o, n)| *n == bytes.len() && &self.blob[*o..*o + *n] == bytes)
                .map(|(o, _)| *o)
        });
        let offset = match at {
            Some(o) => o,
            None => {
                let o = self.blob.len();
                self.blob.extend_from_slice(bytes);
                self.stored.entry(h).or_default().push((o, bytes.len()));
                o
            }
        };
        json!({"file": format!("{}.bin", self.name), "offset": offset, "size": bytes.len()})
    }

    /// The id of an object living in `arc`, defining it with `define` the
    /// first time.
    fn object_id<T: ?Sized + Send + Sync + 'static>(
        &mut self,
        arc: &Arc<T>,
        prefix: &'static str,
        define: impl FnOnce(&mut Self, &str),
    ) -> String {
        if let Some((id, _)) = self.objects.get(&addr(arc)) {
            return id.clone();
        }
        let id = self.fresh(prefix);
        define(self, &id);
        self.objects
            .insert(addr(arc), (id.clone(), Box::new(arc.clone())));
        id
    }

    // --- Resources -------------------------------------------------------

    fn resource_id(&mut self, r: &ResourceRef) -> String {
        if let Some(e) = self.resources.get(&r.id) {
            return e.id.clone();
        }
        let id = self.fresh("res");
        let t = &r.templ;
        let mut m = Map::new();
        m.insert("id".into(), id.clone().into());
        m.insert("target".into(), t.target.gallium_name().into());
        if t.target != TextureTarget::Buffer {
            m.insert("format".into(), t.format.gallium_name().into());
        }
        m.insert("width0".into(), t.width0.into());
        put(&mut m, "height0", t.height0, 1);
        put(&mut m, "depth0", t.depth0, 1);
        put(&mut m, "array_size", t.array_size, 1);
        put(&mut m, "last_level", t.last_level, 0);
        put(&mut m, "nr_samples", t.nr_samples, 0);
        put(&mut m, "nr_storage_samples", t.nr_storage_samples, 0);
        m.insert("usage".into(), t.usage.gallium_name().into());
        m.insert("bind".into(), names_of!(BindFlags, t.bind));
        if !t.flags.is_empty() {
            m.insert("flags".into(), names_of!(ResourceFlags, t.flags));
        }
        let user = r.storage.is_user_memory();
        let mut note = None;
        if t.target == TextureTarget::Buffer {
            if let Ok(bytes) = read_box(r, 0, &PipeBox::new_1d(0, t.width0 as i32))
                && bytes.iter().any(|&b| b != 0)
            {
                let d = self.data(&bytes);
                m.insert("data".into(), d);
            }
            self.emit("resource_create", Value::Object(m));
        } else {
            self.emit("resource_create", Value::Object(m));
            if t.samples() > 1 {
                if r.storage.read().iter().any(|&b| b != 0) {
                    note = Some("multisampled contents that are not all zero");
                }
            } else {
                self.upload_levels(&id, r);
            }
        }
        if let Some(why) = note {
            self.inexpressible("resource_create", format!("{id}: {why}"));
        }
        let user_hash = user.then(|| hash_bytes(&r.storage.read()));
        self.resources.insert(
            r.id,
            ResEntry {
                id: id.clone(),
                res: r.clone(),
                user_hash,
            },
        );
        id
    }

    /// `texture_subdata` of every level of a texture (all layers), skipping
    /// all-zero levels unless `all` is set.
    fn upload_levels_inner(&mut self, id: &str, r: &ResourceRef, all: bool) {
        let t = r.templ;
        for level in 0..=t.last_level {
            let (w, h, d) = level_extent(&t, level);
            let b = PipeBox::new_3d(0, 0, 0, w as i32, h as i32, d as i32);
            match read_box(r, level, &b) {
                Ok(bytes) if all || bytes.iter().any(|&x| x != 0) => {
                    let data = self.data(&bytes);
                    self.emit(
                        "texture_subdata",
                        json!({"resource": id, "level": level, "box": box_json(&b), "data": data}),
                    );
                }
                Ok(_) => {}
                Err(e) => self.inexpressible("texture_subdata", format!("{id}: {e}")),
            }
        }
    }

    fn upload_levels(&mut self, id: &str, r: &ResourceRef) {
        self.upload_levels_inner(id, r, false);
    }

    /// Re-uploads host-memory resources whose bytes changed since the file
    /// last wrote them.
    fn refresh_user_memory(&mut self) {
        let changed: Vec<(String, ResourceRef)> = self
            .resources
            .values_mut()
            .filter_map(|e| {
                let old = e.user_hash?;
                let h = hash_bytes(&e.res.storage.read());
                (h != old).then(|| {
                    e.user_hash = Some(h);
                    (e.id.clone(), e.res.clone())
                })
            })
            .collect();
        for (id, r) in changed {
            if r.templ.target == TextureTarget::Buffer {
                if let Ok(bytes) = read_box(&r, 0, &PipeBox::new_1d(0, r.templ.width0 as i32)) {
                    let d = self.data(&bytes);
                    self.emit(
                        "buffer_subdata",
                        json!({"resource": id, "offset": 0, "data": d}),
                    );
                }
            } else {
                self.upload_levels_inner(&id, &r, true);
            }
        }
    }

    fn surface_id(&mut self, s: &SurfaceRef) -> String {
        self.object_id(s, "surf", |w, id| {
            let res = w.resource_id(&s.resource);
            w.emit(
                "create_surface",
                json!({
                    "id": id,
                    "resource": res,
                    "format": s.desc.format.gallium_name(),
                    "level": s.desc.level,
                    "first_layer": s.desc.first_layer,
                    "last_layer": s.desc.last_layer,
                }),
            );
        })
    }

    fn view_id(&mut self, v: &SamplerViewRef) -> String {
        if v.resource.templ.target == TextureTarget::Buffer
            || v.desc.target == TextureTarget::Buffer
        {
            self.inexpressible(
                "create_sampler_view",
                "buffer views (gallium-scene/1 has texture views only)",
            );
        }
        self.object_id(v, "view", |w, id| {
            let res = w.resource_id(&v.resource);
            let d = &v.desc;
            let mut m = Map::new();
            m.insert("id".into(), id.into());
            m.insert("resource".into(), res.into());
            m.insert("format".into(), d.format.gallium_name().into());
            if d.target != v.resource.templ.target {
                m.insert("target".into(), d.target.gallium_name().into());
            }
            m.insert("first_level".into(), d.first_level.into());
            m.insert("last_level".into(), d.last_level.into());
            m.insert("first_layer".into(), d.first_layer.into());
            m.insert("last_layer".into(), d.last_layer.into());
            for (k, s) in ["swizzle_r", "swizzle_g", "swizzle_b", "swizzle_a"]
                .iter()
                .zip(d.swizzle)
            {
                m.insert((*k).into(), s.gallium_name().into());
            }
            w.emit("create_sampler_view", Value::Object(m));
        })
    }

    fn query_id(&mut self, q: &CapturedQuery) -> String {
        if let Some(id) = self.queries.get(&q.handle.entity()) {
            return id.clone();
        }
        let id = self.fresh("query");
        self.emit(
            "create_query",
            json!({"id": id, "query_type": q.query_type.gallium_name(), "index": q.index}),
        );
        self.queries.insert(q.handle.entity(), id.clone());
        id
    }

    // --- CSOs and shaders -----------------------------------------------

    fn shader_fields(&mut self, src: &ShaderSource, m: &mut Map<String, Value>) {
        let (language, code, entry, ext) = match &src.code {
            ShaderCode::Wgsl { code, entry_point } => ("wgsl", code, entry_point, "wgsl"),
            ShaderCode::Glsl { code, entry_point } => ("glsl", code, entry_point, "glsl"),
        };
        let n = self.shader_files.len();
        let file = self
            .shader_files
            .entry(code.clone())
            .or_insert_with(|| format!("{}_shader{n}.{ext}", self.name))
            .clone();
        m.insert("language".into(), language.into());
        m.insert("source".into(), file.into());
        m.insert("entry_point".into(), entry.clone().into());
        if !src.overrides.is_empty() {
            self.inexpressible(
                "create_shader",
                "a shader created with WGSL override values (gallium-scene/1 has no field for them)",
            );
        }
    }

    fn vs_id(&mut self, ctx: &Context, b: &BoundState) -> Option<String> {
        let vs = b.vs.as_ref()?;
        let Some(src) = ctx.shader_source(ShaderRef::Vertex(vs)).cloned() else {
            self.fail(CaptureError::NativeShader { stage: "vs" });
            return None;
        };
        Some(self.object_id(vs, "vs", |w, id| {
            let mut m = Map::new();
            m.insert("id".into(), id.into());
            w.shader_fields(&src, &mut m);
            semantics(&src, &mut m);
            if !src.stream_output.output.is_empty() {
                m.insert(
                    "stream_output".into(),
                    stream_output_json(&src.stream_output),
                );
            }
            w.emit("create_vs_state", Value::Object(m));
        }))
    }

    fn fs_id(&mut self, ctx: &Context, b: &BoundState) -> Option<String> {
        let fs = b.fs.as_ref()?;
        let Some(src) = ctx.shader_source(ShaderRef::Fragment(fs)).cloned() else {
            self.fail(CaptureError::NativeShader { stage: "fs" });
            return None;
        };
        Some(self.object_id(fs, "fs", |w, id| {
            let mut m = Map::new();
            m.insert("id".into(), id.into());
            w.shader_fields(&src, &mut m);
            semantics(&src, &mut m);
            w.emit("create_fs_state", Value::Object(m));
        }))
    }

    fn cso<T: Send + Sync + 'static>(
        &mut self,
        v: &Option<Arc<T>>,
        prefix: &'static str,
        op: &'static str,
        to_json: fn(&T) -> Value,
    ) -> Value {
        match v {
            None => Value::Null,
            Some(a) => self
                .object_id(a, prefix, |w, id| {
                    w.emit(op, json!({"id": id, "state": to_json(a)}));
                })
                .into(),
        }
    }

    fn sampler_id(&mut self, s: &Option<Arc<SamplerState>>) -> Value {
        self.cso(s, "sampler", "create_sampler_state", sampler_json)
    }

    // --- State sync --------------------------------------------------------

    /// Writes what makes the file's framebuffer the context's.
    fn sync_framebuffer(&mut self, b: &BoundState) {
        let (cur, old) = (&b.framebuffer, &self.shadow.framebuffer);
        if !Arc::ptr_eq(cur, old) && !cur.same_as(old) {
            let cbufs: Vec<Value> = cur
                .cbufs
                .iter()
                .map(|c| {
                    c.as_ref()
                        .map_or(Value::Null, |s| self.surface_id(s).into())
                })
                .collect();
            let zsbuf = cur
                .zsbuf
                .as_ref()
                .map_or(Value::Null, |s| self.surface_id(s).into());
            let mut m = Map::new();
            m.insert("width".into(), cur.width.into());
            m.insert("height".into(), cur.height.into());
            put(&mut m, "layers", cur.layers, 0);
            put(&mut m, "samples", cur.samples, 0);
            m.insert("cbufs".into(), Value::Array(cbufs));
            m.insert("zsbuf".into(), zsbuf);
            self.emit("set_framebuffer_state", Value::Object(m));
        }
        self.shadow.framebuffer = cur.clone();
        self.frame = Some(cur.clone());
    }

    /// Writes what makes the file's draw state the context's.
    fn sync_draw(&mut self, ctx: &Context) {
        let b = ctx.bound().clone();
        self.sync_framebuffer(&b);
        let sh = self.shadow.clone();
        macro_rules! bind {
            ($field:ident, $prefix:literal, $create:literal, $bind:literal, $json:expr) => {
                if !opt_eq(&b.$field, &sh.$field) {
                    let id = self.cso(&b.$field, $prefix, $create, $json);
                    self.emit($bind, json!({ "id": id }));
                }
            };
        }
        bind!(
            blend,
            "blend",
            "create_blend_state",
            "bind_blend_state",
            blend_json
        );
        bind!(
            depth_stencil_alpha,
            "dsa",
            "create_depth_stencil_alpha_state",
            "bind_depth_stencil_alpha_state",
            dsa_json
        );
        bind!(
            rasterizer,
            "rast",
            "create_rasterizer_state",
            "bind_rasterizer_state",
            rasterizer_json
        );
        if !opt_eq(&b.vertex_elements, &sh.vertex_elements) {
            let id = match &b.vertex_elements {
                None => Value::Null,
                Some(ve) => self
                    .object_id(ve, "ve", |w, id| {
                        let elements: Vec<Value> = ve
                            .iter()
                            .map(|e| {
                                json!({
                                    "src_offset": e.src_offset,
                                    "vertex_buffer_index": e.vertex_buffer_index,
                                    "src_format": e.src_format.gallium_name(),
                                    "instance_divisor": e.instance_divisor,
                                })
                            })
                            .collect();
                        w.emit(
                            "create_vertex_elements_state",
                            json!({"id": id, "elements": elements}),
                        );
                    })
                    .into(),
            };
            self.emit("bind_vertex_elements_state", json!({ "id": id }));
        }
        if !opt_eq(&b.vs, &sh.vs) || !opt_eq(&b.vs_stream_output, &sh.vs_stream_output) {
            let id = self.vs_id(ctx, &b);
            self.emit("bind_vs_state", json!({ "id": id }));
        }
        if !opt_eq(&b.fs, &sh.fs) {
            let id = self.fs_id(ctx, &b);
            self.emit("bind_fs_state", json!({ "id": id }));
        }
        for (i, &stage) in BOUND_STAGES.iter().enumerate() {
            if !Arc::ptr_eq(&b.samplers[i], &sh.samplers[i]) {
                let (cur, old) = (&b.samplers[i], &sh.samplers[i]);
                if let Some(n) = changed_len(cur.len(), |k| opt_eq(&cur[k], &old[k])) {
                    let ids: Vec<Value> = (0..n).map(|k| self.sampler_id(&cur[k])).collect();
                    self.emit(
                        "bind_sampler_states",
                        json!({"shader": stage_name(i), "start_slot": 0, "samplers": ids}),
                    );
                }
            }
            if !Arc::ptr_eq(&b.sampler_views[i], &sh.sampler_views[i]) {
                let (cur, old) = (&b.sampler_views[i], &sh.sampler_views[i]);
                if let Some(n) = changed_len(cur.len(), |k| opt_eq(&cur[k], &old[k])) {
                    let ids: Vec<Value> = (0..n)
                        .map(|k| {
                            cur[k]
                                .as_ref()
                                .map_or(Value::Null, |v| self.view_id(v).into())
                        })
                        .collect();
                    self.emit(
                        "set_sampler_views",
                        json!({"shader": stage_name(i), "start_slot": 0, "views": ids}),
                    );
                }
            }
            if !Arc::ptr_eq(&b.constant_buffers[i], &sh.constant_buffers[i]) {
                let (cur, old) = (
                    b.constant_buffers[i].clone(),
                    sh.constant_buffers[i].clone(),
                );
                for k in 0..cur.len() {
                    if !cb_eq(&cur[k], &old[k]) {
                        self.constant_buffer(stage, k, &cur[k]);
                    }
                }
            }
            if !Arc::ptr_eq(&b.shader_buffers[i], &sh.shader_buffers[i])
                && !slots_eq(&b.shader_buffers[i], &sh.shader_buffers[i], sb_eq)
            {
                self.shader_buffers(stage, &b.shader_buffers[i].clone(), &sh.shader_buffers[i]);
            }
            if !Arc::ptr_eq(&b.shader_images[i], &sh.shader_images[i])
                && !slots_eq(&b.shader_images[i], &sh.shader_images[i], img_eq)
            {
                self.shader_images(stage, &b.shader_images[i].clone(), &sh.shader_images[i]);
            }
        }
        if !Arc::ptr_eq(&b.vertex_buffers, &sh.vertex_buffers) {
            let (cur, old) = (&b.vertex_buffers, &sh.vertex_buffers);
            let same = |k: usize| {
                opt_eq(&cur[k].buffer, &old[k].buffer)
                    && cur[k].stride == old[k].stride
                    && cur[k].buffer_offset == old[k].buffer_offset
            };
            if let Some(n) = changed_len(cur.len(), same) {
                let list: Vec<Value> = (0..n)
                    .map(|k| match &cur[k].buffer {
                        None => Value::Null,
                        Some(r) => json!({
                            "buffer": self.resource_id(r),
                            "stride": cur[k].stride,
                            "buffer_offset": cur[k].buffer_offset,
                        }),
                    })
                    .collect();
                self.emit(
                    "set_vertex_buffers",
                    json!({"start_slot": 0, "buffers": list}),
                );
            }
        }
        if !ib_eq(&b.index_buffer, &sh.index_buffer) {
            let v = match &b.index_buffer.buffer {
                None => json!({ "buffer": null }),
                Some(r) => json!({
                    "buffer": self.resource_id(r),
                    "index_size": b.index_buffer.index_size,
                    "offset": b.index_buffer.offset,
                }),
            };
            self.emit("set_index_buffer", v);
        }
        if b.so_targets
            .iter()
            .zip(&sh.so_targets)
            .any(|(a, o)| !opt_eq(a, o))
        {
            // Bound outside set_stream_output_targets (the capture's start,
            // restore_bound_state): continue where each target is.
            let offsets: Vec<u32> = b
                .so_targets
                .iter()
                .map(|t| t.as_ref().map_or(0, |t| t.filled()))
                .collect();
            self.set_so_targets(&b.so_targets, &offsets);
        }
        if b.blend_color.color.map(f32::to_bits) != sh.blend_color.color.map(f32::to_bits) {
            let c: Vec<Value> = b.blend_color.color.iter().map(|v| f(*v)).collect();
            self.emit("set_blend_color", json!({ "color": c }));
        }
        if b.stencil_ref != sh.stencil_ref {
            self.emit(
                "set_stencil_ref",
                json!({"ref_value": b.stencil_ref.ref_value}),
            );
        }
        if b.sample_mask != sh.sample_mask {
            self.emit("set_sample_mask", json!({"sample_mask": b.sample_mask}));
        }
        if b.min_samples != sh.min_samples {
            self.emit("set_min_samples", json!({"min_samples": b.min_samples}));
        }
        let bits = |c: &ClipState| c.ucp.map(|p| p.map(f32::to_bits));
        if bits(&b.clip) != bits(&sh.clip) {
            let ucp: Vec<Value> = b
                .clip
                .ucp
                .iter()
                .map(|p| Value::Array(p.iter().map(|v| f(*v)).collect()))
                .collect();
            self.emit("set_clip_state", json!({ "ucp": ucp }));
        }
        if b.poly_stipple != sh.poly_stipple {
            self.emit(
                "set_polygon_stipple",
                json!({"stipple": b.poly_stipple.stipple}),
            );
        }
        let vp_bits =
            |v: &ViewportState| (v.scale.map(f32::to_bits), v.translate.map(f32::to_bits));
        if let Some((lo, hi)) = changed_range(b.viewports.len(), |k| {
            vp_bits(&b.viewports[k]) == vp_bits(&sh.viewports[k])
        }) {
            let list: Vec<Value> = b.viewports[lo..hi]
                .iter()
                .map(|v| {
                    json!({
                        "scale": v.scale.iter().map(|x| f(*x)).collect::<Vec<_>>(),
                        "translate": v.translate.iter().map(|x| f(*x)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            self.emit(
                "set_viewport_states",
                json!({"start_slot": lo, "viewports": list}),
            );
        }
        if let Some((lo, hi)) = changed_range(b.scissors.len(), |k| b.scissors[k] == sh.scissors[k])
        {
            let list: Vec<Value> = b.scissors[lo..hi].iter().map(scissor_json).collect();
            self.emit(
                "set_scissor_states",
                json!({"start_slot": lo, "scissors": list}),
            );
        }
        self.shadow = b;
    }

    fn so_target_id(&mut self, t: &StreamOutputTargetRef) -> String {
        self.object_id(t, "so_target", |w, id| {
            let buffer = w.resource_id(&t.buffer);
            w.emit(
                "create_stream_output_target",
                json!({"id": id, "buffer": buffer, "buffer_offset": t.buffer_offset,
                       "buffer_size": t.buffer_size}),
            );
        })
    }

    /// The proposed `set_stream_output_targets`
    /// (docs/scene-format-stream-output.md).
    fn set_so_targets(&mut self, targets: &[Option<StreamOutputTargetRef>], offsets: &[u32]) {
        let n = targets
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |k| k + 1)
            .min(offsets.len());
        let ids: Vec<Value> = targets[..n]
            .iter()
            .map(|t| {
                t.as_ref()
                    .map_or(Value::Null, |t| self.so_target_id(t).into())
            })
            .collect();
        let offs: Vec<Value> = offsets[..n]
            .iter()
            .map(|&o| {
                if o == ferropipe::SO_APPEND {
                    "append".into()
                } else {
                    o.into()
                }
            })
            .collect();
        self.emit(
            "set_stream_output_targets",
            json!({"targets": ids, "offsets": offs}),
        );
        let mut bound: [Option<StreamOutputTargetRef>; MAX_SO_BUFFERS] =
            std::array::from_fn(|_| None);
        for (slot, t) in bound.iter_mut().zip(targets) {
            slot.clone_from(t);
        }
        self.shadow.so_targets = bound;
    }

    fn constant_buffer(&mut self, stage: ShaderType, index: usize, cb: &ConstantBufferBinding) {
        let mut m = Map::new();
        m.insert("shader".into(), stage.gallium_name().into());
        m.insert("index".into(), index.into());
        if let Some(u) = &cb.user_buffer {
            let d = self.data(u);
            m.insert("data".into(), d);
        } else if let Some(r) = &cb.buffer {
            m.insert("buffer".into(), self.resource_id(r).into());
            m.insert("buffer_offset".into(), cb.buffer_offset.into());
            m.insert("buffer_size".into(), cb.buffer_size.into());
        }
        self.emit("set_constant_buffer", Value::Object(m));
    }

    fn shader_buffers(
        &mut self,
        stage: ShaderType,
        slots: &[Option<ferropipe_components::batch::ShaderBufferBinding>],
        old: &[Option<ferropipe_components::batch::ShaderBufferBinding>],
    ) {
        // Up to the last slot bound now or before (the reference has 16
        // slots, ferropipe 32: trailing unbound slots are not written).
        let n = bound_len(slots).max(bound_len(old));
        // Each slot's bit of `writable_bitmask`, as bound: a draw whose
        // shader writes a slot bound read-only is refused before it is
        // recorded, so the file never needs more.
        let writable = slots[..n]
            .iter()
            .enumerate()
            .filter(|(_, s)| s.as_ref().is_some_and(|s| s.writable))
            .fold(0u32, |m, (k, _)| m | 1 << k);
        let list: Vec<Value> = slots[..n]
            .iter()
            .map(|s| match s {
                None => Value::Null,
                Some(s) => json!({
                    "buffer": self.resource_id(&s.buffer),
                    "buffer_offset": s.offset,
                    "buffer_size": s.size,
                }),
            })
            .collect();
        self.emit(
            "set_shader_buffers",
            json!({"shader": stage.gallium_name(), "start_slot": 0, "buffers": list,
                   "writable_bitmask": writable}),
        );
    }

    fn shader_images(
        &mut self,
        stage: ShaderType,
        slots: &[Option<ferropipe_components::batch::ShaderImageBinding>],
        old: &[Option<ferropipe_components::batch::ShaderImageBinding>],
    ) {
        let n = bound_len(slots).max(bound_len(old));
        let mut list = Vec::with_capacity(n);
        for s in &slots[..n] {
            list.push(match s {
                None => Value::Null,
                Some(s) if s.buffer_range.is_some() => {
                    self.inexpressible(
                        "set_shader_images",
                        "buffer images (gallium-scene/1 has texture images only)",
                    );
                    Value::Null
                }
                Some(s) => json!({
                    "resource": self.resource_id(&s.resource),
                    "format": s.format.gallium_name(),
                    "level": s.level,
                    "first_layer": s.first_layer,
                    "last_layer": s.last_layer,
                    "access": names_of!(ImageAccess, s.access),
                }),
            });
        }
        self.emit(
            "set_shader_images",
            json!({"shader": stage.gallium_name(), "start_slot": 0, "images": list}),
        );
    }

    /// Writes what makes the file's compute state the context's.
    fn sync_compute(&mut self, ctx: &Context) {
        let c = ctx.compute_bindings().clone();
        let sh = std::mem::take(&mut self.compute_shadow);
        let same_cs = match (&c.shader, &sh.shader) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a.shader, &b.shader),
            (None, None) => true,
            _ => false,
        };
        if !same_cs {
            let id = match &c.shader {
                None => Value::Null,
                Some(cso) => match ctx.shader_source(ShaderRef::Compute(&cso.shader)).cloned() {
                    None => {
                        self.fail(CaptureError::NativeShader { stage: "compute" });
                        Value::Null
                    }
                    Some(src) => self
                        .object_id(&cso.shader, "cs", |w, id| {
                            let mut m = Map::new();
                            m.insert("id".into(), id.into());
                            w.shader_fields(&src, &mut m);
                            put(&mut m, "req_local_mem", cso.req_local_mem, 0);
                            put(&mut m, "req_input_mem", cso.req_input_mem, 0);
                            w.emit("create_compute_state", Value::Object(m));
                        })
                        .into(),
                },
            };
            self.emit("bind_compute_state", json!({ "id": id }));
        }
        let stage = ShaderType::Compute;
        let (cur, old) = (&c.stage, &sh.stage);
        if !Arc::ptr_eq(&cur.samplers, &old.samplers)
            && let Some(n) = changed_len(cur.samplers.len(), |k| {
                opt_eq(&cur.samplers[k], &old.samplers[k])
            })
        {
            let ids: Vec<Value> = (0..n).map(|k| self.sampler_id(&cur.samplers[k])).collect();
            self.emit(
                "bind_sampler_states",
                json!({"shader": stage.gallium_name(), "start_slot": 0, "samplers": ids}),
            );
        }
        if !Arc::ptr_eq(&cur.sampler_views, &old.sampler_views)
            && let Some(n) = changed_len(cur.sampler_views.len(), |k| {
                opt_eq(&cur.sampler_views[k], &old.sampler_views[k])
            })
        {
            let ids: Vec<Value> = (0..n)
                .map(|k| {
                    cur.sampler_views[k]
                        .as_ref()
                        .map_or(Value::Null, |v| self.view_id(v).into())
                })
                .collect();
            self.emit(
                "set_sampler_views",
                json!({"shader": stage.gallium_name(), "start_slot": 0, "views": ids}),
            );
        }
        for k in 0..cur.constant_buffers.len() {
            if !cb_eq(&cur.constant_buffers[k], &old.constant_buffers[k]) {
                self.constant_buffer(stage, k, &cur.constant_buffers[k].clone());
            }
        }
        if !slots_eq(&c.buffers, &sh.buffers, sb_eq) {
            self.shader_buffers(stage, &c.buffers, &sh.buffers);
        }
        if !slots_eq(&c.images, &sh.images, img_eq) {
            self.shader_images(stage, &c.images, &sh.images);
        }
        if c.globals.iter().any(Option::is_some) {
            self.inexpressible(
                "set_global_binding",
                "global bindings (FORMAT.md: @group(6) has no calls)",
            );
        }
        self.compute_shadow = c;
    }

    // --- Work calls --------------------------------------------------------

    fn clear(
        &mut self,
        ctx: &Context,
        buffers: ClearFlags,
        color: &ColorUnion,
        depth: f64,
        stencil: u32,
    ) {
        let b = ctx.bound().clone();
        self.sync_framebuffer(&b);
        // One call per colour class, since readers convert the numbers
        // per surface format.
        let mut groups: Vec<(ChannelType, ClearFlags)> = Vec::new();
        for (i, cbuf) in b.framebuffer.cbufs.iter().enumerate() {
            let bit = ClearFlags::from_bits_truncate(ClearFlags::COLOR0.bits() << i);
            if let (Some(s), true) = (cbuf, buffers.contains(bit)) {
                let class = channel_class(s.desc.format.desc().channel_type);
                match groups.iter_mut().find(|(c, _)| *c == class) {
                    Some(g) => g.1 |= bit,
                    None => groups.push((class, bit)),
                }
            }
        }
        let zs = buffers & (ClearFlags::DEPTH | ClearFlags::STENCIL);
        let colour_bits = buffers & !(ClearFlags::DEPTH | ClearFlags::STENCIL);
        if groups.is_empty() {
            groups.push((ChannelType::Float, colour_bits));
        }
        for (k, (class, bits)) in groups.into_iter().enumerate() {
            let flags = if k == 0 { bits | zs } else { bits };
            if flags.is_empty() {
                continue;
            }
            self.emit(
                "clear",
                json!({
                    "buffers": names_of!(ClearFlags, flags),
                    "color": color_json(color, class),
                    "depth": depth,
                    "stencil": stencil,
                }),
            );
        }
    }

    fn launch(&mut self, ctx: &Context, info: &ferropipe::GridInfo<'_>) {
        if info.indirect.is_some() {
            self.inexpressible(
                "launch_grid",
                "indirect launches (FORMAT.md: the reference exits 3)",
            );
            return;
        }
        if info.variable_shared_mem != 0 {
            self.inexpressible("launch_grid", "variable_shared_mem");
        }
        self.sync_compute(ctx);
        let mut m = Map::new();
        m.insert("block".into(), json!(info.block));
        m.insert("grid".into(), json!(info.grid));
        if info.last_block != [0; 3] {
            m.insert("last_block".into(), json!(info.last_block));
        }
        if info.grid_base != [0; 3] {
            m.insert("grid_base".into(), json!(info.grid_base));
        }
        if !info.input.is_empty() {
            let d = self.data(info.input);
            m.insert("input".into(), d);
        }
        self.emit("launch_grid", Value::Object(m));
    }

    fn blit(&mut self, info: &ferropipe::BlitInfo<'_>) {
        let src = info.src.resource.shared();
        if src.templ.samples() > 1 {
            self.resolve = Some((
                src.id,
                info.dst.resource.shared().clone(),
                info.dst.level,
                info.dst.format,
                info.dst.pbox.z.max(0) as u32,
            ));
        }
        if info.sample0_only {
            self.inexpressible("blit", "sample0_only (pipe_blit_info has no such member)");
        }
        let side = |w: &mut Self, s: &ferropipe::BlitSide<'_>| {
            json!({
                "resource": w.resource_id(s.resource.shared()),
                "level": s.level,
                "format": s.format.gallium_name(),
                "box": box_json(&s.pbox),
            })
        };
        let dst = side(self, &info.dst);
        let src = side(self, &info.src);
        let mut m = Map::new();
        m.insert("dst".into(), dst);
        m.insert("src".into(), src);
        m.insert("mask".into(), names_of!(BlitMask, info.mask));
        m.insert("filter".into(), info.filter.gallium_name().into());
        if info.scissor_enable {
            m.insert("scissor_enable".into(), true.into());
            m.insert("scissor".into(), scissor_json(&info.scissor));
        }
        put(
            &mut m,
            "render_condition_enable",
            info.render_condition_enable,
            false,
        );
        put(&mut m, "alpha_blend", info.alpha_blend, false);
        self.emit("blit", Value::Object(m));
    }

    fn render_condition(
        &mut self,
        query: Option<&CapturedQuery>,
        condition: bool,
        mode: ferropipe_components::enums::RenderCondMode,
    ) {
        let q = query.map_or(Value::Null, |q| self.query_id(q).into());
        self.emit(
            "render_condition",
            json!({"query": q, "condition": condition, "mode": mode.gallium_name()}),
        );
    }

    fn call(&mut self, ctx: &Context, call: &CapturedCall<'_>) {
        match call {
            CapturedCall::DrawVbo(info) => {
                self.sync_draw(ctx);
                let mut m = Map::new();
                m.insert("mode".into(), info.mode.gallium_name().into());
                m.insert("start".into(), info.start.into());
                m.insert("count".into(), info.count.into());
                put(&mut m, "indexed", info.indexed, false);
                put(&mut m, "index_bias", info.index_bias, 0);
                put(&mut m, "min_index", info.min_index, 0);
                put(&mut m, "max_index", info.max_index, 0xffff_ffff);
                put(&mut m, "start_instance", info.start_instance, 0);
                put(&mut m, "instance_count", info.instance_count, 1);
                put(&mut m, "primitive_restart", info.primitive_restart, false);
                if info.primitive_restart {
                    m.insert("restart_index".into(), info.restart_index.into());
                }
                self.emit("draw_vbo", Value::Object(m));
            }
            CapturedCall::Clear {
                buffers,
                color,
                depth,
                stencil,
            } => self.clear(ctx, *buffers, color, *depth, *stencil),
            CapturedCall::ClearRenderTarget {
                surface,
                color,
                dstx,
                dsty,
                width,
                height,
                render_condition_enabled,
            } => {
                let id = self.surface_id(surface);
                let class = channel_class(surface.desc.format.desc().channel_type);
                self.emit(
                    "clear_render_target",
                    json!({"surface": id, "color": color_json(color, class), "dstx": dstx,
                           "dsty": dsty, "width": width, "height": height,
                           "render_condition_enabled": render_condition_enabled}),
                );
            }
            CapturedCall::ClearDepthStencil {
                surface,
                clear_flags,
                depth,
                stencil,
                dstx,
                dsty,
                width,
                height,
                render_condition_enabled,
            } => {
                let id = self.surface_id(surface);
                self.emit(
                    "clear_depth_stencil",
                    json!({"surface": id, "clear_flags": names_of!(ClearFlags, *clear_flags),
                           "depth": depth, "stencil": stencil, "dstx": dstx, "dsty": dsty,
                           "width": width, "height": height,
                           "render_condition_enabled": render_condition_enabled}),
                );
            }
            CapturedCall::ClearBuffer {
                resource,
                offset,
                size,
                value,
            } => {
                let id = self.resource_id(resource);
                let d = self.data(value);
                self.emit(
                    "clear_buffer",
                    json!({"resource": id, "offset": offset, "size": size, "value": d}),
                );
            }
            CapturedCall::BufferSubdata {
                resource,
                offset,
                data,
            } => {
                let id = self.resource_id(resource);
                let d = self.data(data);
                self.emit(
                    "buffer_subdata",
                    json!({"resource": id, "offset": offset, "data": d}),
                );
            }
            CapturedCall::TextureSubdata {
                resource,
                level,
                pbox,
                data,
                stride,
                layer_stride,
            } => {
                let id = self.resource_id(resource);
                // Tightly packed rows, as FORMAT.md's texture_subdata has.
                let bpp = resource.templ.format.desc().block_bytes as usize;
                let row = pbox.width.max(0) as usize * bpp;
                let (rows, slices) = (pbox.height.max(0) as usize, pbox.depth.max(0) as usize);
                let mut packed = Vec::with_capacity(row * rows * slices);
                for z in 0..slices {
                    for y in 0..rows {
                        let at = z * layer_stride + y * stride;
                        packed.extend_from_slice(&data[at..at + row]);
                    }
                }
                let d = self.data(&packed);
                self.emit(
                    "texture_subdata",
                    json!({"resource": id, "level": level, "box": box_json(pbox), "data": d}),
                );
            }
            CapturedCall::ResourceCopyRegion {
                dst,
                dst_level,
                dstx,
                dsty,
                dstz,
                src,
                src_level,
                src_box,
            } => {
                let d = self.resource_id(dst);
                let s = self.resource_id(src);
                self.emit(
                    "resource_copy_region",
                    json!({"dst": d, "dst_level": dst_level, "dstx": dstx, "dsty": dsty,
                           "dstz": dstz, "src": s, "src_level": src_level,
                           "src_box": box_json(src_box)}),
                );
            }
            CapturedCall::Blit(info) => self.blit(info),
            CapturedCall::SetStreamOutputTargets { targets, offsets } => {
                self.set_so_targets(targets, offsets)
            }
            CapturedCall::LaunchGrid(info) => self.launch(ctx, info),
            CapturedCall::MemoryBarrier(flags) => {
                self.emit(
                    "memory_barrier",
                    json!({ "flags": names_of!(BarrierFlags, *flags) }),
                );
            }
            CapturedCall::TextureBarrier => self.emit("texture_barrier", json!({})),
            CapturedCall::Flush => self.emit("flush", json!({})),
            CapturedCall::CreateQuery(q) => {
                self.query_id(q);
            }
            CapturedCall::DestroyQuery(q) => {
                let id = self.query_id(q);
                self.emit("destroy_query", json!({ "id": id }));
                self.queries.remove(&q.handle.entity());
            }
            CapturedCall::BeginQuery(q) => {
                let id = self.query_id(q);
                self.emit("begin_query", json!({ "id": id }));
            }
            CapturedCall::EndQuery(q) => {
                let id = self.query_id(q);
                self.emit("end_query", json!({ "id": id }));
            }
            CapturedCall::GetQueryResult { query, wait } => {
                let id = self.query_id(query);
                self.emit("get_query_result", json!({"id": id, "wait": wait}));
            }
            CapturedCall::RenderCondition {
                query,
                condition,
                mode,
            } => self.render_condition(query.as_ref(), *condition, *mode),
            CapturedCall::Inexpressible { call, why } => self.inexpressible(call, *why),
            _ => self.inexpressible(
                "capture",
                format!("a call the writer does not know: {call:?}"),
            ),
        }
    }
}

/// `semantics` of a shader (FORMAT.md "Shaders").
fn semantics(src: &ShaderSource, m: &mut Map<String, Value>) {
    let mut s = Map::new();
    for (loc, sem) in &src.semantics {
        if let Some(n) = semantic_name(sem)
            && !matches!(sem, Semantic::Generic(g) if u32::from(*g) == *loc)
        {
            s.insert(loc.to_string(), n.into());
        }
    }
    if !s.is_empty() {
        m.insert("semantics".into(), Value::Object(s));
    }
}

/// One past the last bound slot.
fn bound_len<T>(slots: &[Option<T>]) -> usize {
    slots.iter().rposition(Option::is_some).map_or(0, |k| k + 1)
}

/// Slot lists equal, a missing slot counting as unbound.
fn slots_eq<T>(a: &[Option<T>], b: &[Option<T>], eq: fn(&T, &T) -> bool) -> bool {
    (0..a.len().max(b.len())).all(|k| {
        match (
            a.get(k).and_then(Option::as_ref),
            b.get(k).and_then(Option::as_ref),
        ) {
            (Some(x), Some(y)) => eq(x, y),
            (None, None) => true,
            _ => false,
        }
    })
}

fn sb_eq(
    a: &ferropipe_components::batch::ShaderBufferBinding,
    b: &ferropipe_components::batch::ShaderBufferBinding,
) -> bool {
    Arc::ptr_eq(&a.buffer, &b.buffer)
        && a.offset == b.offset
        && a.size == b.size
        && a.writable == b.writable
}

fn img_eq(
    a: &ferropipe_components::batch::ShaderImageBinding,
    b: &ferropipe_components::batch::ShaderImageBinding,
) -> bool {
    Arc::ptr_eq(&a.resource, &b.resource)
        && a.format == b.format
        && a.level == b.level
        && a.first_layer == b.first_layer
        && a.last_layer == b.last_layer
        && a.buffer_range == b.buffer_range
        && a.access == b.access
}

fn cb_eq(a: &ConstantBufferBinding, b: &ConstantBufferBinding) -> bool {
    opt_eq(&a.buffer, &b.buffer)
        && a.buffer_offset == b.buffer_offset
        && a.buffer_size == b.buffer_size
        && opt_eq(&a.user_buffer, &b.user_buffer)
}

fn ib_eq(a: &IndexBufferBinding, b: &IndexBufferBinding) -> bool {
    opt_eq(&a.buffer, &b.buffer) && a.index_size == b.index_size && a.offset == b.offset
}

/// Slots `0..n` to write when some slot of `len` changed: `n` is one past
/// the last changed slot; `None` when none changed.
fn changed_len(len: usize, same: impl Fn(usize) -> bool) -> Option<usize> {
    (0..len).rev().find(|&k| !same(k)).map(|k| k + 1)
}

/// The range of slots from the first to the last changed one.
fn changed_range(len: usize, same: impl Fn(usize) -> bool) -> Option<(usize, usize)> {
    let lo = (0..len).find(|&k| !same(k))?;
    let hi = (0..len).rev().find(|&k| !same(k))? + 1;
    Some((lo, hi))
}

impl CallRecorder for SceneCapture {
    fn begin(&mut self, ctx: &Context) {
        self.sync_draw(ctx);
        self.sync_compute(ctx);
        if let Some((q, condition, mode)) = ctx.current_render_condition() {
            self.render_condition(Some(&q), condition, mode);
        }
    }

    fn record(&mut self, ctx: &Context, call: &CapturedCall<'_>) {
        if self.error.is_some() {
            return;
        }
        self.refresh_user_memory();
        self.call(ctx, call);
    }

    fn end(&mut self, _ctx: &Context) {
        self.refresh_user_memory();
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}
