//! The demo window (eframe, glow backend): ferropipe's frames in the
//! middle, state controls on the left, a counters overlay over the frame,
//! and puffin's live flamegraph at the bottom.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use eframe::egui::{self, Color32, RichText};
use ferropipe::{Face, PolygonMode};
use ferropipe_profiling::{self as profiling, Counter, ProfileServer, Stage};

use crate::camera::OrbitCamera;
use crate::render::{FrameContent, FrameReport, HEAT_MAP_MAX, Renderer, SceneSource};
use crate::scenes::{SceneKind, SceneParams};
use crate::settings::{MAX_DIMENSION, RenderSettings};
use crate::view;

/// The *File* field's egui id (tests focus it to type a path).
pub const FILE_FIELD_ID: &str = "ferropipe-file-field";

/// How the window was asked to start.
pub struct WindowOptions {
    pub source: SceneSource,
    pub settings: RenderSettings,
    pub params: SceneParams,
    /// Frame size follows the central panel (true unless `--width`/`--height`).
    pub fit_to_window: bool,
    /// Freeze animation at this time (deterministic frames for tests).
    pub fixed_time: Option<f32>,
    pub profile_server: Option<ProfileServer>,
    /// Capture the window after `screenshot_after` frames, write the PNG
    /// and a `.json` layout beside it, and exit.
    pub screenshot: Option<PathBuf>,
    pub screenshot_after: u32,
    pub window_size: [f32; 2],
    /// Where "Capture frame" writes (`--capture DIR`).
    pub capture_dir: PathBuf,
}

/// Runs the window until it is closed.
pub fn run(options: WindowOptions) -> Result<(), eframe::Error> {
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("ferropipe demo")
            .with_inner_size(options.window_size),
        renderer: eframe::Renderer::Glow,
        // The screenshot must show what was painted, not a pending swap.
        vsync: options.screenshot.is_none(),
        ..Default::default()
    };
    eframe::run_native(
        "ferropipe demo",
        native,
        Box::new(|cc| {
            cc.egui_ctx.set_pixels_per_point(1.0);
            Ok(Box::new(DemoApp::new(options)))
        }),
    )
}

/// Exponentially smoothed frame statistics.
#[derive(Default)]
struct Smoothed {
    frame_ms: f64,
    render_ms: f64,
}

impl Smoothed {
    fn add(&mut self, frame_ms: f64, render_ms: f64) {
        let k = if self.frame_ms == 0.0 { 1.0 } else { 0.1 };
        self.frame_ms += (frame_ms - self.frame_ms) * k;
        self.render_ms += (render_ms - self.render_ms) * k;
    }
}

/// Where things are on screen, for the automated window test.
#[derive(Default, Clone)]
pub struct Layout {
    /// The area the frame is fitted into (the central panel), physical
    /// pixels.
    pub area: Option<egui::Rect>,
    /// The rendered frame as shown (scaled to fit), physical pixels.
    pub image: Option<egui::Rect>,
    /// The error message, physical pixels.
    pub error: Option<egui::Rect>,
    /// The overlay's text lines.
    pub overlay_lines: Vec<String>,
    /// Whether the overlay shows the heat-map legend.
    pub legend: bool,
    /// The flamegraph panel, physical pixels.
    pub profiler: Option<egui::Rect>,
    /// The counters overlay (drawn over the frame), physical pixels.
    pub overlay: Option<egui::Rect>,
}

/// The window's state; [`DemoApp::show`] runs one update on any egui
/// context (eframe's, or a headless one in tests).
pub struct DemoApp {
    renderer: Option<Renderer>,
    settings: RenderSettings,
    params: SceneParams,
    camera: OrbitCamera,
    source: SceneSource,
    fit_to_window: bool,
    fixed_time: Option<f32>,
    paused_at: Option<f32>,
    texture: Option<egui::TextureHandle>,
    /// Where the frame is fitted (the central panel, points) and the
    /// points-to-pixels factor, from this update's layout.
    frame_area: egui::Rect,
    ppp: f32,
    /// Display scale of the frame shown (1 = 1:1).
    shown_scale: f32,
    error: Option<String>,
    report: Option<FrameReport>,
    smoothed: Smoothed,
    last_update: Option<Instant>,
    frames: u64,
    rendered_frames: u64,
    show_profiler: bool,
    show_overlay: bool,
    scene_path: String,
    recent: VecDeque<PathBuf>,
    profile_server: Option<ProfileServer>,
    screenshot: Option<PathBuf>,
    screenshot_after: u32,
    screenshot_requested: bool,
    layout: Layout,
    capture_dir: PathBuf,
    /// Frames captured so far (names `frame_N.json`).
    captures: u32,
    /// The last capture's outcome, shown under the button.
    capture_status: Option<String>,
}

