//! An orbit camera: drag to rotate, wheel to zoom.

use glam::{Mat4, Vec3};

/// Looks at `target` from `distance` away, at `yaw` around y and `pitch`
/// above the xz plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub yaw: f32,
    pub pitch: f32,
    pub distance: f32,
    /// Vertical field of view, radians.
    pub fov_y: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        OrbitCamera {
            target: Vec3::ZERO,
            yaw: 0.6,
            pitch: 0.35,
            distance: 3.2,
            fov_y: 50f32.to_radians(),
        }
    }
}

impl OrbitCamera {
    /// Limits keep the up vector well defined and the near plane outside
    /// the scenes.
    const MAX_PITCH: f32 = 1.5;
    const MIN_DISTANCE: f32 = 0.5;
    const MAX_DISTANCE: f32 = 200.0;

    /// Eye position in world space.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + Vec3::new(sy * cp, sp, cy * cp) * self.distance
    }

    /// View matrix (right-handed, y up).
    pub fn view(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.eye(), self.target, Vec3::Y)
    }

    /// Clip-from-world for an aspect ratio, depth mapped to 0..1
    /// (`clip_halfz`); the far plane scales with the orbit distance.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        self.proj(aspect) * self.view()
    }

    /// Clip-from-view for an aspect ratio (see [`OrbitCamera::view_proj`]).
    pub fn proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.02).max(0.01);
        let far = self.distance * 20.0 + 50.0;
        // Depth 0..1 (`clip_halfz`), y up: glam's DirectX convention.
        glam::camera::rh::proj::directx::perspective(self.fov_y, aspect.max(1e-3), near, far)
    }

    /// Orbits `centre` from far enough that a sphere of `radius` fits the
    /// vertical field of view (a model's bounds; 15% margin).
    pub fn framing(centre: Vec3, radius: f32) -> Self {
        let c = OrbitCamera::default();
        OrbitCamera {
            target: centre,
            distance: radius.max(1e-3) / (c.fov_y * 0.5).sin() * 1.15,
            ..c
        }
    }

    /// Rotates by a drag of `(dx, dy)` pixels.
    pub fn drag(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.01;
        self.pitch = (self.pitch + dy * 0.01).clamp(-Self::MAX_PITCH, Self::MAX_PITCH);
    }

    /// Zooms by wheel `steps` (positive = closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance =
            (self.distance * (-steps * 0.1).exp()).clamp(Self::MIN_DISTANCE, Self::MAX_DISTANCE);
    }

    /// Advances the yaw by `radians` (the headless mode's orbit).
    pub fn orbit(&mut self, radians: f32) {
        self.yaw += radians;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_projects_to_centre_in_front() {
        let c = OrbitCamera::default();
        let p = c.view_proj(1.5) * c.target.extend(1.0);
        assert!(p.x.abs() < 1e-5 && p.y.abs() < 1e-5);
        let z = p.z / p.w;
        assert!(z > 0.0 && z < 1.0, "clip_halfz depth {z}");
    }

    #[test]
    fn controls_stay_in_range() {
        let mut c = OrbitCamera::default();
        c.drag(0.0, 1e6);
        assert!(c.pitch <= 1.5);
        c.zoom(1e3);
        assert_eq!(c.distance, 0.5);
        c.zoom(-1e3);
        assert_eq!(c.distance, 200.0);
        let d = c.eye().distance(c.target);
        assert!((d - 200.0).abs() < 1e-2);
    }
}
