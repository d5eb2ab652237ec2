//! The showcase scenes' shaders, written in Rust over lanes (the
//! zero-overhead path of `ferropipe_components::shader`).
//!
//! Both vertex shaders write the same varyings, so one fragment shader
//! serves every scene:
//!
//! | output | semantic | what |
//! | --- | --- | --- |
//! | 0 | `Position` | clip position (`clip_halfz` depth, glam's `perspective_rh`) |
//! | 1 | `Generic(0)` | world-space normal (not normalised: interpolation denormalises anyway) |
//! | 2 | `Generic(1)` | world-space position |
//! | 3 | `Generic(2)` | texture coordinate |
//! | 4 | `Generic(3)` | vertex colour (multiplies the material colour) |
//!
//! Per-frame values come from constant buffer 0 of each stage
//! ([`MeshVsConstants`], [`FieldVsConstants`], [`LitFsConstants`]), as
//! `set_constant_buffer` user constants, exactly as a compiled shader would
//! read them: the shader objects themselves are immutable CSOs.

use std::sync::Arc;

use ferropipe::ShaderType;
use ferropipe::{
    FragmentIo, FragmentShader, IoSlot, Lanes, ScalarKind, Semantic, ShaderInfo, ShaderResources,
    VertexIo, VertexShader,
};
use glam::{Mat4, Vec3, Vec4};

/// Reads `N` little-endian f32s from constant buffer 0 (zeros where the
/// buffer is short or unbound: the robust-access rule the pipeline follows).
fn constants<const N: usize>(resources: &ShaderResources<'_>) -> [f32; N] {
    let mut out = [0f32; N];
    if let Some(bytes) = resources.constants.first() {
        for (i, v) in out.iter_mut().enumerate() {
            if let Some(b) = bytes.get(i * 4..i * 4 + 4) {
                *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    }
    out
}

fn to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A column-major matrix with every element splatted across the lanes.
#[derive(Clone, Copy)]
struct LaneMat4([Lanes; 16]);

impl LaneMat4 {
    fn from_cols(m: &[f32]) -> Self {
        LaneMat4(std::array::from_fn(|i| Lanes::splat(m[i])))
    }

    /// `M * (x, y, z, w)`.
    #[inline(always)]
    fn transform(&self, x: Lanes, y: Lanes, z: Lanes, w: Lanes) -> [Lanes; 4] {
        let m = &self.0;
        std::array::from_fn(|r| {
            m[r].mul_add(x, m[4 + r].mul_add(y, m[8 + r].mul_add(z, m[12 + r] * w)))
        })
    }

    /// The upper 3x3 times `(x, y, z)` (directions).
    #[inline(always)]
    fn transform_dir(&self, x: Lanes, y: Lanes, z: Lanes) -> [Lanes; 3] {
        let m = &self.0;
        std::array::from_fn(|r| m[r].mul_add(x, m[4 + r].mul_add(y, m[8 + r] * z)))
    }
}

/// Index of component `c` of slot `s`, group `g` (module docs of
/// `ferropipe_components::shader`).
#[inline(always)]
fn at(groups: usize, slot: usize, c: usize, g: usize) -> usize {
    (slot * 4 + c) * groups + g
}

fn varyings_out() -> Vec<IoSlot> {
    let mut uv = IoSlot::new(Semantic::Generic(2), 2);
    uv.components = 2;
    vec![
        IoSlot::new(Semantic::Position, 0),
        IoSlot::new(Semantic::Generic(0), 0),
        IoSlot::new(Semantic::Generic(1), 1),
        uv,
        IoSlot::new(Semantic::Generic(3), 3),
    ]
}

fn vertex_input(location: u32, components: u8) -> IoSlot {
    let mut s = IoSlot::new(Semantic::Generic(location as u8), location);
    s.components = components;
    s
}

/// Constant buffer 0 of [`MeshVs`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshVsConstants {
    /// Clip from object space.
    pub mvp: Mat4,
    /// World from object space.
    pub model: Mat4,
    /// Inverse transpose of `model` (normals).
    pub normal: Mat4,
}

impl MeshVsConstants {
    /// The constants for a model matrix seen through `view_proj`.
    pub fn new(view_proj: Mat4, model: Mat4) -> Self {
        MeshVsConstants {
            mvp: view_proj * model,
            model,
            normal: model.inverse().transpose(),
        }
    }

    /// std140 bytes: three column-major `mat4x4<f32>`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(48);
        v.extend_from_slice(&self.mvp.to_cols_array());
        v.extend_from_slice(&self.model.to_cols_array());
        v.extend_from_slice(&self.normal.to_cols_array());
        to_bytes(&v)
    }
}

