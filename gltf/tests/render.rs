//! Renders glTF content through ferropipe and checks what the frames show:
//! the barrel asset (CC BY 4.0, tests/assets/barrel/README.md) and glTF
//! files these tests generate themselves for what the barrel lacks (node
//! hierarchy, MASK and BLEND, 16-bit indices, non-float vertex formats,
//! double-sided materials, file cameras, unsupported features).
//!
//! The generated scenes are seen through an orthographic camera in the
//! file, 4 x 4 world units onto 64 x 64 pixels (16 pixels per unit, world
//! (0, 0) at the frame's centre, +y up), so positions are predictable.

use std::path::PathBuf;

use ferropipe::{Context, Screen, ScreenConfig};
use ferropipe_gltf::{DrawOptions, Error, Lighting, Model, Offscreen};
use glam::Vec3;
use serde_json::{Value, json};

const SIZE: u32 = 64;
const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 0.0];

fn setup() -> (Screen, Context) {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let ctx = screen.context_create().unwrap();
    (screen, ctx)
}

/// Only emissive light (the colour is `tonemap(emissive)`), or with
/// `ambient`, `base * ambient * 0.6 + emissive` for a face looking at the
/// camera (the shader's hemispherical ambient at n.y = 0).
fn lighting(ambient: f32) -> DrawOptions {
    DrawOptions {
        lighting: Lighting {
            sun_color: Vec3::ZERO,
            fill_color: Vec3::ZERO,
            ambient,
            ..Lighting::default()
        },
        ..DrawOptions::default()
    }
}

/// The shader's tone mapping (ACES fit, then gamma 2.2), for expected
/// values.
fn tonemap(c: f32) -> f32 {
    let m = (c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14);
    m.clamp(0.0, 1.0).powf(1.0 / 2.2)
}

/// A glTF document under construction: one binary buffer, everything else
/// JSON.
#[derive(Default)]
struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    meshes: Vec<Value>,
    nodes: Vec<Value>,
    materials: Vec<Value>,
    images: Vec<Value>,
    textures: Vec<Value>,
    samplers: Vec<Value>,
    roots: Vec<usize>,
    extra: Vec<(&'static str, Value)>,
}

const F32: u32 = 5126;
const U8: u32 = 5121;
const U16: u32 = 5123;
const U32: u32 = 5125;

impl Doc {
    /// A new document with the orthographic camera described at the top.
    fn new() -> Doc {
        let mut d = Doc::default();
        d.nodes
            .push(json!({"camera": 0, "translation": [0.0, 0.0, 5.0]}));
        d.roots.push(0);
        d
    }

    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    fn accessor(
        &mut self,
        bytes: &[u8],
        ctype: u32,
        count: usize,
        ty: &str,
        normalized: bool,
        target: u32,
    ) -> usize {
        let view = self.view(bytes, Some(target));
        let mut a = json!({"bufferView": view, "componentType": ctype, "count": count, "type": ty});
        if normalized {
            a["normalized"] = json!(true);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    /// Float positions with the min/max glTF requires.
    fn positions(&mut self, p: &[[f32; 3]]) -> usize {
        let bytes: Vec<u8> = p.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
        let a = self.accessor(&bytes, F32, p.len(), "VEC3", false, 34962);
        let min = (0..3).map(|i| p.iter().map(|v| v[i]).fold(f32::MAX, f32::min));
        let max = (0..3).map(|i| p.iter().map(|v| v[i]).fold(f32::MIN, f32::max));
        self.accessors[a]["min"] = json!(min.collect::<Vec<_>>());
        self.accessors[a]["max"] = json!(max.collect::<Vec<_>>());
        a
    }

    fn floats(&mut self, v: &[f32], ty: &str) -> usize {
        let n = match ty {
            "VEC2" => 2,
            "VEC3" => 3,
            _ => 4,
        };
        let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
        self.accessor(&bytes, F32, v.len() / n, ty, false, 34962)
    }

    fn indices(&mut self, ix: &[u32], ctype: u32) -> usize {
        let bytes: Vec<u8> = match ctype {
            U8 => ix.iter().map(|&i| i as u8).collect(),
            U16 => ix.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(),
            _ => ix.iter().flat_map(|&i| i.to_le_bytes()).collect(),
        };
        self.accessor(&bytes, ctype, ix.len(), "SCALAR", false, 34963)
    }

    fn material(&mut self, m: Value) -> usize {
        self.materials.push(m);
        self.materials.len() - 1
    }

    fn mesh(&mut self, attributes: Value, indices: Option<usize>, material: usize) -> usize {
        let mut p = json!({"attributes": attributes, "material": material});
        if let Some(i) = indices {
            p["indices"] = json!(i);
        }
        self.meshes.push(json!({"primitives": [p]}));
        self.meshes.len() - 1
    }

    fn node(&mut self, n: Value) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// A PNG image (RGBA8, `w` x `h`) as a texture with a nearest sampler.
    fn texture(&mut self, rgba: &[u8], w: u32, h: u32) -> usize {
        let mut png_bytes = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut png_bytes, w, h);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            enc.write_header().unwrap().write_image_data(rgba).unwrap();
        }
        let view = self.view(&png_bytes, None);
        self.images
            .push(json!({"bufferView": view, "mimeType": "image/png"}));
        self.samplers
            .push(json!({"magFilter": 9728, "minFilter": 9728}));
        self.textures.push(json!({
            "source": self.images.len() - 1,
            "sampler": self.samplers.len() - 1
        }));
        self.textures.len() - 1
    }

