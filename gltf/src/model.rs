//! A glTF document turned into ferropipe resources and CSOs, and drawn.

use std::collections::HashMap;
use std::path::Path;

use ferropipe::{
    BindFlags, BlendFactor, BlendHandle, BlendState, BlitInfo, BlitSide, ConstantBuffer, Context,
    DepthStencilAlphaState, DrawInfo, DsaHandle, Face, Format, FsHandle, Func, IndexBuffer,
    PipeBox, PrimType, RasterizerHandle, RasterizerState, Resource, ResourceTemplate,
    SamplerHandle, SamplerState, SamplerViewDesc, SamplerViewHandle, Screen, ShaderCode,
    ShaderState, ShaderType, TexFilter, TexMipFilter, TexWrap, VertexBuffer, VertexElement,
    VertexElementsHandle, VsHandle,
};

use glam::{Mat4, Vec3};
use gltf::accessor::DataType;
use gltf::mesh::{Mode, Semantic};

use crate::accessor;
use crate::camera::{Bounds, Camera, FileCamera, Projection};
use crate::error::{Error, Result};

/// The PBR shader (WGSL), compiled by ferropipe's normal shader path.
pub const PBR_WGSL: &str = include_str!("pbr.wgsl");

/// Vertex input slots of [`PBR_WGSL`], in element order.
const SLOTS: usize = 6;
const SLOT_NAMES: [&str; SLOTS] = [
    "POSITION",
    "NORMAL",
    "TANGENT",
    "TEXCOORD_0",
    "TEXCOORD_1",
    "COLOR_0",
];

/// Stride-0 defaults for absent attributes, as `R32G32B32A32_FLOAT` at
/// these byte offsets: normal (0, 0, 1) (unused: the shader falls back to
/// the face normal, glTF 3.7.2.1 "flat normals"), tangent (1, 0, 0, 1)
/// (unused likewise), texcoords 0, colour white (the multiplicative
/// identity of COLOR_0).
const DEFAULTS: [f32; 16] = [
    0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0,
];
const DEFAULT_OFFSET: [u32; SLOTS] = [0, 0, 16, 32, 32, 48];

/// glTF `alphaMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlphaMode {
    /// Alpha ignored, output alpha 1.
    Opaque,
    /// Fragments with alpha below the cutoff are discarded.
    Mask,
    /// Blended over what is behind, drawn after the opaque primitives
    /// back to front.
    Blend,
}

/// Texture slots of [`PBR_WGSL`].
const TEX_BASE: usize = 0;
const TEX_MR: usize = 1;
const TEX_NORMAL: usize = 2;
const TEX_OCCLUSION: usize = 3;
const TEX_EMISSIVE: usize = 4;

struct MaterialGpu {
    /// `Material` constants (24 floats, see the shader); `alpha.zw` are
    /// patched per primitive.
    constants: [f32; 24],
    views: [SamplerViewHandle; 5],
    samplers: [SamplerHandle; 5],
    alpha: AlphaMode,
    double_sided: bool,
}

struct VertexInput {
    /// Index into `Model::buffers`.
    buffer: usize,
    stride: u32,
    offset: u32,
}

struct IndexInput {
    buffer: usize,
    size: u32,
    offset: u32,
}

struct PrimitiveGpu {
    mode: PrimType,
    elements: VertexElementsHandle,
    inputs: Vec<VertexInput>,
    index: Option<IndexInput>,
    count: u32,
    material: usize,
    has_normals: bool,
    has_tangents: bool,
    /// Object-space bounds of POSITION (its accessor's min/max).
    bounds: Option<Bounds>,
}

/// One primitive of one node, as the draw loop sees it.
#[derive(Clone, Copy)]
struct DrawItem {
    primitive: usize,
    world: Mat4,
    normal_matrix: Mat4,
    /// A negative determinant flips the winding (glTF 3.7.4).
    mirrored: bool,
}

/// Lights and exposure for [`Model::draw`].  Directions point towards the
/// light and are given in view space, so the model stays lit from the
/// viewer's side however the camera orbits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// Key light direction (view space, towards the light).
    pub sun_dir: Vec3,
    /// Key light radiance, linear RGB.
    pub sun_color: Vec3,
    /// Fill light direction (view space).
    pub fill_dir: Vec3,
    /// Fill light radiance.
    pub fill_color: Vec3,
    /// Hemispherical ambient intensity (scaled by the occlusion map).
    pub ambient: f32,
    /// Multiplies the lit colour before tone mapping.
    pub exposure: f32,
}

impl Default for Lighting {
    fn default() -> Self {
        Lighting {
            sun_dir: Vec3::new(-0.4, 0.7, 0.6),
            sun_color: Vec3::splat(3.0),
            fill_dir: Vec3::new(0.7, -0.1, 0.3),
            fill_color: Vec3::new(0.6, 0.65, 0.8),
            ambient: 0.35,
            exposure: 1.0,
        }
    }
}

/// Per-call settings of [`Model::draw`].
#[derive(Clone, Debug)]
pub struct DrawOptions {
    /// The host's rasterizer state; the model overrides `cull_face` (back
    /// for single-sided materials, none for double-sided) and flips
    /// `front_ccw` for mirrored nodes.  `front_ccw` must say how the
    /// host's viewport maps glTF's counter-clockwise front faces, and
    /// `clip_halfz` must match the camera's projection (ours map depth to
    /// 0..1, so it is true).
    pub rasterizer: RasterizerState,
    /// Lights and exposure.
    pub lighting: Lighting,
}