impl DemoApp {
    /// Creates the renderer and loads `options.source`.
    pub fn new(options: WindowOptions) -> Self {
        profiling::set_enabled(true);
        let mut app = DemoApp {
            renderer: None,
            settings: options.settings,
            params: options.params,
            camera: options.source.default_camera(),
            source: options.source,
            fit_to_window: options.fit_to_window,
            fixed_time: options.fixed_time,
            paused_at: None,
            texture: None,
            frame_area: egui::Rect::NOTHING,
            ppp: 1.0,
            shown_scale: 1.0,
            error: None,
            report: None,
            smoothed: Smoothed::default(),
            last_update: None,
            frames: 0,
            rendered_frames: 0,
            show_profiler: true,
            show_overlay: true,
            scene_path: String::new(),
            recent: VecDeque::new(),
            profile_server: options.profile_server,
            screenshot: options.screenshot,
            screenshot_after: options.screenshot_after,
            screenshot_requested: false,
            layout: Layout::default(),
            capture_dir: options.capture_dir,
            captures: 0,
            capture_status: None,
        };
        app.rebuild_renderer();
        app
    }

    /// (Re)creates the screen and context (thread count changed, or start).
    fn rebuild_renderer(&mut self) {
        self.renderer = None;
        self.error = None;
        match Renderer::new(self.settings.threads) {
            Ok(r) => {
                self.renderer = Some(r);
                self.load_scene(self.source.clone());
            }
            Err(e) => self.error = Some(format!("creating the screen: {e}")),
        }
    }

    fn load_scene(&mut self, source: SceneSource) {
        if let Some(path) = source.path() {
            self.scene_path = path.display().to_string();
        }
        if self.source != source {
            self.camera = source.default_camera();
        }
        self.source = source.clone();
        self.error = None;
        let Some(r) = &mut self.renderer else {
            return;
        };
        let path = source.path().map(ToOwned::to_owned);
        // The file's name (the error names the full path where it
        // matters, and the *File* field shows it).
        let label = source
            .path()
            .and_then(|p| p.file_name())
            .map_or_else(|| source.label(), |n| n.to_string_lossy().into_owned());
        let loaded = match r.set_scene(source, &self.params) {
            Ok(()) => {
                // A model is framed by its own bounds.
                if let Some(c) = r.model_camera() {
                    self.camera = c;
                }
                true
            }
            Err(e) => {
                // The message replaces the last frame: a stale picture
                // under it would look like the new file's.
                self.error = Some(format!("loading {label}: {e}"));
                self.texture = None;
                self.report = None;
                false
            }
        };
        // Only a file that loaded goes into *Recent* (a mistyped path
        // would otherwise be offered again).
        if let Some(path) = path {
            view::admit_recent(&mut self.recent, &path, loaded);
        }
    }

    /// The current error message, if the frame shows one.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The scene shown (or that failed to load).
    pub fn source(&self) -> &SceneSource {
        &self.source
    }

    /// *Recent*, newest first.
    pub fn recent(&self) -> Vec<PathBuf> {
        self.recent.iter().cloned().collect()
    }

    /// Where things were drawn in the last update.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The last frame's report.
    pub fn report(&self) -> Option<&FrameReport> {
        self.report.as_ref()
    }

    /// Shows or hides the flamegraph panel.
    pub fn set_show_profiler(&mut self, on: bool) {
        self.show_profiler = on;
    }

