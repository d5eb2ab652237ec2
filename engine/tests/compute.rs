//! Compute through the public `Context` API: a two-pass parallel reduction
//! and image kernels checked against CPU computations, an atomic
//! histogram, robust access, INPUT memory, indirect and offset grids,
//! thread-count determinism, and the typed errors of every entry point.

use ferropipe::*;
use ferropipe::{
    BindError, ComputeError, ComputeState, Context, CsHandle, Error, Format, GridInfo, ImageView,
    Resource, ResourceError, ResourceTemplate, SamplerViewDesc, Screen, ScreenConfig, ShaderBuffer,
    ShaderCode, StorageError, StorageKind,
};

fn setup(threads: usize) -> (Screen, Context) {
    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let ctx = screen.context_create().unwrap();
    (screen, ctx)
}

fn kernel(ctx: &mut Context, src: &str) -> CsHandle {
    let cs = ctx
        .create_compute_state(&ComputeState {
            code: ShaderCode::Wgsl {
                code: src.into(),
                entry_point: "main".into(),
            },
            req_local_mem: 0,
            req_input_mem: 0,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    ctx.bind_compute_state(Some(cs)).unwrap();
    cs
}

fn buffer(screen: &Screen, ctx: &mut Context, data: &[u32]) -> Resource {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let r = screen
        .resource_create(&ResourceTemplate::buffer(
            bytes.len() as u32,
            BindFlags::SHADER_BUFFER,
        ))
        .unwrap();
    ctx.buffer_subdata(&r, 0, &bytes).unwrap();
    r
}

fn bind(ctx: &mut Context, start: u32, bufs: &[&Resource]) {
    let views: Vec<Option<ShaderBuffer>> = bufs
        .iter()
        .map(|b| {
            Some(ShaderBuffer {
                buffer: b,
                offset: 0,
                size: b.template().width0,
            })
        })
        .collect();
    ctx.set_shader_buffers(ShaderType::Compute, start, &views, !0)
        .unwrap();
}

fn read_words(ctx: &mut Context, r: &Resource) -> Vec<u32> {
    let n = r.template().width0 as i32;
    let t = ctx
        .transfer_map(r, 0, TransferFlags::READ, &PipeBox::new_1d(0, n))
        .unwrap();
    let v = t
        .data()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    ctx.transfer_unmap(t).unwrap();
    v
}

fn grid(block: [u32; 3], grid: [u32; 3]) -> GridInfo<'static> {
    GridInfo {
        work_dim: 3,
        block,
        grid,
        ..Default::default()
    }
}

/// A tiny deterministic generator (xorshift32).
fn noise(n: usize, mut seed: u32) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        })
        .collect()
}

const N: usize = 1_000_003;
const WG: usize = 256;

/// Pass 1: each workgroup reduces 256 values with a tree in workgroup
/// memory; pass 2: one workgroup folds the partials (grid-stride loop,
/// then the same tree).  Sum (wrapping), min and max of u32, and the f32
/// sum.
const REDUCE: &str = "
struct Partial { sum: u32, lo: u32, hi: u32, fsum: f32 }
@group(3) @binding(0) var<storage, read> ints: array<u32>;
@group(3) @binding(1) var<storage, read> floats: array<f32>;
@group(3) @binding(2) var<storage, read_write> partials: array<Partial>;
@group(3) @binding(3) var<storage, read_write> total: array<Partial>;
var<workgroup> s_sum: array<u32, 256>;
var<workgroup> s_lo: array<u32, 256>;
var<workgroup> s_hi: array<u32, 256>;
var<workgroup> s_f: array<f32, 256>;

fn tree(i: u32) {
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (i < s) {
            s_sum[i] = s_sum[i] + s_sum[i + s];
            s_lo[i] = min(s_lo[i], s_lo[i + s]);
            s_hi[i] = max(s_hi[i], s_hi[i + s]);
            s_f[i] = s_f[i] + s_f[i + s];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) i: u32,
        @builtin(global_invocation_id) g: vec3<u32>,
        @builtin(workgroup_id) w: vec3<u32>) {
    let n = arrayLength(&ints);
    let inside = g.x < n;
    s_sum[i] = select(0u, ints[g.x], inside);
    s_lo[i] = select(0xffffffffu, ints[g.x], inside);
    s_hi[i] = select(0u, ints[g.x], inside);
    s_f[i] = select(0.0, floats[g.x], inside);
    workgroupBarrier();
    tree(i);
    if (i == 0u) {
        partials[w.x] = Partial(s_sum[0], s_lo[0], s_hi[0], s_f[0]);
    }
}

@compute @workgroup_size(256)
fn fold(@builtin(local_invocation_index) i: u32) {
    var acc = Partial(0u, 0xffffffffu, 0u, 0.0);
    for (var k = i; k < arrayLength(&partials); k = k + 256u) {
        let p = partials[k];
        acc = Partial(acc.sum + p.sum, min(acc.lo, p.lo), max(acc.hi, p.hi), acc.fsum + p.fsum);
    }
    s_sum[i] = acc.sum;
    s_lo[i] = acc.lo;
    s_hi[i] = acc.hi;
    s_f[i] = acc.fsum;
    workgroupBarrier();
    tree(i);
    if (i == 0u) {
        total[0] = Partial(s_sum[0], s_lo[0], s_hi[0], s_f[0]);
    }
}
";

/// The CPU's version of the f32 tree, in the shader's exact order.
fn tree_f32(v: &mut [f32; WG]) -> f32 {
    let mut s = WG / 2;
    while s > 0 {
        for i in 0..s {
            v[i] += v[i + s];
        }
        s /= 2;
    }
    v[0]
}

/// Runs the two-pass reduction; returns (sum, min, max, f32 sum bits).
fn reduce_on(threads: usize, ints: &[u32], floats: &[f32]) -> [u32; 4] {
    let (screen, mut ctx) = setup(threads);
    let groups = ints.len().div_ceil(WG);
    let a = buffer(&screen, &mut ctx, ints);
    let fbits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
    let b = buffer(&screen, &mut ctx, &fbits);
    let partials = buffer(&screen, &mut ctx, &vec![0; groups * 4]);
    let total = buffer(&screen, &mut ctx, &[0; 4]);
    bind(&mut ctx, 0, &[&a, &b, &partials, &total]);
    kernel(&mut ctx, REDUCE);
    ctx.launch_grid(&grid([256, 1, 1], [groups as u32, 1, 1]))
        .unwrap();
    let fold = ctx
        .create_compute_state(&ComputeState {
            code: ShaderCode::Wgsl {
                code: REDUCE.into(),
                entry_point: "fold".into(),
            },
            req_local_mem: 0,
            req_input_mem: 0,
        })
        .unwrap();
    ctx.bind_compute_state(Some(fold)).unwrap();
    ctx.launch_grid(&grid([256, 1, 1], [1, 1, 1])).unwrap();
    let t = read_words(&mut ctx, &total);
    [t[0], t[1], t[2], t[3]]
}

#[test]
fn parallel_reduction_matches_the_cpu_exactly() {
    let ints = noise(N, 0x1234_5678);
    let floats: Vec<f32> = ints
        .iter()
        .map(|&v| (v >> 8) as f32 / (1 << 24) as f32 - 0.5)
        .collect();
    let got = reduce_on(4, &ints, &floats);
    let sum = ints.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    assert_eq!(got[0], sum);
    assert_eq!(got[1], *ints.iter().min().unwrap());
    assert_eq!(got[2], *ints.iter().max().unwrap());
    // the f32 sum in the kernel's order: workgroup trees, then the
    // grid-stride fold per invocation, then the tree over those
    let partial: Vec<f32> = floats
        .chunks(WG)
        .map(|c| {
            let mut v = [0f32; WG];
            v[..c.len()].copy_from_slice(c);
            tree_f32(&mut v)
        })
        .collect();
    let mut acc = [0f32; WG];
    for (k, p) in partial.iter().enumerate() {
        acc[k % WG] += p;
    }
    let want = tree_f32(&mut acc);
    assert_eq!(f32::from_bits(got[3]), want, "f32 tree-order sum");
    // and it is the true sum up to rounding
    let exact: f64 = floats.iter().map(|&f| f64::from(f)).sum();
    assert!((f64::from(want) - exact).abs() < 1e-2, "{want} vs {exact}");
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let ints = noise(100_003, 99);
    let floats: Vec<f32> = ints.iter().map(|&v| (v % 1000) as f32 * 0.37).collect();
    let one = reduce_on(1, &ints, &floats);
    assert_eq!(reduce_on(2, &ints, &floats), one);
    assert_eq!(reduce_on(8, &ints, &floats), one);
    let h1 = histogram_on(1);
    assert_eq!(histogram_on(2), h1);
    assert_eq!(histogram_on(8), h1);
}