    /// Writes `NAME.gltf` and `NAME.bin` into the test's temporary
    /// directory and returns the .gltf path.
    fn write(&self, name: &str) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gltf-generated");
        std::fs::create_dir_all(&dir).unwrap();
        let bin = format!("{name}.bin");
        std::fs::write(dir.join(&bin), &self.bin).unwrap();
        let mut root = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": self.roots}],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "materials": self.materials,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "buffers": [{"uri": bin, "byteLength": self.bin.len()}],
            "cameras": [{"type": "orthographic",
                         "orthographic": {"xmag": 2.0, "ymag": 2.0, "znear": 0.1, "zfar": 20.0}}],
        });
        if !self.images.is_empty() {
            root["images"] = json!(self.images);
            root["textures"] = json!(self.textures);
            root["samplers"] = json!(self.samplers);
        }
        for (k, v) in &self.extra {
            root[*k] = v.clone();
        }
        let path = dir.join(format!("{name}.gltf"));
        std::fs::write(&path, serde_json::to_vec_pretty(&root).unwrap()).unwrap();
        path
    }
}

/// The corners of an axis-aligned rectangle at depth `z`, counter-clockwise
/// seen from +z (glTF front faces), and its two triangles.
fn rect(x0: f32, y0: f32, x1: f32, y1: f32, z: f32) -> [[f32; 3]; 4] {
    [[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]
}
const RECT_INDICES: [u32; 6] = [0, 1, 2, 0, 2, 3];

/// An emissive, black, rough, opaque material of colour `e`.
fn emissive(e: [f32; 3]) -> Value {
    json!({
        "pbrMetallicRoughness": {"baseColorFactor": [0.0, 0.0, 0.0, 1.0],
                                 "metallicFactor": 0.0, "roughnessFactor": 1.0},
        "emissiveFactor": e,
    })
}

struct Frame {
    rgba: Vec<u8>,
}

impl Frame {
    /// Pixel at world (x, y) (the orthographic mapping above).
    fn at(&self, x: f32, y: f32) -> [u8; 4] {
        let px = ((x + 2.0) * 16.0) as usize;
        let py = ((2.0 - y) * 16.0) as usize;
        let i = (py * SIZE as usize + px) * 4;
        self.rgba[i..i + 4].try_into().unwrap()
    }

    fn covered(&self) -> usize {
        self.rgba.chunks_exact(4).filter(|p| p[3] != 0).count()
    }
}

fn render_file(path: &PathBuf, options: &DrawOptions) -> Result<Frame, Error> {
    let (screen, mut ctx) = setup();
    let mut model = Model::load(&screen, &mut ctx, path)?;
    let target = Offscreen::new(&screen, &mut ctx, SIZE, SIZE)?;
    assert_eq!(model.cameras().len(), 1, "the file's camera");
    let camera = model.cameras()[0].camera(target.aspect());
    let (rgba, _) = target.render(&mut ctx, &mut model, &camera, options, CLEAR)?;
    Ok(Frame { rgba })
}

fn close(a: [u8; 4], b: [f32; 4], tol: f32) -> bool {
    a.iter()
        .zip(b)
        .all(|(&x, y)| (x as f32 - y * 255.0).abs() <= tol)
}

#[test]
fn barrel_is_framed_lit_and_textured() {
    let (screen, mut ctx) = setup();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/assets/barrel/barrel.glb"
    );
    let mut model = Model::load(&screen, &mut ctx, path).unwrap();
    assert!(model.cameras().is_empty());
    let (w, h) = (160, 120);
    let target = Offscreen::new(&screen, &mut ctx, w, h).unwrap();
    let camera = model.default_camera(target.aspect());
    let (rgba, stats) = target
        .render(
            &mut ctx,
            &mut model,
            &camera,
            &DrawOptions::default(),
            CLEAR,
        )
        .unwrap();
    assert_eq!(stats.triangles, 1148);
    let covered: Vec<&[u8]> = rgba.chunks_exact(4).filter(|p| p[3] != 0).collect();
    let fraction = covered.len() as f32 / (w * h) as f32;
    // The framing camera fits the bounding sphere (10% margin) into the
    // view: an upright barrel then fills roughly a fifth of the frame.
    assert!(
        (0.08..0.6).contains(&fraction),
        "barrel covers {fraction:.3} of the frame"
    );
    // Centred: the coverage's centroid is near the frame's centre.
    let (mut sx, mut sy) = (0.0, 0.0);
    for (i, p) in rgba.chunks_exact(4).enumerate() {
        if p[3] != 0 {
            sx += (i as u32 % w) as f32;
            sy += (i as u32 / w) as f32;
        }
    }
    let n = covered.len() as f32;
    assert!((sx / n - w as f32 / 2.0).abs() < w as f32 * 0.1);
    assert!((sy / n - h as f32 / 2.0).abs() < h as f32 * 0.15);
    // Textured and lit: many distinct colours, wood (red > blue) dominant,
    // and both dark and bright pixels.
    let mut colours: Vec<[u8; 3]> = covered.iter().map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 300, "{} distinct colours", colours.len());
    let reddish = covered
        .iter()
        .filter(|p| i32::from(p[0]) > i32::from(p[2]) + 20)
        .count();
    assert!(
        reddish as f32 > n * 0.4,
        "{reddish} of {n} pixels look like wood"
    );
    let luma = |p: &&[u8]| p[0] as u32 + p[1] as u32 + p[2] as u32;
    assert!(covered.iter().any(|p| luma(p) < 120));
    assert!(covered.iter().any(|p| luma(p) > 400));
}

