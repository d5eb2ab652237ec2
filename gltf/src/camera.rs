//! Cameras: the ones a glTF file carries, and a framing camera built from
//! the scene's bounds.  Projections map depth to 0..1 (Gallium's
//! `clip_halfz`), y up in clip space, right-handed view space looking down
//! -z as glTF's cameras do (glTF 3.10).

use glam::camera::rh::proj::directx;
use glam::{Mat4, Vec3};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Bounds {
    /// The box's centre.
    pub fn centre(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the diagonal: the radius of a sphere around the box.
    pub fn radius(&self) -> f32 {
        (self.max - self.min).length() * 0.5
    }
}

/// A view and a projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// View from world (right-handed, looking down -z).
    pub view: Mat4,
    /// Clip from view, depth 0..1 (`clip_halfz`).
    pub proj: Mat4,
}

impl Camera {
    /// The eye position in world space.
    pub fn eye(&self) -> Vec3 {
        self.view.inverse().w_axis.truncate()
    }

    /// Looks at `bounds`' centre from `yaw` radians around +y (0: from +z)
    /// and `pitch` above the horizon, with vertical field of view `fov_y`,
    /// from the distance where the bounding sphere fits both the vertical
    /// and the horizontal field of view, with 10% margin.
    pub fn framing(bounds: &Bounds, aspect: f32, yaw: f32, pitch: f32, fov_y: f32) -> Camera {
        let aspect = aspect.max(1e-3);
        let centre = bounds.centre();
        let r = bounds.radius().max(1e-4);
        let half_x = ((fov_y * 0.5).tan() * aspect).atan();
        let half = (fov_y * 0.5).min(half_x);
        let distance = r / half.sin() * 1.1;
        let (sy, cy) = yaw.sin_cos();
        let (sp, cp) = pitch.sin_cos();
        let eye = centre + Vec3::new(sy * cp, sp, cy * cp) * distance;
        let near = (distance - r).max(distance * 0.01);
        let far = distance + r * 2.0;
        Camera {
            view: glam::camera::rh::view::look_at_mat4(eye, centre, Vec3::Y),
            proj: directx::perspective(fov_y, aspect, near, far),
        }
    }
}

/// A camera's projection as the file gives it (glTF 3.10.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Projection {
    /// `camera.perspective`.
    Perspective {
        /// Vertical field of view, radians.
        yfov: f32,
        /// Width over height; `None`: the viewport's.
        aspect_ratio: Option<f32>,
        /// Near plane distance.
        znear: f32,
        /// Far plane distance; `None`: infinite.
        zfar: Option<f32>,
    },
    /// `camera.orthographic`.
    Orthographic {
        /// Half the view's width.
        xmag: f32,
        /// Half the view's height.
        ymag: f32,
        /// Near plane distance.
        znear: f32,
        /// Far plane distance.
        zfar: f32,
    },
}

/// A camera node of the default scene.
#[derive(Clone, Debug, PartialEq)]
pub struct FileCamera {
    /// The camera's name in the file.
    pub name: Option<String>,
    /// The node's world matrix (the camera looks down its -z).
    pub world: Mat4,
    /// Its projection.
    pub projection: Projection,
}

impl FileCamera {
    /// The camera for a viewport of `aspect` (width / height): the file's
    /// aspect ratio when it gives one (the image then stretches, as glTF
    /// 3.10.2 leaves to the client).
    pub fn camera(&self, aspect: f32) -> Camera {
        let proj = match self.projection {
            Projection::Perspective {
                yfov,
                aspect_ratio,
                znear,
                zfar,
            } => {
                let a = aspect_ratio.unwrap_or(aspect).max(1e-3);
                match zfar {
                    Some(f) => directx::perspective(yfov, a, znear, f),
                    None => directx::perspective_infinite(yfov, a, znear),
                }
            }
            Projection::Orthographic {
                xmag,
                ymag,
                znear,
                zfar,
            } => directx::orthographic(-xmag, xmag, -ymag, ymag, znear, zfar),
        };
        Camera {
            view: self.world.inverse(),
            proj,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_keeps_the_bounds_inside_the_view() {
        let b = Bounds {
            min: Vec3::new(-1.0, -2.0, -0.5),
            max: Vec3::new(3.0, 1.0, 0.5),
        };
        for aspect in [0.5, 1.0, 2.0] {
            let c = Camera::framing(&b, aspect, 0.7, 0.3, 50f32.to_radians());
            let m = c.proj * c.view;
            for i in 0..8 {
                let p = Vec3::new(
                    if i & 1 == 0 { b.min.x } else { b.max.x },
                    if i & 2 == 0 { b.min.y } else { b.max.y },
                    if i & 4 == 0 { b.min.z } else { b.max.z },
                );
                let clip = m * p.extend(1.0);
                let ndc = clip.truncate() / clip.w;
                assert!(ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0, "{aspect}: {ndc}");
                assert!(ndc.z > 0.0 && ndc.z < 1.0, "{aspect}: {ndc}");
            }
        }
    }
}