const HISTOGRAM: &str = "
@group(3) @binding(0) var<storage, read> data: array<u32>;
@group(3) @binding(1) var<storage, read_write> bins: array<atomic<u32>, 64>;
var<workgroup> local_bins: array<atomic<u32>, 64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>,
        @builtin(local_invocation_index) i: u32,
        @builtin(num_workgroups) n: vec3<u32>) {
    // grid-stride over the data, counted in workgroup memory first
    for (var k = g.x; k < arrayLength(&data); k = k + n.x * 64u) {
        atomicAdd(&local_bins[data[k] % 64u], 1u);
    }
    workgroupBarrier();
    atomicAdd(&bins[i], atomicLoad(&local_bins[i]));
}
";

fn histogram_on(threads: usize) -> Vec<u32> {
    let (screen, mut ctx) = setup(threads);
    let data = buffer(&screen, &mut ctx, &noise(77_777, 7));
    let bins = buffer(&screen, &mut ctx, &[0; 64]);
    bind(&mut ctx, 0, &[&data, &bins]);
    kernel(&mut ctx, HISTOGRAM);
    ctx.launch_grid(&grid([64, 1, 1], [37, 1, 1])).unwrap();
    read_words(&mut ctx, &bins)
}

#[test]
fn atomic_histogram_matches_the_cpu() {
    let mut want = vec![0u32; 64];
    for v in noise(77_777, 7) {
        want[(v % 64) as usize] += 1;
    }
    assert_eq!(histogram_on(4), want);
}

/// PIPELINE_STATISTICS counts compute invocations (workgroups x threads)
/// of the launches inside the query, and only those.
#[test]
fn pipeline_statistics_count_compute_invocations() {
    let (screen, mut ctx) = setup(2);
    let data = buffer(&screen, &mut ctx, &noise(1000, 3));
    let bins = buffer(&screen, &mut ctx, &[0; 64]);
    bind(&mut ctx, 0, &[&data, &bins]);
    kernel(&mut ctx, HISTOGRAM);
    let q = ctx.create_query(QueryType::PipelineStatistics, 0).unwrap();
    ctx.launch_grid(&grid([64, 1, 1], [5, 1, 1])).unwrap(); // before: not counted
    ctx.begin_query(q).unwrap();
    ctx.launch_grid(&grid([64, 1, 1], [3, 1, 1])).unwrap();
    ctx.launch_grid(&grid([64, 1, 1], [2, 1, 1])).unwrap();
    ctx.end_query(q).unwrap();
    ctx.launch_grid(&grid([64, 1, 1], [7, 1, 1])).unwrap(); // after: not counted
    match ctx.get_query_result(q, true).unwrap() {
        Some(ferropipe::QueryResult::PipelineStatistics(s)) => {
            assert_eq!(s[10], 5 * 64, "cs_invocations in {s:?}");
            assert_eq!(s[7], 0, "no fragments");
        }
        other => panic!("{other:?}"),
    }
}

fn global_buffer(screen: &Screen, ctx: &mut Context, data: &[u32]) -> Resource {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let r = screen
        .resource_create(&ResourceTemplate::buffer(
            bytes.len() as u32,
            BindFlags::GLOBAL,
        ))
        .unwrap();
    ctx.buffer_subdata(&r, 0, &bytes).unwrap();
    r
}

/// An OpenCL-style kernel: pointer arguments arrive in INPUT as GLOBAL
/// handles (with byte offsets added, as pointer arithmetic), and the
/// kernel resolves each one to its `@group(6)` binding and word index.
const SAXPY_GLOBAL: &str = "
struct Args { x: u32, y: u32, out: u32, n: u32, a: f32 }
@group(5) @binding(0) var<uniform> args: Args;
@group(6) @binding(0) var<storage, read> g0: array<f32>;
@group(6) @binding(1) var<storage, read> g1: array<f32>;
@group(6) @binding(2) var<storage, read_write> g2: array<f32>;

fn slot(h: u32) -> u32 { return (h >> 27u) & 15u; }
fn word(h: u32) -> u32 { return (h & 0x7ffffffu) / 4u; }

// a load through a handle into slot 0 or 1
fn load(h: u32, i: u32) -> f32 {
    switch slot(h) {
        case 0u: { return g0[word(h) + i]; }
        case 1u: { return g1[word(h) + i]; }
        default: { return -1.0; }
    }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= args.n || (args.x >> 31u) == 0u || slot(args.out) != 2u) {
        return;
    }
    g2[word(args.out) + i] = args.a * load(args.x, i) + load(args.y, i);
}
";

#[test]
fn global_bindings_map_buffers_to_documented_handles() {
    let (screen, mut ctx) = setup(2);
    let n = 40u32;
    let xs: Vec<f32> = (0..n + 8).map(|i| i as f32 * 0.5 - 3.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i * i) as f32).collect();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
    let x = global_buffer(&screen, &mut ctx, &bits(&xs));
    let y = global_buffer(&screen, &mut ctx, &bits(&ys));
    let out = global_buffer(&screen, &mut ctx, &vec![0; n as usize + 4]);
    let handles = ctx
        .set_global_binding(0, &[Some(&x), Some(&y), Some(&out)])
        .unwrap();
    assert_eq!(
        handles,
        (0..3)
            .map(|s| u64::from(ferropipe::global_handle(s)))
            .collect::<Vec<_>>()
    );
    assert_eq!(handles[0], 0x8000_0000);
    assert_eq!(
        handles[2],
        0x8000_0000 | 2 << ferropipe::GLOBAL_HANDLE_SLOT_SHIFT
    );
    // x starts 8 floats in, out 4 floats in: the caller adds byte offsets
    let (hx, hy, hout) = (
        handles[0] as u32 + 32,
        handles[1] as u32,
        handles[2] as u32 + 16,
    );
    let a = 1.5f32;
    let input: Vec<u8> = [hx, hy, hout, n, a.to_bits()]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let cs = ctx
        .create_compute_state(&ComputeState {
            code: ShaderCode::Wgsl {
                code: SAXPY_GLOBAL.into(),
                entry_point: "main".into(),
            },
            req_local_mem: 0,
            req_input_mem: 20,
        })
        .unwrap();
    ctx.bind_compute_state(Some(cs)).unwrap();
    let launch = |ctx: &mut Context| {
        ctx.launch_grid(&GridInfo {
            input: &input,
            ..grid([16, 1, 1], [n.div_ceil(16), 1, 1])
        })
    };
    launch(&mut ctx).unwrap();
    let got = read_words(&mut ctx, &out);
    assert_eq!(&got[..4], &[0; 4], "before the offset: untouched");
    for i in 0..n as usize {
        let want = a * xs[i + 8] + ys[i];
        assert_eq!(f32::from_bits(got[4 + i]), want, "element {i}");
    }

    // unbinding a slot the kernel uses makes the launch a typed error
    assert_eq!(ctx.set_global_binding(1, &[None]).unwrap(), vec![0]);
    let e = launch(&mut ctx).unwrap_err();
    assert!(e.to_string().contains("@group(6) @binding(1)"), "{e}");
    assert!(ctx.compute_bindings().globals[1].is_none());
    assert!(ctx.compute_bindings().globals[2].is_some());

    // validation: PIPE_BIND_GLOBAL buffers only, 16 slots
    let plain = buffer(&screen, &mut ctx, &[0; 4]);
    assert_eq!(
        ctx.set_global_binding(0, &[Some(&plain)]).unwrap_err(),
        Error::Resource(ResourceError::MissingBind {
            call: "set_global_binding",
            field: "resources",
            bind: "PIPE_BIND_GLOBAL",
        })
    );
    assert_eq!(
        ctx.set_global_binding(15, &[None, Some(&x)]).unwrap_err(),
        Error::Bind(BindError::SlotOutOfRange {
            call: "set_global_binding",
            field: "first",
            start: 15,
            count: 2,
            limit: 16,
        })
    );
    assert!(
        screen
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R32_UINT,
                4,
                4,
                BindFlags::GLOBAL,
            ))
            .is_err()
    );
    // a failed call binds nothing
    assert!(ctx.compute_bindings().globals[1].is_none());
    assert_eq!(
        ctx.set_global_binding(0, &[None, None, None]).unwrap(),
        vec![0; 3]
    );

    // TGSI compute resources stay unsupported: WGSL cannot name them
    ctx.set_compute_resources(0, &[None]).unwrap();
}