    /// Files dropped on the window (where the platform reports them): the
    /// first one with a path is loaded.
    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.iter().find_map(|f| f.path.clone()));
        if let Some(path) = dropped {
            self.load_scene(SceneSource::from_path(path));
        }
    }

    fn render(&mut self, ctx: &egui::Context) {
        let Some(renderer) = &mut self.renderer else {
            return;
        };
        if !renderer.has_scene() {
            // The scene failed to load; its error stays on screen.
            return;
        }
        let time = self.fixed_time.or(self.paused_at);
        let result = renderer.render(&self.settings, &self.camera, &self.params, time);
        if let Some(c) = renderer.take_capture_result() {
            self.capture_status = Some(match c {
                Ok(s) => format!("captured {} ({} calls)", s.scene.display(), s.calls),
                Err(e) => e.to_string(),
            });
        }
        match result {
            Ok(report) => {
                self.error = None;
                self.rendered_frames += 1;
                if let Some((pixels, w, h)) = renderer.pixels() {
                    profiling::scope!("upload_texture");
                    let image = opaque_image(pixels, w as usize, h as usize);
                    // Filtered as it will be shown (viewport: the same fit).
                    let fit = view::fit_rect([w, h], self.frame_area, self.ppp);
                    let options = view::texture_options([w, h], fit, self.ppp);
                    match &mut self.texture {
                        Some(t) => t.set(image, options),
                        None => {
                            self.texture = Some(ctx.load_texture("ferropipe-frame", image, options))
                        }
                    }
                }
                self.report = Some(report);
            }
            Err(e) => {
                self.error = Some(e.to_string());
                self.texture = None;
                self.report = None;
            }
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        let before = self.settings.clone();
        let params_before = self.params;
        ui.heading("Scene");
        let mut picked = None;
        for kind in SceneKind::ALL {
            let selected = self.source == SceneSource::Builtin(kind);
            if ui.radio(selected, kind.label()).clicked() && !selected {
                picked = Some(SceneSource::Builtin(kind));
            }
        }
        match self.source {
            SceneSource::Builtin(SceneKind::Field) => {
                ui.add(
                    egui::Slider::new(&mut self.params.field_side, 1..=256).text("cubes per side"),
                );
                ui.label(format!(
                    "{} instances",
                    self.params.field_side * self.params.field_side
                ));
            }
            SceneSource::Builtin(SceneKind::Stress) => {
                ui.add(
                    egui::Slider::new(&mut self.params.stress_triangles, 1_000..=4_000_000)
                        .logarithmic(true)
                        .text("triangles"),
                );
            }
            _ => {}
        }
        let mut enter = false;
        ui.horizontal(|ui| {
            ui.label("File");
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut self.scene_path)
                        .id(egui::Id::new(FILE_FIELD_ID)),
                )
                .on_hover_text(
                    "a glTF 2.0 model (.glb / .gltf) or a gallium-scene/1 .json; \
                     Enter loads it, or drop a file on the window",
                );
            // A single-line field gives up focus on Enter.
            enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        });
        if (ui.button("Open file").clicked() || enter)
            && let Some(path) = view::submitted_path(&self.scene_path)
        {
            picked = Some(SceneSource::from_path(path));
        }
        if ui
            .button("Capture frame")
            .on_hover_text(format!(
                "record the next frame as a gallium-scene/1 file in {} (docs/capture.md)",
                self.capture_dir.display()
            ))
            .clicked()
            && let Some(r) = self.renderer.as_mut()
        {
            r.capture_next_frame(self.capture_dir.clone(), format!("frame_{}", self.captures));
            self.captures += 1;
            self.capture_status = Some("capturing the next frame…".into());
        }
        if let Some(s) = &self.capture_status {
            ui.label(RichText::new(s).small());
        }
        if !self.recent.is_empty() {
            ui.label("Recent:");
            for p in self.recent.clone() {
                if ui.small_button(p.display().to_string()).clicked() {
                    self.scene_path = p.display().to_string();
                    picked = Some(SceneSource::from_path(p));
                }
            }
        }
        if let Some(player) = self.renderer.as_mut().and_then(|r| r.file_player()) {
            let names = player.output_names();
            if names.len() > 1 {
                let current = names.get(player.output).cloned().unwrap_or_default();
                egui::ComboBox::from_label("output")
                    .selected_text(current)
                    .show_ui(ui, |ui| {
                        for (i, n) in names.iter().enumerate() {
                            ui.selectable_value(&mut player.output, i, n);
                        }
                    });
            }
            ui.label(
                RichText::new("scene files set their own state: the controls below do not apply")
                    .small()
                    .color(Color32::GRAY),
            );
        }
        if matches!(self.source, SceneSource::Model(_)) {
            ui.label(
                RichText::new("glTF materials choose culling (double-sided or back)")
                    .small()
                    .color(Color32::GRAY),
            );
        }
        let mut paused = self.paused_at.is_some();
        if ui.checkbox(&mut paused, "Pause animation").changed() {
            self.paused_at = if paused {
                self.renderer.as_ref().map(|r| r.scene_time())
            } else {
                None
            };
        }

        ui.separator();
        ui.heading("Rasterizer");
        let s = &mut self.settings;
        egui::ComboBox::from_label("cull_face")
            .selected_text(s.cull_face.gallium_name())
            .show_ui(ui, |ui| {
                for f in Face::ALL {
                    ui.selectable_value(&mut s.cull_face, *f, f.gallium_name());
                }
            });
        ui.horizontal(|ui| {
            ui.label("front face");
            ui.radio_value(&mut s.front_ccw, true, "CCW");
            ui.radio_value(&mut s.front_ccw, false, "CW");
        });
        for (label, mode) in [
            ("fill_front", &mut s.fill_front),
            ("fill_back", &mut s.fill_back),
        ] {
            egui::ComboBox::from_label(label)
                .selected_text(mode.gallium_name())
                .show_ui(ui, |ui| {
                    for m in PolygonMode::ALL {
                        ui.selectable_value(mode, *m, m.gallium_name());
                    }
                });
        }
        ui.checkbox(&mut s.offset_tri, "polygon offset");
        ui.add_enabled(
            s.offset_tri,
            egui::Slider::new(&mut s.offset_units, -64.0..=64.0).text("offset_units"),
        );
        ui.add_enabled(
            s.offset_tri,
            egui::Slider::new(&mut s.offset_scale, -8.0..=8.0).text("offset_scale"),
        );
        ui.checkbox(&mut s.flatshade, "flatshade");
        ui.add(egui::Slider::new(&mut s.line_width, 1.0..=16.0).text("line_width"));
        ui.checkbox(&mut s.scissor, "scissor");
        if s.scissor {
            for (i, name) in ["minx", "miny", "maxx", "maxy"].iter().enumerate() {
                ui.add(egui::Slider::new(&mut s.scissor_rect[i], 0.0..=1.0).text(*name));
            }
        }

        ui.separator();
        ui.heading("Frame");
        ui.checkbox(&mut s.msaa, "4x MSAA");
        ui.checkbox(&mut s.overdraw, "overdraw heat-map (custom system)");
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        ui.add(egui::Slider::new(&mut s.threads, 0..=cpus * 2).text("threads (0 = per CPU)"));
        ui.checkbox(&mut self.fit_to_window, "resolution follows window");
        ui.add_enabled_ui(!self.fit_to_window, |ui| {
            ui.add(
                egui::DragValue::new(&mut s.width)
                    .range(1..=MAX_DIMENSION)
                    .prefix("w "),
            );
            ui.add(
                egui::DragValue::new(&mut s.height)
                    .range(1..=MAX_DIMENSION)
                    .prefix("h "),
            );
        });
        ui.separator();
        ui.checkbox(&mut self.show_overlay, "counters overlay");
        ui.checkbox(&mut self.show_profiler, "flamegraph panel");
        if let Some(server) = &self.profile_server {
            ui.label(format!("puffin_http on {}", server.addr()));
        }
        ui.label(
            RichText::new("drag: orbit · wheel: zoom")
                .small()
                .color(Color32::GRAY),
        );

        if let Some(source) = picked {
            self.load_scene(source);
        }
        if self.settings.threads != before.threads {
            self.rebuild_renderer();
        }
        if self.params != params_before && self.error.is_some() {
            // Parameter changes re-create buffers on the next frame.
            self.error = None;
        }
    }

    fn overlay(&mut self, ui: &mut egui::Ui, origin: egui::Pos2) {
        let mut lines = Vec::new();
        let fps = if self.smoothed.frame_ms > 0.0 {
            1000.0 / self.smoothed.frame_ms
        } else {
            0.0
        };
        lines.push(format!(
            "{fps:5.1} FPS   frame {:5.1} ms   ferropipe {:5.1} ms",
            self.smoothed.frame_ms, self.smoothed.render_ms
        ));
        if let Some(r) = &self.report {
            // The frame on screen: a scene file's own size, a model's or
            // a built-in scene's target (docs: README, "Overlay").
            lines.push(view::frame_line(&r.frame, self.shown_scale));
            // The pipeline's own counters over this frame
            // (docs/profiling.md).
            let c = &r.counters;
            let n = |k: Counter| thousands(c.get(k));
            lines.push(format!("triangles in      {}", n(Counter::PrimitivesIn)));
            lines.push(format!(
                "after clipping    {}",
                n(Counter::PrimitivesAfterClip)
            ));
            lines.push(format!(
                "after culling     {}",
                n(Counter::PrimitivesAfterCull)
            ));
            lines.push(format!(
                "fragments shaded  {}   killed {}",
                n(Counter::FragmentsShaded),
                n(Counter::FragmentsKilled)
            ));
            lines.push(format!(
                "tiles touched     {}   fully covered {}   bins {}",
                n(Counter::TilesTouched),
                n(Counter::TilesFullyCovered),
                n(Counter::BinsEmitted)
            ));
            // Wall time of each stage's system runs; `tiles` is the tile
            // pass: raster, fragment shading and merging fused.
            let stages: Vec<String> = Stage::ALL
                .iter()
                .map(|s| format!("{} {:.2}", s.name(), c.get(s.time_counter()) as f64 / 1e6))
                .collect();
            let (front, back) = stages.split_at(6);
            lines.push(format!("front ms: {}", front.join("  ")));
            lines.push(format!("back ms:  {}", back.join("  ")));
        }
        let text = lines.join("\n");
        self.layout.overlay_lines = lines;
        let painter = ui.painter();
        let galley = painter.layout_no_wrap(
            text,
            egui::FontId::monospace(12.0),
            Color32::from_rgb(230, 235, 240),
        );
        // With the heat-map on screen, a legend under the counters: one
        // swatch per fragment count, 0 to HEAT_MAP_MAX (and more), in the
        // image's ramp.
        const SWATCH: egui::Vec2 = egui::vec2(22.0, 12.0);
        let legend = self
            .report
            .as_ref()
            .is_some_and(|r| r.frame.content == FrameContent::HeatMap)
            && self.texture.is_some();
        self.layout.legend = legend;
        let legend_h = if legend { SWATCH.y + 22.0 } else { 0.0 };
        let size = egui::vec2(
            galley.size().x.max((HEAT_MAP_MAX + 1) as f32 * SWATCH.x),
            galley.size().y + legend_h,
        );
        let rect = egui::Rect::from_min_size(origin + egui::vec2(8.0, 8.0), size).expand(6.0);
        painter.rect_filled(rect, 4.0, Color32::from_black_alpha(170));
        let text_h = galley.size().y;
        painter.galley(rect.min + egui::vec2(6.0, 6.0), galley, Color32::WHITE);
        if legend {
            let top = rect.min + egui::vec2(6.0, 6.0 + text_h + 4.0);
            for (i, (label, colour)) in view::legend(HEAT_MAP_MAX).into_iter().enumerate() {
                let min = top + egui::vec2(i as f32 * SWATCH.x, 0.0);
                painter.rect_filled(
                    egui::Rect::from_min_size(min, SWATCH - egui::vec2(2.0, 0.0)),
                    0.0,
                    colour,
                );
                painter.text(
                    min + egui::vec2(0.0, SWATCH.y + 2.0),
                    egui::Align2::LEFT_TOP,
                    label,
                    egui::FontId::monospace(10.0),
                    Color32::from_rgb(230, 235, 240),
                );
            }
        }
        self.layout.overlay = Some(scale_rect(rect, ui.ctx().pixels_per_point()));
    }

    fn viewport(&mut self, ui: &mut egui::Ui) {
        let avail = ui.available_rect_before_wrap();
        let ppp = ui.ctx().pixels_per_point();
        let response = ui.allocate_rect(avail, egui::Sense::click_and_drag());
        if response.dragged() {
            let d = response.drag_delta();
            self.camera.drag(d.x, d.y);
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom(scroll / 50.0);
            }
        }
        self.layout.area = Some(scale_rect(avail, ppp));
        self.layout.image = None;
        self.layout.error = None;
        self.layout.overlay = None;
        self.layout.overlay_lines.clear();
        self.layout.legend = false;
        // An error replaces the picture (render and load_scene drop the
        // texture too): a stale frame under it would pass for this one.
        if let (Some(tex), None) = (&self.texture, &self.error) {
            let [w, h] = tex.size();
            // Scaled to fit, aspect kept, centred: a 256x192 scene file
            // fills the panel; a frame sized to the panel is 1:1.
            let rect = view::fit_rect([w as u32, h as u32], avail, ppp);
            ui.painter().image(
                tex.id(),
                rect,
                egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
                Color32::WHITE,
            );
            self.shown_scale = rect.width() * ppp / w.max(1) as f32;
            self.layout.image = Some(scale_rect(rect, ppp));
        }
        if let Some(err) = &self.error {
            // Wrapped to the panel, with a margin, and centred in it (a
            // long message starts at the top margin instead).
            const MARGIN: f32 = 24.0;
            let galley = view::error_galley(ui.painter(), err, avail.width() - 2.0 * MARGIN);
            let size = galley.size();
            let pos = (avail.center() - size * 0.5).max(avail.min + egui::vec2(MARGIN, MARGIN));
            ui.painter()
                .galley(pos, galley, Color32::from_rgb(255, 120, 100));
            self.layout.error = Some(scale_rect(egui::Rect::from_min_size(pos, size), ppp));
        }
        if self.show_overlay {
            self.overlay(ui, avail.min);
        }
    }

    fn handle_screenshot(&mut self, ctx: &egui::Context) {
        let Some(path) = self.screenshot.clone() else {
            return;
        };
        if !self.screenshot_requested && self.frames >= self.screenshot_after as u64 {
            ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::default()));
            self.screenshot_requested = true;
        }
        let image = ctx.input(|i| {
            i.raw.events.iter().find_map(|e| match e {
                egui::Event::Screenshot { image, .. } => Some(Arc::clone(image)),
                _ => None,
            })
        });
        if let Some(image) = image {
            let result = save_screenshot(&path, &image, self);
            if let Err(e) = &result {
                eprintln!("demo: screenshot: {e}");
            }
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

fn scale_rect(r: egui::Rect, ppp: f32) -> egui::Rect {
    egui::Rect::from_min_max(
        (r.min.to_vec2() * ppp).to_pos2(),
        (r.max.to_vec2() * ppp).to_pos2(),
    )
}

/// The frame as an egui image with alpha forced to 1: the viewer shows
/// colour only (a scene's alpha channel would otherwise blend with the
/// panel behind it).
fn opaque_image(rgba: &[u8], w: usize, h: usize) -> egui::ColorImage {
    let pixels = rgba
        .chunks_exact(4)
        .take(w * h)
        .map(|p| Color32::from_rgb(p[0], p[1], p[2]))
        .collect();
    egui::ColorImage::new([w, h], pixels)
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn save_screenshot(
    path: &std::path::Path,
    image: &egui::ColorImage,
    app: &DemoApp,
) -> Result<(), String> {
    let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    crate::headless::write_png(path, &rgba, image.size[0] as u32, image.size[1] as u32)
        .map_err(|e| e.to_string())?;
    let rect = |r: Option<egui::Rect>| {
        r.map(|r| [r.min.x, r.min.y, r.max.x, r.max.y].map(|v| v.round() as i64))
    };
    let json = serde_json::json!({
        "image": rect(app.layout.image),
        "profiler": rect(app.layout.profiler),
        "overlay": rect(app.layout.overlay),
        // What is on screen: the last frame's own size (a scene file's
        // framebuffer), else the panel's resolution.
        "frame_width": app.report.as_ref().map_or(app.settings.width, |r| r.frame.width),
        "frame_height": app.report.as_ref().map_or(app.settings.height, |r| r.frame.height),
        "area": rect(app.layout.area),
        "error_rect": rect(app.layout.error),
        "overlay_lines": app.layout.overlay_lines,
        "legend": app.layout.legend,
        "rendered_frames": app.rendered_frames,
        // The last frame's pipeline counters, and its pipeline-statistics
        // query (an independent count the window test checks them with).
        "counters": app.report.as_ref().map(|r| {
            r.counters
                .iter()
                .map(|(k, v)| (k.name().to_owned(), serde_json::Value::from(v)))
                .collect::<serde_json::Map<_, _>>()
        }),
        "statistics": app.report.as_ref().and_then(|r| r.statistics.as_ref()).map(|s| {
            serde_json::json!({
                "c_invocations": s.c_invocations,
                "c_primitives": s.c_primitives,
                "vs_invocations": s.vs_invocations,
            })
        }),
        "submitted_triangles": app.report.as_ref().map(|r| r.submitted_triangles),
        "error": app.error,
    });
    let json = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(path.with_extension("json"), json).map_err(|e| e.to_string())
}

impl eframe::App for DemoApp {
    fn update(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.show(ctx);
        self.handle_screenshot(ctx);
        ctx.request_repaint();
    }
}

impl DemoApp {
    /// One update: the panels, the frame rendered and painted, the overlay.
    pub fn show(&mut self, ctx: &egui::Context) {
        profiling::new_frame();
        profiling::scope!("demo_update");
        let now = Instant::now();
        if let Some(last) = self.last_update {
            let frame_ms = now.duration_since(last).as_secs_f64() * 1e3;
            let render_ms = self.report.as_ref().map_or(0.0, |r| r.render_ms);
            self.smoothed.add(frame_ms, render_ms);
        }
        self.last_update = Some(now);
        self.handle_dropped_files(ctx);

        egui::SidePanel::left("controls")
            .resizable(false)
            .default_width(250.0)
            .show(ctx, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.controls(ui));
            });
        self.layout.profiler = None;
        if self.show_profiler {
            let panel = egui::TopBottomPanel::bottom("profiler")
                .resizable(true)
                .default_height(340.0)
                .min_height(200.0)
                .show(ctx, |ui| {
                    // puffin's UI shrinks to its content; keep the panel at
                    // the height it was given (or dragged to).
                    ui.set_min_height(ui.available_height());
                    profiling::puffin_egui::profiler_ui(ui);
                });
            self.layout.profiler = Some(scale_rect(panel.response.rect, ctx.pixels_per_point()));
        }
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE.fill(Color32::from_rgb(20, 22, 26)))
            .show(ctx, |ui| {
                // Size the frame from this layout, render, then paint it.
                self.settings.clamp_size();
                self.viewport_sizing(ui);
                self.render(ctx);
                self.viewport(ui);
            });
        self.frames += 1;
    }

    /// Updates the frame size from the central panel before rendering, so
    /// the frame rendered this update is the one painted.
    fn viewport_sizing(&mut self, ui: &egui::Ui) {
        let avail = ui.available_rect_before_wrap();
        let ppp = ui.ctx().pixels_per_point();
        (self.frame_area, self.ppp) = (avail, ppp);
        if self.fit_to_window {
            self.settings.width = ((avail.width() * ppp) as u32).clamp(16, MAX_DIMENSION);
            self.settings.height = ((avail.height() * ppp) as u32).clamp(16, MAX_DIMENSION);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    /// The window's logic driven headless: an egui context with no
    /// window, the events a user's keyboard would send.
    struct Headless {
        ctx: egui::Context,
        app: DemoApp,
    }

    const SIZE: egui::Vec2 = egui::vec2(1000.0, 700.0);

    impl Headless {
        fn new(source: SceneSource, settings: RenderSettings) -> Headless {
            let mut app = DemoApp::new(WindowOptions {
                source,
                settings: RenderSettings {
                    threads: 2,
                    ..settings
                },
                params: SceneParams::default(),
                fit_to_window: true,
                fixed_time: Some(1.0),
                profile_server: None,
                screenshot: None,
                screenshot_after: 0,
                window_size: SIZE.into(),
                capture_dir: std::env::temp_dir().join("ferropipe-demo-unused"),
            });
            app.set_show_profiler(false);
            let mut h = Headless {
                ctx: egui::Context::default(),
                app,
            };
            h.frame(Vec::new());
            h
        }

        fn frame(&mut self, events: Vec<egui::Event>) {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, SIZE)),
                events,
                ..Default::default()
            };
            let app = &mut self.app;
            let _ = self.ctx.run(input, |ctx| app.show(ctx));
        }

        /// Focuses the *File* field, types `text` after what it holds, and
        /// presses Enter.
        fn type_and_enter(&mut self, text: &str) {
            self.ctx
                .memory_mut(|m| m.request_focus(egui::Id::new(FILE_FIELD_ID)));
            self.frame(Vec::new());
            self.frame(vec![egui::Event::Text(text.to_owned())]);
            self.frame(vec![egui::Event::Key {
                key: egui::Key::Enter,
                physical_key: None,
                pressed: true,
                repeat: false,
                modifiers: egui::Modifiers::default(),
            }]);
        }
    }

    fn inside(inner: egui::Rect, outer: egui::Rect) -> bool {
        outer.expand(0.5).contains_rect(inner)
    }

    #[test]
    fn enter_loads_the_typed_path_and_a_bad_one_shows_a_wrapped_error_not_recent() {
        let mut h = Headless::new(
            SceneSource::Builtin(SceneKind::Mesh),
            RenderSettings::default(),
        );
        let area = h.app.layout().area.expect("laid out");
        let image = h.app.layout().image.expect("the mesh is shown");
        // A frame sized to the panel is shown 1:1, filling it.
        assert_eq!(
            (image.width() as u32, image.height() as u32),
            (area.width() as u32, area.height() as u32)
        );

        // A mistyped path: an error, wrapped inside the frame, instead of
        // the last picture, and nothing new in Recent.
        let bad = "/nonexistent/a very long directory name that cannot fit on one line of the panel/typo.glb";
        h.type_and_enter(bad);
        assert_eq!(h.app.source(), &SceneSource::Model(bad.into()));
        let err = h.app.error().expect("an error is shown");
        assert!(err.contains("typo.glb"), "{err}");
        let layout = h.app.layout().clone();
        assert!(layout.image.is_none(), "the stale frame is still shown");
        let e = layout.error.expect("the error is laid out");
        assert!(
            inside(e, area),
            "error {e:?} spills out of the frame {area:?}"
        );
        assert!(e.height() > 40.0, "the long message did not wrap: {e:?}");
        assert!(h.app.recent().is_empty(), "a bad path went into Recent");
        assert!(
            h.app.report().is_none(),
            "the overlay still describes the old frame"
        );

        // A scene file, by Enter again: it loads, fills the panel with its
        // aspect kept, the overlay describes it, and Recent has it.
        let card = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/scenes/showcase/test_card.json"
        );
        h.app.scene_path.clear();
        h.type_and_enter(card);
        assert_eq!(h.app.error(), None);
        assert_eq!(h.app.source(), &SceneSource::File(card.into()));
        assert_eq!(h.app.recent(), [PathBuf::from(card)]);
        let layout = h.app.layout().clone();
        let image = layout.image.expect("the scene file is shown");
        assert!(inside(image, area));
        // 256x192: scaled to fit (one side fills the panel), aspect
        // kept, centred, not 1:1 in a corner.
        assert!(
            (image.height() - area.height()).abs() <= 1.0
                || (image.width() - area.width()).abs() <= 1.0,
            "{image:?} does not fill {area:?}"
        );
        assert!(image.width() > 512.0, "not scaled up: {image:?}");
        assert!((image.width() / image.height() - 256.0 / 192.0).abs() < 0.01);
        assert!((image.center().x - area.center().x).abs() <= 1.0);
        assert!((image.center().y - area.center().y).abs() <= 1.0);
        let line = &layout.overlay_lines[1];
        assert!(line.starts_with("256x192 scene file"), "{line}");
        assert!(line.contains("shown at"), "{line}");
        let report = h.app.report().expect("a frame");
        assert_eq!((report.frame.width, report.frame.height), (256, 192));
    }

    #[test]
    fn the_legend_is_shown_with_the_heat_map_only() {
        let mut h = Headless::new(
            SceneSource::Builtin(SceneKind::Mesh),
            RenderSettings {
                overdraw: true,
                ..Default::default()
            },
        );
        assert!(h.app.layout().legend);
        assert!(h.app.layout().overlay_lines[1].contains("overdraw heat-map"));
        h.app.settings.overdraw = false;
        h.frame(Vec::new());
        assert!(!h.app.layout().legend);
        let line = &h.app.layout().overlay_lines[1];
        let size = format!("{}x{}", h.app.settings.width, h.app.settings.height);
        assert!(line.starts_with(&size), "{line} is not {size}");
    }

    #[test]
    fn opaque_image_drops_alpha() {
        let img = opaque_image(&[10, 20, 30, 0, 1, 2, 3, 128], 2, 1);
        assert_eq!(img.pixels[0], Color32::from_rgb(10, 20, 30));
        assert_eq!(img.pixels[1], Color32::from_rgb(1, 2, 3));
    }
}
