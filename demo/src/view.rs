//! The window's decisions as plain functions: where the frame goes, how it
//! is filtered, what the overlay's frame line and heat-map legend say,
//! which paths the *File* field submits and which go into *Recent*.
//!
//! The window itself (`app.rs`) is smoke-tested under Xvfb and by driving
//! egui headless; these functions carry the logic and have unit tests.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use eframe::egui::{self, Color32, Rect, TextureOptions, pos2, vec2};

use crate::render::{FrameContent, ShownFrame};

/// Where a frame of `frame` physical pixels is shown in `area` (points,
/// `ppp` physical pixels per point): scaled to fit with its aspect ratio
/// kept, centred, its corner on a whole physical pixel.
///
/// The size is rounded down to whole pixels with a 10⁻³ slack for float
/// error, so a frame rendered at the area's own size (the window's
/// "resolution follows window", which takes the floor of the area's
/// physical size) is shown exactly 1:1: if the limiting axis scales by
/// `s < 1 + 1/f`, the other axis, which fits, cannot gain a whole pixel
/// either.
pub fn fit_rect(frame: [u32; 2], area: Rect, ppp: f32) -> Rect {
    let (fw, fh) = (frame[0].max(1) as f32, frame[1].max(1) as f32);
    let (aw, ah) = (area.width() * ppp, area.height() * ppp);
    if !(aw >= 1.0 && ah >= 1.0) {
        return Rect::from_min_size(area.min, vec2(0.0, 0.0));
    }
    let scale = (aw / fw).min(ah / fh);
    let w = (fw * scale + 1e-3).floor().clamp(1.0, aw.floor().max(1.0));
    let h = (fh * scale + 1e-3).floor().clamp(1.0, ah.floor().max(1.0));
    let x = (area.min.x * ppp + (aw - w) * 0.5).round();
    let y = (area.min.y * ppp + (ah - h) * 0.5).round();
    Rect::from_min_size(pos2(x, y) / ppp, vec2(w, h) / ppp)
}

/// The frame's texture filter where it is shown as `shown` (points): 1:1,
/// NEAREST, so every pixel is ferropipe's exactly; scaled, LINEAR, so a
/// small scene file enlarged to the window is not blocky and a large frame
/// shrunk into it does not shimmer.
pub fn texture_options(frame: [u32; 2], shown: Rect, ppp: f32) -> TextureOptions {
    let px = [
        (shown.width() * ppp).round() as u32,
        (shown.height() * ppp).round() as u32,
    ];
    if px == frame {
        TextureOptions::NEAREST
    } else {
        TextureOptions::LINEAR
    }
}

/// The overlay's frame line: the size and sample count of what is on
/// screen (a scene file's own framebuffer, not the panel's resolution),
/// the worker threads that rendered it, and the display scale when it is
/// not 1:1.
pub fn frame_line(frame: &ShownFrame, scale: f32) -> String {
    let mut s = format!("{}x{}", frame.width, frame.height);
    if frame.samples > 1 {
        s.push_str(&format!(" {}xMSAA", frame.samples));
    }
    s.push_str(match frame.content {
        FrameContent::Builtin => "",
        FrameContent::Model => " glTF model",
        FrameContent::SceneFile => " scene file",
        FrameContent::HeatMap => " overdraw heat-map",
    });
    s.push_str(&format!("  {} threads", frame.threads));
    if (scale - 1.0).abs() > 1e-3 {
        s.push_str(&format!("  shown at {scale:.2}x"));
    }
    s
}

/// The heat-map legend: one swatch per fragment count, `0..=max`, in the
/// image's own ramp ([`crate::overdraw::heat_color`]); the last reads
/// `max+` as the image shows every count from `max` up in that colour.
pub fn legend(max: u32) -> Vec<(String, Color32)> {
    (0..=max)
        .map(|count| {
            let [r, g, b, _] = crate::overdraw::heat_color(count, max);
            let label = if count == max {
                format!("{count}+")
            } else {
                count.to_string()
            };
            (label, Color32::from_rgb(r, g, b))
        })
        .collect()
}

/// The path the *File* field submits: its text trimmed, and without one
/// pair of surrounding quotes (what a file manager's "copy path" gives);
/// `None` for an empty field.
pub fn submitted_path(text: &str) -> Option<PathBuf> {
    let t = text.trim();
    let t = ['"', '\'']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t)
        .trim();
    (!t.is_empty()).then(|| PathBuf::from(t))
}