/// `last_block`: the last workgroup along each dimension runs a partial
/// block; what it leaves out must not run at all.
#[test]
fn partial_last_blocks_run_only_their_invocations() {
    let (screen, mut ctx) = setup(3);
    // a 27x11 image with 8x4 blocks: 4x3 workgroups, the last ones 3 wide
    // and 3 high
    let (w, h) = (27u32, 11u32);
    let out = buffer(&screen, &mut ctx, &vec![0xdead; (32 * 12) as usize]);
    let count = buffer(&screen, &mut ctx, &[0; 2]);
    bind(&mut ctx, 0, &[&out, &count]);
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> out: array<u32>;
         @group(3) @binding(1) var<storage, read_write> count: array<atomic<u32>, 2>;
         var<workgroup> tile: array<u32, 32>;
         @compute @workgroup_size(8, 4)
         fn main(@builtin(global_invocation_id) g: vec3<u32>,
                 @builtin(local_invocation_index) i: u32,
                 @builtin(num_workgroups) n: vec3<u32>) {
             // no bounds check: the partial blocks are the bounds
             tile[i] = g.x + g.y * 1000u + 1u;
             workgroupBarrier();
             // read a neighbour's value written before the barrier; a
             // left-out neighbour never wrote its word (still 0)
             let j = i ^ 1u;
             out[g.y * 32u + g.x] = tile[i] * 2u + select(0u, 1u, tile[j] != 0u);
             atomicAdd(&count[0], 1u);
             atomicMax(&count[1], n.x * 100u + n.y);
         }",
    );
    ctx.launch_grid(&GridInfo {
        last_block: [3, 3, 0],
        ..grid([8, 4, 1], [4, 3, 1])
    })
    .unwrap();
    let got = read_words(&mut ctx, &out);
    for y in 0..12u32 {
        for x in 0..32u32 {
            let v = got[(y * 32 + x) as usize];
            if x < w && y < h {
                // the partner (x ^ 1) ran unless it is past the image
                let partner = (x ^ 1) < w;
                let want = (x + y * 1000 + 1) * 2 + u32::from(partner);
                assert_eq!(v, want, "({x}, {y})");
            } else {
                assert_eq!(v, 0xdead, "({x}, {y}) is outside the partial blocks");
            }
        }
    }
    // invocations that ran: 27 x 11; num_workgroups is the full grid
    assert_eq!(read_words(&mut ctx, &count), vec![w * h, 4 * 100 + 3]);

    // last_block larger than the block is invalid; equal to it is a
    // full block
    let e = ctx
        .launch_grid(&GridInfo {
            last_block: [9, 0, 0],
            ..grid([8, 4, 1], [1, 1, 1])
        })
        .unwrap_err();
    assert_eq!(
        e,
        Error::Compute(ComputeError::LastBlock {
            last_block: [9, 0, 0],
            block: [8, 4, 1],
            dim: 0,
        })
    );
    b_reset(&mut ctx, &count);
    ctx.launch_grid(&GridInfo {
        last_block: [8, 4, 1],
        ..grid([8, 4, 1], [2, 1, 1])
    })
    .unwrap();
    assert_eq!(read_words(&mut ctx, &count)[0], 64);
}

/// 3x3 Gaussian weights, row by row.
const GAUSS: [f32; 9] = [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0];

/// Blur of an rgba8unorm sampler view into an rgba32float storage image
/// (neighbours through `textureSampleLevel` with a clamp-to-edge nearest
/// sampler, the centre through `textureLoad`), and a Sobel magnitude from
/// an r32uint storage image into another, in integers.
const IMAGE: &str = "
@group(1) @binding(0) var src: texture_2d<f32>;
@group(2) @binding(0) var nearest: sampler;
@group(4) @binding(0) var blurred: texture_storage_2d<rgba32float, write>;
@group(4) @binding(1) var gray: texture_storage_2d<r32uint, read>;
@group(4) @binding(2) var edges: texture_storage_2d<r32uint, write>;
@group(0) @binding(0) var<uniform> weights: array<vec4<f32>, 3>;

fn at(p: vec2<i32>, size: vec2<u32>) -> i32 {
    let q = clamp(p, vec2<i32>(0), vec2<i32>(size) - 1);
    return i32(textureLoad(gray, q).x);
}

@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let size = textureDimensions(blurred);
    if (any(g.xy >= size)) {
        return;
    }
    let p = vec2<i32>(g.xy);
    var sum = vec4<f32>(0.0);
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let k = (dy + 1) * 3 + dx + 1;
            let w = weights[k / 4][k % 4];
            var c: vec4<f32>;
            if (dx == 0 && dy == 0) {
                c = textureLoad(src, p, 0);
            } else {
                let uv = (vec2<f32>(p + vec2<i32>(dx, dy)) + 0.5) / vec2<f32>(size);
                c = textureSampleLevel(src, nearest, uv, 0.0);
            }
            sum = sum + w * c;
        }
    }
    textureStore(blurred, p, sum / 16.0);
    let gx = at(p + vec2(1, -1), size) + 2 * at(p + vec2(1, 0), size) + at(p + vec2(1, 1), size)
           - at(p + vec2(-1, -1), size) - 2 * at(p + vec2(-1, 0), size) - at(p + vec2(-1, 1), size);
    let gy = at(p + vec2(-1, 1), size) + 2 * at(p + vec2(0, 1), size) + at(p + vec2(1, 1), size)
           - at(p + vec2(-1, -1), size) - 2 * at(p + vec2(0, -1), size) - at(p + vec2(1, -1), size);
    textureStore(edges, p, vec4<u32>(u32(abs(gx) + abs(gy)), 0u, 0u, 0u));
}
";

fn texture(screen: &Screen, ctx: &mut Context, f: Format, w: u32, h: u32, data: &[u8]) -> Resource {
    let r = screen
        .resource_create(&ResourceTemplate::texture_2d(
            f,
            w,
            h,
            BindFlags::SAMPLER_VIEW | BindFlags::SHADER_IMAGE,
        ))
        .unwrap();
    let bpp = f.desc().block_bytes as usize;
    ctx.texture_subdata(
        &r,
        0,
        &PipeBox::new_2d(0, 0, w as i32, h as i32),
        data,
        w as usize * bpp,
        0,
    )
    .unwrap();
    r
}

fn image(r: &Resource) -> ImageView<'_> {
    ImageView {
        access: ImageAccess::READ_WRITE,
        resource: r,
        format: r.template().format,
        level: 0,
        first_layer: 0,
        last_layer: 0,
        offset: 0,
        size: 0,
    }
}

fn read_texture(ctx: &mut Context, r: &Resource) -> Vec<u8> {
    let t = r.template();
    let tr = ctx
        .transfer_map(
            r,
            0,
            TransferFlags::READ,
            &PipeBox::new_2d(0, 0, t.width0 as i32, t.height0 as i32),
        )
        .unwrap();
    let v = tr.data().to_vec();
    ctx.transfer_unmap(tr).unwrap();
    v
}