#[test]
fn hierarchy_composes_parent_and_child_transforms() {
    let mut d = Doc::new();
    let pos = d.positions(&rect(-0.5, -0.5, 0.5, 0.5, 0.0));
    let ix = d.indices(&RECT_INDICES, U16);
    let m = d.material(emissive([1.0, 1.0, 1.0]));
    let mesh = d.mesh(json!({"POSITION": pos}), Some(ix), m);
    // Child: translate (1, 0, 0), scale 0.5 -> a 0.5-unit square.
    let child =
        d.node(json!({"mesh": mesh, "translation": [1.0, 0.0, 0.0], "scale": [0.5, 0.5, 0.5]}));
    // Parent: rotate 90° about z, then translate (1, 0, 0): the child's
    // offset turns to (0, 1, 0), so the square is centred on (1, 1).
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let parent = d.node(json!({"children": [child], "translation": [1.0, 0.0, 0.0],
                               "rotation": [0.0, 0.0, s, s]}));
    d.roots.push(parent);
    let f = render_file(&d.write("hierarchy"), &lighting(0.0)).unwrap();
    let lit = tonemap(1.0);
    assert!(
        close(f.at(1.0, 1.0), [lit, lit, lit, 1.0], 2.0),
        "{:?}",
        f.at(1.0, 1.0)
    );
    for (x, y) in [(1.2, 1.2), (0.8, 0.8), (1.2, 0.8), (0.8, 1.2)] {
        assert_eq!(f.at(x, y)[3], 255, "inside at ({x}, {y})");
    }
    for (x, y) in [
        (1.4, 1.0),
        (0.6, 1.0),
        (1.0, 1.4),
        (1.0, 0.6),
        (2.0 - 0.1, 0.0),
    ] {
        assert_eq!(f.at(x, y)[3], 0, "outside at ({x}, {y})");
    }
    // 0.5 x 0.5 units = 8 x 8 pixels.
    assert_eq!(f.covered(), 64);
}

