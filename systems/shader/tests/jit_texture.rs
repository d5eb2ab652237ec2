//! Texture lookups inlined into the JIT's LLVM regions
//! (`texture/inline.rs`, `jit/llvm/sample.rs`) against the interpreter:
//! the same bits, for every sampler state and view the inlined kernel
//! takes (each wrap mode per axis, non-power-of-two sizes, one-texel-wide
//! levels, channel orders and swizzles, two views in one shader) and for
//! the ones it leaves to the interpreter (mipmaps, NEAREST, borders),
//! at coordinates that take each of its paths: the pair fetch, the
//! four-gather fetch (a REPEAT lane at the last column, a one-wide
//! level) and the fallback call (NaN, infinities, coordinates beyond i32
//! after scaling).

use ferropipe_components::enums::*;
use ferropipe_components::format::Format;
use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
use ferropipe_components::shader::FragmentShader;
use ferropipe_components::shader::{BoundTexture, FragmentIo, Lanes, ShaderResources};
use ferropipe_components::state::SamplerState;
use ferropipe_components::view::SamplerViewDesc;
use ferropipe_shader::{Backend, CompiledShader, Language, compile_with_backend};
use wide::f32x8;

/// Two lookups of view 0 (one at the fragment position's x, y, one at
/// its z, w) and one of view 1 at x, y, mixed so every result counts.
const SRC: &str = "
@group(1) @binding(0) var t0: texture_2d<f32>;
@group(1) @binding(1) var t1: texture_2d<f32>;
@group(2) @binding(0) var s0: sampler;
@group(2) @binding(1) var s1: sampler;

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let a = textureSample(t0, s0, p.xy);
    let b = textureSample(t0, s0, p.zw);
    let c = textureSample(t1, s1, p.xy);
    return a * 0.5 + b.zyxw * 0.25 + c * 0.125;
}
";

const GROUPS: usize = 64;

struct Tex {
    layout: ResourceLayout,
    data: Vec<u8>,
    view: SamplerViewDesc,
    format: Format,
}

