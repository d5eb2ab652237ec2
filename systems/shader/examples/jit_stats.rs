//! JIT compile time and coverage over the shaders of scene files:
//! `cargo run --release -p ferropipe-shader --example jit_stats --
//! SCENE.json...` (docs/shaders.md "The JIT" quotes its output).
//!
//! For every `create_vs_state` / `create_fs_state` / `create_compute_state`
//! of the scenes, compiles the shader with the JIT and prints the time the
//! JIT's own work took (regions, code generation, finalisation: what the
//! back end adds to shader creation), the share of body ops it compiled and
//! the region count; then p50 and max over all shaders.  The back end is
//! `FERROPIPE_SHADER`'s (`jit`, `llvm` or `cranelift`; default `jit`).
//!
//! A fragment shader whose LLVM code may sample inside its regions
//! (docs/shaders.md, "Texture lookups inside the LLVM regions") is then
//! run once on 8 groups with every sampler view it reads bound to a 4x4
//! RGBA8 texture, every sampler to bilinear CLAMP_TO_EDGE and every
//! constant buffer to 4 KiB of zeros: the sampling variant that call
//! compiles is timed too (the second compile a hot textured shader pays).

use ferropipe_components::enums::{ShaderType, TexFilter, TexWrap, TextureTarget};
use ferropipe_components::format::Format;
use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
use ferropipe_components::shader::{
    BoundTexture, FragmentIo, FragmentShader, Lanes, ShaderResources,
};
use ferropipe_components::state::SamplerState;
use ferropipe_components::view::SamplerViewDesc;
use ferropipe_shader::{Backend, CompiledShader, Language, compile_with_backend};

fn main() {
    let backend = Backend::from_env_or_default();
    let mut times = Vec::new();
    let mut tier_times = Vec::new();
    let mut variant_times = Vec::new();
    let (mut ops_in, mut ops_all) = (0usize, 0usize);
    let mut seen = std::collections::HashSet::new();
    for path in std::env::args().skip(1) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let Ok(scene) = serde_json::from_str::<serde_json::Value>(&text) else {
            eprintln!("{path}: not JSON");
            continue;
        };
        let dir = std::path::Path::new(&path)
            .parent()
            .unwrap_or(std::path::Path::new("."));
        let calls = scene["calls"].as_array().cloned().unwrap_or_default();
        for call in calls {
            let stage = match call["op"].as_str() {
                Some("create_vs_state") => ShaderType::Vertex,
                Some("create_fs_state") => ShaderType::Fragment,
                Some("create_compute_state") => ShaderType::Compute,
                _ => continue,
            };
            let source = match (call["code"].as_str(), call["source"].as_str()) {
                (Some(code), _) => code.to_string(),
                (None, Some(file)) => match std::fs::read_to_string(dir.join(file)) {
                    Ok(s) => s,
                    Err(_) => continue,
                },
                _ => continue,
            };
            let lang = match call["language"].as_str() {
                Some("glsl") => Language::Glsl,
                _ => Language::Wgsl,
            };
            let entry = call["entry_point"].as_str().unwrap_or("main").to_string();
            if !seen.insert((source.clone(), entry.clone(), format!("{stage:?}"))) {
                continue;
            }
            let Ok(shader) = compile_with_backend(lang, &source, &entry, stage, &[], &[], backend)
            else {
                continue;
            };
            let p = shader.program();
            match shader.jit() {
                Some(code) => {
                    let (c, n) = code.coverage();
                    ops_in += c;
                    ops_all += n;
                    times.push(code.compile_ns());
                    println!(
                        "{path} {entry}: {c}/{n} ops in {} regions, {:?}, {:.3} ms",
                        code.region_count(),
                        code.codegen(),
                        code.compile_ns() as f64 * 1e-6
                    );
                    if let Some(work) = shader.tiers().threshold()
                        && shader.tier_up()
                        && let Some(top) = shader.jit()
                    {
                        tier_times.push(top.compile_ns());
                        println!(
                            "  LLVM tier: {:.3} ms, switching after {work} op-groups ({} groups)",
                            top.compile_ns() as f64 * 1e-6,
                            work / shader.tiers().work_per_group().max(1)
                        );
                    }
                    if stage == ShaderType::Fragment
                        && let Some(ns) = sampling_variant(&shader)
                    {
                        variant_times.push(ns);
                        println!("  sampling variant: {:.3} ms", ns as f64 * 1e-6);
                    }
                }
                None => {
                    ops_all += p.body.len();
                    println!("{path} {entry}: interpreter ({} ops)", p.body.len());
                }
            }
        }
    }
    if let Some(t) = summary(&mut times) {
        println!(
            "{} shaders JIT-compiled at creation: {t}; {ops_in} of {ops_all} body ops compiled ({:.1} %)",
            times.len(),
            100.0 * ops_in as f64 / ops_all.max(1) as f64
        );
    }
    if let Some(t) = summary(&mut tier_times) {
        println!("{} LLVM tiers compiled: {t}", tier_times.len());
    }
    if let Some(t) = summary(&mut variant_times) {
        println!("{} sampling variants compiled: {t}", variant_times.len());
    }
}

