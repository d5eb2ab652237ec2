//! The sampler against llvmpipe.
//!
//! `tests/sampler/*.json` are full-screen-quad scenes whose fragment
//! shaders compute texture coordinates from `@builtin(position)` alone;
//! `tests/sampler/ref/*/color.png` is llvmpipe's rendering (see
//! `tests/sampler/generate.py`).  This test replays the few calls such a
//! scene uses directly on the shader executor (no pipeline: every pixel
//! centre of the scissored target is shaded in 4x2 groups) and compares
//! with compare.py's rule: at most 0.1% of pixels off by more than 1/255.

use std::path::{Path, PathBuf};

use ferropipe_components::enums::*;
use ferropipe_components::format::Format;
use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
use ferropipe_components::shader::{
    BoundTexture, FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, LANES, Lanes, ShaderResources,
};
use ferropipe_components::state::SamplerState;
use ferropipe_components::view::SamplerViewDesc;
use ferropipe_shader::{Language, compile_fragment};
use serde_json::Value;
use wide::f32x8;

struct Texture {
    format: Format,
    layout: ResourceLayout,
    data: Vec<u8>,
    templ: ResourceTemplate,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sampler")
}

fn name<T>(v: &Value, parse: fn(&str) -> Option<T>, what: &str) -> T {
    let s = v.as_str().unwrap_or_else(|| panic!("{what}: not a string"));
    parse(s).unwrap_or_else(|| panic!("{what}: unknown {s}"))
}

fn u(v: &Value, key: &str, default: u64) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(default)
}

fn f(v: &Value, key: &str, default: f32) -> f32 {
    v.get(key)
        .and_then(Value::as_f64)
        .map_or(default, |x| x as f32)
}

fn bytes(v: &Value) -> Vec<u8> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("f32");
    let data = v["data"].as_array().expect("inline data");
    match ty {
        "u8" => data.iter().map(|x| x.as_u64().unwrap() as u8).collect(),
        "u16" => data
            .iter()
            .flat_map(|x| (x.as_u64().unwrap() as u16).to_le_bytes())
            .collect(),
        "u32" => data
            .iter()
            .flat_map(|x| (x.as_u64().unwrap() as u32).to_le_bytes())
            .collect(),
        _ => data
            .iter()
            .flat_map(|x| (x.as_f64().unwrap() as f32).to_le_bytes())
            .collect(),
    }
}

fn write_box(t: &mut Texture, level: usize, bx: [u32; 6], src: &[u8]) {
    let lv = t.layout.levels[level];
    let bpp = t.layout.bpp as usize;
    let [x, y, z, w, h, d] = bx;
    let row = w as usize * bpp;
    for k in 0..d {
        for j in 0..h {
            let s = ((k * h + j) as usize) * row;
            let o = lv.pixel_offset(x, y + j, z + k, 0, bpp as u32);
            t.data[o..o + row].copy_from_slice(&src[s..s + row]);
        }
    }
}