#[test]
fn mask_cuts_below_the_cutoff() {
    let mut d = Doc::new();
    let pos = d.positions(&rect(-1.0, -1.0, 1.0, 1.0, 0.0));
    // Vertex alpha 0 on the left, 1 on the right: alpha crosses the 0.5
    // cutoff at x = 0 (and 0.25 at x = -0.5, 0.75 at x = 0.5).
    let col = d.floats(
        &[
            1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0,
        ],
        "VEC4",
    );
    let ix = d.indices(&RECT_INDICES, U32);
    let mut mat = emissive([0.0, 1.0, 0.0]);
    mat["alphaMode"] = json!("MASK");
    mat["alphaCutoff"] = json!(0.5);
    mat["pbrMetallicRoughness"]["baseColorFactor"] = json!([0.0, 0.0, 0.0, 1.0]);
    let m = d.material(mat);
    let mesh = d.mesh(json!({"POSITION": pos, "COLOR_0": col}), Some(ix), m);
    let n = d.node(json!({"mesh": mesh}));
    d.roots.push(n);
    let f = render_file(&d.write("mask"), &lighting(0.0)).unwrap();
    for y in [-0.8, 0.0, 0.8] {
        assert_eq!(f.at(-0.5, y)[3], 0, "alpha 0.25 is cut");
        assert_eq!(f.at(-0.9, y)[3], 0);
        let right = f.at(0.5, y);
        assert!(
            close(right, [0.0, tonemap(1.0), 0.0, 1.0], 2.0),
            "{right:?}"
        );
    }
    // Half the 32 x 32-pixel square survives (the cutoff line may fall
    // either side of one pixel column).
    let c = f.covered();
    assert!((480..=544).contains(&c), "{c} pixels kept");
}

#[test]
fn blend_composites_back_to_front() {
    let mut d = Doc::new();
    // Opaque green background square at z = -1.
    let back = d.positions(&rect(-1.5, -1.5, 1.5, 1.5, -1.0));
    let ix = d.indices(&RECT_INDICES, U8);
    let green = d.material(emissive([0.0, 1.0, 0.0]));
    let back_mesh = d.mesh(json!({"POSITION": back}), Some(ix), green);
    // Two half-transparent squares: red at z = 1 (near), blue at z = 0,
    // listed near first, so only sorting draws them in the right order.
    let near = d.positions(&rect(-1.0, -1.0, 1.0, 1.0, 1.0));
    let far = d.positions(&rect(-0.5, -0.5, 1.2, 1.2, 0.0));
    let mut red = emissive([1.0, 0.0, 0.0]);
    red["alphaMode"] = json!("BLEND");
    red["pbrMetallicRoughness"]["baseColorFactor"] = json!([0.0, 0.0, 0.0, 0.5]);
    let mut blue = emissive([0.0, 0.0, 1.0]);
    blue["alphaMode"] = json!("BLEND");
    blue["pbrMetallicRoughness"]["baseColorFactor"] = json!([0.0, 0.0, 0.0, 0.25]);
    let red = d.material(red);
    let blue = d.material(blue);
    let near_mesh = d.mesh(json!({"POSITION": near}), Some(ix), red);
    let far_mesh = d.mesh(json!({"POSITION": far}), Some(ix), blue);
    for mesh in [near_mesh, far_mesh, back_mesh] {
        let n = d.node(json!({"mesh": mesh}));
        d.roots.push(n);
    }
    let f = render_file(&d.write("blend"), &lighting(0.0)).unwrap();
    let one = tonemap(1.0);
    let green = [0.0, one, 0.0];
    // Blue (a = 0.25) over green, then red (a = 0.5) over that.
    let mix = |top: [f32; 3], a: f32, under: [f32; 3]| {
        [0, 1, 2].map(|i| top[i] * a + under[i] * (1.0 - a))
    };
    let both = mix([one, 0.0, 0.0], 0.5, mix([0.0, 0.0, one], 0.25, green));
    let p = f.at(0.3, 0.3);
    assert!(
        close(p, [both[0], both[1], both[2], p[3] as f32 / 255.0], 3.0),
        "{p:?} vs {both:?}"
    );
    // Red alone over green, blue alone over green (outside the red square).
    let red_only = mix([one, 0.0, 0.0], 0.5, green);
    let p = f.at(-0.8, -0.8);
    assert!(
        close(
            p,
            [red_only[0], red_only[1], red_only[2], p[3] as f32 / 255.0],
            3.0
        ),
        "{p:?}"
    );
    let blue_only = mix([0.0, 0.0, one], 0.25, green);
    let p = f.at(1.1, 1.1);
    assert!(
        close(
            p,
            [
                blue_only[0],
                blue_only[1],
                blue_only[2],
                p[3] as f32 / 255.0
            ],
            3.0
        ),
        "{p:?}"
    );
    // Plain green where no blended square is.
    let p = f.at(-1.3, 1.3);
    assert!(close(p, [0.0, one, 0.0, 1.0], 2.0), "{p:?}");
}