/// Runs fragment shader `shader` once with the bindings of the module's
/// docs and returns the compile time of the sampling variant that call
/// compiled (`None`: the shader reads storage, or its current code
/// compiled none: no candidate lookups, or not LLVM's code).
fn sampling_variant(shader: &CompiledShader) -> Option<u64> {
    let info = shader.info();
    if info.shader_buffers_used != 0 || info.shader_images_used != 0 {
        return None;
    }
    let code = shader.jit()?;
    let before = code.variant_count();
    let templ = ResourceTemplate {
        target: TextureTarget::Texture2D,
        format: Format::R8G8B8A8_UNORM,
        width0: 4,
        height0: 4,
        depth0: 1,
        array_size: 1,
        ..Default::default()
    };
    let layout = ResourceLayout::new(&templ)?;
    let data = vec![128u8; layout.size];
    let view = SamplerViewDesc::of_resource(&templ);
    let sampler = SamplerState {
        wrap_s: TexWrap::ClampToEdge,
        wrap_t: TexWrap::ClampToEdge,
        min_img_filter: TexFilter::Linear,
        mag_img_filter: TexFilter::Linear,
        ..SamplerState::default()
    };
    let views = 128 - info.sampler_views_used.leading_zeros() as usize;
    let samplers = 32 - info.samplers_used.leading_zeros() as usize;
    let consts = 32 - info.const_buffers_used.leading_zeros() as usize;
    let textures: Vec<Option<BoundTexture>> = (0..views)
        .map(|_| {
            Some(BoundTexture {
                view: &view,
                layout: &layout,
                resource_format: templ.format,
                data: &data,
            })
        })
        .collect();
    let smps: Vec<Option<&SamplerState>> = (0..samplers).map(|_| Some(&sampler)).collect();
    let zeros = vec![0u8; 4096];
    let constants: Vec<&[u8]> = (0..consts).map(|_| zeros.as_slice()).collect();
    let res = ShaderResources {
        constants: &constants,
        textures: &textures,
        samplers: &smps,
        ..Default::default()
    };
    const GROUPS: usize = 8;
    let rows = |slots: usize| vec![Lanes::ZERO; slots * 4 * GROUPS];
    let inputs = rows(info.inputs.len());
    let frag_coord = rows(1);
    let mut outputs = rows(info.outputs.len());
    let all: Lanes = bytemuck::cast(wide::u32x8::splat(!0));
    let mut mask = vec![all; GROUPS];
    let mut io = FragmentIo {
        groups: GROUPS,
        inputs: &inputs,
        frag_coord: &frag_coord,
        mask: &mut mask,
        outputs: &mut outputs,
    };
    shader.run(&res, &mut io);
    let times = code.variant_compile_ns();
    (code.variant_count() > before).then(|| times.last().copied())?
}

/// "p50 .. ms, max .. ms" of compile times in ns (`None`: no times).
fn summary(times: &mut [u64]) -> Option<String> {
    times.sort_unstable();
    let max = *times.last()?;
    Some(format!(
        "p50 {:.3} ms, max {:.3} ms",
        times[times.len() / 2] as f64 * 1e-6,
        max as f64 * 1e-6
    ))
}