/// Vertex shader for meshes: inputs `@location(0)` position (xyz),
/// `@location(1)` normal (xyz), `@location(2)` uv (xy); vertex colour white.
pub struct MeshVs {
    info: ShaderInfo,
}

impl MeshVs {
    pub fn new() -> Arc<Self> {
        Arc::new(MeshVs {
            info: ShaderInfo {
                stage: ShaderType::Vertex,
                inputs: vec![vertex_input(0, 3), vertex_input(1, 3), vertex_input(2, 2)],
                outputs: varyings_out(),
                const_buffers_used: 1,
                ..Default::default()
            },
        })
    }
}

impl VertexShader for MeshVs {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let c = constants::<48>(resources);
        let mvp = LaneMat4::from_cols(&c[0..16]);
        let model = LaneMat4::from_cols(&c[16..32]);
        let normal = LaneMat4::from_cols(&c[32..48]);
        let n = io.groups;
        let one = Lanes::splat(1.0);
        for g in 0..n {
            let i = |s, c| io.inputs[at(n, s, c, g)];
            let (px, py, pz) = (i(0, 0), i(0, 1), i(0, 2));
            let clip = mvp.transform(px, py, pz, one);
            let world = model.transform(px, py, pz, one);
            let nrm = normal.transform_dir(i(1, 0), i(1, 1), i(1, 2));
            let uv = [i(2, 0), i(2, 1)];
            let out = &mut *io.outputs;
            for k in 0..4 {
                out[at(n, 0, k, g)] = clip[k];
                out[at(n, 4, k, g)] = one;
            }
            for k in 0..3 {
                out[at(n, 1, k, g)] = nrm[k];
                out[at(n, 2, k, g)] = world[k];
            }
            out[at(n, 1, 3, g)] = Lanes::ZERO;
            out[at(n, 2, 3, g)] = one;
            out[at(n, 3, 0, g)] = uv[0];
            out[at(n, 3, 1, g)] = uv[1];
            out[at(n, 3, 2, g)] = Lanes::ZERO;
            out[at(n, 3, 3, g)] = one;
        }
    }
}

/// Constant buffer 0 of [`FieldVs`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldVsConstants {
    pub view_proj: Mat4,
    /// Seconds; every instance spins about its own y axis with it.
    pub time: f32,
    /// Radians per second.
    pub spin_speed: f32,
}

impl FieldVsConstants {
    /// std140 bytes: `mat4x4<f32>`, then `vec4<f32>(time, spin_speed, 0, 0)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(20);
        v.extend_from_slice(&self.view_proj.to_cols_array());
        v.extend_from_slice(&[self.time, self.spin_speed, 0.0, 0.0]);
        to_bytes(&v)
    }
}

/// Vertex shader for instanced fields: `@location(0)` position,
/// `@location(1)` normal (per vertex), `@location(2)` offset xyz + scale w,
/// `@location(3)` colour (per instance, `instance_divisor` 1).
///
/// Each instance is rotated about y by `time * spin_speed + phase`, the
/// phase derived from its offset, so the field shimmers without any
/// per-frame buffer upload.
pub struct FieldVs {
    info: ShaderInfo,
}

impl FieldVs {
    pub fn new() -> Arc<Self> {
        Arc::new(FieldVs {
            info: ShaderInfo {
                stage: ShaderType::Vertex,
                inputs: vec![
                    vertex_input(0, 3),
                    vertex_input(1, 3),
                    vertex_input(2, 4),
                    vertex_input(3, 4),
                ],
                outputs: varyings_out(),
                const_buffers_used: 1,
                ..Default::default()
            },
        })
    }
}