/// One textured, vertex-coloured square; `quantized` stores texcoords as
/// normalized u16, colours as normalized u8 and indices as u16, the float
/// version the same values as f32 and u32 indices.
fn formats_doc(quantized: bool) -> Doc {
    let mut d = Doc::new();
    let pos = d.positions(&rect(-1.5, -1.5, 1.5, 1.5, 0.0));
    let uv = [0.0f32, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0];
    // Colours that u8 represents exactly (k / 255).
    let col: Vec<f32> = [
        255u8, 51, 102, 255, 204, 255, 0, 255, 0, 153, 255, 255, 102, 102, 102, 255,
    ]
    .iter()
    .map(|&c| c as f32 / 255.0)
    .collect();
    let (uv_acc, col_acc, ix) = if quantized {
        let uv16: Vec<u8> = uv
            .iter()
            .flat_map(|&v| ((v * 65535.0) as u16).to_le_bytes())
            .collect();
        let col8: Vec<u8> = col.iter().map(|&c| (c * 255.0).round() as u8).collect();
        (
            d.accessor(&uv16, U16, 4, "VEC2", true, 34962),
            d.accessor(&col8, U8, 4, "VEC4", true, 34962),
            d.indices(&RECT_INDICES, U16),
        )
    } else {
        (
            d.floats(&uv, "VEC2"),
            d.floats(&col, "VEC4"),
            d.indices(&RECT_INDICES, U32),
        )
    };
    // A 4 x 4 checker (nearest sampled) on the emissive map.
    let mut tex = Vec::new();
    for y in 0..4 {
        for x in 0..4 {
            let on = (x + y) % 2 == 0;
            tex.extend_from_slice(if on {
                &[200, 60, 20, 255]
            } else {
                &[20, 60, 200, 255]
            });
        }
    }
    let t = d.texture(&tex, 4, 4);
    let m = d.material(json!({
        "pbrMetallicRoughness": {"baseColorFactor": [1.0, 1.0, 1.0, 1.0],
                                 "metallicFactor": 0.0, "roughnessFactor": 1.0},
        "emissiveFactor": [0.5, 0.5, 0.5],
        "emissiveTexture": {"index": t},
    }));
    let mesh = d.mesh(
        json!({"POSITION": pos, "TEXCOORD_0": uv_acc, "COLOR_0": col_acc}),
        Some(ix),
        m,
    );
    let n = d.node(json!({"mesh": mesh}));
    d.roots.push(n);
    d
}

#[test]
fn non_float_vertex_formats_match_the_float_version() {
    let float = render_file(&formats_doc(false).write("formats_f32"), &lighting(1.0)).unwrap();
    let quant = render_file(
        &formats_doc(true).write("formats_quantized"),
        &lighting(1.0),
    )
    .unwrap();
    assert_eq!(float.covered(), 48 * 48);
    let off: usize = float
        .rgba
        .iter()
        .zip(&quant.rgba)
        .filter(|(a, b)| a.abs_diff(**b) > 1)
        .count();
    assert_eq!(off, 0, "{off} channels differ by more than 1/255");
    // The checker and the colour gradient both show: many colours.
    let mut colours: Vec<&[u8]> = float.rgba.chunks_exact(4).filter(|p| p[3] != 0).collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 100, "{} colours", colours.len());
}

