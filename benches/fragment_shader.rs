//! ns per pixel of one ~30-instruction fragment shader (Blinn-Phong with a
//! hemisphere ambient: two normalizes of computed vectors, one of a
//! varying, two dot products, a 32nd power, clamps), run
//! 1. **interpreted**: WGSL → naga → our lane program → `exec::run`;
//! 2. **JIT**: the same lane program with its regions compiled by
//!    Cranelift (`systems/shader/src/jit`), byte-identical to 1;
//! 3. **native**: the same math written against the `FragmentShader` trait
//!    in `f32x8` lanes (the Rust-native path an embedding engine uses).
//!
//! Both see the same `FragmentIo` (4096 pixels = 512 groups of 4x2, inputs
//! varying per lane, one constant buffer) and produce the same colours
//! (checked before timing).  Throughput is pixels, so criterion reports
//! pixels/s; ns per pixel is its reciprocal.  docs/shaders.md records the
//! numbers and the plan to close the gap.
//!
//! `cargo bench -p ferropipe-shader --bench fragment_shader`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{
    FragmentIo, FragmentShader, LANES, Lanes, ShaderInfo, ShaderResources,
};
use ferropipe_shader::{Backend, CompiledShader, Language, compile_with_backend};

const SRC: &str = r#"
struct Light { dir: vec4<f32>, eye: vec4<f32>, base: vec4<f32>, k: vec4<f32> };
@group(0) @binding(0) var<uniform> u: Light;

@fragment
fn main(@location(0) n_in: vec3<f32>, @location(1) p: vec3<f32>) -> @location(0) vec4<f32> {
    let n = normalize(n_in);
    let v = normalize(u.eye.xyz - p);
    let l = u.dir.xyz;
    let diffuse = max(dot(n, l), 0.0);
    let h = normalize(l + v);
    var s = max(dot(n, h), 0.0);
    s = s * s; s = s * s; s = s * s; s = s * s; s = s * s;
    let hemi = n.y * 0.5 + 0.5;
    let ambient = u.k.x * (hemi * 0.6 + 0.4);
    let c = u.base.rgb * (ambient + diffuse) + vec3<f32>(u.k.y * s);
    return vec4<f32>(clamp(c, vec3<f32>(0.0), vec3<f32>(1.0)), u.base.a);
}
"#;

/// The shader above, by hand, over the same interface.
struct NativeLit {
    info: ShaderInfo,
}