impl Default for DrawOptions {
    fn default() -> Self {
        DrawOptions {
            rasterizer: RasterizerState {
                front_ccw: true,
                clip_halfz: true,
                ..RasterizerState::default()
            },
            lighting: Lighting::default(),
        }
    }
}

/// What one [`Model::draw`] submitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// `draw_vbo` calls.
    pub draws: u32,
    /// Triangles (lines and points count as 0).
    pub triangles: u64,
}

/// A loaded glTF scene: its buffers, textures (with mip chains), samplers,
/// materials and the flattened node hierarchy of the default scene, ready
/// to draw on the context it was loaded with.
///
/// Call [`Model::release`] to delete its CSOs when the context lives on.
pub struct Model {
    vs: VsHandle,
    fs: FsHandle,
    primitives: Vec<PrimitiveGpu>,
    items: Vec<DrawItem>,
    materials: Vec<MaterialGpu>,
    cameras: Vec<FileCamera>,
    bounds: Option<Bounds>,
    buffers: Vec<Resource>,
    textures: Vec<Resource>,
    views: Vec<SamplerViewHandle>,
    samplers: Vec<SamplerHandle>,
    blend_opaque: BlendHandle,
    blend_alpha: BlendHandle,
    dsa_write: DsaHandle,
    dsa_test_only: DsaHandle,
    rasterizers: Vec<(RasterizerState, RasterizerHandle)>,
}

/// Loading state: caches keyed by glTF indices.
struct Loader<'a> {
    screen: &'a Screen,
    ctx: &'a mut Context,
    buffers: &'a [gltf::buffer::Data],
    images: &'a [gltf::image::Data],
    out_buffers: Vec<Resource>,
    view_buffers: HashMap<usize, usize>,
    textures: Vec<Resource>,
    image_views: HashMap<(usize, bool), SamplerViewHandle>,
    views: Vec<SamplerViewHandle>,
    samplers: Vec<SamplerHandle>,
    sampler_cache: HashMap<Option<usize>, SamplerHandle>,
    white: Option<SamplerViewHandle>,
    defaults: Option<usize>,
    materials: Vec<MaterialGpu>,
    /// Index in `materials` of the default material (glTF 3.9.6: white,
    /// metallic 1, roughness 1), created when a primitive first needs it.
    default_material: Option<usize>,
}

impl Model {
    /// Loads a `.gltf` (with its external or data-URI buffers and images)
    /// or a `.glb` file and creates its resources on `screen` / `ctx`.
    pub fn load(screen: &Screen, ctx: &mut Context, path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        // Read the file ourselves first so a missing file reports its own
        // path (the gltf crate's I/O errors carry none).
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        let gltf = gltf::Gltf::from_slice(&bytes).map_err(|e| Error::from_gltf(e, Some(path)))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let buffers = gltf::import_buffers(&gltf.document, Some(base), gltf.blob.clone())
            .map_err(|e| Error::from_gltf(e, Some(path)))?;
        let images = gltf::import_images(&gltf.document, Some(base), &buffers)
            .map_err(|e| Error::from_gltf(e, Some(path)))?;
        Model::from_parts(screen, ctx, &gltf.document, &buffers, &images)
    }

    /// Loads a `.glb` or a self-contained `.gltf` (buffers and images as
    /// GLB chunks or data URIs) from memory.
    pub fn from_slice(screen: &Screen, ctx: &mut Context, bytes: &[u8]) -> Result<Model> {
        let (document, buffers, images) =
            gltf::import_slice(bytes).map_err(|e| Error::from_gltf(e, None))?;
        Model::from_parts(screen, ctx, &document, &buffers, &images)
    }