#[test]
fn image_kernels_match_the_cpu_per_pixel() {
    // 37x21: not a multiple of the 8x4 workgroup, so edge workgroups
    // have idle invocations
    let (w, h) = (37u32, 21u32);
    let (screen, mut ctx) = setup(4);
    let rgba: Vec<u8> = noise((w * h) as usize, 5)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let src = texture(&screen, &mut ctx, Format::R8G8B8A8_UNORM, w, h, &rgba);
    let gray_px: Vec<u32> = noise((w * h) as usize, 11)
        .iter()
        .map(|v| v % 256)
        .collect();
    let gray_bytes: Vec<u8> = gray_px.iter().flat_map(|v| v.to_le_bytes()).collect();
    let gray = texture(&screen, &mut ctx, Format::R32_UINT, w, h, &gray_bytes);
    let blurred = texture(
        &screen,
        &mut ctx,
        Format::R32G32B32A32_FLOAT,
        w,
        h,
        &vec![0; (w * h * 16) as usize],
    );
    let edges = texture(
        &screen,
        &mut ctx,
        Format::R32_UINT,
        w,
        h,
        &vec![0; (w * h * 4) as usize],
    );

    let view = ctx
        .create_sampler_view(&src, &SamplerViewDesc::of_resource(src.template()))
        .unwrap();
    ctx.set_sampler_views(ShaderType::Compute, 0, &[Some(view)])
        .unwrap();
    let smp = ctx
        .create_sampler_state(&SamplerState {
            wrap_s: TexWrap::ClampToEdge,
            wrap_t: TexWrap::ClampToEdge,
            min_img_filter: TexFilter::Nearest,
            mag_img_filter: TexFilter::Nearest,
            min_mip_filter: TexMipFilter::None,
            ..Default::default()
        })
        .unwrap();
    ctx.bind_sampler_states(ShaderType::Compute, 0, &[Some(smp)])
        .unwrap();
    let weights: Vec<u8> = GAUSS
        .iter()
        .chain(&[0.0; 3])
        .flat_map(|f| f.to_le_bytes())
        .collect();
    ctx.set_constant_buffer(
        ShaderType::Compute,
        0,
        Some(ferropipe::ConstantBuffer::User(&weights)),
    )
    .unwrap();
    ctx.set_shader_images(
        ShaderType::Compute,
        0,
        &[
            Some(image(&blurred)),
            Some(image(&gray)),
            Some(image(&edges)),
        ],
    )
    .unwrap();
    kernel(&mut ctx, IMAGE);
    ctx.launch_grid(&grid([8, 4, 1], [w.div_ceil(8), h.div_ceil(4), 1]))
        .unwrap();

    let out = read_texture(&mut ctx, &blurred);
    let texel = |x: i32, y: i32, c: usize| {
        let (x, y) = (x.clamp(0, w as i32 - 1), y.clamp(0, h as i32 - 1));
        f32::from(rgba[((y as u32 * w + x as u32) * 4) as usize + c]) / 255.0
    };
    let edge = read_texture(&mut ctx, &edges);
    let g = |x: i32, y: i32| {
        let (x, y) = (x.clamp(0, w as i32 - 1), y.clamp(0, h as i32 - 1));
        gray_px[(y as u32 * w + x as u32) as usize] as i32
    };
    for y in 0..h as i32 {
        for x in 0..w as i32 {
            let i = (y as u32 * w + x as u32) as usize;
            for c in 0..4 {
                let mut sum = 0f32;
                for (k, wk) in GAUSS.iter().enumerate() {
                    let (dx, dy) = (k as i32 % 3 - 1, k as i32 / 3 - 1);
                    sum += wk * texel(x + dx, y + dy, c);
                }
                let want = sum / 16.0;
                let o = (i * 4 + c) * 4;
                let got = f32::from_le_bytes([out[o], out[o + 1], out[o + 2], out[o + 3]]);
                assert!(
                    (got - want).abs() <= 1e-6,
                    "({x}, {y}).{c}: {got} vs {want}"
                );
            }
            let gx = g(x + 1, y - 1) + 2 * g(x + 1, y) + g(x + 1, y + 1)
                - g(x - 1, y - 1)
                - 2 * g(x - 1, y)
                - g(x - 1, y + 1);
            let gy = g(x - 1, y + 1) + 2 * g(x, y + 1) + g(x + 1, y + 1)
                - g(x - 1, y - 1)
                - 2 * g(x, y - 1)
                - g(x + 1, y - 1);
            let got = u32::from_le_bytes([
                edge[i * 4],
                edge[i * 4 + 1],
                edge[i * 4 + 2],
                edge[i * 4 + 3],
            ]);
            assert_eq!(
                got,
                gx.unsigned_abs() + gy.unsigned_abs(),
                "sobel ({x}, {y})"
            );
        }
    }
}

#[test]
fn out_of_range_indices_are_dropped_not_fatal() {
    let (screen, mut ctx) = setup(2);
    // 16 words; the kernel sees words 4..8 only (offset 16, size 16)
    let mem = buffer(&screen, &mut ctx, &(100..116).collect::<Vec<u32>>());
    ctx.set_shader_buffers(
        ShaderType::Compute,
        0,
        &[Some(ShaderBuffer {
            buffer: &mem,
            offset: 16,
            size: 16,
        })],
        !0,
    )
    .unwrap();
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> m: array<u32>;
         var<workgroup> w: array<u32, 4>;
         @compute @workgroup_size(16)
         fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             let i = g.x;
             let seen = m[i] + m[i + 4u] + w[i * 0x40000001u];
             w[i + 3u] = 7u;
             m[i] = seen + 1u;
             m[i * 0x40000000u + 1u] = 5u;
         }",
    );
    ctx.launch_grid(&grid([16, 1, 1], [3, 1, 1])).unwrap();
    let v = read_words(&mut ctx, &mem);
    // inside the binding: m[i] = old m[i] + 1 (every other read was out of
    // range or workgroup memory, zero), then m[1] = 5 from the lanes whose
    // wrapped index was 1
    assert_eq!(&v[4..8], &[105, 5, 107, 108]);
    // outside it: untouched
    assert_eq!(&v[..4], &[100, 101, 102, 103]);
    assert_eq!(&v[8..], &(108..116).collect::<Vec<u32>>()[..]);
}

#[test]
fn input_memory_grid_base_and_indirect_grids() {
    let (screen, mut ctx) = setup(2);
    let out = buffer(&screen, &mut ctx, &[0; 32]);
    bind(&mut ctx, 0, &[&out]);
    let cs = ctx
        .create_compute_state(&ComputeState {
            code: ShaderCode::Wgsl {
                code: "struct In { scale: u32, bias: u32 }
                       @group(5) @binding(0) var<uniform> input: In;
                       @group(3) @binding(0) var<storage, read_write> out: array<u32>;
                       @compute @workgroup_size(2)
                       fn main(@builtin(global_invocation_id) g: vec3<u32>,
                               @builtin(workgroup_id) w: vec3<u32>) {
                           out[g.x] = g.x * input.scale + input.bias + w.y * 1000u;
                       }"
                .into(),
                entry_point: "main".into(),
            },
            req_local_mem: 0,
            req_input_mem: 8,
        })
        .unwrap();
    ctx.bind_compute_state(Some(cs)).unwrap();
    let input: Vec<u8> = [3u32, 10].iter().flat_map(|v| v.to_le_bytes()).collect();
    // grid_base shifts workgroup_id (and so global_invocation_id)
    ctx.launch_grid(&GridInfo {
        input: &input,
        grid_base: [2, 1, 0],
        ..grid([2, 1, 1], [3, 1, 1])
    })
    .unwrap();
    let v = read_words(&mut ctx, &out);
    assert_eq!(&v[..4], &[0; 4]);
    for x in 4..10u32 {
        assert_eq!(v[x as usize], x * 3 + 10 + 1000, "{x}");
    }
    // an indirect grid of (5, 1, 1) read from a buffer at offset 4
    let args = buffer(&screen, &mut ctx, &[99, 5, 1, 1]);
    ctx.launch_grid(&GridInfo {
        input: &input,
        indirect: Some((&args, 4)),
        ..grid([2, 1, 1], [0, 0, 0])
    })
    .unwrap();
    let v = read_words(&mut ctx, &out);
    for x in 0..10u32 {
        assert_eq!(v[x as usize], x * 3 + 10, "{x}");
    }
    // an empty grid runs nothing
    ctx.launch_grid(&GridInfo {
        input: &input,
        ..grid([2, 1, 1], [0, 4, 1])
    })
    .unwrap();
    assert_eq!(read_words(&mut ctx, &out), v);
}