impl VertexShader for FieldVs {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let c = constants::<20>(resources);
        let vp = LaneMat4::from_cols(&c[0..16]);
        let time = Lanes::splat(c[16]);
        let speed = Lanes::splat(c[17]);
        let n = io.groups;
        let one = Lanes::splat(1.0);
        for g in 0..n {
            let i = |s, c| io.inputs[at(n, s, c, g)];
            let (ox, oy, oz, scale) = (i(2, 0), i(2, 1), i(2, 2), i(2, 3));
            let phase = ox.mul_add(Lanes::splat(0.7), oz * Lanes::splat(1.3));
            let (s, co) = time.mul_add(speed, phase).sin_cos();
            // Rotation about y: x' = c x + s z, z' = -s x + c z.
            let rot = |x: Lanes, z: Lanes| (co.mul_add(x, s * z), co.mul_add(z, -(s * x)));
            let (px, pz) = rot(i(0, 0), i(0, 2));
            let (nx, nz) = rot(i(1, 0), i(1, 2));
            let wx = px.mul_add(scale, ox);
            let wy = i(0, 1).mul_add(scale, oy);
            let wz = pz.mul_add(scale, oz);
            let clip = vp.transform(wx, wy, wz, one);
            let out = &mut *io.outputs;
            for k in 0..4 {
                out[at(n, 0, k, g)] = clip[k];
                out[at(n, 4, k, g)] = i(3, k);
            }
            out[at(n, 1, 0, g)] = nx;
            out[at(n, 1, 1, g)] = i(1, 1);
            out[at(n, 1, 2, g)] = nz;
            out[at(n, 1, 3, g)] = Lanes::ZERO;
            out[at(n, 2, 0, g)] = wx;
            out[at(n, 2, 1, g)] = wy;
            out[at(n, 2, 2, g)] = wz;
            out[at(n, 2, 3, g)] = one;
            // Texture coordinate: the object-space xz, for completeness.
            out[at(n, 3, 0, g)] = i(0, 0);
            out[at(n, 3, 1, g)] = i(0, 2);
            out[at(n, 3, 2, g)] = Lanes::ZERO;
            out[at(n, 3, 3, g)] = one;
        }
    }
}

/// Constant buffer 0 of [`LitFs`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LitFsConstants {
    /// Direction *towards* the light, world space (normalised here).
    pub light_dir: Vec3,
    pub camera_pos: Vec3,
    /// Material colour (multiplied by the vertex colour).
    pub base_color: Vec4,
    /// Hemispheric ambient strength (0..1).
    pub ambient: f32,
    /// Specular strength (0..1); the exponent is fixed at 32.
    pub specular: f32,
}

impl Default for LitFsConstants {
    fn default() -> Self {
        LitFsConstants {
            light_dir: Vec3::new(0.4, 0.8, 0.45),
            camera_pos: Vec3::new(0.0, 0.0, 3.0),
            base_color: Vec4::ONE,
            ambient: 0.25,
            specular: 0.35,
        }
    }
}

impl LitFsConstants {
    /// std140 bytes: `vec4 light_dir`, `vec4 camera_pos`, `vec4 base_color`,
    /// `vec4(ambient, specular, 0, 0)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let l = self.light_dir.normalize_or_zero();
        to_bytes(&[
            l.x,
            l.y,
            l.z,
            0.0,
            self.camera_pos.x,
            self.camera_pos.y,
            self.camera_pos.z,
            1.0,
            self.base_color.x,
            self.base_color.y,
            self.base_color.z,
            self.base_color.w,
            self.ambient,
            self.specular,
            0.0,
            0.0,
        ])
    }
}

/// Blinn-Phong with a hemispheric ambient term, two-sided (back faces
/// flip their normal, by the rasterizer's facing, so silhouettes where an
/// interpolated normal tips away from the eye stay lit), writing `COLOR0`
/// to colour buffer 0.
pub struct LitFs {
    info: ShaderInfo,
}

impl LitFs {
    pub fn new() -> Arc<Self> {
        let mut uv = IoSlot::new(Semantic::Generic(2), 2);
        uv.components = 2;
        Arc::new(LitFs {
            info: ShaderInfo {
                stage: ShaderType::Fragment,
                inputs: vec![
                    IoSlot::new(Semantic::Generic(0), 0),
                    IoSlot::new(Semantic::Generic(1), 1),
                    uv,
                    IoSlot::new(Semantic::Generic(3), 3),
                    IoSlot {
                        components: 1,
                        kind: ScalarKind::Bool,
                        ..IoSlot::new(Semantic::FrontFacing, 0)
                    },
                ],
                outputs: vec![IoSlot::new(Semantic::Color(0), 0)],
                const_buffers_used: 1,
                ..Default::default()
            },
        })
    }
}

