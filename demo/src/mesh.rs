//! Procedural meshes for the showcase scenes.
//!
//! Vertices are interleaved `position xyz, normal xyz, uv` (32 bytes), the
//! layout [`Vertex::ELEMENTS`] describes; triangles are counter-clockwise
//! seen from outside (GL's front-face convention), indices are u32.

use glam::{Vec2, Vec3};

/// One interleaved vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    pub position: Vec3,
    pub normal: Vec3,
    pub uv: Vec2,
}

impl Vertex {
    /// Bytes per vertex.
    pub const STRIDE: u32 = 32;
    /// `(src_offset, components)` of position, normal, uv.
    pub const ELEMENTS: [(u32, u32); 3] = [(0, 3), (12, 3), (24, 2)];
}

/// An indexed triangle mesh.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    pub vertices: Vec<Vertex>,
    pub indices: Vec<u32>,
}

impl Mesh {
    /// Number of triangles.
    pub fn triangles(&self) -> usize {
        self.indices.len() / 3
    }

    /// The vertices as little-endian bytes in the [`Vertex`] layout.
    pub fn vertex_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.vertices.len() * Vertex::STRIDE as usize);
        for v in &self.vertices {
            for f in [
                v.position.x,
                v.position.y,
                v.position.z,
                v.normal.x,
                v.normal.y,
                v.normal.z,
                v.uv.x,
                v.uv.y,
            ] {
                out.extend_from_slice(&f.to_le_bytes());
            }
        }
        out
    }

    /// The indices as little-endian u32 bytes.
    pub fn index_bytes(&self) -> Vec<u8> {
        self.indices.iter().flat_map(|i| i.to_le_bytes()).collect()
    }

    /// A (p, q) torus knot tube: `segments` around the knot, `sides` around
    /// the tube; `2 * segments * sides` triangles.
    pub fn torus_knot(p: u32, q: u32, segments: u32, sides: u32, tube: f32) -> Mesh {
        let (p, q) = (p as f32, q as f32);
        let curve = |t: f32| {
            let r = 0.5 * (2.0 + (q * t).cos());
            Vec3::new(r * (p * t).cos(), r * (p * t).sin(), -0.5 * (q * t).sin()) * 0.55
        };
        let tau = std::f32::consts::TAU;
        Self::tube(segments, sides, |u| {
            let t = u * tau;
            let c = curve(t);
            let d = 1e-3;
            let tangent = (curve(t + d) - curve(t - d)).normalize();
            // A frame from the curve's second derivative, stable for knots.
            let accel = curve(t + d) + curve(t - d) - 2.0 * c;
            let binormal = tangent.cross(accel).normalize();
            let normal = binormal.cross(tangent);
            (c, normal, binormal, tube)
        })
    }

    /// A torus in the xz plane with `2 * segments * sides` triangles.
    pub fn torus(segments: u32, sides: u32, radius: f32, tube: f32) -> Mesh {
        let tau = std::f32::consts::TAU;
        Self::tube(segments, sides, |u| {
            let (s, c) = (u * tau).sin_cos();
            let centre = Vec3::new(c * radius, 0.0, s * radius);
            let outward = Vec3::new(c, 0.0, s);
            (centre, outward, Vec3::Y, tube)
        })
    }

    /// A torus whose triangle count is as close to `triangles` as the grid
    /// allows (at least 8 x 4 quads), with sides ≈ segments / 4.
    pub fn torus_with_triangles(triangles: u32) -> Mesh {
        let quads = (triangles / 2).max(32) as f32;
        let sides = (quads / 4.0).sqrt().round().max(4.0) as u32;
        let segments = ((quads / sides as f32).round() as u32).max(8);
        Self::torus(segments, sides, 0.75, 0.3)
    }

    /// A closed tube around a curve: `frame(u)` for `u` in `[0, 1)` gives the
    /// centre, two unit vectors spanning the cross-section, and the radius.
    fn tube(segments: u32, sides: u32, frame: impl Fn(f32) -> (Vec3, Vec3, Vec3, f32)) -> Mesh {
        let segments = segments.max(3);
        let sides = sides.max(3);
        let tau = std::f32::consts::TAU;
        let mut vertices = Vec::with_capacity(((segments + 1) * (sides + 1)) as usize);
        for i in 0..=segments {
            let u = i as f32 / segments as f32;
            let (c, n, b, r) = frame(u % 1.0);
            for j in 0..=sides {
                let v = j as f32 / sides as f32;
                let (s, co) = (v * tau).sin_cos();
                let normal = (n * co + b * s).normalize();
                vertices.push(Vertex {
                    position: c + normal * r,
                    normal,
                    uv: Vec2::new(u * 8.0, v),
                });
            }
        }
        let mut indices = Vec::with_capacity((segments * sides * 6) as usize);
        let row = sides + 1;
        for i in 0..segments {
            for j in 0..sides {
                let a = i * row + j;
                let b = (i + 1) * row + j;
                // (a, a+1, b+1, b) winds counter-clockwise seen from outside
                // when u runs along the curve and v around it (checked by
                // `torus_faces_point_outwards`).
                indices.extend_from_slice(&[a, b, b + 1, a, b + 1, a + 1]);
            }
        }
        let mut mesh = Mesh { vertices, indices };
        mesh.orient_outwards();
        mesh
    }

    /// Flips every triangle whose geometric normal disagrees with its
    /// vertices' normals, so winding is consistent whatever frame the
    /// generator used.
    fn orient_outwards(&mut self) {
        for t in self.indices.chunks_exact_mut(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| self.vertices[i as usize]);
            let geometric = (b.position - a.position).cross(c.position - a.position);
            if geometric.dot(a.normal + b.normal + c.normal) < 0.0 {
                t.swap(1, 2);
            }
        }
    }

    /// A unit cube centred on the origin, flat-shaded (24 vertices).
    pub fn cube() -> Mesh {
        let mut m = Mesh::default();
        let faces = [
            (Vec3::X, Vec3::Y, Vec3::Z),
            (-Vec3::X, Vec3::Y, -Vec3::Z),
            (Vec3::Y, Vec3::Z, Vec3::X),
            (-Vec3::Y, Vec3::Z, -Vec3::X),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (-Vec3::Z, Vec3::X, -Vec3::Y),
        ];
        for (n, u, v) in faces {
            let base = m.vertices.len() as u32;
            for (s, t) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                m.vertices.push(Vertex {
                    position: (n + u * s + v * t) * 0.5,
                    normal: n,
                    uv: Vec2::new((s + 1.0) * 0.5, (t + 1.0) * 0.5),
                });
            }
            m.indices
                .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        m.orient_outwards();
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_outward(m: &Mesh) {
        for t in m.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| m.vertices[i as usize]);
            let g = (b.position - a.position).cross(c.position - a.position);
            assert!(g.dot(a.normal + b.normal + c.normal) >= 0.0);
        }
    }

    #[test]
    fn torus_faces_point_outwards() {
        let m = Mesh::torus(16, 8, 1.0, 0.25);
        assert_eq!(m.triangles(), 2 * 16 * 8);
        assert_outward(&m);
        assert!(m.indices.iter().all(|&i| (i as usize) < m.vertices.len()));
    }

    #[test]
    fn knot_and_cube_are_closed_and_outward() {
        let k = Mesh::torus_knot(2, 3, 64, 12, 0.15);
        assert_outward(&k);
        assert!(
            k.vertices
                .iter()
                .all(|v| v.position.is_finite() && v.normal.is_finite())
        );
        let c = Mesh::cube();
        assert_eq!((c.vertices.len(), c.triangles()), (24, 12));
        assert_outward(&c);
    }

    #[test]
    fn torus_triangle_count_tracks_request() {
        for n in [1_000u32, 20_000, 500_000] {
            let got = Mesh::torus_with_triangles(n).triangles() as f32;
            assert!((got / n as f32 - 1.0).abs() < 0.1, "{n} -> {got}");
        }
    }

    #[test]
    fn bytes_have_the_documented_layout() {
        let c = Mesh::cube();
        let vb = c.vertex_bytes();
        assert_eq!(vb.len(), 24 * Vertex::STRIDE as usize);
        let f = |o: usize| f32::from_le_bytes(vb[o..o + 4].try_into().unwrap());
        assert_eq!(f(12), c.vertices[0].normal.x);
        assert_eq!(f(28), c.vertices[0].uv.y);
        assert_eq!(c.index_bytes().len(), 36 * 4);
    }
}