/// Replays the scene and returns the RGBA8 image.
fn render(scene: &Path) -> (u32, u32, Vec<u8>) {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(scene).unwrap()).unwrap();
    let mut textures: Vec<(String, Texture)> = Vec::new();
    let mut views: Vec<(String, String, SamplerViewDesc)> = Vec::new();
    let mut samplers: Vec<(String, SamplerState)> = Vec::new();
    let mut rasts: Vec<(String, bool)> = Vec::new();
    let mut bound_views: Vec<Option<usize>> = vec![None; 32];
    let mut bound_samplers: Vec<Option<usize>> = vec![None; 32];
    let mut fs_code = String::new();
    let (mut width, mut height) = (0u32, 0u32);
    let mut scissor = [0u32, 0, u32::MAX, u32::MAX];
    let mut scissor_on = false;
    let mut image: Vec<u8> = Vec::new();
    for c in doc["calls"].as_array().unwrap() {
        match c["op"].as_str().unwrap() {
            "resource_create" if c["target"] != "PIPE_BUFFER" => {
                let templ = ResourceTemplate {
                    target: name(&c["target"], TextureTarget::from_gallium_name, "target"),
                    format: name(&c["format"], Format::from_gallium_name, "format"),
                    width0: u(c, "width0", 1) as u32,
                    height0: u(c, "height0", 1) as u32,
                    depth0: u(c, "depth0", 1) as u32,
                    array_size: u(c, "array_size", 1) as u32,
                    last_level: u(c, "last_level", 0) as u32,
                    ..Default::default()
                };
                let layout = ResourceLayout::new(&templ).unwrap();
                let mut t = Texture {
                    format: templ.format,
                    data: vec![0; layout.size],
                    layout,
                    templ,
                };
                if c.get("data").is_some() {
                    let (w, h) = (templ.width0, templ.height0);
                    write_box(&mut t, 0, [0, 0, 0, w, h, 1], &bytes(c));
                }
                textures.push((c["id"].as_str().unwrap().into(), t));
            }
            "texture_subdata" => {
                let id = c["resource"].as_str().unwrap();
                let t = &mut textures.iter_mut().find(|(n, _)| n == id).unwrap().1;
                let b = &c["box"];
                let bx = ["x", "y", "z", "width", "height", "depth"].map(|k| u(b, k, 0) as u32);
                write_box(t, u(c, "level", 0) as usize, bx, &bytes(c));
            }
            "create_sampler_view" => {
                let res = c["resource"].as_str().unwrap().to_string();
                let t = &textures.iter().find(|(n, _)| *n == res).unwrap().1;
                let mut v = SamplerViewDesc::of_resource(&t.templ);
                if let Some(fmt) = c.get("format") {
                    v.format = name(fmt, Format::from_gallium_name, "format");
                }
                v.first_level = u(c, "first_level", v.first_level as u64) as u32;
                v.last_level = u(c, "last_level", v.last_level as u64) as u32;
                v.first_layer = u(c, "first_layer", v.first_layer as u64) as u32;
                v.last_layer = u(c, "last_layer", v.last_layer as u64) as u32;
                for (i, k) in ["swizzle_r", "swizzle_g", "swizzle_b", "swizzle_a"]
                    .iter()
                    .enumerate()
                {
                    if let Some(s) = c.get(*k) {
                        v.swizzle[i] = name(s, Swizzle::from_gallium_name, k);
                    }
                }
                views.push((c["id"].as_str().unwrap().into(), res, v));
            }
            "create_sampler_state" => {
                let st = &c["state"];
                let d = SamplerState::default();
                let wrap = |k: &str, d: TexWrap| {
                    st.get(k)
                        .map_or(d, |v| name(v, TexWrap::from_gallium_name, k))
                };
                let bc = st.get("border_color").map_or([0.0; 4], |b| {
                    let a = b.as_array().unwrap();
                    std::array::from_fn(|i| a[i].as_f64().unwrap() as f32)
                });
                let s = SamplerState {
                    wrap_s: wrap("wrap_s", d.wrap_s),
                    wrap_t: wrap("wrap_t", d.wrap_t),
                    wrap_r: wrap("wrap_r", d.wrap_r),
                    min_img_filter: st.get("min_img_filter").map_or(d.min_img_filter, |v| {
                        name(v, TexFilter::from_gallium_name, "filter")
                    }),
                    mag_img_filter: st.get("mag_img_filter").map_or(d.mag_img_filter, |v| {
                        name(v, TexFilter::from_gallium_name, "filter")
                    }),
                    min_mip_filter: st.get("min_mip_filter").map_or(d.min_mip_filter, |v| {
                        name(v, TexMipFilter::from_gallium_name, "mip")
                    }),
                    compare_mode: st.get("compare_mode").map_or(d.compare_mode, |v| {
                        name(v, TexCompareMode::from_gallium_name, "compare")
                    }),
                    compare_func: st
                        .get("compare_func")
                        .map_or(d.compare_func, |v| name(v, Func::from_gallium_name, "func")),
                    normalized_coords: st
                        .get("normalized_coords")
                        .and_then(Value::as_bool)
                        .unwrap_or(true),
                    max_anisotropy: u(st, "max_anisotropy", 0) as u32,
                    lod_bias: f(st, "lod_bias", 0.0),
                    min_lod: f(st, "min_lod", 0.0),
                    max_lod: f(st, "max_lod", 1000.0),
                    border_color: bc,
                    ..d
                };
                samplers.push((c["id"].as_str().unwrap().into(), s));
            }
            "set_sampler_views" => {
                let start = u(c, "start_slot", 0) as usize;
                for (i, v) in c["views"].as_array().unwrap().iter().enumerate() {
                    bound_views[start + i] = v
                        .as_str()
                        .map(|n| views.iter().position(|(id, _, _)| id == n).unwrap());
                }
            }
            "bind_sampler_states" => {
                let start = u(c, "start_slot", 0) as usize;
                for (i, v) in c["samplers"].as_array().unwrap().iter().enumerate() {
                    bound_samplers[start + i] = v
                        .as_str()
                        .map(|n| samplers.iter().position(|(id, _)| id == n).unwrap());
                }
            }
            "create_fs_state" => fs_code = c["code"].as_str().unwrap().into(),
            "create_rasterizer_state" => rasts.push((
                c["id"].as_str().unwrap().into(),
                c["state"]
                    .get("scissor")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )),
            "bind_rasterizer_state" => {
                scissor_on = rasts
                    .iter()
                    .find(|(n, _)| n == c["id"].as_str().unwrap())
                    .unwrap()
                    .1;
            }
            "set_scissor_states" => {
                let s = &c["scissors"][0];
                scissor = ["minx", "miny", "maxx", "maxy"].map(|k| u(s, k, 0) as u32);
            }
            "set_framebuffer_state" => {
                width = u(c, "width", 0) as u32;
                height = u(c, "height", 0) as u32;
                image = vec![0; (width * height * 4) as usize];
            }
            "clear" => {
                let col = c["color"].as_array().unwrap();
                for px in image.chunks_mut(4) {
                    for k in 0..4 {
                        px[k] = (col[k].as_f64().unwrap() as f32 * 255.0).round() as u8;
                    }
                }
            }
            "draw_vbo" => {
                let shader = compile_fragment(Language::Wgsl, &fs_code, "fs_main", &[])
                    .expect("fs compiles");
                let tex: Vec<Option<BoundTexture>> = bound_views
                    .iter()
                    .map(|v| {
                        v.map(|i| {
                            let (_, res, desc) = &views[i];
                            let t = &textures.iter().find(|(n, _)| n == res).unwrap().1;
                            BoundTexture {
                                view: desc,
                                layout: &t.layout,
                                resource_format: t.format,
                                data: &t.data,
                            }
                        })
                    })
                    .collect();
                let smp: Vec<Option<&SamplerState>> = bound_samplers
                    .iter()
                    .map(|s| s.map(|i| &samplers[i].1))
                    .collect();
                let res = ShaderResources {
                    constants: &[],
                    textures: &tex,
                    samplers: &smp,
                    ..Default::default()
                };
                let (x0, y0, x1, y1) = if scissor_on {
                    (
                        scissor[0],
                        scissor[1],
                        scissor[2].min(width),
                        scissor[3].min(height),
                    )
                } else {
                    (0, 0, width, height)
                };
                // one row of 4x2 blocks per call, like a tile's worth
                for by in (y0..y1).step_by(2) {
                    let groups = ((x1 - x0) / 4) as usize;
                    let mut fc = vec![f32x8::ZERO; 4 * groups];
                    for g in 0..groups {
                        let bx = x0 + 4 * g as u32;
                        fc[g] =
                            f32x8::new(std::array::from_fn(|l| (bx + FRAG_LANE_X[l]) as f32 + 0.5));
                        fc[groups + g] =
                            f32x8::new(std::array::from_fn(|l| (by + FRAG_LANE_Y[l]) as f32 + 0.5));
                        fc[2 * groups + g] = f32x8::splat(0.5);
                        fc[3 * groups + g] = f32x8::splat(1.0);
                    }
                    let all: Lanes = bytemuck::cast(wide::u32x8::splat(!0));
                    let mut mask = vec![all; groups];
                    let mut out = vec![f32x8::ZERO; 4 * groups];
                    let mut io = FragmentIo {
                        groups,
                        inputs: &[],
                        frag_coord: &fc,
                        mask: &mut mask,
                        outputs: &mut out,
                    };
                    shader.run(&res, &mut io);
                    for g in 0..groups {
                        for l in 0..LANES {
                            let x = x0 + 4 * g as u32 + FRAG_LANE_X[l];
                            let y = by + FRAG_LANE_Y[l];
                            let o = ((y * width + x) * 4) as usize;
                            for k in 0..4 {
                                let v = out[k * groups + g].to_array()[l];
                                image[o + k] = (v.clamp(0.0, 1.0) * 255.0).round() as u8;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    (width, height, image)
}

fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Compares with the reference; returns (pixels off by more than 1, total).
fn compare(scene: &str) -> (usize, usize, String) {
    let (w, h, img) = render(&dir().join(format!("{scene}.json")));
    let (rw, rh, rf) = read_png(&dir().join(format!("ref/{scene}/color.png")));
    assert_eq!((w, h), (rw, rh));
    let mut bad = 0;
    let mut first = String::new();
    let mut diff = vec![0u8; img.len()];
    for i in 0..(w * h) as usize {
        let d = (0..4)
            .map(|k| (img[i * 4 + k] as i32 - rf[i * 4 + k] as i32).abs())
            .max()
            .unwrap();
        if d > 1 {
            bad += 1;
            if first.is_empty() {
                first = format!(
                    "first at ({}, {}): got {:?} want {:?}",
                    i as u32 % w,
                    i as u32 / w,
                    &img[i * 4..i * 4 + 4],
                    &rf[i * 4..i * 4 + 4]
                );
            }
            diff[i * 4] = 255;
        }
        diff[i * 4 + 3] = 255;
    }
    // leave the rendering and a diff next to the build output for inspection
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (name, data) in [("out", &img), ("diff", &diff)] {
        let f = std::fs::File::create(out.join(format!("sampler_{scene}_{name}.png"))).unwrap();
        let mut e = png::Encoder::new(std::io::BufWriter::new(f), w, h);
        e.set_color(png::ColorType::Rgba);
        e.write_header().unwrap().write_image_data(data).unwrap();
    }
    (bad, (w * h) as usize, first)
}

fn check(scene: &str) {
    let (bad, total, first) = compare(scene);
    assert!(
        bad * 1000 <= total,
        "{scene}: {bad} of {total} pixels differ from llvmpipe by more than 1/255; {first} (see {}/sampler_{scene}_diff.png)",
        env!("CARGO_TARGET_TMPDIR")
    );
}

#[test]
fn lod_selection_matches_llvmpipe() {
    check("lod");
}

#[test]
fn wrap_modes_match_llvmpipe() {
    check("wrap");
}

#[test]
fn texture_builtins_match_llvmpipe() {
    check("ops");
}

#[test]
fn texture_targets_match_llvmpipe() {
    check("targets");
}

#[test]
fn formats_and_swizzles_match_llvmpipe() {
    check("formats");
}