#[test]
fn bad_input_is_a_typed_error() {
    let (screen, mut ctx) = setup(1);
    let invalid = |e: Error| {
        matches!(
            e,
            Error::Resource(_) | Error::Bind(_) | Error::Compute(_) | Error::Storage(_)
        )
    };
    // nothing bound
    assert_eq!(
        ctx.launch_grid(&grid([1, 1, 1], [1, 1, 1])).unwrap_err(),
        Error::Compute(ComputeError::NoComputeState)
    );
    let src = "@group(3) @binding(0) var<storage, read_write> b: array<u32>;
               @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3<u32>) { b[g.x] = g.x; }";
    kernel(&mut ctx, src);
    // the kernel's buffer is unbound
    let e = ctx.launch_grid(&grid([4, 1, 1], [1, 1, 1])).unwrap_err();
    assert!(e.to_string().contains("unbound"), "{e}");
    assert_eq!(
        e,
        Error::Storage(StorageError::Unbound {
            call: "launch_grid",
            stage: "compute",
            kind: StorageKind::Buffer,
            slot: 0,
        })
    );
    let b = buffer(&screen, &mut ctx, &[0; 8]);
    bind(&mut ctx, 0, &[&b]);
    let cases = [
        (
            grid([0, 1, 1], [1, 1, 1]),
            ComputeError::EmptyBlock { block: [0, 1, 1] },
        ),
        (
            grid([8, 1, 1], [1, 1, 1]),
            ComputeError::BlockMismatch {
                block: [8, 1, 1],
                workgroup_size: [4, 1, 1],
            },
        ),
        (
            grid([2048, 1, 1], [1, 1, 1]),
            ComputeError::BlockTooLarge {
                block: [2048, 1, 1],
                max_invocations: 1024,
                max_size: [1024, 1024, 64],
            },
        ),
        (
            grid([4, 1, 1], [70_000, 1, 1]),
            ComputeError::GridTooLarge {
                call: "launch_grid",
                grid: [70_000, 1, 1],
                dim: 0,
                limit: 65535,
            },
        ),
        (
            GridInfo {
                work_dim: 0,
                ..grid([4, 1, 1], [1, 1, 1])
            },
            ComputeError::WorkDim { work_dim: 0 },
        ),
        (
            GridInfo {
                pc: 4,
                ..grid([4, 1, 1], [1, 1, 1])
            },
            ComputeError::ProgramCounter { pc: 4 },
        ),
        (
            GridInfo {
                grid_base: [u32::MAX, 0, 0],
                ..grid([4, 1, 1], [2, 1, 1])
            },
            ComputeError::GridBaseOverflow {
                grid_base: [u32::MAX, 0, 0],
                grid: [2, 1, 1],
            },
        ),
        (
            GridInfo {
                input: &[0; 5000],
                ..grid([4, 1, 1], [1, 1, 1])
            },
            ComputeError::InputTooLarge {
                call: "launch_grid",
                field: "input",
                len: 5000,
                limit: 4096,
            },
        ),
        (
            GridInfo {
                variable_shared_mem: 1 << 20,
                ..grid([4, 1, 1], [1, 1, 1])
            },
            ComputeError::LocalMemory {
                call: "launch_grid",
                field: "variable_shared_mem",
                bytes: 1 << 20,
                limit: 32 * 1024,
            },
        ),
        (
            GridInfo {
                indirect: Some((&b, 30)),
                ..grid([4, 1, 1], [1, 1, 1])
            },
            ComputeError::IndirectOffset {
                call: "launch_grid",
                offset: 30,
                buffer_size: 32,
            },
        ),
    ];
    for (bad, want) in cases {
        let e = ctx.launch_grid(&bad).unwrap_err();
        assert_eq!(e, Error::Compute(want), "{bad:?}: {e}");
    }
    assert!(invalid(
        ctx.launch_grid(&GridInfo {
            last_block: [5, 0, 0],
            ..grid([4, 1, 1], [1, 1, 1])
        })
        .unwrap_err()
    ));
    // nothing ran
    assert_eq!(read_words(&mut ctx, &b), vec![0; 8]);

    // binding errors
    let sb = |buffer, offset, size| {
        Some(ShaderBuffer {
            buffer,
            offset,
            size,
        })
    };
    // stages without shaders have no shader buffers
    assert!(
        ctx.set_shader_buffers(ShaderType::Geometry, 0, &[sb(&b, 0, 4)], 1)
            .unwrap_err()
            .is_unsupported()
    );
    for (slot, view) in [(0, sb(&b, 2, 4)), (0, sb(&b, 0, 64)), (32, sb(&b, 0, 4))] {
        for stage in [ShaderType::Compute, ShaderType::Fragment] {
            assert!(invalid(
                ctx.set_shader_buffers(stage, slot, &[view], 1).unwrap_err()
            ));
        }
    }
    let no_bind = screen
        .resource_create(&ResourceTemplate::buffer(16, BindFlags::CONSTANT_BUFFER))
        .unwrap();
    assert!(invalid(
        ctx.set_shader_buffers(ShaderType::Compute, 0, &[sb(&no_bind, 0, 16)], 1)
            .unwrap_err()
    ));
    // an image format kernels cannot address as words: refused at
    // creation, and as a view format
    assert!(
        screen
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8_UNORM,
                4,
                4,
                BindFlags::SHADER_IMAGE,
            ))
            .unwrap_err()
            .is_unsupported()
    );
    let rgba = screen
        .resource_create(&ResourceTemplate::texture_2d(
            Format::R8G8B8A8_UNORM,
            4,
            4,
            BindFlags::SHADER_IMAGE,
        ))
        .unwrap();
    assert!(invalid(
        ctx.set_shader_images(
            ShaderType::Compute,
            0,
            &[Some(ImageView {
                access: ImageAccess::READ_WRITE,
                level: 3,
                ..image(&rgba)
            })]
        )
        .unwrap_err()
    ));
    assert!(
        ctx.set_shader_images(
            ShaderType::Compute,
            0,
            &[Some(ImageView {
                access: ImageAccess::READ_WRITE,
                format: Format::R8G8B8A8_SRGB,
                ..image(&rgba)
            })]
        )
        .unwrap_err()
        .is_unsupported()
    );

    // compile-time errors: typed, with the construct named
    let cs = |ctx: &mut Context, code: &str| {
        ctx.create_compute_state(&ComputeState {
            code: ShaderCode::Wgsl {
                code: code.into(),
                entry_point: "main".into(),
            },
            req_local_mem: 0,
            req_input_mem: 0,
        })
    };
    assert!(matches!(
        cs(&mut ctx, "@compute fn main() {").unwrap_err(),
        Error::Shader { .. }
    ));
    assert!(
        cs(
            &mut ctx,
            "@group(3) @binding(0) var<storage, read_write> f: atomic<i32>;
             @compute @workgroup_size(1) fn main() { atomicAdd(&f, 1); }
             @group(3) @binding(1) var<storage, read_write> g: array<f32>;
             @compute @workgroup_size(1) fn other() { g[0] = f32(atomicLoad(&f)); }"
        )
        .is_ok()
    );
    assert!(
        cs(&mut ctx, "@compute @workgroup_size(32, 32, 2) fn main() {}")
            .unwrap_err()
            .is_unsupported()
    );
    // workgroup memory in a fragment shader is unsupported (shader
    // buffers are not: tests/storage_draw.rs)
    let fs = ctx.create_fs_state(&ferropipe::ShaderState {
        code: ShaderCode::Wgsl {
            code: "var<workgroup> w: u32;
                   @fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(f32(w)); }"
                .into(),
            entry_point: "main".into(),
        },
        semantics: vec![],
        stream_output: Default::default(),
    });
    assert!(fs.unwrap_err().is_unsupported());
    // a barrier some invocations skip: naga accepts it, the launch
    // reports it
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> b: array<u32>;
         @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {
             if (i == 2u) { return; }
             workgroupBarrier();
             b[i] = 9u;
         }",
    );
    let e = ctx.launch_grid(&grid([4, 1, 1], [1, 1, 1])).unwrap_err();
    assert!(e.to_string().contains("non-uniform"), "{e}");
    b_reset(&mut ctx, &b);
    // a deleted state is an invalid handle; a bound one stays usable
    let k = kernel(&mut ctx, src);
    ctx.delete_compute_state(k).unwrap();
    assert!(matches!(
        ctx.bind_compute_state(Some(k)).unwrap_err(),
        Error::InvalidHandle { .. }
    ));
    ctx.launch_grid(&grid([4, 1, 1], [2, 1, 1])).unwrap();
    assert_eq!(read_words(&mut ctx, &b), vec![0, 1, 2, 3, 4, 5, 6, 7]);
}