fn constants(r: &ShaderResources<'_>) -> [f32; 16] {
    let mut c = [0.0; 16];
    if let Some(bytes) = r.constants.first() {
        for (i, v) in c.iter_mut().enumerate() {
            if let Some(b) = bytes.get(i * 4..i * 4 + 4) {
                *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    }
    c
}

impl FragmentShader for NativeLit {
    fn info(&self) -> &ShaderInfo {
        &self.info
    }

    fn run(&self, resources: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let c = constants(resources);
        let s = |i: usize| Lanes::splat(c[i]);
        let (lx, ly, lz) = (s(0), s(1), s(2));
        let (ex, ey, ez) = (s(4), s(5), s(6));
        let base = [s(8), s(9), s(10), s(11)];
        let (ka, ks) = (s(12), s(13));
        let g = io.groups;
        let (zero, one, half) = (Lanes::ZERO, Lanes::splat(1.0), Lanes::splat(0.5));
        let normalize = |x: Lanes, y: Lanes, z: Lanes| {
            let inv = one / (x * x + y * y + z * z).sqrt();
            (x * inv, y * inv, z * inv)
        };
        for i in 0..g {
            let input = |slot: usize, comp: usize| io.inputs[(slot * 4 + comp) * g + i];
            let (nx, ny, nz) = normalize(input(0, 0), input(0, 1), input(0, 2));
            let (vx, vy, vz) = normalize(ex - input(1, 0), ey - input(1, 1), ez - input(1, 2));
            let diffuse = (nx * lx + ny * ly + nz * lz).max(zero);
            let (hx, hy, hz) = normalize(lx + vx, ly + vy, lz + vz);
            let mut sp = (nx * hx + ny * hy + nz * hz).max(zero);
            for _ in 0..5 {
                sp = sp * sp;
            }
            let hemi = ny * half + half;
            let ambient = ka * (hemi * Lanes::splat(0.6) + Lanes::splat(0.4));
            let lit = ambient + diffuse;
            let spec = ks * sp;
            for (comp, b) in base.iter().take(3).enumerate() {
                io.outputs[comp * g + i] = (*b * lit + spec).max(zero).min(one);
            }
            io.outputs[3 * g + i] = base[3];
        }
    }
}

const GROUPS: usize = 512;

struct Inputs {
    inputs: Vec<Lanes>,
    frag_coord: Vec<Lanes>,
    constants: Vec<u8>,
}

fn inputs(slots: usize) -> Inputs {
    let mut seed = 0x9e37_79b9u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    };
    let inputs = (0..slots * 4 * GROUPS)
        .map(|_| Lanes::new(std::array::from_fn(|_| rnd())))
        .collect();
    let frag_coord = vec![Lanes::splat(0.5); 4 * GROUPS];
    let c: [f32; 16] = [
        0.267, 0.802, 0.535, 0.0, // light direction (unit)
        0.0, 2.0, 5.0, 1.0, // eye
        0.8, 0.3, 0.2, 1.0, // base colour
        0.35, 0.6, 0.0, 0.0, // ambient, specular
    ];
    Inputs {
        inputs,
        frag_coord,
        constants: c.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn run(shader: &dyn FragmentShader, inp: &Inputs, outputs: &mut [Lanes], mask: &mut [Lanes]) {
    let cb: [&[u8]; 1] = [&inp.constants];
    let res = ShaderResources {
        constants: &cb,
        ..Default::default()
    };
    mask.fill(Lanes::splat(f32::from_bits(!0)));
    let mut io = FragmentIo {
        groups: GROUPS,
        inputs: &inp.inputs,
        frag_coord: &inp.frag_coord,
        mask,
        outputs,
    };
    shader.run(&res, &mut io);
}

fn fragment_shader(c: &mut Criterion) {
    let build = |backend| -> CompiledShader {
        compile_with_backend(
            Language::Wgsl,
            SRC,
            "main",
            ShaderType::Fragment,
            &[],
            &[],
            backend,
        )
        .expect("bench shader")
    };
    let interp = build(Backend::Interp);
    // the default JIT at the tier a hot shader runs (LLVM's where the host
    // has libLLVM; a shader switches once its work pays for the compile,
    // `TieredCode`), and Cranelift's
    let jit = build(Backend::Jit);
    jit.tier_up();
    let crane = build(Backend::Cranelift);
    let code = jit.jit().expect("the JIT compiles the bench shader");
    let native = NativeLit {
        info: interp.info().clone(),
    };
    let slots = interp.info().inputs.len();
    let inp = inputs(slots);
    let n_out = interp.info().outputs.len() * 4 * GROUPS;
    let (mut out_a, mut out_b) = (vec![Lanes::ZERO; n_out], vec![Lanes::ZERO; n_out]);
    let mut mask = vec![Lanes::ZERO; GROUPS];
    let mut out_j = vec![Lanes::ZERO; n_out];
    let mut out_c = vec![Lanes::ZERO; n_out];
    run(&interp, &inp, &mut out_a, &mut mask);
    run(&jit, &inp, &mut out_j, &mut mask);
    run(&crane, &inp, &mut out_c, &mut mask);
    run(&native, &inp, &mut out_b, &mut mask);
    // Both JIT code generators are byte-identical to the interpreter.
    for ((a, j), c) in out_a.iter().zip(&out_j).zip(&out_c) {
        assert_eq!(
            a.to_array().map(f32::to_bits),
            j.to_array().map(f32::to_bits)
        );
        assert_eq!(
            a.to_array().map(f32::to_bits),
            c.to_array().map(f32::to_bits)
        );
    }
    // The twins must agree (a few ulp: the interpreter may fuse or order
    // operations differently).
    for (a, b) in out_a.iter().zip(&out_b) {
        for (x, y) in a.to_array().iter().zip(b.to_array()) {
            assert!((x - y).abs() <= 1e-4, "interpreted {x} vs native {y}");
        }
    }
    eprintln!(
        "fragment_shader: lane program {} body ops, {} prologue ops; JIT ({:?}): {} of {} ops in {} regions, compiled in {:.2} ms",
        interp.program().body.len(),
        interp.program().prologue.len(),
        code.codegen(),
        code.coverage().0,
        code.coverage().1,
        code.region_count(),
        code.compile_ns() as f64 * 1e-6
    );

    let mut g = c.benchmark_group("fragment_shader_30_ops");
    g.throughput(Throughput::Elements((GROUPS * LANES) as u64));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("interpreted", |b| {
        b.iter(|| run(black_box(&interp), &inp, &mut out_a, &mut mask))
    });
    g.bench_function("jit", |b| {
        b.iter(|| run(black_box(&jit), &inp, &mut out_j, &mut mask))
    });
    g.bench_function("jit_cranelift", |b| {
        b.iter(|| run(black_box(&crane), &inp, &mut out_c, &mut mask))
    });
    g.bench_function("native", |b| {
        b.iter(|| run(black_box(&native), &inp, &mut out_b, &mut mask))
    });
    g.finish();
}

criterion_group!(benches, fragment_shader);
criterion_main!(benches);