    /// Creates the model from an imported document.
    pub fn from_parts(
        screen: &Screen,
        ctx: &mut Context,
        doc: &gltf::Document,
        buffers: &[gltf::buffer::Data],
        images: &[gltf::image::Data],
    ) -> Result<Model> {
        let shader = |entry: &str| ShaderState {
            code: ShaderCode::Wgsl {
                code: PBR_WGSL.to_owned(),
                entry_point: entry.to_owned(),
            },
            semantics: Vec::new(),
            stream_output: Default::default(),
        };
        let vs = ctx.create_vs_state(&shader("vs_main"))?;
        let fs = ctx.create_fs_state(&shader("fs_main"))?;
        let mut loader = Loader {
            screen,
            ctx,
            buffers,
            images,
            out_buffers: Vec::new(),
            view_buffers: HashMap::new(),
            textures: Vec::new(),
            image_views: HashMap::new(),
            views: Vec::new(),
            samplers: Vec::new(),
            sampler_cache: HashMap::new(),
            white: None,
            defaults: None,
            materials: Vec::new(),
            default_material: None,
        };
        for m in doc.materials() {
            let gpu = loader.material(&m)?;
            loader.materials.push(gpu);
        }

        let mut primitives = Vec::new();
        let mut mesh_prims: Vec<Vec<usize>> = Vec::new();
        for mesh in doc.meshes() {
            let mut ids = Vec::new();
            for p in mesh.primitives() {
                ids.push(primitives.len());
                primitives.push(loader.primitive(&mesh, &p)?);
            }
            mesh_prims.push(ids);
        }

        let mut items = Vec::new();
        let mut cameras = Vec::new();
        let scene = doc.default_scene().or_else(|| doc.scenes().next());
        if let Some(scene) = scene {
            for node in scene.nodes() {
                walk(
                    &node,
                    Mat4::IDENTITY,
                    &mesh_prims,
                    &mut items,
                    &mut cameras,
                    0,
                )?;
            }
        }
        let mut bounds: Option<Bounds> = None;
        for it in &items {
            if let Some(b) = primitives[it.primitive].bounds {
                let wb = b.transformed(&it.world);
                bounds = Some(bounds.map_or(wb, |a| a.union(&wb)));
            }
        }

        let Loader {
            ctx,
            materials,
            out_buffers,
            textures,
            views,
            samplers,
            ..
        } = loader;
        let mut opaque = BlendState::default();
        opaque.rt[0].colormask = 0xf;
        let mut alpha = opaque.clone();
        let rt = &mut alpha.rt[0];
        rt.blend_enable = true;
        rt.rgb_src_factor = BlendFactor::SrcAlpha;
        rt.rgb_dst_factor = BlendFactor::InvSrcAlpha;
        rt.alpha_src_factor = BlendFactor::One;
        rt.alpha_dst_factor = BlendFactor::InvSrcAlpha;
        let dsa = |write| DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: write,
            depth_func: Func::Less,
            ..DepthStencilAlphaState::default()
        };
        Ok(Model {
            vs,
            fs,
            primitives,
            items,
            materials,
            cameras,
            bounds,
            buffers: out_buffers,
            textures,
            views,
            samplers,
            blend_opaque: ctx.create_blend_state(&opaque)?,
            blend_alpha: ctx.create_blend_state(&alpha)?,
            dsa_write: ctx.create_depth_stencil_alpha_state(&dsa(true))?,
            dsa_test_only: ctx.create_depth_stencil_alpha_state(&dsa(false))?,
            rasterizers: Vec::new(),
        })
    }

    /// World-space bounds of the default scene's meshes (from the POSITION
    /// accessors' min/max), `None` when it draws nothing.
    pub fn bounds(&self) -> Option<Bounds> {
        self.bounds
    }

    /// The cameras the default scene's nodes carry, in traversal order.
    pub fn cameras(&self) -> &[FileCamera] {
        &self.cameras
    }

    /// Primitives drawn per frame (one per node and mesh primitive).
    pub fn draw_count(&self) -> usize {
        self.items.len()
    }

    /// The scene's first camera, or else a camera framing its bounds from
    /// the front and slightly above.
    pub fn default_camera(&self, aspect: f32) -> Camera {
        match self.cameras.first() {
            Some(c) => c.camera(aspect),
            None => self.framing_camera(aspect, 0.0, 0.3),
        }
    }

    /// A perspective camera (50° vertical field of view) looking at the
    /// bounds' centre from `yaw` radians around +y and `pitch` above the
    /// horizon, far enough back that the bounding sphere fits the view.
    pub fn framing_camera(&self, aspect: f32, yaw: f32, pitch: f32) -> Camera {
        let b = self.bounds.unwrap_or(Bounds {
            min: Vec3::splat(-1.0),
            max: Vec3::splat(1.0),
        });
        Camera::framing(&b, aspect, yaw, pitch, 50f32.to_radians())
    }

    /// Records the model's draws on `ctx` with `camera`.  The host has set
    /// the framebuffer (with a depth buffer), the viewport and any clears;
    /// the model binds its own shaders, vertex state, constants, textures,
    /// samplers, blend, depth and rasterizer states (and leaves them
    /// bound).  Opaque and MASK primitives go first; BLEND ones follow,
    /// back to front by their bounds' centre in view space.
    pub fn draw(
        &mut self,
        ctx: &mut Context,
        camera: &Camera,
        options: &DrawOptions,
    ) -> Result<DrawStats> {
        let view_proj = camera.proj * camera.view;
        let to_world = camera.view.inverse();
        let l = &options.lighting;
        let dir = |d: Vec3| to_world.transform_vector3(d).normalize_or_zero();
        let eye = camera.eye();
        let lights: [f32; 24] = [
            eye.x,
            eye.y,
            eye.z,
            1.0, //
            dir(l.sun_dir).x,
            dir(l.sun_dir).y,
            dir(l.sun_dir).z,
            0.0, //
            l.sun_color.x,
            l.sun_color.y,
            l.sun_color.z,
            0.0, //
            dir(l.fill_dir).x,
            dir(l.fill_dir).y,
            dir(l.fill_dir).z,
            0.0, //
            l.fill_color.x,
            l.fill_color.y,
            l.fill_color.z,
            0.0, //
            l.ambient,
            l.exposure,
            0.0,
            0.0,
        ];
        ctx.bind_vs_state(Some(self.vs))?;
        ctx.bind_fs_state(Some(self.fs))?;
        ctx.set_constant_buffer(
            ShaderType::Fragment,
            0,
            Some(ConstantBuffer::User(&f32_bytes(&lights))),
        )?;

        let mut order: Vec<DrawItem> = Vec::with_capacity(self.items.len());
        let mut blended: Vec<(f32, DrawItem)> = Vec::new();
        for it in &self.items {
            let p = &self.primitives[it.primitive];
            if self.materials[p.material].alpha == AlphaMode::Blend {
                let centre = p.bounds.map_or(Vec3::ZERO, |b| (b.min + b.max) * 0.5);
                let z = (camera.view * it.world).transform_point3(centre).z;
                blended.push((z, *it));
            } else {
                order.push(*it);
            }
        }
        // Right-handed view space looks down -z: the most negative z is
        // the farthest, drawn first.  The sort is stable, so equal depths
        // keep file order.
        blended.sort_by(|a, b| a.0.total_cmp(&b.0));
        order.extend(blended.into_iter().map(|(_, it)| it));

        let mut stats = DrawStats::default();
        for it in order {
            let p = &self.primitives[it.primitive];
            let m = &self.materials[p.material];
            let node = [
                view_proj.to_cols_array(),
                it.world.to_cols_array(),
                it.normal_matrix.to_cols_array(),
            ]
            .concat();
            ctx.set_constant_buffer(
                ShaderType::Vertex,
                0,
                Some(ConstantBuffer::User(&f32_bytes(&node))),
            )?;
            let mut mc = m.constants;
            mc[14] = if p.has_normals { 1.0 } else { 0.0 };
            mc[15] = if p.has_tangents { 1.0 } else { 0.0 };
            ctx.set_constant_buffer(
                ShaderType::Fragment,
                1,
                Some(ConstantBuffer::User(&f32_bytes(&mc))),
            )?;
            let views: Vec<Option<SamplerViewHandle>> = m.views.iter().map(|v| Some(*v)).collect();
            ctx.set_sampler_views(ShaderType::Fragment, 0, &views)?;
            let samplers: Vec<Option<SamplerHandle>> =
                m.samplers.iter().map(|s| Some(*s)).collect();
            ctx.bind_sampler_states(ShaderType::Fragment, 0, &samplers)?;
            let blend = m.alpha == AlphaMode::Blend;
            ctx.bind_blend_state(Some(if blend {
                self.blend_alpha
            } else {
                self.blend_opaque
            }))?;
            ctx.bind_depth_stencil_alpha_state(Some(if blend {
                self.dsa_test_only
            } else {
                self.dsa_write
            }))?;
            let mut rs = options.rasterizer;
            rs.cull_face = if m.double_sided {
                Face::None
            } else {
                Face::Back
            };
            rs.front_ccw ^= it.mirrored;
            let rh = match self.rasterizers.iter().find(|(s, _)| *s == rs) {
                Some((_, h)) => *h,
                None => {
                    let h = ctx.create_rasterizer_state(&rs)?;
                    self.rasterizers.push((rs, h));
                    h
                }
            };
            ctx.bind_rasterizer_state(Some(rh))?;
            ctx.bind_vertex_elements_state(Some(p.elements))?;
            let vbs: Vec<VertexBuffer> = p
                .inputs
                .iter()
                .map(|i| VertexBuffer {
                    buffer: Some(&self.buffers[i.buffer]),
                    stride: i.stride,
                    buffer_offset: i.offset,
                })
                .collect();
            ctx.set_vertex_buffers(0, &vbs)?;
            if let Some(ix) = &p.index {
                ctx.set_index_buffer(Some(IndexBuffer {
                    buffer: &self.buffers[ix.buffer],
                    index_size: ix.size,
                    offset: ix.offset,
                }))?;
            }
            ctx.draw_vbo(&DrawInfo {
                mode: p.mode,
                count: p.count,
                indexed: p.index.is_some(),
                instance_count: 1,
                ..DrawInfo::default()
            })?;
            stats.draws += 1;
            stats.triangles += triangles(p.mode, p.count);
        }
        Ok(stats)
    }

    /// Deletes the model's CSOs, views and shaders from `ctx` (the one it
    /// was loaded on).  Resources go when the last reference drops.
    pub fn release(self, ctx: &mut Context) {
        let _ = ctx.delete_vs_state(self.vs);
        let _ = ctx.delete_fs_state(self.fs);
        for p in self.primitives {
            let _ = ctx.delete_vertex_elements_state(p.elements);
        }
        for v in self.views {
            let _ = ctx.sampler_view_destroy(v);
        }
        for s in self.samplers {
            let _ = ctx.delete_sampler_state(s);
        }
        let _ = ctx.delete_blend_state(self.blend_opaque);
        let _ = ctx.delete_blend_state(self.blend_alpha);
        let _ = ctx.delete_depth_stencil_alpha_state(self.dsa_write);
        let _ = ctx.delete_depth_stencil_alpha_state(self.dsa_test_only);
        for (_, r) in self.rasterizers {
            let _ = ctx.delete_rasterizer_state(r);
        }
        drop(self.textures);
        drop(self.buffers);
    }
}