/// Zeroes a buffer.
fn b_reset(ctx: &mut Context, b: &Resource) {
    let n = b.template().width0 as usize;
    ctx.buffer_subdata(b, 0, &vec![0; n]).unwrap();
}

#[test]
fn caps_say_compute_works() {
    use ferropipe::caps::ComputeParam;
    use ferropipe::{Cap, ComputeCap, ShaderCap};
    let (screen, _) = setup(3);
    assert_eq!(screen.get_param(Cap::Compute), 1);
    assert_eq!(screen.get_param(Cap::ComputeGridInfoLastBlock), 1);
    // f32 atomic add works on storage buffers only; the cap promises
    // images and shared memory too
    assert_eq!(screen.get_param(Cap::TgsiAtomfadd), 0);
    assert_eq!(
        screen.get_shader_param(ShaderType::Compute, ShaderCap::Int64Atomics),
        0
    );
    assert_eq!(
        screen.get_compute_param(ComputeCap::AddressBits),
        Some(ComputeParam::U64(vec![32]))
    );
    assert!(screen.is_format_supported(
        Format::R8_UNORM,
        TextureTarget::Buffer,
        0,
        0,
        BindFlags::GLOBAL | BindFlags::SHADER_BUFFER
    ));
    assert!(screen.is_format_supported(
        Format::R32_UINT,
        TextureTarget::TextureCubeArray,
        0,
        0,
        BindFlags::SHADER_IMAGE
    ));
    assert_eq!(
        screen.get_compute_param(ComputeCap::MaxComputeUnits),
        Some(ComputeParam::U64(vec![3]))
    );
    assert_eq!(
        screen.get_compute_param(ComputeCap::MaxBlockSize),
        Some(ComputeParam::U64(vec![1024, 1024, 64]))
    );
    assert!(screen.get_shader_param(ShaderType::Compute, ShaderCap::MaxShaderImages) > 0);
    assert!(screen.is_format_supported(
        Format::R32G32B32A32_FLOAT,
        TextureTarget::Texture2D,
        0,
        0,
        BindFlags::SHADER_IMAGE | BindFlags::SAMPLER_VIEW
    ));
    assert!(screen.is_format_supported(
        Format::R8_UNORM,
        TextureTarget::Buffer,
        0,
        0,
        BindFlags::SHADER_BUFFER
    ));
}

#[test]
fn array_3d_and_mipmapped_images_address_the_viewed_layers() {
    let (screen, mut ctx) = setup(2);
    let (w, h) = (5u32, 3u32);
    let make = |target, depth0, array_size, last_level| {
        screen
            .resource_create(&ResourceTemplate {
                target,
                format: Format::R32_UINT,
                width0: w,
                height0: h,
                depth0,
                array_size,
                last_level,
                bind: BindFlags::SHADER_IMAGE,
                ..Default::default()
            })
            .unwrap()
    };
    let arr = make(TextureTarget::Texture2DArray, 1, 4, 0);
    let vol = make(TextureTarget::Texture3D, 2, 1, 0);
    let mip = make(TextureTarget::Texture2D, 1, 1, 1);
    ctx.set_shader_images(
        ShaderType::Compute,
        0,
        &[
            Some(ImageView {
                access: ImageAccess::READ_WRITE,
                first_layer: 1,
                last_layer: 2,
                ..image(&arr)
            }),
            Some(image(&vol)),
            Some(ImageView {
                access: ImageAccess::READ_WRITE,
                level: 1,
                ..image(&mip)
            }),
        ],
    )
    .unwrap();
    kernel(
        &mut ctx,
        "@group(4) @binding(0) var a: texture_storage_2d_array<r32uint, write>;
         @group(4) @binding(1) var v: texture_storage_3d<r32uint, write>;
         @group(4) @binding(2) var m: texture_storage_2d<r32uint, write>;
         @compute @workgroup_size(5, 3, 2)
         fn main(@builtin(local_invocation_id) l: vec3<u32>) {
             let p = vec2<i32>(l.xy);
             let n = textureNumLayers(a);
             textureStore(a, p, i32(l.z), vec4<u32>(100u + l.z * 10u + n, 0u, 0u, 0u));
             textureStore(a, p, 2, vec4<u32>(7u));  // past the view: dropped
             textureStore(v, vec3<i32>(l), vec4<u32>(l.x + l.y * 5u + l.z * 15u));
             let ms = textureDimensions(m);
             textureStore(m, p, vec4<u32>(ms.x * 10u + ms.y));
         }",
    );
    ctx.launch_grid(&grid([5, 3, 2], [1, 1, 1])).unwrap();
    let layer = |data: &[u8], z: usize, x: usize, y: usize| {
        let o = ((z * h as usize + y) * w as usize + x) * 4;
        u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])
    };
    let read_all = |ctx: &mut Context, r: &Resource, level: u32, d: i32| {
        let (lw, lh) = ((w >> level).max(1) as i32, (h >> level).max(1) as i32);
        let t = ctx
            .transfer_map(
                r,
                level,
                TransferFlags::READ,
                &PipeBox {
                    x: 0,
                    y: 0,
                    z: 0,
                    width: lw,
                    height: lh,
                    depth: d,
                },
            )
            .unwrap();
        let v = t.data().to_vec();
        ctx.transfer_unmap(t).unwrap();
        v
    };
    let a = read_all(&mut ctx, &arr, 0, 4);
    let v = read_all(&mut ctx, &vol, 0, 2);
    for y in 0..h as usize {
        for x in 0..w as usize {
            // view layers 1 and 2 are the shader's 0 and 1
            assert_eq!(layer(&a, 0, x, y), 0);
            assert_eq!(layer(&a, 1, x, y), 102);
            assert_eq!(layer(&a, 2, x, y), 112);
            assert_eq!(layer(&a, 3, x, y), 0);
            for z in 0..2 {
                assert_eq!(layer(&v, z, x, y) as usize, x + y * 5 + z * 15);
            }
        }
    }
    // level 1 is 2x1: the invocations inside it wrote its size
    let m = read_all(&mut ctx, &mip, 1, 1);
    assert_eq!(m.len(), 8);
    assert!(m.chunks(4).all(|c| c == 21u32.to_le_bytes()));
}

#[test]
fn launches_see_recorded_work_and_later_work_sees_launches() {
    use ferropipe::FramebufferTemplate;
    use ferropipe::SurfaceTemplate;
    let (screen, mut ctx) = setup(2);
    let (w, h) = (8u32, 4u32);
    let rt = screen
        .resource_create(&ResourceTemplate::texture_2d(
            Format::R8G8B8A8_UNORM,
            w,
            h,
            BindFlags::RENDER_TARGET | BindFlags::SHADER_IMAGE,
        ))
        .unwrap();
    let surf = ctx
        .create_surface(&rt, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
        .unwrap();
    ctx.set_framebuffer_state(&FramebufferTemplate {
        width: w,
        height: h,
        cbufs: vec![Some(surf)],
        ..Default::default()
    })
    .unwrap();
    // recorded, not yet executed when the launch comes
    ctx.clear(
        ClearFlags::COLOR,
        &ColorUnion::float([1.0, 0.0, 0.0, 1.0]),
        1.0,
        0,
    )
    .unwrap();
    let out = buffer(&screen, &mut ctx, &[0; 32]);
    bind(&mut ctx, 0, &[&out]);
    ctx.set_shader_images(ShaderType::Compute, 0, &[Some(image(&rt))])
        .unwrap();
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> out: array<u32>;
         @group(4) @binding(0) var img: texture_storage_2d<rgba8unorm, read_write>;
         @compute @workgroup_size(8, 4)
         fn main(@builtin(local_invocation_index) i: u32, @builtin(local_invocation_id) l: vec3<u32>) {
             let c = textureLoad(img, vec2<i32>(l.xy));
             out[i] = pack4x8unorm(c);
             textureStore(img, vec2<i32>(l.xy), vec4<f32>(0.0, 1.0, 0.0, 1.0));
         }",
    );
    ctx.launch_grid(&grid([8, 4, 1], [1, 1, 1])).unwrap();
    // the kernel saw the clear, the readback sees the kernel
    assert_eq!(read_words(&mut ctx, &out), vec![0xff00_00ff; 32]);
    let px = read_texture(&mut ctx, &rt);
    assert!(px.chunks(4).all(|p| p == [0, 255, 0, 255]));
}