/// Entries *Recent* keeps, newest first.
pub const RECENT_MAX: usize = 8;

/// Records the outcome of loading `path`: a file that loaded moves to the
/// front of `recent`; one that did not is dropped from it, so a mistyped
/// path is never offered again, nor a file since deleted or broken.
pub fn admit_recent(recent: &mut VecDeque<PathBuf>, path: &Path, loaded: bool) {
    recent.retain(|p| p != path);
    if loaded {
        recent.push_front(path.to_owned());
        recent.truncate(RECENT_MAX);
    }
}

/// The error message as shown in the frame: wrapped to `width` points.
pub fn error_galley(
    painter: &egui::Painter,
    message: &str,
    width: f32,
) -> std::sync::Arc<egui::Galley> {
    painter.layout(
        format!("ferropipe cannot render this frame:\n{message}"),
        egui::FontId::proportional(16.0),
        Color32::from_rgb(255, 120, 100),
        width.max(40.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(x: f32, y: f32, w: f32, h: f32) -> Rect {
        Rect::from_min_size(pos2(x, y), vec2(w, h))
    }

    #[test]
    fn a_small_frame_is_scaled_up_to_fit_and_centred() {
        // The test card (256x192, 4:3) in a wide 1000x500 area: height
        // limits, 500 / 192 = 2.604x, 666 px wide, centred.
        let r = fit_rect([256, 192], area(250.0, 0.0, 1000.0, 500.0), 1.0);
        assert_eq!((r.width(), r.height()), (666.0, 500.0));
        assert_eq!((r.min.x, r.min.y), (250.0 + 167.0, 0.0));
        assert!((r.center().x - 750.0).abs() <= 0.5);
        // A tall area: width limits.
        let r = fit_rect([256, 192], area(0.0, 0.0, 400.0, 900.0), 1.0);
        assert_eq!((r.width(), r.height()), (400.0, 300.0));
        assert_eq!(r.min.y, 300.0);
    }

    #[test]
    fn a_large_frame_is_scaled_down_keeping_its_aspect() {
        let r = fit_rect([4096, 1024], area(10.0, 20.0, 800.0, 600.0), 1.0);
        assert_eq!((r.width(), r.height()), (800.0, 200.0));
        assert_eq!(r.min, pos2(10.0, 20.0 + 200.0));
        let a = r.width() / r.height();
        assert!((a - 4.0).abs() < 1e-3, "aspect {a}");
    }

    #[test]
    fn a_frame_sized_to_the_area_is_shown_one_to_one() {
        // "Resolution follows window": the frame is the floor of the
        // area's physical size, whatever the fractions.
        for (x, w, h, ppp) in [
            (250.0, 850.0, 452.0, 1.0),
            (250.5, 850.7, 452.3, 1.0),
            (125.25, 425.4, 226.3, 2.0),
            (100.0, 999.9, 300.01, 1.5),
        ] {
            let a = area(x, 7.0, w, h);
            let frame = [(w * ppp) as u32, (h * ppp) as u32];
            let r = fit_rect(frame, a, ppp);
            let px = [
                (r.width() * ppp).round() as u32,
                (r.height() * ppp).round() as u32,
            ];
            assert_eq!(px, frame, "{a:?} at {ppp}");
            assert_eq!(texture_options(frame, r, ppp), TextureOptions::NEAREST);
            // On whole physical pixels and inside the area.
            assert_eq!((r.min.x * ppp).fract(), 0.0);
            assert!(r.min.x >= a.min.x - 0.5 / ppp && r.max.x <= a.max.x + 0.5 / ppp);
            assert!(r.min.y >= a.min.y - 0.5 / ppp && r.max.y <= a.max.y + 0.5 / ppp);
        }
    }

    #[test]
    fn scaled_frames_are_filtered_linearly() {
        let r = fit_rect([256, 192], area(0.0, 0.0, 1000.0, 500.0), 1.0);
        assert_eq!(texture_options([256, 192], r, 1.0), TextureOptions::LINEAR);
    }

    #[test]
    fn degenerate_areas_and_frames_give_no_nan() {
        let r = fit_rect([256, 192], area(5.0, 5.0, 0.0, 300.0), 1.0);
        assert_eq!(r.width(), 0.0);
        let r = fit_rect([0, 0], area(0.0, 0.0, 100.0, 50.0), 1.0);
        assert!(r.width().is_finite() && r.width() <= 100.0 && r.height() <= 50.0);
    }

    #[test]
    fn the_frame_line_describes_what_is_on_screen() {
        let file = ShownFrame {
            width: 256,
            height: 192,
            samples: 1,
            threads: 2,
            content: FrameContent::SceneFile,
        };
        assert_eq!(
            frame_line(&file, 2.604),
            "256x192 scene file  2 threads  shown at 2.60x"
        );
        let msaa = ShownFrame {
            width: 800,
            height: 600,
            samples: 4,
            threads: 8,
            content: FrameContent::Model,
        };
        assert_eq!(
            frame_line(&msaa, 1.0),
            "800x600 4xMSAA glTF model  8 threads"
        );
        let heat = ShownFrame {
            content: FrameContent::HeatMap,
            ..msaa
        };
        assert!(frame_line(&heat, 1.0).contains("overdraw heat-map"));
    }

    #[test]
    fn the_legend_is_the_images_ramp() {
        use crate::overdraw::{Overdraw, heat_map};
        let max = crate::render::HEAT_MAP_MAX;
        let l = legend(max);
        assert_eq!(l.len() as u32, max + 1);
        assert_eq!(l[0], ("0".to_owned(), Color32::BLACK));
        assert_eq!(l[1].0, "1");
        assert_eq!(l[max as usize].0, format!("{max}+"));
        // Every swatch is the colour the heat-map gives that count, and
        // counts past the end share the last swatch.
        let counts: Vec<u32> = (0..=max + 3).collect();
        let map = Overdraw {
            width: counts.len() as u32,
            height: 1,
            counts: counts.clone(),
        };
        let image = heat_map(&map, max);
        for (i, &c) in counts.iter().enumerate() {
            let (_, swatch) = &l[c.min(max) as usize];
            assert_eq!(
                &image[i * 4..i * 4 + 3],
                &swatch.to_array()[..3],
                "count {c}"
            );
        }
        // The ramp is distinguishable: no two swatches alike.
        for i in 1..l.len() {
            assert_ne!(l[i - 1].1, l[i].1, "swatches {} and {i}", i - 1);
        }
        // Blue at 1, red at the top.
        let [r, _, b, _] = l[1].1.to_array();
        assert!(b > r);
        let [r, g, b, _] = l[max as usize].1.to_array();
        assert!(r > 200 && g < 50 && b < 50);
    }

    #[test]
    fn the_file_field_submits_trimmed_unquoted_paths() {
        assert_eq!(submitted_path("  a/b.glb \n"), Some("a/b.glb".into()));
        assert_eq!(
            submitted_path("'/tmp/my scene.json'"),
            Some("/tmp/my scene.json".into())
        );
        assert_eq!(submitted_path("\"x.gltf\""), Some("x.gltf".into()));
        assert_eq!(submitted_path("   "), None);
        assert_eq!(submitted_path("''"), None);
        // Unbalanced quotes are part of the name.
        assert_eq!(submitted_path("'x.glb"), Some("'x.glb".into()));
    }

    #[test]
    fn only_files_that_loaded_are_recent() {
        let mut recent = VecDeque::new();
        admit_recent(&mut recent, Path::new("typo.glb"), false);
        assert!(recent.is_empty(), "a bad path went into Recent");
        admit_recent(&mut recent, Path::new("a.glb"), true);
        admit_recent(&mut recent, Path::new("b.json"), true);
        admit_recent(&mut recent, Path::new("a.glb"), true);
        assert_eq!(recent, [PathBuf::from("a.glb"), PathBuf::from("b.json")]);
        // A recent file that stops loading leaves the list.
        admit_recent(&mut recent, Path::new("b.json"), false);
        assert_eq!(recent, [PathBuf::from("a.glb")]);
        for i in 0..20 {
            admit_recent(&mut recent, Path::new(&format!("{i}.glb")), true);
        }
        assert_eq!(recent.len(), RECENT_MAX);
        assert_eq!(recent[0], PathBuf::from("19.glb"));
    }
}
