//! Compute shaders through the lowering and the interpreter, one workgroup
//! at a time: builtins, storage and workgroup memory, barriers, atomics,
//! robust access, storage images and the typed errors.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use ferropipe_components::format::Format;
use ferropipe_components::shader::ShaderResources;
use ferropipe_shader::{ComputeCall, StorageImage, WordBuffer};
use ferropipe_shader::{ComputeShaderRef, Language, ShaderError, compile_compute};

fn cs(src: &str) -> ComputeShaderRef {
    compile_compute(Language::Wgsl, src, "main").unwrap_or_else(|e| panic!("{e}"))
}

fn words(v: &[u32]) -> Vec<AtomicU32> {
    v.iter().map(|&x| AtomicU32::new(x)).collect()
}

fn values(w: &[AtomicU32]) -> Vec<u32> {
    w.iter().map(|x| x.load(Ordering::Relaxed)).collect()
}

/// Runs workgroup `wg` of a `num`-workgroup grid with `bufs` in slots 0...
fn run(shader: &ComputeShaderRef, bufs: &[&[AtomicU32]], wg: [u32; 3], num: [u32; 3]) {
    run_with_images(shader, bufs, &[], wg, num)
}

fn run_with_images(
    shader: &ComputeShaderRef,
    bufs: &[&[AtomicU32]],
    images: &[Option<StorageImage<'_>>],
    wg: [u32; 3],
    num: [u32; 3],
) {
    let buffers: Vec<Option<WordBuffer>> = bufs
        .iter()
        .map(|w| {
            Some(WordBuffer {
                words: w,
                bytes: (w.len() * 4) as u32,
            })
        })
        .collect();
    let shared = words(&vec![0; shader.shared_words()]);
    let diverged = AtomicBool::new(false);
    let call = ComputeCall {
        buffers: &buffers,
        globals: &[],
        images,
        shared: &shared,
        workgroup_id: wg,
        num_workgroups: num,
        workgroup_size: shader.info().workgroup_size,
        active: shader.info().workgroup_size,
        diverged: &diverged,
    };
    shader
        .run_workgroup(&ShaderResources::default(), &call)
        .unwrap();
    // every kernel here keeps its barriers in uniform control flow
    assert!(!diverged.load(Ordering::Relaxed));
}

#[test]
fn builtins_match_their_definitions() {
    let s = cs("
        @group(3) @binding(0) var<storage, read_write> out: array<vec4<u32>>;
        @compute @workgroup_size(3, 2, 2)
        fn main(@builtin(local_invocation_id) l: vec3<u32>,
                @builtin(local_invocation_index) i: u32,
                @builtin(global_invocation_id) g: vec3<u32>,
                @builtin(workgroup_id) w: vec3<u32>,
                @builtin(num_workgroups) n: vec3<u32>) {
            let flat = w.x * 12u + i;
            out[flat * 4u] = vec4<u32>(l, i);
            out[flat * 4u + 1u] = vec4<u32>(g, 7u);
            out[flat * 4u + 2u] = vec4<u32>(w, 8u);
            out[flat * 4u + 3u] = vec4<u32>(n, 9u);
        }");
    let buf = words(&vec![0; 2 * 12 * 16]);
    for wx in 0..2 {
        run(&s, &[&buf], [wx, 0, 0], [2, 1, 1]);
    }
    let v = values(&buf);
    for wx in 0..2u32 {
        for i in 0..12u32 {
            let l = [i % 3, (i / 3) % 2, i / 6];
            let at = ((wx * 12 + i) * 16) as usize;
            assert_eq!(&v[at..at + 4], &[l[0], l[1], l[2], i]);
            assert_eq!(&v[at + 4..at + 8], &[wx * 3 + l[0], l[1], l[2], 7]);
            assert_eq!(&v[at + 8..at + 12], &[wx, 0, 0, 8]);
            assert_eq!(&v[at + 12..at + 16], &[2, 1, 1, 9]);
        }
    }
}

#[test]
fn workgroup_tree_reduction_with_barriers() {
    // 256 invocations = 32 lane groups, one chunk: the tree halves the
    // active range each step and reads what other groups wrote
    let s = cs("
        @group(3) @binding(0) var<storage, read> input: array<u32>;
        @group(3) @binding(1) var<storage, read_write> partial: array<u32>;
        var<workgroup> scratch: array<u32, 256>;
        @compute @workgroup_size(256)
        fn main(@builtin(local_invocation_index) i: u32,
                @builtin(workgroup_id) w: vec3<u32>) {
            scratch[i] = input[w.x * 256u + i];
            workgroupBarrier();
            for (var s = 128u; s > 0u; s = s >> 1u) {
                if (i < s) {
                    scratch[i] = scratch[i] + scratch[i + s];
                }
                workgroupBarrier();
            }
            if (i == 0u) {
                partial[w.x] = scratch[0];
            }
        }");
    let data: Vec<u32> = (0..600u32).map(|i| i * 7919 % 1000).collect();
    let input = words(&data);
    let partial = words(&[0; 3]);
    for w in 0..3 {
        run(&s, &[&input, &partial], [w, 0, 0], [3, 1, 1]);
    }
    // the third workgroup reads 88 values past the end: zeros
    let want: Vec<u32> = data.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(values(&partial), want);
}

#[test]
fn atomics_on_storage_and_workgroup_memory() {
    let s = cs("
        struct Counters { hits: atomic<u32>, low: atomic<i32>, high: atomic<u32>, bits: atomic<u32> }
        @group(3) @binding(0) var<storage, read_write> c: Counters;
        @group(3) @binding(1) var<storage, read_write> old: array<u32>;
        @group(3) @binding(2) var<storage, read_write> swapped: array<u32>;
        var<workgroup> local_count: atomic<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(local_invocation_index) i: u32) {
            old[i] = atomicAdd(&c.hits, 2u);
            atomicMin(&c.low, 10 - i32(i));
            atomicMax(&c.high, i * 3u);
            atomicOr(&c.bits, 1u << (i % 32u));
            atomicXor(&c.bits, 0u);
            atomicAdd(&local_count, 1u);
            workgroupBarrier();
            let r = atomicCompareExchangeWeak(&c.hits, 128u, 1000u);
            swapped[i] = select(0u, 1u, r.exchanged) + atomicLoad(&local_count) * 10u;
        }");
    let c = words(&[0, 100, 0, 0]);
    let old = words(&[0; 64]);
    let swapped = words(&[0; 64]);
    run(&s, &[&c, &old, &swapped], [0; 3], [1, 1, 1]);
    let v = values(&c);
    assert_eq!(v[0], 1000);
    assert_eq!(v[1] as i32, 10 - 63);
    assert_eq!(v[2], 63 * 3);
    assert_eq!(v[3], u32::MAX);
    // fixed lane order: invocation i saw 2 * i
    assert_eq!(values(&old), (0..64).map(|i| 2 * i).collect::<Vec<_>>());
    // exactly the first invocation exchanged
    let sw = values(&swapped);
    assert_eq!(sw[0], 641);
    assert!(sw[1..].iter().all(|&x| x == 640));
}

#[test]
fn out_of_range_accesses_read_zero_and_drop_writes() {
    // `items` starts at byte 8 (vec2 alignment); 28 bound bytes hold 2
    // items and a partial one the shader cannot reach
    let s = cs("
        struct Tail { head: u32, items: array<vec2<u32>> }
        @group(3) @binding(0) var<storage, read_write> t: Tail;
        @group(3) @binding(1) var<storage, read_write> out: array<u32, 8>;
        @compute @workgroup_size(8)
        fn main(@builtin(local_invocation_index) i: u32) {
            let big = i * 0x40000000u;
            // i = 0 and 4: big = 0; others: an index whose byte offset
            // wraps to a small number without the bounds check
            t.items[big + 1u].y = 77u;
            t.items[i - 4u] = vec2<u32>(i, arrayLength(&t.items));
            out[i] = t.items[i].x + t.items[i | 0x80000000u].y;
        }");
    let t = words(&[5, 10, 11, 20, 21, 30, 31]);
    let out = words(&[9; 8]);
    run(&s, &[&t, &out], [0; 3], [1, 1, 1]);
    assert_eq!(values(&t), vec![5, 10, 4, 2, 5, 2, 31]);
    assert_eq!(values(&out), vec![4, 5, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn storage_images_store_load_and_report_their_size() {
    let s = cs("
        @group(4) @binding(0) var src: texture_storage_2d<rgba8unorm, read>;
        @group(4) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
        @compute @workgroup_size(4, 4)
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
            let size = textureDimensions(src);
            let p = vec2<i32>(g.xy);
            let c = textureLoad(src, p);
            textureStore(dst, p, vec4<f32>(c.rgb * 2.0, f32(size.x * 10u + size.y)));
            textureStore(dst, vec2<i32>(-1, 0), vec4<f32>(9.0));
        }");
    let (w, h) = (3u32, 2u32);
    let src = words(&(0..w * h).map(|i| 0x80402010 + i).collect::<Vec<_>>());
    let dst = words(&vec![0; (w * h * 4) as usize]);
    let img = |words, format, bpp: usize| StorageImage {
        words,
        format,
        width: w,
        height: h,
        depth: 1,
        offset: 0,
        row_stride: w as usize * bpp,
        slice_stride: (w * h) as usize * bpp,
        bpp,
    };
    let images = [
        Some(img(&src, Format::R8G8B8A8_UNORM, 4)),
        Some(img(&dst, Format::R32G32B32A32_FLOAT, 16)),
    ];
    run_with_images(&s, &[], &images, [0; 3], [1, 1, 1]);
    let out: Vec<f32> = values(&dst).into_iter().map(f32::from_bits).collect();
    for i in 0..(w * h) as usize {
        let texel = 0x80402010u32 + i as u32;
        let unorm = |b: u32| ((texel >> b) & 0xff) as f32 / 255.0;
        assert_eq!(out[4 * i], unorm(0) * 2.0);
        assert_eq!(out[4 * i + 1], unorm(8) * 2.0);
        assert_eq!(out[4 * i + 2], unorm(16) * 2.0);
        assert_eq!(out[4 * i + 3], 32.0);
    }
}

#[test]
fn compute_errors_are_typed() {
    let unsupported = [
        (
            "@group(3) @binding(0) var<storage, read_write> b: array<f32>;
             @compute @workgroup_size(1) fn main() { b[0] = dpdx(b[1]); }",
            "",
        ),
        (
            "@group(0) @binding(0) var<storage, read_write> b: array<u32>;
             @compute @workgroup_size(1) fn main() { b[0] = 1u; }",
            "@group(3)",
        ),
        (
            "@compute @workgroup_size(1024, 2) fn main() {}",
            "workgroup_size",
        ),
        (
            "var<workgroup> big: array<vec4<f32>, 4096>;
             @compute @workgroup_size(1) fn main() { big[0] = vec4<f32>(1.0); }",
            "workgroup memory",
        ),
        (
            "@group(1) @binding(0) var t: texture_2d<f32>;
             @group(2) @binding(0) var s: sampler;
             @group(3) @binding(0) var<storage, read_write> b: array<vec4<f32>>;
             @compute @workgroup_size(1) fn main() { b[0] = textureSample(t, s, vec2<f32>(0.5)); }",
            "",
        ),
    ];
    for (src, what) in unsupported {
        match compile_compute(Language::Wgsl, src, "main") {
            Err(ShaderError::Unsupported { construct, .. }) => {
                assert!(construct.contains(what), "{construct}")
            }
            // naga refuses derivatives and implicit-LOD sampling in
            // compute itself
            Err(ShaderError::Validation { .. }) if what.is_empty() => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    assert!(matches!(
        compile_compute(
            Language::Wgsl,
            "@compute @workgroup_size(1) fn main() {}",
            "nope"
        ),
        Err(ShaderError::MissingEntryPoint { .. })
    ));
}

#[test]
fn glsl_compute_shaders_run_too() {
    let s = compile_compute(
        Language::Glsl,
        "#version 450
         layout(local_size_x = 8) in;
         layout(set = 3, binding = 0) buffer Data { uint v[]; } data;
         shared uint tmp[8];
         void main() {
             uint i = gl_LocalInvocationIndex;
             tmp[i] = data.v[i] * 2u;
             barrier();
             data.v[i] = tmp[7u - i] + gl_WorkGroupID.x;
         }",
        "main",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let buf = words(&(0..8).collect::<Vec<u32>>());
    run(&s, &[&buf], [5, 0, 0], [6, 1, 1]);
    assert_eq!(
        values(&buf),
        (0..8).map(|i| (7 - i) * 2 + 5).collect::<Vec<u32>>()
    );
}

#[test]
fn structs_matrices_and_dynamic_components_in_memory() {
    // Item: m at 0 (mat2x3: columns 16 bytes apart), v at 32, n at 48;
    // 64-byte stride
    let s = cs("
        struct Item { m: mat2x3<f32>, v: vec4<u32>, n: atomic<i32> }
        struct Buf { count: u32, items: array<Item> }
        @group(3) @binding(0) var<storage, read_write> b: Buf;
        var<workgroup> shared_item: array<vec4<u32>, 2>;
        var<workgroup> flag: u32;
        @compute @workgroup_size(4)
        fn main(@builtin(local_invocation_index) i: u32) {
            if (i == 0u) { flag = 41u; }
            let f = workgroupUniformLoad(&flag);
            let item = i % 2u;
            b.items[item].m[1][i % 3u] = f32(i) + 0.5;
            b.items[item].v[i] = f + i;
            atomicMin(&b.items[0].n, -i32(i) * 3);
            let old = atomicExchange(&b.items[1].n, i32(i));
            atomicSub(&b.items[1].n, 10);
            shared_item[item][i] = u32(old + 100);
            storageBarrier();
            workgroupBarrier();
            if (i == 3u) {
                b.count = shared_item[0][0] * 1000u + shared_item[1][3];
                let whole = b.items[0].v;
                b.items[1].v = whole.wzyx;
            }
        }");
    let buf = words(&[0; 4 + 2 * 16]);
    run(&s, &[&buf], [0; 3], [1, 1, 1]);
    let v = values(&buf);
    let item = |k: usize, w: usize| v[4 + 16 * k + w];
    // m[1] (column 1 at byte 16 of the item): component i % 3 written by
    // invocations of parity `item`, last writer wins (lane order)
    assert_eq!(f32::from_bits(item(0, 4)), 0.5);
    assert_eq!(f32::from_bits(item(0, 6)), 2.5);
    assert_eq!(f32::from_bits(item(1, 4)), 3.5);
    assert_eq!(f32::from_bits(item(1, 5)), 1.5);
    // v: items[0].v[0], [2] from i = 0, 2; items[1].v[1], [3] from 1, 3
    assert_eq!([item(0, 8), item(0, 10)], [41, 43]);
    assert_eq!(item(0, 12) as i32, -9);
    // exchanges in lane order, each followed (next op) by all the
    // subtractions: the last exchange stored 3, then 4 x -10
    assert_eq!(item(1, 12) as i32, 3 - 40);
    // old values: 0, 0, 1, 2 -> shared_item[0][0] = 100, [1][3] = 102
    assert_eq!(v[0], 100 * 1000 + 102);
    // items[1].v = items[0].v reversed
    assert_eq!(
        [item(1, 8), item(1, 9), item(1, 10), item(1, 11)],
        [item(0, 11), item(0, 10), item(0, 9), item(0, 8)]
    );
}

#[test]
fn read_write_images_update_in_place() {
    // rgba8unorm read_write: each texel inverted in place, and the
    // conversion rounds as util_format does (x * 255 + 0.5)
    let s = cs("
        @group(4) @binding(0) var img: texture_storage_2d<rgba8unorm, read_write>;
        @compute @workgroup_size(2, 2)
        fn main(@builtin(local_invocation_id) l: vec3<u32>) {
            let p = vec2<i32>(l.xy);
            textureStore(img, p, vec4<f32>(1.0) - textureLoad(img, p));
        }");
    let px = [0x00ff_8040u32, 0x1234_5678, 0xffff_ffff, 0];
    let mem = words(&px);
    let img = StorageImage {
        words: &mem,
        format: Format::R8G8B8A8_UNORM,
        width: 2,
        height: 2,
        depth: 1,
        offset: 0,
        row_stride: 8,
        slice_stride: 16,
        bpp: 4,
    };
    run_with_images(&s, &[], &[Some(img)], [0; 3], [1, 1, 1]);
    assert_eq!(values(&mem), px.map(|p| !p).to_vec());
}

#[test]
fn one_dimensional_and_signed_integer_images() {
    let s = cs("
        @group(4) @binding(0) var line: texture_storage_1d<r32sint, read_write>;
        @compute @workgroup_size(6)
        fn main(@builtin(local_invocation_index) i: u32) {
            let n = i32(textureDimensions(line));
            let v = textureLoad(line, i32(i)).x;
            textureStore(line, i32(i), vec4<i32>(-v * n, 0, 0, 0));
        }");
    let mem = words(&[1, (-2i32) as u32, 3, 0, 5, 6]);
    let img = StorageImage {
        words: &mem,
        format: Format::R32_SINT,
        width: 5,
        height: 1,
        depth: 1,
        offset: 0,
        row_stride: 20,
        slice_stride: 20,
        bpp: 4,
    };
    run_with_images(&s, &[], &[Some(img)], [0; 3], [1, 1, 1]);
    // invocation 5 is past the 5-texel image: its store is dropped
    let want: Vec<u32> = [-5i32, 10, -15, 0, -25, 6]
        .iter()
        .map(|&v| v as u32)
        .collect();
    assert_eq!(values(&mem), want);
}

/// Runs one workgroup with explicit global bindings and active sizes.
fn run_full(
    shader: &ComputeShaderRef,
    bufs: &[&[AtomicU32]],
    globals: &[&[AtomicU32]],
    active: [u32; 3],
) -> bool {
    fn slot<'a>(w: &&'a [AtomicU32]) -> Option<WordBuffer<'a>> {
        Some(WordBuffer {
            words: w,
            bytes: (w.len() * 4) as u32,
        })
    }
    let buffers: Vec<Option<WordBuffer>> = bufs.iter().map(slot).collect();
    let globals: Vec<Option<WordBuffer>> = globals.iter().map(slot).collect();
    let shared = words(&vec![0; shader.shared_words()]);
    let diverged = AtomicBool::new(false);
    let call = ComputeCall {
        buffers: &buffers,
        globals: &globals,
        images: &[],
        shared: &shared,
        workgroup_id: [0; 3],
        num_workgroups: [1; 3],
        workgroup_size: shader.info().workgroup_size,
        active,
        diverged: &diverged,
    };
    shader
        .run_workgroup(&ShaderResources::default(), &call)
        .unwrap();
    diverged.load(Ordering::Relaxed)
}

#[test]
fn float_atomics_add_subtract_and_exchange_in_lane_order() {
    let s = cs("
        struct Acc { sum: atomic<f32>, diff: atomic<f32>, last: atomic<f32> }
        @group(3) @binding(0) var<storage, read_write> acc: Acc;
        @group(3) @binding(1) var<storage, read_write> seen: array<f32>;
        @compute @workgroup_size(48)
        fn main(@builtin(local_invocation_index) i: u32) {
            let x = f32(i) * 0.75 - 3.0;
            seen[i] = atomicAdd(&acc.sum, x);
            atomicSub(&acc.diff, x);
            atomicExchange(&acc.last, x);
        }");
    assert_eq!(s.info().buffers_used, 0b11);
    let acc = words(&[0.5f32.to_bits(), 1.0f32.to_bits(), 0]);
    let seen = words(&[0; 48]);
    run(&s, &[&acc, &seen], [0; 3], [1, 1, 1]);
    // the CPU, in the executor's lane order
    let (mut sum, mut diff) = (0.5f32, 1.0f32);
    let mut want_seen = Vec::new();
    for i in 0..48 {
        let x = i as f32 * 0.75 - 3.0;
        want_seen.push(sum.to_bits());
        sum += x;
        diff -= x;
    }
    let v = values(&acc);
    assert_eq!(f32::from_bits(v[0]), sum);
    assert_eq!(f32::from_bits(v[1]), diff);
    assert_eq!(f32::from_bits(v[2]), 47.0 * 0.75 - 3.0);
    assert_eq!(values(&seen), want_seen);
}

#[test]
fn atomics_naga_refuses_or_ferropipe_cannot_run_are_typed() {
    // 64-bit atomics parse and validate (SHADER_INT64_ATOMIC_*), but the
    // interpreter has no 64-bit integers
    for src in [
        "@group(3) @binding(0) var<storage, read_write> a: atomic<u64>;
         @compute @workgroup_size(1) fn main() { atomicAdd(&a, 1lu); }",
        "@group(3) @binding(0) var<storage, read_write> a: atomic<i64>;
         @compute @workgroup_size(1) fn main() { atomicMax(&a, 1li); }",
    ] {
        match compile_compute(Language::Wgsl, src, "main") {
            Err(ShaderError::Unsupported { construct, .. }) => {
                assert!(construct.contains("64-bit"), "{construct}")
            }
            other => panic!("{other:?}"),
        }
    }
    // naga allows f32 atomics in storage buffers only, and only add,
    // subtract and exchange
    for src in [
        "var<workgroup> a: atomic<f32>;
         @compute @workgroup_size(1) fn main() { atomicAdd(&a, 1.0); }",
        "@group(3) @binding(0) var<storage, read_write> a: atomic<f32>;
         @compute @workgroup_size(1) fn main() { atomicMax(&a, 1.0); }",
    ] {
        assert!(
            matches!(
                compile_compute(Language::Wgsl, src, "main"),
                Err(ShaderError::Validation { .. })
            ),
            "{src}"
        );
    }
}

#[test]
fn global_bindings_are_their_own_slots() {
    let s = cs("
        @group(6) @binding(1) var<storage, read> src: array<u32>;
        @group(6) @binding(0) var<storage, read_write> dst: array<u32>;
        @group(3) @binding(0) var<storage, read_write> lens: array<u32>;
        @compute @workgroup_size(8)
        fn main(@builtin(local_invocation_index) i: u32) {
            dst[i] = src[i] * 3u + 1u;
            lens[0] = arrayLength(&dst);
            lens[1] = arrayLength(&src);
        }");
    assert_eq!(s.info().globals_used, 0b11);
    assert_eq!(s.info().buffers_used, 0b1);
    let src = words(&[1, 2, 3, 4, 5]);
    let dst = words(&[0; 8]);
    let lens = words(&[0; 2]);
    assert!(!run_full(&s, &[&lens], &[&dst, &src], [8, 1, 1]));
    // src[5..8] is out of range: 0
    assert_eq!(values(&dst), vec![4, 7, 10, 13, 16, 1, 1, 1]);
    assert_eq!(values(&lens), vec![8, 5]);
    // global slots above 15 are refused
    assert!(matches!(
        compile_compute(
            Language::Wgsl,
            "@group(6) @binding(16) var<storage, read_write> g: array<u32>;
             @compute @workgroup_size(1) fn main() { g[0] = 1u; }",
            "main"
        ),
        Err(ShaderError::Unsupported { .. })
    ));
}

#[test]
fn inactive_invocations_of_a_partial_block_do_nothing() {
    // a 4x3 workgroup of which 3x2 run: the others must not write, count
    // or break the barrier's uniformity check
    let s = cs("
        @group(3) @binding(0) var<storage, read_write> out: array<u32>;
        @group(3) @binding(1) var<storage, read_write> count: atomic<u32>;
        var<workgroup> tile: array<u32, 12>;
        @compute @workgroup_size(4, 3)
        fn main(@builtin(local_invocation_index) i: u32,
                @builtin(local_invocation_id) l: vec3<u32>) {
            tile[i] = l.x * 10u + l.y;
            workgroupBarrier();
            out[i] = tile[11u - i] + 100u;
            atomicAdd(&count, 1u);
        }");
    let out = words(&[7; 12]);
    let count = words(&[0]);
    assert!(!run_full(&s, &[&out, &count], &[], [3, 2, 1]));
    let mut want = vec![7u32; 12];
    for y in 0..2u32 {
        for x in 0..3u32 {
            let i = y * 4 + x;
            let j = 11 - i;
            let (jx, jy) = (j % 4, j / 4);
            // tile[j] was written only if invocation j ran
            let t = if jx < 3 && jy < 2 { jx * 10 + jy } else { 0 };
            want[i as usize] = t + 100;
        }
    }
    assert_eq!(values(&out), want);
    assert_eq!(values(&count), vec![6]);
}

/// The per-slot access bits the draw and launch checks compare with
/// `writable_bitmask` and `pipe_image_view::access`: stores and atomics
/// mark a buffer written, loads alone do not (nor does `read_write`
/// without a store); image loads and stores mark their own bits.
#[test]
fn access_bits_record_what_the_body_loads_and_stores() {
    let s = cs("
        @group(3) @binding(0) var<storage, read> a: array<u32>;
        @group(3) @binding(1) var<storage, read_write> b: array<u32>;
        @group(3) @binding(2) var<storage, read_write> c: array<atomic<u32>>;
        @group(3) @binding(3) var<storage, read_write> d: array<u32>;
        @group(4) @binding(0) var src: texture_storage_2d<r32uint, read>;
        @group(4) @binding(1) var dst: texture_storage_2d<r32uint, write>;
        @group(4) @binding(2) var rw: texture_storage_2d<r32uint, read_write>;
        @compute @workgroup_size(4)
        fn main(@builtin(local_invocation_index) i: u32) {
            let p = vec2<i32>(i32(i), 0);
            b[i] = a[i] + d[i];
            atomicAdd(&c[0], 1u);
            textureStore(dst, p, textureLoad(src, p) + textureLoad(rw, p));
        }");
    let info = &s.program().info;
    assert_eq!(info.shader_buffers_used, 0b1111);
    assert_eq!(info.shader_buffers_written, 0b0110);
    assert_eq!(info.shader_images_read, 0b101);
    assert_eq!(info.shader_images_written, 0b010);
}