/// Buffer images: a `PIPE_BUFFER` viewed as `texture_storage_1d` at a
/// byte offset, converted with the view's format.
#[test]
fn buffer_images_view_a_byte_range_as_texels() {
    let (screen, mut ctx) = setup(2);
    // R8_UNORM, as buffers conventionally are: the view chooses the texels
    let make = |bytes: u32| {
        screen
            .resource_create(&ResourceTemplate::buffer(
                bytes,
                BindFlags::SHADER_IMAGE | BindFlags::SHADER_BUFFER,
            ))
            .unwrap()
    };
    let src = make(64 * 4);
    let dst = make(64 * 16);
    let px: Vec<u32> = noise(64, 21);
    let bytes: Vec<u8> = px.iter().flat_map(|v| v.to_le_bytes()).collect();
    ctx.buffer_subdata(&src, 0, &bytes).unwrap();
    let view = |r, format, offset, size| ImageView {
        access: ImageAccess::READ_WRITE,
        format,
        offset,
        size,
        ..image(r)
    };
    ctx.set_shader_images(
        ShaderType::Compute,
        0,
        &[
            // texels 4..54 of src as rgba8unorm
            Some(view(&src, Format::R8G8B8A8_UNORM, 16, 50 * 4)),
            // dst from byte 32 as rgba32uint
            Some(view(&dst, Format::R32G32B32A32_UINT, 32, 60 * 16)),
        ],
    )
    .unwrap();
    kernel(
        &mut ctx,
        "@group(4) @binding(0) var src: texture_storage_1d<rgba8unorm, read_write>;
         @group(4) @binding(1) var dst: texture_storage_1d<rgba32uint, write>;
         @compute @workgroup_size(64)
         fn main(@builtin(local_invocation_index) i: u32) {
             let c = textureLoad(src, i32(i));
             let n = textureDimensions(src);
             textureStore(dst, i32(i), vec4<u32>(round(c * 255.0)) + vec4<u32>(0u, 0u, 0u, n * 1000u));
             textureStore(src, i32(i), c.wzyx);
         }",
    );
    ctx.launch_grid(&grid([64, 1, 1], [1, 1, 1])).unwrap();
    let d = read_words(&mut ctx, &dst);
    assert!(d[..8].iter().all(|&v| v == 0), "before the view's offset");
    for i in 0..60usize {
        let t = &d[8 + 4 * i..][..4];
        let want: [u32; 4] = if i < 50 {
            let b = px[4 + i].to_le_bytes();
            [
                b[0].into(),
                b[1].into(),
                b[2].into(),
                u32::from(b[3]) + 50_000,
            ]
        } else {
            // past the 50-texel source view: zeros
            [0, 0, 0, 50_000]
        };
        assert_eq!(t, want, "texel {i}");
    }
    // invocations past dst's 60 texels wrote nothing
    assert!(d[8 + 240..].iter().all(|&v| v == 0));
    // src: texels swizzled in place inside the view only
    let s = read_words(&mut ctx, &src);
    for (i, (&got, &old)) in s.iter().zip(&px).enumerate() {
        let want = if (4..54).contains(&i) {
            old.swap_bytes()
        } else {
            old
        };
        assert_eq!(got, want, "src word {i}");
    }

    // validation: unaligned offset, past the end, a format kernels cannot
    // address as words
    let mut e = |v| {
        ctx.set_shader_images(ShaderType::Compute, 0, &[Some(v)])
            .unwrap_err()
    };
    assert_eq!(
        e(view(&src, Format::R32_UINT, 2, 8)),
        Error::Resource(ResourceError::Misaligned {
            call: "set_shader_images",
            field: "offset",
            value: 2,
            align: 4,
        })
    );
    assert!(matches!(
        e(view(&src, Format::R32_UINT, 16, 256)),
        Error::Resource(ResourceError::RangePastEnd {
            call: "set_shader_images",
            field: "offset/size",
            offset: 16,
            size: 256,
            ..
        })
    ));
    assert!(
        ctx.set_shader_images(
            ShaderType::Compute,
            0,
            &[Some(view(&src, Format::R8_UNORM, 0, 8))]
        )
        .unwrap_err()
        .is_unsupported()
    );
    assert!(screen.is_format_supported(
        Format::R32G32_FLOAT,
        TextureTarget::Buffer,
        0,
        0,
        BindFlags::SHADER_IMAGE
    ));
}

/// Cube and cube-array images: faces are layers of a
/// `texture_storage_2d_array`.
#[test]
fn cube_images_are_layered_faces() {
    let (screen, mut ctx) = setup(2);
    let s = 4u32;
    let make = |target, array_size| {
        screen
            .resource_create(&ResourceTemplate {
                target,
                format: Format::R32_UINT,
                width0: s,
                height0: s,
                depth0: 1,
                array_size,
                last_level: 0,
                bind: BindFlags::SHADER_IMAGE,
                ..Default::default()
            })
            .unwrap()
    };
    let cube = make(TextureTarget::TextureCube, 6);
    let arr = make(TextureTarget::TextureCubeArray, 12);
    ctx.set_shader_images(
        ShaderType::Compute,
        0,
        &[
            Some(ImageView {
                access: ImageAccess::READ_WRITE,
                last_layer: 5,
                ..image(&cube)
            }),
            // the second cube of the array only
            Some(ImageView {
                access: ImageAccess::READ_WRITE,
                first_layer: 6,
                last_layer: 11,
                ..image(&arr)
            }),
        ],
    )
    .unwrap();
    kernel(
        &mut ctx,
        "@group(4) @binding(0) var cube: texture_storage_2d_array<r32uint, write>;
         @group(4) @binding(1) var arr: texture_storage_2d_array<r32uint, write>;
         @compute @workgroup_size(4, 4, 6)
         fn main(@builtin(local_invocation_id) l: vec3<u32>) {
             let v = l.z * 100u + l.y * 10u + l.x;
             textureStore(cube, vec2<i32>(l.xy), i32(l.z), vec4<u32>(v + textureNumLayers(cube) * 1000u));
             textureStore(arr, vec2<i32>(l.xy), i32(l.z), vec4<u32>(v + textureNumLayers(arr) * 1000u));
         }",
    );
    ctx.launch_grid(&grid([4, 4, 6], [1, 1, 1])).unwrap();
    let read = |ctx: &mut Context, r: &Resource, layers: i32| {
        let t = ctx
            .transfer_map(
                r,
                0,
                TransferFlags::READ,
                &PipeBox {
                    x: 0,
                    y: 0,
                    z: 0,
                    width: s as i32,
                    height: s as i32,
                    depth: layers,
                },
            )
            .unwrap();
        let v: Vec<u32> = t
            .data()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        ctx.transfer_unmap(t).unwrap();
        v
    };
    let c = read(&mut ctx, &cube, 6);
    let a = read(&mut ctx, &arr, 12);
    for face in 0..6u32 {
        for y in 0..s {
            for x in 0..s {
                let i = ((face * s + y) * s + x) as usize;
                let v = face * 100 + y * 10 + x + 6000;
                assert_eq!(c[i], v, "cube face {face} ({x}, {y})");
                assert_eq!(a[i], 0, "first cube of the array is not viewed");
                assert_eq!(a[i + (6 * s * s) as usize], v, "second cube, face {face}");
            }
        }
    }
    // multisampled images have no WGSL type
    assert!(
        screen
            .resource_create(&ResourceTemplate {
                nr_samples: 4,
                ..ResourceTemplate::texture_2d(Format::R32_UINT, 4, 4, BindFlags::SHADER_IMAGE)
            })
            .unwrap_err()
            .is_unsupported()
    );
}