impl FragmentShader for LitFs {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let c = constants::<16>(resources);
        let s = |i: usize| Lanes::splat(c[i]);
        let (lx, ly, lz) = (s(0), s(1), s(2));
        let (cx, cy, cz) = (s(4), s(5), s(6));
        let base = [s(8), s(9), s(10), s(11)];
        let (ambient, spec_k) = (s(12), s(13));
        let n = io.groups;
        let zero = Lanes::ZERO;
        let one = Lanes::splat(1.0);
        let half = Lanes::splat(0.5);
        for g in 0..n {
            let i = |sl, c| io.inputs[at(n, sl, c, g)];
            let normalize = |x: Lanes, y: Lanes, z: Lanes| {
                let len2 = x.mul_add(x, y.mul_add(y, z * z));
                // Degenerate (zero) vectors stay zero instead of NaN.
                let inv = len2.simd_gt(zero).select(one / len2.sqrt(), zero);
                (x * inv, y * inv, z * inv)
            };
            let (mut nx, mut ny, mut nz) = normalize(i(0, 0), i(0, 1), i(0, 2));
            let (vx, vy, vz) = normalize(cx - i(1, 0), cy - i(1, 1), cz - i(1, 2));
            // Two-sided: back faces (front-facing lanes are all ones) light
            // their other side.
            let front = i(4, 0);
            nx = front.select(nx, -nx);
            ny = front.select(ny, -ny);
            nz = front.select(nz, -nz);
            let diffuse = lx.mul_add(nx, ly.mul_add(ny, lz * nz)).max(zero);
            let (hx, hy, hz) = normalize(lx + vx, ly + vy, lz + vz);
            let mut spec = hx.mul_add(nx, hy.mul_add(ny, hz * nz)).max(zero);
            for _ in 0..5 {
                spec = spec * spec; // exponent 32
            }
            // Sky-to-ground ambient by the normal's y.
            let hemi = ny.mul_add(half, half);
            let amb = ambient * hemi.mul_add(Lanes::splat(0.6), Lanes::splat(0.4));
            let light = diffuse + amb;
            let out = &mut *io.outputs;
            for k in 0..3 {
                let albedo = base[k] * i(3, k);
                out[at(n, 0, k, g)] = albedo.mul_add(light, spec * spec_k).min(one);
            }
            out[at(n, 0, 3, g)] = base[3] * i(3, 3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(v: f32) -> Lanes {
        Lanes::splat(v)
    }

    fn resources<'a>(bufs: &'a [&'a [u8]]) -> ShaderResources<'a> {
        ShaderResources {
            constants: bufs,
            ..Default::default()
        }
    }

    #[test]
    fn mesh_vs_matches_glam() {
        let view_proj = glam::camera::rh::proj::directx::perspective(1.0, 1.5, 0.1, 10.0)
            * glam::camera::rh::view::look_at_mat4(Vec3::new(1.0, 2.0, 3.0), Vec3::ZERO, Vec3::Y);
        let model = Mat4::from_scale_rotation_translation(
            Vec3::new(2.0, 1.0, 1.0),
            glam::Quat::from_rotation_y(0.3),
            Vec3::new(0.5, 0.0, -1.0),
        );
        let k = MeshVsConstants::new(view_proj, model);
        let cb = k.to_bytes();
        let bufs = [cb.as_slice()];
        let vs = MeshVs::new();
        let groups = 2;
        // Vertex v has position (v, 2v, -v) * 0.1, normal (0, 1, 0), uv (v, 1).
        let mut inputs = vec![Lanes::ZERO; 3 * 4 * groups];
        for g in 0..groups {
            let p: [f32; 8] = std::array::from_fn(|l| (g * 8 + l) as f32 * 0.1);
            inputs[at(groups, 0, 0, g)] = Lanes::from(p);
            inputs[at(groups, 0, 1, g)] = Lanes::from(p) * lanes(2.0);
            inputs[at(groups, 0, 2, g)] = -Lanes::from(p);
            inputs[at(groups, 1, 1, g)] = lanes(1.0);
            inputs[at(groups, 2, 0, g)] = Lanes::from(p);
            inputs[at(groups, 2, 1, g)] = lanes(1.0);
        }
        let ids = vec![Lanes::ZERO; groups];
        let mut outputs = vec![Lanes::ZERO; 5 * 4 * groups];
        vs.run(
            &resources(&bufs),
            &mut VertexIo {
                groups,
                count: 16,
                inputs: &inputs,
                vertex_id: &ids,
                instance_id: &ids,
                outputs: &mut outputs,
            },
        );
        let normal = (k.normal * Vec4::new(0.0, 1.0, 0.0, 0.0)).truncate();
        for v in 0..16 {
            let (g, l) = (v / 8, v % 8);
            let p = Vec3::new(1.0, 2.0, -1.0) * (v as f32 * 0.1);
            let get = |s, c| outputs[at(groups, s, c, g)].to_array()[l];
            let clip = k.mvp * p.extend(1.0);
            let world = model * p.extend(1.0);
            for c in 0..4 {
                assert!((get(0, c) - clip[c]).abs() < 1e-4, "clip {v} {c}");
            }
            for c in 0..3 {
                assert!((get(1, c) - normal[c]).abs() < 1e-5, "normal {v} {c}");
                assert!((get(2, c) - world[c]).abs() < 1e-4, "world {v} {c}");
            }
            assert_eq!(get(3, 0), v as f32 * 0.1);
            assert_eq!(get(4, 2), 1.0);
        }
    }

    /// Runs [`LitFs`] on one group of front faces whose lanes all see the
    /// same inputs.
    fn shade(k: &LitFsConstants, normal: Vec3, pos: Vec3, color: Vec4) -> [f32; 4] {
        shade_facing(k, normal, pos, color, true)
    }

    fn shade_facing(
        k: &LitFsConstants,
        normal: Vec3,
        pos: Vec3,
        color: Vec4,
        front: bool,
    ) -> [f32; 4] {
        let cb = k.to_bytes();
        let bufs = [cb.as_slice()];
        let fs = LitFs::new();
        let mut inputs = vec![Lanes::ZERO; 5 * 4];
        inputs[at(1, 4, 0, 0)] = Lanes::splat(f32::from_bits(if front { u32::MAX } else { 0 }));
        for c in 0..3 {
            inputs[at(1, 0, c, 0)] = lanes(normal[c]);
            inputs[at(1, 1, c, 0)] = lanes(pos[c]);
        }
        for c in 0..4 {
            inputs[at(1, 3, c, 0)] = lanes(color[c]);
        }
        let frag_coord = vec![Lanes::ZERO; 4];
        let mut mask = vec![Lanes::from([f32::from_bits(u32::MAX); 8])];
        let mut outputs = vec![Lanes::ZERO; 4];
        fs.run(
            &resources(&bufs),
            &mut FragmentIo {
                groups: 1,
                inputs: &inputs,
                frag_coord: &frag_coord,
                mask: &mut mask,
                outputs: &mut outputs,
            },
        );
        std::array::from_fn(|c| outputs[c].to_array()[3])
    }

    #[test]
    fn lit_fs_is_blinn_phong() {
        let k = LitFsConstants {
            light_dir: Vec3::Y,
            camera_pos: Vec3::new(0.0, 5.0, 0.0),
            base_color: Vec4::new(0.5, 0.25, 1.0, 1.0),
            ambient: 0.0,
            specular: 0.0,
        };
        // Normal towards the light: full diffuse.
        let c = shade(&k, Vec3::Y * 3.0, Vec3::ZERO, Vec4::ONE);
        assert!((c[0] - 0.5).abs() < 1e-5 && (c[1] - 0.25).abs() < 1e-5);
        assert!((c[2] - 1.0).abs() < 1e-5 && c[3] == 1.0);
        // At 60 degrees: cos = 0.5.
        let n = Vec3::new(3f32.sqrt() / 2.0, 0.5, 0.0);
        let c = shade(&k, n, Vec3::ZERO, Vec4::new(1.0, 1.0, 1.0, 0.5));
        assert!((c[0] - 0.25).abs() < 1e-4, "{c:?}");
        assert_eq!(c[3], 0.5);
        // Specular peaks when the half vector is the normal.
        let k2 = LitFsConstants {
            specular: 0.5,
            base_color: Vec4::ZERO.with_w(1.0),
            ..k
        };
        let c = shade(&k2, Vec3::Y, Vec3::ZERO, Vec4::ONE);
        assert!((c[0] - 0.5).abs() < 1e-4, "{c:?}");
    }

    #[test]
    fn lit_fs_is_two_sided_and_degenerate_safe() {
        let k = LitFsConstants {
            light_dir: Vec3::Y,
            camera_pos: Vec3::new(0.0, 5.0, 0.0),
            ambient: 0.0,
            specular: 0.0,
            ..Default::default()
        };
        // A back face lights its other side.
        let c = shade_facing(&k, -Vec3::Y, Vec3::ZERO, Vec4::ONE, false);
        assert!((c[0] - 1.0).abs() < 1e-5, "{c:?}");
        // A front face whose interpolated normal tips away from the eye
        // (a silhouette) is not flipped into darkness.
        let k2 = LitFsConstants {
            camera_pos: Vec3::new(5.0, 0.0, 0.0),
            ..k
        };
        let c = shade(&k2, Vec3::new(-0.1, 1.0, 0.0), Vec3::ZERO, Vec4::ONE);
        assert!(c[0] > 0.9, "{c:?}");
        // A zero normal gives no light, not NaN.
        let c = shade(&k, Vec3::ZERO, Vec3::ZERO, Vec4::ONE);
        assert!(c.iter().all(|v| v.is_finite()));
        assert_eq!(c[0], 0.0);
    }
}
