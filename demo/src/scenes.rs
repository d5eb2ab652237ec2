//! The built-in showcase scenes, written against the Gallium façade with
//! Rust-native shaders ([`crate::shaders`]).

use ferropipe::ShaderType;
use ferropipe::{Context, Resource, Result, Screen};
use glam::{Mat4, Vec3, Vec4};

use crate::gfx::{self, MeshBuffers, Program};
use crate::mesh::{Mesh, Vertex};
use crate::shaders::{FieldVs, FieldVsConstants, LitFs, LitFsConstants, MeshVs, MeshVsConstants};

/// Which built-in scene to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum SceneKind {
    /// A lit torus knot with an orbit camera.
    Mesh,
    /// Thousands of instanced, spinning cubes.
    Field,
    /// A torus whose triangle count is adjustable live.
    Stress,
}

impl SceneKind {
    pub const ALL: [SceneKind; 3] = [SceneKind::Mesh, SceneKind::Field, SceneKind::Stress];

    pub fn label(self) -> &'static str {
        match self {
            SceneKind::Mesh => "Lit mesh",
            SceneKind::Field => "Instanced field",
            SceneKind::Stress => "Stress",
        }
    }
}

/// Scene parameters the side panel edits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneParams {
    /// Field: cubes per side of the square grid (instances = side²).
    pub field_side: u32,
    /// Stress: requested triangle count.
    pub stress_triangles: u32,
}

impl Default for SceneParams {
    fn default() -> Self {
        SceneParams {
            field_side: 64,
            stress_triangles: 200_000,
        }
    }
}

/// What a scene needs to draw one frame.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput {
    pub view_proj: Mat4,
    pub eye: Vec3,
    /// Seconds since the scene started.
    pub time: f32,
    pub params: SceneParams,
}

/// A built-in scene: owns its buffers and CSOs in one context.
pub trait Showcase {
    /// Records the scene's draws.  The frame's framebuffer, viewport,
    /// rasterizer and clears are already set up.
    fn draw(&mut self, screen: &Screen, ctx: &mut Context, frame: &FrameInput) -> Result<()>;

    /// Triangles submitted per frame (for the overlay when the pipeline's
    /// own counters are not available).
    fn triangles(&self) -> u64;

    /// Deletes the scene's CSOs.
    fn release(self: Box<Self>, ctx: &mut Context);
}

/// Creates a built-in scene in `ctx`.
pub fn create(
    kind: SceneKind,
    screen: &Screen,
    ctx: &mut Context,
    params: &SceneParams,
) -> Result<Box<dyn Showcase>> {
    Ok(match kind {
        SceneKind::Mesh => Box::new(MeshScene::new(
            screen,
            ctx,
            Mesh::torus_knot(2, 3, 256, 24, 0.16),
        )?),
        SceneKind::Field => Box::new(FieldScene::new(screen, ctx, params.field_side)?),
        SceneKind::Stress => Box::new(StressScene::new(screen, ctx, params.stress_triangles)?),
    })
}

fn mesh_elements() -> Vec<ferropipe::VertexElement> {
    Vertex::ELEMENTS
        .iter()
        .map(|&(offset, n)| gfx::float_element(0, offset, n, false))
        .collect()
}

fn lit_constants(eye: Vec3, base_color: Vec4) -> Vec<u8> {
    LitFsConstants {
        camera_pos: eye,
        base_color,
        ..Default::default()
    }
    .to_bytes()
}

/// A lit mesh: the torus knot showcase, and the body of the stress scene.
pub struct MeshScene {
    program: Program,
    buffers: MeshBuffers,
    triangles: u64,
    color: Vec4,
}

impl MeshScene {
    pub fn new(screen: &Screen, ctx: &mut Context, mesh: Mesh) -> Result<Self> {
        Ok(MeshScene {
            program: Program::new(ctx, MeshVs::new(), LitFs::new(), &mesh_elements())?,
            buffers: MeshBuffers::upload(screen, ctx, &mesh)?,
            triangles: mesh.triangles() as u64,
            color: Vec4::new(0.95, 0.55, 0.2, 1.0),
        })
    }
}

impl Showcase for MeshScene {
    fn draw(&mut self, _screen: &Screen, ctx: &mut Context, frame: &FrameInput) -> Result<()> {
        let model = Mat4::from_rotation_y(frame.time * 0.3);
        self.program.bind(ctx)?;
        gfx::set_constants(
            ctx,
            ShaderType::Vertex,
            &MeshVsConstants::new(frame.view_proj, model).to_bytes(),
        )?;
        gfx::set_constants(
            ctx,
            ShaderType::Fragment,
            &lit_constants(frame.eye, self.color),
        )?;
        gfx::set_vertex_buffers(ctx, &[(&self.buffers.vertices, Vertex::STRIDE)])?;
        gfx::set_index_buffer(ctx, &self.buffers.indices)?;
        gfx::draw_indexed(ctx, self.buffers.index_count, 1)
    }

    fn triangles(&self) -> u64 {
        self.triangles
    }

    fn release(self: Box<Self>, ctx: &mut Context) {
        self.program.delete(ctx);
    }
}

/// A torus with a live-adjustable triangle count.
pub struct StressScene {
    inner: MeshScene,
    requested: u32,
}

