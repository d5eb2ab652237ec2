//! Texture lookups inlined into the JIT's LLVM regions
//! (`texture/inline.rs`, `jit/llvm/sample.rs`) against the interpreter:
//! the same bits, for every sampler state and view the inlined kernel
//! takes (each wrap mode per axis, non-power-of-two sizes, one-texel-wide
//! levels, channel orders and swizzles, two views in one shader, one
//! level or per-quad levels by ILOG2 and LINEAR) and for
//! the ones it leaves to the interpreter (NEAREST, borders, mirrors),
//! at coordinates that take each of its paths: the pair fetch, the
//! four-gather fetch (a REPEAT lane at the last column, a one-wide
//! level) and the fallback call (NaN, infinities, coordinates beyond i32
//! after scaling).

use ferropipe_components::enums::ShaderType;
use ferropipe_components::enums::*;
use ferropipe_components::format::Format;
use ferropipe_components::resource::{ResourceLayout, ResourceTemplate};
use ferropipe_components::shader::FragmentShader;
use ferropipe_components::shader::{
    BoundTexture, FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, Lanes, ShaderResources,
};
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
/// beyond i32 after scaling) in one lane.  Every fourth group keeps all
/// its lanes in [0.25, 0.65], so that where a texture is two texels or
/// more across, its 2x2 footprints are interior (the generated code's
/// first path), and the next group in [0.5, 1), so that some lanes' left
/// column is the last one and the rest are interior (the edge paths);
/// the other groups mix everything.
///
/// Groups 48-63 are smooth, as a primitive's are: four runs of four
/// groups, each run at one scale, so the groups of a run choose the same
/// levels (the generated code's carried layouts) and the runs differ;
/// group 53 has a NaN lane (the fallback, between two groups of a run).
fn coord(i: usize, k: usize) -> f32 {
    let (g, l) = (i / 8, i % 8);
    if g >= 48 {
        if g == 53 && l == 3 {
            return f32::NAN;
        }
        let (lx, ly) = (FRAG_LANE_X[l] as f32, FRAG_LANE_Y[l] as f32);
        let d = [1.0 / 8.0, 1.0 / 64.0, 1.0 / 16.0, 1.0 / 3.0][(g / 4) % 4];
        let step = (g % 4) as f32 * 0.02;
        return match k {
            0 => 0.3 + step + lx * d,
            1 => 0.45 + ly * d,
            2 => 0.6 + step + lx * d * 2.0,
            _ => 0.2 + ly * d * 0.5,
        };
    }
    let mut x = (i as u32 * 4 + k as u32).wrapping_mul(2_246_822_519) ^ 0x9e37_79b9;
    x ^= x >> 15;
    let u = (x % 10_000) as f32 / 10_000.0;
    let v = match i % 11 {
        _ if (i / 8) % 4 == 1 => 0.25 + u * 0.4,
        _ if (i / 8) % 4 == 2 => 0.5 + u * 0.499,
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

fn run(shader: &CompiledShader, texs: &[&Tex], smps: &[&SamplerState]) -> Vec<u32> {
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

/// `(what, views, samplers, how many of the three lookups the JIT
/// inlines)`.
type Case = (&'static str, [Tex; 2], [SamplerState; 2], usize);

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
    let mut mip_linear = sampler(Repeat, Repeat);
    mip_linear.min_mip_filter = TexMipFilter::Linear;
    let mut mip_linear_clamp = sampler(Clamp, Clamp);
    mip_linear_clamp.min_mip_filter = TexMipFilter::Linear;
    let mut mip_npot = texture(rgba, 12, 10, 4, 21);
    mip_npot.view.first_level = 1;
    let mut nearest = sampler(Repeat, Repeat);
    nearest.min_img_filter = TexFilter::Nearest;
    nearest.mag_img_filter = TexFilter::Nearest;
    let with_wrap = |s: &SamplerState, wrap_s, wrap_t| SamplerState {
        wrap_s,
        wrap_t,
        ..*s
    };
    let nearest_clamp = with_wrap(&nearest, Clamp, Clamp);
    let nearest_mixed = with_wrap(&nearest, Clamp, Repeat);
    let mut nearest_view = texture(rgba, 10, 8, 3, 25);
    nearest_view.view.first_level = 1;
    let mut nearest_swizzled = t(Format::B8G8R8A8_UNORM, 6, 8, 26);
    nearest_swizzled.view.swizzle = [Swizzle::W, Swizzle::X, Swizzle::One, Swizzle::Y];
    let mut nearest_mip = with_wrap(&nearest, Repeat, Clamp);
    nearest_mip.min_mip_filter = TexMipFilter::Nearest;
    let mut nearest_mip_linear = nearest_mip;
    nearest_mip_linear.min_mip_filter = TexMipFilter::Linear;
    let mut min_nearest = nearest_mip;
    min_nearest.mag_img_filter = TexFilter::Linear;
    vec![
        (
            "clamp, 8x5",
            [t(rgba, 8, 5, 1), t(rgba, 3, 7, 2)],
            [sampler(Clamp, Clamp), sampler(Clamp, Clamp)],
            3,
        ),
        (
            "repeat, 8x4 (the last column takes four gathers)",
            [t(rgba, 8, 4, 3), t(rgba, 4, 4, 4)],
            [sampler(Repeat, Repeat), sampler(Clamp, Repeat)],
            3,
        ),
        (
            "repeat s, clamp t, 16x8; B8G8R8A8",
            [t(Format::B8G8R8A8_UNORM, 16, 8, 5), t(rgba, 2, 2, 6)],
            [sampler(Repeat, Clamp), sampler(Repeat, Clamp)],
            3,
        ),
        (
            "one texel wide (four gathers), 1x8",
            [t(rgba, 1, 8, 9), t(rgba, 5, 1, 10)],
            [sampler(Clamp, Repeat), sampler(Clamp, Clamp)],
            3,
        ),
        (
            "a view swizzle with constants",
            [swizzled, t(rgba, 8, 8, 11)],
            [sampler(Clamp, Repeat), sampler(Repeat, Repeat)],
            3,
        ),
        (
            "a mipmapped view from level 1, mip filter NONE",
            [mip_none, t(rgba, 8, 8, 12)],
            [sampler(Clamp, Clamp), sampler(Repeat, Repeat)],
            3,
        ),
        (
            "mip filter NEAREST (per-quad ILOG2 levels)",
            [texture(rgba, 16, 16, 5, 13), t(rgba, 8, 8, 14)],
            [mip_nearest, sampler(Clamp, Clamp)],
            3,
        ),
        (
            "mip filter LINEAR, REPEAT (two levels per quad)",
            [texture(rgba, 16, 16, 5, 19), texture(rgba, 8, 8, 4, 20)],
            [mip_linear, mip_linear_clamp],
            3,
        ),
        (
            "mip filter LINEAR, CLAMP_TO_EDGE, 12x10 from level 1",
            [mip_npot, texture(rgba, 1, 16, 5, 22)],
            [mip_linear_clamp, mip_linear_clamp],
            3,
        ),
        (
            "mip filter LINEAR, REPEAT on a 16x12 chain (levels that do not fit fall back)",
            [texture(rgba, 16, 12, 5, 23), texture(rgba, 6, 8, 4, 24)],
            [mip_linear, mip_linear],
            3,
        ),
        (
            // (`TexDesc::cols` holds 16 entries, picked by two permutes:
            // levels 8-10 are the second's)
            "mip filters NEAREST and LINEAR on 11- and 10-level chains (table entries past 8)",
            [
                texture(rgba, 1024, 2, 11, 31),
                texture(rgba, 512, 4, 10, 32),
            ],
            [mip_nearest, mip_linear],
            3,
        ),
        (
            "NEAREST filters, REPEAT; bilinear",
            [t(rgba, 8, 8, 15), t(rgba, 8, 8, 16)],
            [nearest, sampler(Repeat, Repeat)],
            3,
        ),
        (
            "NEAREST filters, CLAMP_TO_EDGE / REPEAT, 5x4 from level 1; B8G8R8A8 swizzled",
            [nearest_view, nearest_swizzled],
            [nearest_clamp, nearest_mixed],
            3,
        ),
        (
            "NEAREST filters, mip filter NEAREST (per-quad ILOG2 levels), 16x16",
            [texture(rgba, 16, 16, 5, 27), texture(rgba, 16, 8, 4, 28)],
            [nearest_mip, nearest_mip],
            3,
        ),
        (
            "NEAREST min, LINEAR mag; NEAREST with mip LINEAR (not inlined)",
            [texture(rgba, 16, 16, 5, 29), texture(rgba, 8, 8, 4, 30)],
            [min_nearest, nearest_mip_linear],
            0,
        ),
        (
            "border and mirror (not inlined)",
            [t(rgba, 8, 8, 17), t(rgba, 8, 8, 18)],
            [sampler(ClampToBorder, Clamp), sampler(MirrorRepeat, Clamp)],
            0,
        ),
    ]
}

#[test]
fn inlined_lookups_match_the_interpreter() {
    let interp = compile(Backend::Interp);
    if compile(Backend::Llvm).jit().is_none() {
        assert!(
            std::env::var_os(ferropipe_shader::REQUIRE_LLVM_ENV).is_none(),
            "LLVM is required here but gave no code"
        );
        eprintln!("no libLLVM on this host: the inlined lookups are not tested");
        return;
    }
    for (what, texs, smps, inlined) in cases() {
        let texs = [&texs[0], &texs[1]];
        let smps = [&smps[0], &smps[1]];
        let want = run(&interp, &texs, &smps);
        // a new shader per case: its variants are this case's
        let llvm = compile(Backend::Llvm);
        let got = run(&llvm, &texs, &smps);
        let diff = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(
            diff, 0,
            "{what}: {diff} results differ from the interpreter"
        );
        let code = llvm.jit().expect("LLVM's code");
        let want_variants = if inlined > 0 {
            vec![(inlined, 0)]
        } else {
            vec![]
        };
        assert_eq!(
            code.variant_lookups(),
            want_variants,
            "{what}: inlined lookups"
        );
    }
}

/// A material's three maps at one UV set (pbr_barrels' shape): the
/// lookups that follow one another at the same coordinates through views
/// of the same layout share the first one's addressing (`bilinear_n`).
const MAPS: &str = "
@group(1) @binding(0) var t0: texture_2d<f32>;
@group(1) @binding(1) var t1: texture_2d<f32>;
@group(1) @binding(2) var t2: texture_2d<f32>;
@group(2) @binding(0) var s0: sampler;
@group(2) @binding(1) var s1: sampler;

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let a = textureSample(t0, s0, p.xy);
    let b = textureSample(t1, s0, p.xy);
    let c = textureSample(t2, s1, p.xy);
    return a + b.yzwx * 0.5 + c.wzyx * 0.25;
}
";

/// `(what, views, samplers, (lookups inlined, of which sharing the
/// previous one's addressing))`.
type MapsCase = (&'static str, [Tex; 3], [SamplerState; 2], (usize, usize));

#[test]
fn lookups_of_one_layout_share_their_addressing() {
    let build = |backend| {
        compile_with_backend(
            Language::Wgsl,
            MAPS,
            "fs_main",
            ShaderType::Fragment,
            &[],
            &[],
            backend,
        )
        .expect("compiles")
    };
    let interp = build(Backend::Interp);
    if build(Backend::Llvm).jit().is_none() {
        assert!(std::env::var_os(ferropipe_shader::REQUIRE_LLVM_ENV).is_none());
        return;
    }
    let rgba = Format::R8G8B8A8_UNORM;
    let mut linear = sampler(TexWrap::Repeat, TexWrap::Repeat);
    linear.min_mip_filter = TexMipFilter::Linear;
    let mut nearest_mip = sampler(TexWrap::ClampToEdge, TexWrap::ClampToEdge);
    nearest_mip.min_mip_filter = TexMipFilter::Nearest;
    let one = sampler(TexWrap::ClampToEdge, TexWrap::Repeat);
    let mut one_nearest = one;
    one_nearest.min_img_filter = TexFilter::Nearest;
    one_nearest.mag_img_filter = TexFilter::Nearest;
    let cases: Vec<MapsCase> = vec![
        (
            "NEAREST, three maps of one layout",
            [
                texture(rgba, 8, 8, 1, 40),
                texture(rgba, 8, 8, 1, 41),
                texture(rgba, 8, 8, 1, 42),
            ],
            [one_nearest, one_nearest],
            (3, 2),
        ),
        (
            "one level, the third map through a NEAREST sampler of the same wraps (not shared)",
            [
                texture(rgba, 8, 8, 1, 43),
                texture(rgba, 8, 8, 1, 44),
                texture(rgba, 8, 8, 1, 45),
            ],
            [one, one_nearest],
            (3, 1),
        ),
        (
            "trilinear, three maps of one layout",
            [
                texture(rgba, 16, 16, 5, 31),
                texture(rgba, 16, 16, 5, 32),
                texture(rgba, 16, 16, 5, 33),
            ],
            [linear, linear],
            (3, 2),
        ),
        (
            "ILOG2, the third map another size",
            [
                texture(rgba, 16, 8, 5, 34),
                texture(rgba, 16, 8, 5, 35),
                texture(rgba, 8, 8, 4, 36),
            ],
            [nearest_mip, nearest_mip],
            (3, 1),
        ),
        (
            "one level, the second map B8G8R8A8 (same layout), the third another sampler",
            [
                texture(rgba, 8, 4, 1, 37),
                texture(Format::B8G8R8A8_UNORM, 8, 4, 1, 38),
                texture(rgba, 8, 4, 1, 39),
            ],
            [one, linear],
            (3, 1),
        ),
    ];
    for (what, texs, smps, want) in cases {
        let texs = [&texs[0], &texs[1], &texs[2]];
        let smps = [&smps[0], &smps[1]];
        let llvm = build(Backend::Llvm);
        let a = run(&interp, &texs, &smps);
        let b = run(&llvm, &texs, &smps);
        let diff = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert_eq!(
            diff, 0,
            "{what}: {diff} results differ from the interpreter"
        );
        let code = llvm.jit().expect("LLVM's code");
        assert_eq!(code.variant_lookups(), vec![want], "{what}");
    }
}

/// The automatic switch to LLVM's tier of a program with lookups a
/// sampling variant may inline (`JitCode::deferred`) compiles the variant
/// its calls run and nothing else: the code without inlined lookups only
/// once a call no variant covers needs it.  Every call gives the
/// interpreter's bits.
#[test]
fn the_switch_compiles_only_what_its_calls_run() {
    use TexWrap::{ClampToBorder, ClampToEdge as Clamp, MirrorRepeat};
    let interp = compile(Backend::Interp);
    let shader = compile(Backend::Jit);
    let rgba = Format::R8G8B8A8_UNORM;
    let texs = [texture(rgba, 16, 8, 1, 41), texture(rgba, 8, 8, 1, 42)];
    let (inline, general) = (
        [sampler(Clamp, Clamp), sampler(Clamp, Clamp)],
        [sampler(ClampToBorder, Clamp), sampler(MirrorRepeat, Clamp)],
    );
    let texs = [&texs[0], &texs[1]];
    let tiers = shader.tiers();
    let base = shader.jit().expect("Cranelift's code");
    assert_eq!(base.codegen(), ferropipe_shader::Codegen::Cranelift);
    // as if the shader had run past its break-even work
    let _ = tiers.for_call(shader.program(), usize::MAX / 2);
    assert!(!tiers.may_tier_up());
    let Some(top) = shader
        .jit()
        .filter(|c| c.codegen() == ferropipe_shader::Codegen::Llvm)
    else {
        assert!(
            std::env::var_os(ferropipe_shader::REQUIRE_LLVM_ENV).is_none(),
            "LLVM is required here but gave no code"
        );
        eprintln!("no libLLVM on this host: the deferred tier is not tested");
        return;
    };
    assert!(
        top.is_deferred(),
        "the switch compiled the code without lookups"
    );
    assert_eq!(top.region_count(), 0);
    for (what, smps, deferred) in [
        ("inlined", &inline, true),
        ("again", &inline, true),
        ("border and mirror", &general, false),
        ("inlined after", &inline, false),
    ] {
        let smps = [&smps[0], &smps[1]];
        let want = run(&interp, &texs, &smps);
        let got = run(&shader, &texs, &smps);
        let diff = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(diff, 0, "{what}: {diff} results differ");
        assert_eq!(top.is_deferred(), deferred, "{what}");
        assert_eq!(top.variant_lookups(), vec![(3, 0)], "{what}");
    }
    // a host's tier-up after the switch has nothing left to compile
    assert!(shader.tier_up());
}