fn triangles(mode: PrimType, count: u32) -> u64 {
    let c = u64::from(count);
    match mode {
        PrimType::Triangles => c / 3,
        PrimType::TriangleStrip | PrimType::TriangleFan => c.saturating_sub(2),
        _ => 0,
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// Flattens the node hierarchy (glTF 3.5.3: a node's world matrix is its
/// parent's times its local matrix).
fn walk(
    node: &gltf::Node<'_>,
    parent: Mat4,
    mesh_prims: &[Vec<usize>],
    items: &mut Vec<DrawItem>,
    cameras: &mut Vec<FileCamera>,
    depth: usize,
) -> Result<()> {
    // The specification forbids cycles; a malformed file could still nest
    // without end.
    if depth > 256 {
        return Err(Error::Invalid(format!(
            "node {} is nested more than 256 deep",
            node.index()
        )));
    }
    let world = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
    if node.skin().is_some() {
        return Err(Error::unsupported(format!(
            "skinning (node {} has a skin)",
            node.index()
        )));
    }
    if let Some(mesh) = node.mesh() {
        if node.weights().is_some_and(|w| !w.is_empty()) {
            return Err(Error::unsupported(format!(
                "morph targets (node {} has morph weights)",
                node.index()
            )));
        }
        let det = world.determinant();
        let normal_matrix = if det.abs() > f32::MIN_POSITIVE {
            world.inverse().transpose()
        } else {
            world
        };
        for &primitive in &mesh_prims[mesh.index()] {
            items.push(DrawItem {
                primitive,
                world,
                normal_matrix,
                mirrored: det < 0.0,
            });
        }
    }
    if let Some(cam) = node.camera() {
        let projection = match cam.projection() {
            gltf::camera::Projection::Perspective(p) => Projection::Perspective {
                yfov: p.yfov(),
                aspect_ratio: p.aspect_ratio(),
                znear: p.znear(),
                zfar: p.zfar(),
            },
            gltf::camera::Projection::Orthographic(o) => Projection::Orthographic {
                xmag: o.xmag(),
                ymag: o.ymag(),
                znear: o.znear(),
                zfar: o.zfar(),
            },
        };
        cameras.push(FileCamera {
            name: cam.name().map(str::to_owned),
            world,
            projection,
        });
    }
    for child in node.children() {
        walk(&child, world, mesh_prims, items, cameras, depth + 1)?;
    }
    Ok(())
}

impl Loader<'_> {
    fn buffer(&mut self, bytes: &[u8]) -> Result<usize> {
        let size = u32::try_from(bytes.len().max(4))
            .map_err(|_| Error::Invalid(format!("a {}-byte buffer", bytes.len())))?;
        let res = self.screen.resource_create(&ResourceTemplate::buffer(
            size,
            BindFlags::VERTEX_BUFFER | BindFlags::INDEX_BUFFER,
        ))?;
        if !bytes.is_empty() {
            self.ctx.buffer_subdata(&res, 0, bytes)?;
        }
        self.out_buffers.push(res);
        Ok(self.out_buffers.len() - 1)
    }

    /// The ferropipe buffer holding `view`'s bytes (one per view).
    fn view_buffer(&mut self, view: &gltf::buffer::View<'_>) -> Result<usize> {
        if let Some(&b) = self.view_buffers.get(&view.index()) {
            return Ok(b);
        }
        let data = self
            .buffers
            .get(view.buffer().index())
            .map(|d| d.0.as_slice())
            .unwrap_or(&[]);
        let bytes = data
            .get(view.offset()..view.offset() + view.length())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "bufferView {} lies outside buffer {}",
                    view.index(),
                    view.buffer().index()
                ))
            })?;
        let b = self.buffer(bytes)?;
        self.view_buffers.insert(view.index(), b);
        Ok(b)
    }

    fn defaults(&mut self) -> Result<usize> {
        if let Some(d) = self.defaults {
            return Ok(d);
        }
        let d = self.buffer(&f32_bytes(&DEFAULTS))?;
        self.defaults = Some(d);
        Ok(d)
    }

    /// A vertex input for `acc`: its view directly with the matching
    /// Gallium format, or converted floats where no format or view fits.
    fn attribute(&mut self, acc: &gltf::Accessor<'_>) -> Result<(VertexInput, Format)> {
        let n = accessor::components(acc.dimensions());
        if n > 4 {
            return Err(Error::Invalid(format!(
                "accessor {}: a matrix used as a vertex attribute",
                acc.index()
            )));
        }
        let direct = accessor::vertex_format(n, acc.data_type(), acc.normalized());
        if let (Some(format), None, Some(view)) = (direct, acc.sparse(), acc.view())
            && let Some((_, stride)) = accessor::view_bytes(acc, self.buffers)?
        {
            let buffer = self.view_buffer(&view)?;
            return Ok((
                VertexInput {
                    buffer,
                    stride: stride as u32,
                    offset: acc.offset() as u32,
                },
                format,
            ));
        }
        let floats = accessor::read_f32(acc, self.buffers)?;
        let buffer = self.buffer(&f32_bytes(&floats))?;
        Ok((
            VertexInput {
                buffer,
                stride: (n * 4) as u32,
                offset: 0,
            },
            accessor::float_format(n),
        ))
    }

    fn primitive(
        &mut self,
        mesh: &gltf::Mesh<'_>,
        p: &gltf::Primitive<'_>,
    ) -> Result<PrimitiveGpu> {
        let at = || format!("mesh {} primitive {}", mesh.index(), p.index());
        if p.morph_targets().next().is_some() {
            return Err(Error::unsupported(format!("morph targets ({})", at())));
        }
        let mut accs: [Option<gltf::Accessor<'_>>; SLOTS] = Default::default();
        for (sem, acc) in p.attributes() {
            let slot = match sem {
                Semantic::Positions => 0,
                Semantic::Normals => 1,
                Semantic::Tangents => 2,
                Semantic::TexCoords(0) => 3,
                Semantic::TexCoords(1) => 4,
                Semantic::Colors(0) => 5,
                Semantic::Joints(_) | Semantic::Weights(_) => {
                    return Err(Error::unsupported(format!(
                        "skinning ({} has {sem:?})",
                        at()
                    )));
                }
                // Further texcoord and colour sets no material of this
                // loader reads (material texCoord > 1 is rejected there).
                _ => continue,
            };
            accs[slot] = Some(acc);
        }
        let Some(position) = accs[0].clone() else {
            // glTF 3.7.2.1: without POSITION the primitive draws nothing
            // it can define; the specification leaves it to the client.
            return Err(Error::unsupported(format!("{}: no POSITION", at())));
        };
        let count = position.count();
        let mut inputs = Vec::with_capacity(SLOTS);
        let mut elements = Vec::with_capacity(SLOTS);
        for (slot, acc) in accs.iter().enumerate() {
            let (input, format) = match acc {
                Some(acc) => {
                    if acc.count() != count {
                        return Err(Error::Invalid(format!(
                            "{}: {} has {} elements, POSITION {count}",
                            at(),
                            SLOT_NAMES[slot],
                            acc.count()
                        )));
                    }
                    self.attribute(acc)?
                }
                None => (
                    VertexInput {
                        buffer: self.defaults()?,
                        stride: 0,
                        offset: DEFAULT_OFFSET[slot],
                    },
                    Format::R32G32B32A32_FLOAT,
                ),
            };
            elements.push(VertexElement {
                src_offset: 0,
                vertex_buffer_index: slot as u32,
                src_format: format,
                instance_divisor: 0,
            });
            inputs.push(input);
        }
        let elements = self.ctx.create_vertex_elements_state(&elements)?;
        let mode = match p.mode() {
            Mode::Points => PrimType::Points,
            Mode::Lines => PrimType::Lines,
            Mode::LineLoop => PrimType::LineLoop,
            Mode::LineStrip => PrimType::LineStrip,
            Mode::Triangles => PrimType::Triangles,
            Mode::TriangleStrip => PrimType::TriangleStrip,
            Mode::TriangleFan => PrimType::TriangleFan,
        };
        let (index, count) = match p.indices() {
            Some(acc) => {
                let size = match acc.data_type() {
                    DataType::U8 => 1,
                    DataType::U16 => 2,
                    DataType::U32 => 4,
                    other => {
                        return Err(Error::Invalid(format!(
                            "{}: indices of type {other:?}",
                            at()
                        )));
                    }
                };
                let direct = match (acc.sparse(), acc.view()) {
                    (None, Some(view)) => {
                        accessor::view_bytes(&acc, self.buffers)?.map(|_| (view, acc.offset()))
                    }
                    _ => None,
                };
                let index = match direct {
                    Some((view, offset)) => IndexInput {
                        buffer: self.view_buffer(&view)?,
                        size,
                        offset: offset as u32,
                    },
                    None => {
                        let ix = accessor::read_indices(&acc, self.buffers)?;
                        let bytes: Vec<u8> = ix.iter().flat_map(|i| i.to_le_bytes()).collect();
                        IndexInput {
                            buffer: self.buffer(&bytes)?,
                            size: 4,
                            offset: 0,
                        }
                    }
                };
                (Some(index), acc.count())
            }
            None => (None, count),
        };
        let bounds = match (position.min(), position.max()) {
            (Some(min), Some(max)) => vec3_of(&min)
                .zip(vec3_of(&max))
                .map(|(min, max)| Bounds { min, max }),
            _ => {
                // POSITION must carry min/max (3.7.2.1); compute them if not.
                let f = accessor::read_f32(&position, self.buffers)?;
                let n = accessor::components(position.dimensions());
                Bounds::of_points(f.chunks_exact(n).map(|c| Vec3::new(c[0], c[1], c[2])))
            }
        };
        let material = match p.material().index() {
            Some(i) => i,
            None => match self.default_material {
                Some(d) => d,
                None => {
                    // `Primitive::material` is the default material here.
                    let gpu = self.material(&p.material())?;
                    self.materials.push(gpu);
                    self.default_material = Some(self.materials.len() - 1);
                    self.materials.len() - 1
                }
            },
        };
        Ok(PrimitiveGpu {
            mode,
            elements,
            inputs,
            index,
            count: u32::try_from(count)
                .map_err(|_| Error::Invalid(format!("{}: {count} vertices", at())))?,
            material,
            has_normals: accs[1].is_some(),
            has_tangents: accs[2].is_some(),
            bounds,
        })
    }

    fn material(&mut self, m: &gltf::Material<'_>) -> Result<MaterialGpu> {
        let what = || match m.index() {
            Some(i) => format!("material {i}"),
            None => "the default material".to_owned(),
        };
        let pbr = m.pbr_metallic_roughness();
        let mut views = [None; 5];
        let mut samplers = [None; 5];
        let mut sets = [0.0f32; 5];
        let mut slot = |s: usize,
                        tex: Option<(gltf::Texture<'_>, u32)>,
                        srgb: bool,
                        this: &mut Self|
         -> Result<()> {
            if let Some((t, set)) = tex {
                if set > 1 {
                    return Err(Error::unsupported(format!(
                        "TEXCOORD_{set} ({}: only sets 0 and 1 are drawn)",
                        what()
                    )));
                }
                let (v, smp) = this.texture(&t, srgb)?;
                views[s] = Some(v);
                samplers[s] = Some(smp);
                sets[s] = set as f32;
            }
            Ok(())
        };
        slot(
            TEX_BASE,
            pbr.base_color_texture()
                .map(|i| (i.texture(), i.tex_coord())),
            true,
            self,
        )?;
        slot(
            TEX_MR,
            pbr.metallic_roughness_texture()
                .map(|i| (i.texture(), i.tex_coord())),
            false,
            self,
        )?;
        let normal = m.normal_texture();
        slot(
            TEX_NORMAL,
            normal.as_ref().map(|i| (i.texture(), i.tex_coord())),
            false,
            self,
        )?;
        let occlusion = m.occlusion_texture();
        slot(
            TEX_OCCLUSION,
            occlusion.as_ref().map(|i| (i.texture(), i.tex_coord())),
            false,
            self,
        )?;
        slot(
            TEX_EMISSIVE,
            m.emissive_texture().map(|i| (i.texture(), i.tex_coord())),
            true,
            self,
        )?;
        let white = self.white()?;
        let default_sampler = self.sampler(None)?;
        let views = views.map(|v| v.unwrap_or(white));
        let samplers = samplers.map(|s| s.unwrap_or(default_sampler));
        let alpha = match m.alpha_mode() {
            gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
            gltf::material::AlphaMode::Mask => AlphaMode::Mask,
            gltf::material::AlphaMode::Blend => AlphaMode::Blend,
        };
        let bc = pbr.base_color_factor();
        let strength = m.emissive_strength().unwrap_or(1.0);
        let e = m.emissive_factor().map(|c| c * strength);
        let constants = [
            bc[0],
            bc[1],
            bc[2],
            bc[3],
            e[0],
            e[1],
            e[2],
            0.0,
            pbr.metallic_factor(),
            pbr.roughness_factor(),
            normal.as_ref().map_or(1.0, |n| n.scale()),
            occlusion.as_ref().map_or(0.0, |o| o.strength()),
            match alpha {
                AlphaMode::Opaque => 0.0,
                AlphaMode::Mask => 1.0,
                AlphaMode::Blend => 2.0,
            },
            m.alpha_cutoff().unwrap_or(0.5),
            0.0,
            0.0,
            sets[TEX_BASE],
            sets[TEX_MR],
            sets[TEX_NORMAL],
            sets[TEX_OCCLUSION],
            sets[TEX_EMISSIVE],
            if normal.is_some() { 1.0 } else { 0.0 },
            0.0,
            0.0,
        ];
        Ok(MaterialGpu {
            constants,
            views,
            samplers,
            alpha,
            double_sided: m.double_sided(),
        })
    }

    /// A 1x1 white texture: the identity for every map's multiply.
    fn white(&mut self) -> Result<SamplerViewHandle> {
        if let Some(w) = self.white {
            return Ok(w);
        }
        let v = self.upload_texture(1, 1, &[255; 4], Format::R8G8B8A8_UNORM)?;
        self.white = Some(v);
        Ok(v)
    }

    fn texture(
        &mut self,
        t: &gltf::Texture<'_>,
        srgb: bool,
    ) -> Result<(SamplerViewHandle, SamplerHandle)> {
        let image = t.source().index();
        let view = match self.image_views.get(&(image, srgb)) {
            Some(&v) => v,
            None => {
                let data = self.images.get(image).ok_or_else(|| {
                    Error::Invalid(format!("texture {} names image {image}", t.index()))
                })?;
                let rgba = rgba8(data).ok_or_else(|| {
                    Error::unsupported(format!("image {image}: pixel format {:?}", data.format))
                })?;
                let format = if srgb {
                    Format::R8G8B8A8_SRGB
                } else {
                    Format::R8G8B8A8_UNORM
                };
                let v = self.upload_texture(data.width, data.height, &rgba, format)?;
                self.image_views.insert((image, srgb), v);
                v
            }
        };
        let sampler = self.sampler(Some(t.sampler()))?;
        Ok((view, sampler))
    }

    /// Creates a texture with a full mip chain: level 0 uploaded, each
    /// further level a linear-filtered `blit` of the one above (filtered in
    /// linear light for sRGB formats, as the blit decodes them).
    fn upload_texture(
        &mut self,
        width: u32,
        height: u32,
        rgba: &[u8],
        format: Format,
    ) -> Result<SamplerViewHandle> {
        let levels = 32 - width.max(height).max(1).leading_zeros();
        let templ = ResourceTemplate {
            last_level: levels - 1,
            ..ResourceTemplate::texture_2d(
                format,
                width,
                height,
                BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
            )
        };
        let res = self.screen.resource_create(&templ)?;
        self.ctx.texture_subdata(
            &res,
            0,
            &PipeBox::new_2d(0, 0, width as i32, height as i32),
            rgba,
            0,
            0,
        )?;
        for level in 1..levels {
            let size = |l: u32| ((width >> l).max(1) as i32, (height >> l).max(1) as i32);
            let (sw, sh) = size(level - 1);
            let (dw, dh) = size(level);
            let mut info = BlitInfo::new(
                BlitSide::new(&res, level, PipeBox::new_2d(0, 0, dw, dh)),
                BlitSide::new(&res, level - 1, PipeBox::new_2d(0, 0, sw, sh)),
            );
            info.mask = ferropipe::BlitMask::RGBA;
            info.filter = TexFilter::Linear;
            self.ctx.blit(&info)?;
        }
        let view = self
            .ctx
            .create_sampler_view(&res, &SamplerViewDesc::of_resource(&templ))?;
        self.textures.push(res);
        self.views.push(view);
        Ok(view)
    }

    /// The Gallium sampler state for a glTF sampler (`None`: the one for
    /// textures without a sampler and the white default).  glTF leaves
    /// undefined filters to the client; these use trilinear filtering.
    fn sampler(&mut self, s: Option<gltf::texture::Sampler<'_>>) -> Result<SamplerHandle> {
        let key = s.as_ref().and_then(|s| s.index());
        if let Some(&h) = self.sampler_cache.get(&key) {
            return Ok(h);
        }
        use gltf::texture::{MagFilter, MinFilter, WrappingMode};
        let wrap = |w: WrappingMode| match w {
            WrappingMode::ClampToEdge => TexWrap::ClampToEdge,
            WrappingMode::MirroredRepeat => TexWrap::MirrorRepeat,
            WrappingMode::Repeat => TexWrap::Repeat,
        };
        let mut state = SamplerState {
            min_img_filter: TexFilter::Linear,
            mag_img_filter: TexFilter::Linear,
            min_mip_filter: TexMipFilter::Linear,
            ..SamplerState::default()
        };
        if let Some(s) = &s {
            state.wrap_s = wrap(s.wrap_s());
            state.wrap_t = wrap(s.wrap_t());
            if let Some(mag) = s.mag_filter() {
                state.mag_img_filter = match mag {
                    MagFilter::Nearest => TexFilter::Nearest,
                    MagFilter::Linear => TexFilter::Linear,
                };
            }
            if let Some(min) = s.min_filter() {
                let (img, mip) = match min {
                    MinFilter::Nearest => (TexFilter::Nearest, TexMipFilter::None),
                    MinFilter::Linear => (TexFilter::Linear, TexMipFilter::None),
                    MinFilter::NearestMipmapNearest => (TexFilter::Nearest, TexMipFilter::Nearest),
                    MinFilter::LinearMipmapNearest => (TexFilter::Linear, TexMipFilter::Nearest),
                    MinFilter::NearestMipmapLinear => (TexFilter::Nearest, TexMipFilter::Linear),
                    MinFilter::LinearMipmapLinear => (TexFilter::Linear, TexMipFilter::Linear),
                };
                state.min_img_filter = img;
                state.min_mip_filter = mip;
            }
        }
        let h = self.ctx.create_sampler_state(&state)?;
        self.samplers.push(h);
        self.sampler_cache.insert(key, h);
        Ok(h)
    }
}

fn vec3_of(v: &gltf::json::Value) -> Option<Vec3> {
    let a = v.as_array()?;
    let f = |i: usize| a.get(i).and_then(|x| x.as_f64()).map(|x| x as f32);
    Some(Vec3::new(f(0)?, f(1)?, f(2)?))
}

/// Decoded image pixels as RGBA8 (PNG/JPEG greyscale expands to grey,
/// 16-bit channels keep their high byte rounded; the texture is sampled
/// at 8 bits per channel).
fn rgba8(d: &gltf::image::Data) -> Option<Vec<u8>> {
    use gltf::image::Format as F;
    let px = d.width as usize * d.height as usize;
    let p = &d.pixels;
    let u16s = |i: usize| {
        let v = u16::from_le_bytes([p[2 * i], p[2 * i + 1]]);
        ((u32::from(v) * 255 + 32767) / 65535) as u8
    };
    let f32s = |i: usize| {
        let v = f32::from_le_bytes([p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]]);
        (v.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    let (n, get): (usize, &dyn Fn(usize) -> u8) = match d.format {
        F::R8 => (1, &|i| p[i]),
        F::R8G8 => (2, &|i| p[i]),
        F::R8G8B8 => (3, &|i| p[i]),
        F::R8G8B8A8 => (4, &|i| p[i]),
        F::R16 => (1, &u16s),
        F::R16G16 => (2, &u16s),
        F::R16G16B16 => (3, &u16s),
        F::R16G16B16A16 => (4, &u16s),
        F::R32G32B32FLOAT => (3, &f32s),
        F::R32G32B32A32FLOAT => (4, &f32s),
    };
    let needed = px
        * n
        * match d.format {
            F::R16 | F::R16G16 | F::R16G16B16 | F::R16G16B16A16 => 2,
            F::R32G32B32FLOAT | F::R32G32B32A32FLOAT => 4,
            _ => 1,
        };
    if p.len() < needed {
        return None;
    }
    let mut out = Vec::with_capacity(px * 4);
    for i in 0..px {
        let c = |k: usize| get(i * n + k);
        let px4 = match n {
            1 => [c(0), c(0), c(0), 255],
            2 => [c(0), c(0), c(0), c(1)],
            3 => [c(0), c(1), c(2), 255],
            _ => [c(0), c(1), c(2), c(3)],
        };
        out.extend_from_slice(&px4);
    }
    Some(out)
}

impl Bounds {
    fn of_points(points: impl Iterator<Item = Vec3>) -> Option<Bounds> {
        points.fold(None, |acc: Option<Bounds>, p| {
            Some(match acc {
                Some(b) => Bounds {
                    min: b.min.min(p),
                    max: b.max.max(p),
                },
                None => Bounds { min: p, max: p },
            })
        })
    }

    fn transformed(&self, m: &Mat4) -> Bounds {
        let corners = (0..8).map(|i| {
            let c = Vec3::new(
                if i & 1 == 0 { self.min.x } else { self.max.x },
                if i & 2 == 0 { self.min.y } else { self.max.y },
                if i & 4 == 0 { self.min.z } else { self.max.z },
            );
            (*m * c.extend(1.0)).truncate()
        });
        Bounds::of_points(corners).unwrap_or(*self)
    }

    fn union(&self, o: &Bounds) -> Bounds {
        Bounds {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}