impl StressScene {
    pub fn new(screen: &Screen, ctx: &mut Context, triangles: u32) -> Result<Self> {
        let mut inner = MeshScene::new(screen, ctx, Mesh::torus_with_triangles(triangles))?;
        inner.color = Vec4::new(0.35, 0.7, 0.95, 1.0);
        Ok(StressScene {
            inner,
            requested: triangles,
        })
    }
}

impl Showcase for StressScene {
    fn draw(&mut self, screen: &Screen, ctx: &mut Context, frame: &FrameInput) -> Result<()> {
        let want = frame.params.stress_triangles;
        if want != self.requested {
            let mesh = Mesh::torus_with_triangles(want);
            self.inner.buffers = MeshBuffers::upload(screen, ctx, &mesh)?;
            self.inner.triangles = mesh.triangles() as u64;
            self.requested = want;
        }
        self.inner.draw(screen, ctx, frame)
    }

    fn triangles(&self) -> u64 {
        self.inner.triangles
    }

    fn release(self: Box<Self>, ctx: &mut Context) {
        Box::new(self.inner).release(ctx);
    }
}

/// Bytes per instance: offset xyz + scale, colour rgba.
const INSTANCE_STRIDE: u32 = 32;

/// `side * side` cubes on a wavy grid, each instance spinning in the
/// vertex shader (one draw, `instance_divisor` 1 attributes).
pub struct FieldScene {
    program: Program,
    cube: MeshBuffers,
    instances: Resource,
    side: u32,
}

impl FieldScene {
    pub fn new(screen: &Screen, ctx: &mut Context, side: u32) -> Result<Self> {
        let mut elements = mesh_elements();
        elements.truncate(2); // position, normal
        elements.push(gfx::float_element(1, 0, 4, true));
        elements.push(gfx::float_element(1, 16, 4, true));
        Ok(FieldScene {
            program: Program::new(ctx, FieldVs::new(), LitFs::new(), &elements)?,
            cube: MeshBuffers::upload(screen, ctx, &Mesh::cube())?,
            instances: Self::instance_buffer(screen, ctx, side)?,
            side,
        })
    }

    /// Instance data for a `side` x `side` grid spanning [-2, 2]²: heights
    /// on a ripple, colours on a hue wheel.
    pub fn instance_data(side: u32) -> Vec<f32> {
        let side = side.max(1);
        let spacing = 4.0 / side as f32;
        let mut v = Vec::with_capacity((side * side * 8) as usize);
        for i in 0..side {
            for j in 0..side {
                let x = (i as f32 + 0.5) * spacing - 2.0;
                let z = (j as f32 + 0.5) * spacing - 2.0;
                let r = (x * x + z * z).sqrt();
                let y = (r * 3.0).cos() * 0.25 - 0.4;
                let hue = (x.atan2(z) / std::f32::consts::TAU + 0.5) * 6.0;
                let rgb = [0.0f32, 4.0, 2.0].map(|o| {
                    let k = (hue + o) % 6.0;
                    1.0 - (k.min(4.0 - k).clamp(0.0, 1.0)) * 0.75
                });
                v.extend_from_slice(&[x, y, z, spacing * 0.6, rgb[0], rgb[1], rgb[2], 1.0]);
            }
        }
        v
    }

    fn instance_buffer(screen: &Screen, ctx: &mut Context, side: u32) -> Result<Resource> {
        let bytes: Vec<u8> = Self::instance_data(side)
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        gfx::buffer_with_data(screen, ctx, &bytes, ferropipe::BindFlags::VERTEX_BUFFER)
    }
}

impl Showcase for FieldScene {
    fn draw(&mut self, screen: &Screen, ctx: &mut Context, frame: &FrameInput) -> Result<()> {
        let side = frame.params.field_side.max(1);
        if side != self.side {
            self.instances = Self::instance_buffer(screen, ctx, side)?;
            self.side = side;
        }
        self.program.bind(ctx)?;
        let vs = FieldVsConstants {
            view_proj: frame.view_proj,
            time: frame.time,
            spin_speed: 1.5,
        };
        gfx::set_constants(ctx, ShaderType::Vertex, &vs.to_bytes())?;
        gfx::set_constants(
            ctx,
            ShaderType::Fragment,
            &lit_constants(frame.eye, Vec4::ONE),
        )?;
        gfx::set_vertex_buffers(
            ctx,
            &[
                (&self.cube.vertices, Vertex::STRIDE),
                (&self.instances, INSTANCE_STRIDE),
            ],
        )?;
        gfx::set_index_buffer(ctx, &self.cube.indices)?;
        gfx::draw_indexed(ctx, self.cube.index_count, self.side * self.side)
    }

    fn triangles(&self) -> u64 {
        12 * (self.side as u64 * self.side as u64)
    }

    fn release(self: Box<Self>, ctx: &mut Context) {
        self.program.delete(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_instances_fill_the_grid() {
        let d = FieldScene::instance_data(10);
        assert_eq!(d.len(), 100 * 8);
        for inst in d.chunks_exact(8) {
            assert!(inst[0].abs() < 2.0 && inst[2].abs() < 2.0);
            assert!(
                inst[4..7].iter().all(|c| (0.25..=1.0).contains(c)),
                "{inst:?}"
            );
            assert_eq!(inst[7], 1.0);
        }
    }
}