fn texture(format: Format, w: u32, h: u32, levels: u32, seed: u32) -> Tex {
    let templ = ResourceTemplate {
        target: TextureTarget::Texture2D,
        format,
        width0: w,
        height0: h,
        depth0: 1,
        array_size: 1,
        last_level: levels - 1,
        ..Default::default()
    };
    let layout = ResourceLayout::new(&templ).unwrap();
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let data = (0..layout.size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    Tex {
        view: SamplerViewDesc::of_resource(&templ),
        layout,
        data,
        format,
    }
}

fn sampler(wrap_s: TexWrap, wrap_t: TexWrap) -> SamplerState {
    SamplerState {
        wrap_s,
        wrap_t,
        min_img_filter: TexFilter::Linear,
        mag_img_filter: TexFilter::Linear,
        min_mip_filter: TexMipFilter::None,
        border_color: [0.25, 0.5, 0.75, 1.0],
        ..SamplerState::default()
    }
}

/// Coordinates for lane `i` of component `k`: mostly inside and around
/// [0, 1] (including exact texel edges and the last column), some far
/// outside, and every 37th group a special value (NaN, infinities,
/// beyond i32 after scaling) in one lane.
fn coord(i: usize, k: usize) -> f32 {
    let mut x = (i as u32 * 4 + k as u32).wrapping_mul(2_246_822_519) ^ 0x9e37_79b9;
    x ^= x >> 15;
    let u = (x % 10_000) as f32 / 10_000.0;
    let v = match i % 11 {
        0 => u * 6.0 - 2.5,
        1 => (x % 17) as f32 / 8.0,
        2 => 1.0 - 1.0 / 64.0 * (x % 3) as f32,
        3 => -((x % 5) as f32) / 16.0,
        _ => u * 1.4 - 0.2,
    };
    if (i / 8) % 37 == 5 && i % 8 == k {
        [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3.0e9][k % 4]
    } else {
        v
    }
}

fn run(shader: &CompiledShader, texs: &[&Tex; 2], smps: &[&SamplerState; 2]) -> Vec<u32> {
    let bound: Vec<Option<BoundTexture>> = texs
        .iter()
        .map(|t| {
            Some(BoundTexture {
                view: &t.view,
                layout: &t.layout,
                resource_format: t.format,
                data: &t.data,
            })
        })
        .collect();
    let smp: Vec<Option<&SamplerState>> = smps.iter().map(|s| Some(*s)).collect();
    let res = ShaderResources {
        constants: &[],
        textures: &bound,
        samplers: &smp,
        ..Default::default()
    };
    let fc: Vec<Lanes> = (0..4 * GROUPS)
        .map(|r| {
            let (k, g) = (r / GROUPS, r % GROUPS);
            f32x8::new(std::array::from_fn(|l| coord(g * 8 + l, k)))
        })
        .collect();
    let all: Lanes = bytemuck::cast(wide::u32x8::splat(!0));
    let mut mask = vec![all; GROUPS];
    let mut out = vec![f32x8::ZERO; 4 * GROUPS];
    let mut io = FragmentIo {
        groups: GROUPS,
        inputs: &[],
        frag_coord: &fc,
        mask: &mut mask,
        outputs: &mut out,
    };
    shader.run(&res, &mut io);
    out.iter()
        .flat_map(|v| v.to_array().map(f32::to_bits))
        .collect()
}

fn compile(backend: Backend) -> CompiledShader {
    compile_with_backend(
        Language::Wgsl,
        SRC,
        "fs_main",
        ShaderType::Fragment,
        &[],
        &[],
        backend,
    )
    .expect("compiles")
}

/// `(what, views, samplers, whether the JIT inlines view 0's lookups)`.
/// Each inlined case's static state (wrap modes and channel map per
/// lookup) is one no earlier case has: a variant is keyed by it alone
/// (sizes and texels are the call's), so each compiles a new one.
type Case = (&'static str, [Tex; 2], [SamplerState; 2], bool);

fn cases() -> Vec<Case> {
    use TexWrap::{ClampToBorder, ClampToEdge as Clamp, MirrorRepeat, Repeat};
    let rgba = Format::R8G8B8A8_UNORM;
    let t = |f, w, h, seed| texture(f, w, h, 1, seed);
    let mut swizzled = t(rgba, 8, 4, 7);
    swizzled.view.swizzle = [Swizzle::Z, Swizzle::One, Swizzle::X, Swizzle::Zero];
    let mut mip_none = texture(rgba, 16, 8, 4, 8);
    mip_none.view.first_level = 1;
    let mut mip_nearest = sampler(Clamp, Clamp);
    mip_nearest.min_mip_filter = TexMipFilter::Nearest;
    let mut nearest = sampler(Repeat, Repeat);
    nearest.min_img_filter = TexFilter::Nearest;
    nearest.mag_img_filter = TexFilter::Nearest;
    vec![
        (
            "clamp, 8x5",
            [t(rgba, 8, 5, 1), t(rgba, 3, 7, 2)],
            [sampler(Clamp, Clamp), sampler(Clamp, Clamp)],
            true,
        ),
        (
            "repeat, 8x4 (the last column takes four gathers)",
            [t(rgba, 8, 4, 3), t(rgba, 4, 4, 4)],
            [sampler(Repeat, Repeat), sampler(Clamp, Repeat)],
            true,
        ),
        (
            "repeat s, clamp t, 16x8; B8G8R8A8",
            [t(Format::B8G8R8A8_UNORM, 16, 8, 5), t(rgba, 2, 2, 6)],
            [sampler(Repeat, Clamp), sampler(Repeat, Clamp)],
            true,
        ),
        (
            "one texel wide (four gathers), 1x8",
            [t(rgba, 1, 8, 9), t(rgba, 5, 1, 10)],
            [sampler(Clamp, Repeat), sampler(Clamp, Clamp)],
            true,
        ),
        (
            "a view swizzle with constants",
            [swizzled, t(rgba, 8, 8, 11)],
            [sampler(Clamp, Repeat), sampler(Repeat, Repeat)],
            true,
        ),
        (
            "a mipmapped view from level 1, mip filter NONE",
            [mip_none, t(rgba, 8, 8, 12)],
            [sampler(Clamp, Clamp), sampler(Repeat, Repeat)],
            true,
        ),
        (
            "mip filter NEAREST (not inlined)",
            [texture(rgba, 16, 16, 5, 13), t(rgba, 8, 8, 14)],
            [mip_nearest, sampler(Clamp, Clamp)],
            false,
        ),
        (
            "NEAREST filters (not inlined)",
            [t(rgba, 8, 8, 15), t(rgba, 8, 8, 16)],
            [nearest, sampler(Repeat, Repeat)],
            false,
        ),
        (
            "border and mirror (not inlined)",
            [t(rgba, 8, 8, 17), t(rgba, 8, 8, 18)],
            [sampler(ClampToBorder, Clamp), sampler(MirrorRepeat, Clamp)],
            false,
        ),
    ]
}

#[test]
fn inlined_lookups_match_the_interpreter() {
    let interp = compile(Backend::Interp);
    let llvm = compile(Backend::Llvm);
    let Some(code) = llvm.jit() else {
        assert!(
            std::env::var_os(ferropipe_shader::REQUIRE_LLVM_ENV).is_none(),
            "LLVM is required here but gave no code"
        );
        eprintln!("no libLLVM on this host: the inlined lookups are not tested");
        return;
    };
    let mut variants = code.variant_count();
    for (what, texs, smps, inlined) in cases() {
        let texs = [&texs[0], &texs[1]];
        let smps = [&smps[0], &smps[1]];
        let want = run(&interp, &texs, &smps);
        let got = run(&llvm, &texs, &smps);
        let diff = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(
            diff, 0,
            "{what}: {diff} results differ from the interpreter"
        );
        // each inlined case's key is new, so it compiled a variant (view
        // 1's lookup is inlined in the other cases too, which also
        // compiles one)
        let now = code.variant_count();
        if inlined {
            assert_eq!(now, variants + 1, "{what}: no sampling variant compiled");
        }
        variants = now;
    }
    assert!(variants <= ferropipe_shader::MAX_SAMPLING_VARIANTS);
}