#[test]
fn single_sided_faces_away_are_culled_double_sided_are_not() {
    let doc = |double: bool| {
        let mut d = Doc::new();
        // Clockwise seen from the camera: a back face.
        let p = rect(-1.0, -1.0, 1.0, 1.0, 0.0);
        let pos = d.positions(&[p[0], p[3], p[2], p[1]]);
        let mut mat = emissive([1.0, 1.0, 0.0]);
        mat["doubleSided"] = json!(double);
        let m = d.material(mat);
        let mesh = d.mesh(json!({"POSITION": pos}), None, m);
        // Non-indexed: draw the four corners as a fan.
        d.meshes[mesh]["primitives"][0]["mode"] = json!(6);
        let n = d.node(json!({"mesh": mesh}));
        d.roots.push(n);
        d
    };
    let single = render_file(&doc(false).write("single_sided"), &lighting(0.0)).unwrap();
    let double = render_file(&doc(true).write("double_sided"), &lighting(0.0)).unwrap();
    assert_eq!(single.covered(), 0);
    assert_eq!(double.covered(), 32 * 32);
    // A mirroring node (scale -1 in x) makes the triangles wind
    // counter-clockwise on screen, but their front side still faces -z,
    // away from the camera (glTF 3.7.4: a negative determinant reverses
    // the winding that means front): still culled.
    let mut d = doc(false);
    d.nodes[1]["scale"] = json!([-1.0, 1.0, 1.0]);
    let mirrored = render_file(&d.write("mirrored"), &lighting(0.0)).unwrap();
    assert_eq!(mirrored.covered(), 0);
}

#[test]
fn skinning_and_morph_targets_are_unsupported() {
    let mut d = Doc::new();
    let pos = d.positions(&rect(-1.0, -1.0, 1.0, 1.0, 0.0));
    let m = d.material(emissive([1.0, 1.0, 1.0]));
    let mesh = d.mesh(json!({"POSITION": pos}), None, m);
    d.meshes[mesh]["primitives"][0]["targets"] = json!([{"POSITION": pos}]);
    let n = d.node(json!({"mesh": mesh}));
    d.roots.push(n);
    match render_file(&d.write("morph"), &lighting(0.0)) {
        Err(e @ Error::Unsupported { .. }) => {
            assert!(e.to_string().contains("morph targets"), "{e}");
            assert!(e.is_unsupported());
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("morph targets drawn"),
    }

    let mut d = Doc::new();
    let pos = d.positions(&rect(-1.0, -1.0, 1.0, 1.0, 0.0));
    let m = d.material(emissive([1.0, 1.0, 1.0]));
    let mesh = d.mesh(json!({"POSITION": pos}), None, m);
    let joint = d.node(json!({}));
    let n = d.node(json!({"mesh": mesh, "skin": 0}));
    d.roots.push(n);
    d.roots.push(joint);
    d.extra.push(("skins", json!([{"joints": [joint]}])));
    match render_file(&d.write("skin"), &lighting(0.0)) {
        Err(e @ Error::Unsupported { .. }) => assert!(e.to_string().contains("skinning"), "{e}"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("skin drawn"),
    }

    // A required extension the loader does not implement.
    let mut d = formats_doc(false);
    d.extra
        .push(("extensionsRequired", json!(["KHR_texture_transform"])));
    d.extra
        .push(("extensionsUsed", json!(["KHR_texture_transform"])));
    match render_file(&d.write("required_ext"), &lighting(0.0)) {
        Err(e @ Error::Unsupported { .. }) => {
            assert!(e.to_string().contains("KHR_texture_transform"), "{e}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("drawn without its required extension"),
    }
}

#[test]
fn missing_file_names_its_path() {
    let (screen, mut ctx) = setup();
    match Model::load(&screen, &mut ctx, "/nonexistent/model.glb") {
        Err(Error::Io { path, .. }) => assert_eq!(path, PathBuf::from("/nonexistent/model.glb")),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("loaded a missing file"),
    }
    match Model::from_slice(&screen, &mut ctx, b"{not json") {
        Err(Error::Gltf(_)) => {}
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("parsed garbage"),
    }
}
