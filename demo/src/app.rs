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
use crate::render::{FrameReport, HEAT_MAP_MAX, Renderer, SceneSource};
use crate::scenes::{SceneKind, SceneParams};
use crate::settings::{MAX_DIMENSION, RenderSettings};

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
#[derive(Default, Clone, Copy)]
struct Layout {
    /// The rendered frame, physical pixels.
    image: Option<egui::Rect>,
    /// The flamegraph panel, physical pixels.
    profiler: Option<egui::Rect>,
    /// The counters overlay (drawn over the frame), physical pixels.
    overlay: Option<egui::Rect>,
}

struct DemoApp {
    renderer: Option<Renderer>,
    settings: RenderSettings,
    params: SceneParams,
    camera: OrbitCamera,
    source: SceneSource,
    fit_to_window: bool,
    fixed_time: Option<f32>,
    paused_at: Option<f32>,
    texture: Option<egui::TextureHandle>,
    error: Option<String>,
    report: Option<FrameReport>,
    smoothed: Smoothed,
    last_update: Option<Instant>,
    frames: u64,
    rendered_frames: u64,
    show_profiler: bool,
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
    fn new(options: WindowOptions) -> Self {
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
            error: None,
            report: None,
            smoothed: Smoothed::default(),
            last_update: None,
            frames: 0,
            rendered_frames: 0,
            show_profiler: true,
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
        match r.set_scene(source, &self.params) {
            Ok(()) => {
                // A model is framed by its own bounds.
                if let Some(c) = r.model_camera() {
                    self.camera = c;
                }
                // Only a file that loaded goes into *Recent* (a mistyped
                // path would otherwise be offered again).
                if let Some(path) = path {
                    self.remember(path);
                }
            }
            Err(e) => self.error = Some(format!("loading the scene: {e}")),
        }
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
                    match &mut self.texture {
                        Some(t) => t.set(image, egui::TextureOptions::NEAREST),
                        None => {
                            self.texture = Some(ctx.load_texture(
                                "ferropipe-frame",
                                image,
                                egui::TextureOptions::NEAREST,
                            ))
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
            let field = ui.text_edit_singleline(&mut self.scene_path).on_hover_text(
                "a glTF 2.0 model (.glb / .gltf) or a gallium-scene/1 .json; \
                 Enter loads it, or drop a file on the window",
            );
            enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        });
        if (ui.button("Open file").clicked() || enter) && !self.scene_path.trim().is_empty() {
            picked = Some(SceneSource::from_path(PathBuf::from(
                self.scene_path.trim(),
            )));
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

    fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| p != &path);
        self.recent.push_front(path);
        self.recent.truncate(8);
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
            let threads = self.renderer.as_ref().map_or(0, |r| r.worker_threads());
            lines.push(format!(
                "{}x{}{}  {threads} threads",
                self.settings.width,
                self.settings.height,
                if self.settings.msaa { " 4xMSAA" } else { "" }
            ));
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
        let painter = ui.painter();
        let galley = painter.layout_no_wrap(
            text,
            egui::FontId::monospace(12.0),
            Color32::from_rgb(230, 235, 240),
        );
        // With the heat-map on, a legend under the counters: one swatch per
        // fragment count, 0 to HEAT_MAP_MAX (and more), in the image's ramp.
        const SWATCH: egui::Vec2 = egui::vec2(22.0, 12.0);
        let legend = self.settings.overdraw;
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
            for count in 0..=HEAT_MAP_MAX {
                let min = top + egui::vec2(count as f32 * SWATCH.x, 0.0);
                let [r, g, b, _] = crate::overdraw::heat_color(count, HEAT_MAP_MAX);
                painter.rect_filled(
                    egui::Rect::from_min_size(min, SWATCH - egui::vec2(2.0, 0.0)),
                    0.0,
                    Color32::from_rgb(r, g, b),
                );
                let label = if count == HEAT_MAP_MAX {
                    format!("{count}+")
                } else {
                    count.to_string()
                };
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
        self.layout.image = None;
        if let Some(tex) = &self.texture {
            let size = tex.size_vec2() / ppp;
            // 1:1 pixels when the frame fits, scaled down otherwise.
            let scale = (avail.width() / size.x)
                .min(avail.height() / size.y)
                .min(1.0);
            // Pixel-aligned, so NEAREST sampling shows the frame exactly.
            let rect = egui::Rect::from_min_size(
                (avail.min.to_vec2() * ppp).round().to_pos2() / ppp,
                size * scale,
            );
            ui.painter().image(
                tex.id(),
                rect,
                egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
                Color32::WHITE,
            );
            self.layout.image = Some(scale_rect(rect, ppp));
        }
        if let Some(err) = &self.error {
            ui.painter().text(
                avail.center(),
                egui::Align2::CENTER_CENTER,
                format!("ferropipe cannot render this frame:\n{err}"),
                egui::FontId::proportional(16.0),
                Color32::from_rgb(255, 120, 100),
            );
        }
        self.overlay(ui, avail.min);
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
        "frame_width": app.settings.width,
        "frame_height": app.settings.height,
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
        self.handle_screenshot(ctx);
        ctx.request_repaint();
    }
}

impl DemoApp {
    /// Updates the frame size from the central panel before rendering, so
    /// the frame rendered this update is the one painted.
    fn viewport_sizing(&mut self, ui: &egui::Ui) {
        if self.fit_to_window {
            let avail = ui.available_rect_before_wrap();
            let ppp = ui.ctx().pixels_per_point();
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

    #[test]
    fn opaque_image_drops_alpha() {
        let img = opaque_image(&[10, 20, 30, 0, 1, 2, 3, 128], 2, 1);
        assert_eq!(img.pixels[0], Color32::from_rgb(10, 20, 30));
        assert_eq!(img.pixels[1], Color32::from_rgb(1, 2, 3));
    }
}