/// `atomic<f32>` add across workgroups: with dyadic values every partial
/// sum is exact, so the result matches the CPU at any thread count.
#[test]
fn float_atomic_sums_match_the_cpu() {
    let data: Vec<f32> = noise(10_000, 77)
        .iter()
        .map(|v| (v % 512) as f32 * 0.25 - 64.0)
        .collect();
    let want_sum: f32 = data.iter().sum();
    let want_pos: f32 = data.iter().filter(|&&x| x > 0.0).sum();
    for threads in [1, 4] {
        let (screen, mut ctx) = setup(threads);
        let bits: Vec<u32> = data.iter().map(|f| f.to_bits()).collect();
        let d = buffer(&screen, &mut ctx, &bits);
        let acc = buffer(&screen, &mut ctx, &[0; 2]);
        bind(&mut ctx, 0, &[&d, &acc]);
        kernel(
            &mut ctx,
            "@group(3) @binding(0) var<storage, read> d: array<f32>;
             @group(3) @binding(1) var<storage, read_write> acc: array<atomic<f32>, 2>;
             @compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 if (g.x < arrayLength(&d)) {
                     let x = d[g.x];
                     atomicAdd(&acc[0], x);
                     if (x > 0.0) { atomicSub(&acc[1], -x); }
                 }
             }",
        );
        ctx.launch_grid(&grid([64, 1, 1], [10_000u32.div_ceil(64), 1, 1]))
            .unwrap();
        let got = read_words(&mut ctx, &acc);
        assert_eq!(f32::from_bits(got[0]), want_sum, "{threads} threads");
        assert_eq!(f32::from_bits(got[1]), want_pos, "{threads} threads");
    }
}

/// A kernel whose loop never ends stops at the executor's loop-trip
/// limit: `launch_grid` says so with a typed error (never a normal
/// completion), and the next launch of a well-behaved kernel works.
#[test]
fn a_runaway_kernel_fails_the_launch() {
    let (screen, mut ctx) = setup(2);
    let buf = buffer(&screen, &mut ctx, &[0; 4]);
    bind(&mut ctx, 0, &[&buf]);
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> buf: array<u32>;
         @compute @workgroup_size(8) fn main() {
             var n = 0u;
             loop { n += buf[1]; if n == 7u { break; } }
             buf[0] = 1u;
         }",
    );
    let e = ctx.launch_grid(&grid([8, 1, 1], [4, 1, 1])).unwrap_err();
    assert!(
        matches!(
            &e,
            ferropipe::Error::Shader {
                call: "launch_grid",
                source: ferropipe_shader::ShaderError::LoopLimit { stage: "compute" },
            }
        ),
        "{e}"
    );
    assert!(!e.is_unsupported());
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read_write> buf: array<u32>;
         @compute @workgroup_size(8) fn main() { buf[2] = 5u; }",
    );
    ctx.launch_grid(&grid([8, 1, 1], [1, 1, 1])).unwrap();
    assert_eq!(read_words(&mut ctx, &buf)[2], 5);
}

/// WGSL `override`s given at `create_compute_state_with_overrides`.
#[test]
fn overrides_are_set_at_creation() {
    let (screen, mut ctx) = setup(1);
    let buf = buffer(&screen, &mut ctx, &[0; 16]);
    bind(&mut ctx, 0, &[&buf]);
    let state = ComputeState {
        code: ShaderCode::Wgsl {
            code: "override wg: u32;
                   override k: u32 = 3u;
                   @group(3) @binding(0) var<storage, read_write> buf: array<u32>;
                   @compute @workgroup_size(wg) fn main(@builtin(local_invocation_index) i: u32) {
                       buf[i] = i * k;
                   }"
            .into(),
            entry_point: "main".into(),
        },
        req_local_mem: 0,
        req_input_mem: 0,
    };
    let e = ctx.create_compute_state(&state).unwrap_err();
    assert!(e.to_string().contains("override `wg`"), "{e}");
    let cs = ctx
        .create_compute_state_with_overrides(&state, &[("wg", 4.0), ("k", 10.0)])
        .unwrap();
    ctx.bind_compute_state(Some(cs)).unwrap();
    ctx.launch_grid(&grid([4, 1, 1], [1, 1, 1])).unwrap();
    assert_eq!(&read_words(&mut ctx, &buf)[..5], &[0, 10, 20, 30, 0]);
}

/// `writable_bitmask` and `pipe_image_view::access` mean what Gallium
/// says: a launch whose kernel writes a buffer slot bound without its
/// writable bit, stores to an image whose view lacks `WRITE`, or loads
/// from one whose view lacks `READ`, is a `StorageError` naming the
/// member, the slot and the stage, and runs nothing; slots the kernel only
/// reads need no bit.
#[test]
fn writable_bitmask_and_image_access_are_enforced_at_launch() {
    let (screen, mut ctx) = setup(1);
    let field_of = |e: &Error| e.field().unwrap_or("");
    let one = grid([4, 1, 1], [1, 1, 1]);
    // slot 0 read only, slot 1 written
    kernel(
        &mut ctx,
        "@group(3) @binding(0) var<storage, read> a: array<u32>;
         @group(3) @binding(1) var<storage, read_write> b: array<u32>;
         @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             b[g.x] = a[g.x] + 1u;
         }",
    );
    let a = buffer(&screen, &mut ctx, &[10, 20, 30, 40]);
    let b = buffer(&screen, &mut ctx, &[0; 4]);
    fn sb(r: &Resource) -> Option<ShaderBuffer<'_>> {
        Some(ShaderBuffer {
            buffer: r,
            offset: 0,
            size: r.template().width0,
        })
    }
    for mask in [0b00, 0b01] {
        ctx.set_shader_buffers(ShaderType::Compute, 0, &[sb(&a), sb(&b)], mask)
            .unwrap();
        let e = ctx.launch_grid(&one).unwrap_err();
        assert_eq!(field_of(&e), "writable_bitmask", "{e}");
        let msg = e.to_string();
        assert!(msg.contains("slot 1") && msg.contains("compute"), "{msg}");
    }
    assert_eq!(read_words(&mut ctx, &b), vec![0; 4], "nothing ran");
    // the read-only slot needs no bit
    ctx.set_shader_buffers(ShaderType::Compute, 0, &[sb(&a), sb(&b)], 0b10)
        .unwrap();
    ctx.launch_grid(&one).unwrap();
    ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
    assert_eq!(read_words(&mut ctx, &b), vec![11, 21, 31, 41]);

    // images: slot 0 loaded, slot 1 stored
    kernel(
        &mut ctx,
        "@group(4) @binding(0) var src: texture_storage_2d<r32uint, read>;
         @group(4) @binding(1) var dst: texture_storage_2d<r32uint, write>;
         @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
             let p = vec2<i32>(i32(g.x), 0);
             textureStore(dst, p, textureLoad(src, p) * 2u);
         }",
    );
    let texels = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let src = texture(
        &screen,
        &mut ctx,
        Format::R32_UINT,
        4,
        1,
        &texels(&[1, 2, 3, 4]),
    );
    let dst = texture(&screen, &mut ctx, Format::R32_UINT, 4, 1, &texels(&[0; 4]));
    fn view(r: &Resource, access: ImageAccess) -> ImageView<'_> {
        ImageView { access, ..image(r) }
    }
    for (src_access, dst_access, lacks, slot) in [
        (
            ImageAccess::WRITE,
            ImageAccess::WRITE,
            "PIPE_IMAGE_ACCESS_READ",
            0,
        ),
        (
            ImageAccess::READ,
            ImageAccess::READ,
            "PIPE_IMAGE_ACCESS_WRITE",
            1,
        ),
    ] {
        ctx.set_shader_images(
            ShaderType::Compute,
            0,
            &[Some(view(&src, src_access)), Some(view(&dst, dst_access))],
        )
        .unwrap();
        let e = ctx.launch_grid(&one).unwrap_err();
        assert_eq!(field_of(&e), "access", "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(lacks) && msg.contains(&format!("slot {slot}")) && msg.contains("compute"),
            "{msg}"
        );
    }
    assert_eq!(read_texture(&mut ctx, &dst), texels(&[0; 4]), "nothing ran");
    ctx.set_shader_images(
        ShaderType::Compute,
        0,
        &[
            Some(view(&src, ImageAccess::READ)),
            Some(view(&dst, ImageAccess::WRITE)),
        ],
    )
    .unwrap();
    ctx.launch_grid(&one).unwrap();
    ctx.memory_barrier(BarrierFlags::MAPPED_BUFFER).unwrap();
    assert_eq!(read_texture(&mut ctx, &dst), texels(&[2, 4, 6, 8]));
    // a view that allows nothing is refused when bound
    let e = ctx
        .set_shader_images(
            ShaderType::Compute,
            0,
            &[Some(view(&src, ImageAccess::empty()))],
        )
        .unwrap_err();
    assert_eq!(field_of(&e), "access", "{e}");
}
