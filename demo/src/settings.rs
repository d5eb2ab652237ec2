//! What the side panel edits: rasterizer state and frame setup.
//!
//! Everything here maps one-to-one onto Gallium state: the panel changes a
//! [`RenderSettings`], and the renderer turns it into a rasterizer CSO
//! ([`RenderSettings::rasterizer`]), a scissor, a framebuffer size, a sample
//! count and a screen's thread count.

use ferropipe::{Face, PolygonMode};
use ferropipe::{RasterizerState, ScissorState};

/// Live-editable rendering settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSettings {
    pub cull_face: Face,
    /// Gallium's winding, measured in window space with y down.  The demo's
    /// viewport flips y (row 0 is the top of the picture), so a triangle
    /// that is counter-clockwise in GL's NDC is counter-clockwise here too:
    /// `true` is GL's default `glFrontFace(GL_CCW)`.
    pub front_ccw: bool,
    pub fill_front: PolygonMode,
    pub fill_back: PolygonMode,
    pub offset_tri: bool,
    pub offset_units: f32,
    pub offset_scale: f32,
    pub flatshade: bool,
    pub line_width: f32,
    /// Scissor enable and rectangle as fractions of the frame
    /// (`[minx, miny, maxx, maxy]`), so it survives resolution changes.
    pub scissor: bool,
    pub scissor_rect: [f32; 4],
    /// 4x MSAA with a resolve blit into the displayed image.
    pub msaa: bool,
    /// Show the overdraw heat-map (a user pipeline system,
    /// `examples/custom_system.rs`) instead of the image; built-in scenes.
    pub overdraw: bool,
    /// Worker threads (0 = one per CPU).  Changing it recreates the screen.
    pub threads: usize,
    pub width: u32,
    pub height: u32,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            cull_face: Face::Back,
            front_ccw: true,
            fill_front: PolygonMode::Fill,
            fill_back: PolygonMode::Fill,
            offset_tri: false,
            offset_units: 0.0,
            offset_scale: 0.0,
            flatshade: false,
            line_width: 1.0,
            scissor: false,
            scissor_rect: [0.1, 0.1, 0.9, 0.9],
            msaa: false,
            overdraw: false,
            threads: 0,
            width: 800,
            height: 600,
        }
    }
}

/// Largest frame the panel offers (and `--width`/`--height` accept).
pub const MAX_DIMENSION: u32 = 4096;

impl RenderSettings {
    /// The rasterizer CSO these settings describe.
    pub fn rasterizer(&self) -> RasterizerState {
        RasterizerState {
            cull_face: self.cull_face,
            front_ccw: self.front_ccw,
            fill_front: self.fill_front,
            fill_back: self.fill_back,
            offset_tri: self.offset_tri,
            offset_line: self.offset_tri,
            offset_point: self.offset_tri,
            offset_units: self.offset_units,
            offset_scale: self.offset_scale,
            flatshade: self.flatshade,
            line_width: self.line_width,
            scissor: self.scissor,
            multisample: self.msaa,
            // `line_rectangular` must equal `multisample || line_smooth`
            // (FORMAT.md, Rasterizer).
            line_rectangular: self.msaa,
            // The demo's projection maps depth to 0..1 (see `OrbitCamera`).
            clip_halfz: true,
            // The viewport's y scale is negative (gfx.rs: NDC +y is row 0),
            // so GL's lower-left origin is row h: GL's top-left fill rule
            // is Gallium's bottom-edge rule here, and a captured frame is
            // then expressible on GL (FORMAT.md, Rasterizer).
            bottom_edge_rule: true,
            ..RasterizerState::default()
        }
    }

    /// The scissor rectangle in pixels (max exclusive, never empty).
    pub fn scissor_state(&self) -> ScissorState {
        let [x0, y0, x1, y1] = self.scissor_rect;
        let px = |f: f32, size: u32| ((f.clamp(0.0, 1.0) * size as f32).round() as u32).min(size);
        let (minx, maxx) = (px(x0.min(x1), self.width), px(x0.max(x1), self.width));
        let (miny, maxy) = (px(y0.min(y1), self.height), px(y0.max(y1), self.height));
        ScissorState {
            minx,
            miny,
            maxx: maxx.max(minx + 1).min(self.width),
            maxy: maxy.max(miny + 1).min(self.height),
        }
    }

    /// Samples per pixel of the render target.
    pub fn samples(&self) -> u32 {
        if self.msaa { 4 } else { 1 }
    }

    /// Clamps the frame size into `1..=MAX_DIMENSION`.
    pub fn clamp_size(&mut self) {
        self.width = self.width.clamp(1, MAX_DIMENSION);
        self.height = self.height.clamp(1, MAX_DIMENSION);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rasterizer_reflects_every_setting() {
        let s = RenderSettings {
            cull_face: Face::Front,
            front_ccw: false,
            fill_front: PolygonMode::Line,
            fill_back: PolygonMode::Point,
            offset_tri: true,
            offset_units: 2.0,
            offset_scale: 1.5,
            flatshade: true,
            line_width: 3.0,
            scissor: true,
            msaa: true,
            ..Default::default()
        };
        let r = s.rasterizer();
        assert_eq!(r.cull_face, Face::Front);
        assert!(!r.front_ccw && r.flatshade && r.scissor && r.multisample);
        assert_eq!(
            (r.fill_front, r.fill_back),
            (PolygonMode::Line, PolygonMode::Point)
        );
        assert!(r.offset_tri && r.offset_units == 2.0 && r.offset_scale == 1.5);
        assert_eq!(r.line_width, 3.0);
        assert!(r.line_rectangular, "line_rectangular follows multisample");
        assert!(r.clip_halfz && r.half_pixel_center && r.depth_clip_near);
        assert_eq!(s.samples(), 4);
    }

    #[test]
    fn scissor_is_in_pixels_and_never_empty() {
        let s = RenderSettings {
            width: 200,
            height: 100,
            scissor_rect: [0.9, 0.5, 0.1, 0.5],
            ..Default::default()
        };
        let r = s.scissor_state();
        assert_eq!((r.minx, r.maxx), (20, 180));
        assert_eq!((r.miny, r.maxy), (50, 51));
        let all = RenderSettings {
            scissor_rect: [-1.0, -1.0, 2.0, 2.0],
            ..s
        };
        let r = all.scissor_state();
        assert_eq!((r.minx, r.miny, r.maxx, r.maxy), (0, 0, 200, 100));
    }
}
