//! Throughput of each pipeline stage's kernel on its own, one criterion
//! group per stage, single-threaded (the pipeline runs the same kernels per
//! job or per tile on every worker).
//!
//! Workload: one indexed draw of a 240x135 grid of 8x8-pixel cells, two
//! triangles each (64,800 triangles of 32 pixels, 32,776 vertices, u32
//! indices), interior vertices jittered by up to 2 pixels, random colours,
//! `w` from 1 to 2 across the screen, covering a 1920x1080 RGBA8 target
//! exactly once.  Rust-native pass-through shaders (the VS copies position
//! and colour, the FS copies the perspective-interpolated colour), no depth
//! buffer, no culling.  The draw is cut into jobs of `JOB_PRIMS` (2048)
//! primitives as the scene planner does.
//!
//! Every stage's input is produced once, before timing, by running the
//! earlier stages' kernels; only the stage's own kernel is in `b.iter`:
//!
//! | group | kernel timed | throughput |
//! | --- | --- | --- |
//! | `fetch` | `fetch::assemble_part` (index read, vertex dedup, assembly) and `fetch::fetch_segment` (decode to SoA lanes), each on its own | vertices (after dedup) |
//! | `vertex_shading` | `shade::shade_batch` per segment | vertices |
//! | `clip` | `clip::clip_segment` per segment | primitives in |
//! | `setup` | `setup::setup_prims` per job | triangles |
//! | `bin` | `bin::bin_prims` per job, 64x64 tiles | triangles |
//! | `raster` | `raster::cover_prim` per (tile, bin entry), tiles walked job by job as `rasterize_tile` does | triangles |
//! | `fragment_shading` | `fragment::shade_batch` (plane interpolation + FS) per batch of <= 256 groups (`MAX_BATCH_GROUPS`), batches cut as the tile pass cuts them | covered pixels |
//! | `merge` | `merge::store_batch` per batch: RGBA8 opaque store, and SRC_ALPHA / INV_SRC_ALPHA blend | covered pixels |
//!
//! Not timed: the scene planner, resource locking, the tile walk's
//! batching and early depth, and the ECS scheduling around the kernels.
//! The merge bench reuses one buffer of fragment colours for every batch
//! (values do not change the store path's cost, and in the fused tile
//! pass that buffer is hot in L1 too).
//!
//! `cargo bench -p ferropipe-systems --bench pipeline_stages`
//! (shorter: `-- --warm-up-time 1 --measurement-time 3`)
//!
//! Measured on the 2-core dev box (AMD EPYC, x86-64-v3 build, noisy:
//! expect 5-20 % between runs), `--warm-up-time 1 --measurement-time 3`,
//! criterion's point estimate.  Per iteration: 65,634 vertices (285
//! segments of <= 256), 64,800 triangles, 83,551 bin entries, 8,619
//! fragment batches of 536,266 4x2 groups, 2,073,600 covered pixels.
//!
//! | group / bench | per iteration | throughput | per element |
//! | --- | --- | --- | --- |
//! | fetch/assemble_part | 1.72 ms | 38.2 M vertices/s | 26 ns |
//! | fetch/fetch_segment | 0.477 ms | 138 M vertices/s | 7.3 ns |
//! | vertex_shading/shade_batch | 0.064 ms | 1.03 G vertices/s | 0.97 ns |
//! | clip/clip_segment | 2.10 ms | 30.9 M primitives/s | 32 ns |
//! | setup/setup_prims | 6.93 ms | 9.35 M triangles/s | 107 ns |
//! | bin/bin_prims | 1.47 ms | 44.2 M triangles/s | 23 ns |
//! | raster/cover_prim | 8.89 ms | 7.29 M triangles/s | 137 ns |
//! | fragment_shading/shade_batch | 8.78 ms | 236 M pixels/s | 4.2 ns |
//! | merge/store_opaque | 7.53 ms | 275 M pixels/s | 3.6 ns |
//! | merge/store_blend | 11.8 ms | 176 M pixels/s | 5.7 ns |
//!
//! The vertex-shading figure is the stage's own cost around a shader that
//! is one copy (output zeroing, the call, the colour clamp); a real
//! shader's arithmetic comes on top (`benches/fragment_shader.rs` measures
//! shader execution).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferropipe_components::batch::{
    BinnedJob, ClippedPrims, JobBins, PipelineState, SetupPrims, StageResources, StateBlock,
    VertexBufferSlots,
};
use ferropipe_components::draw::{
    DrawInfo, FramebufferState, IndexBufferBinding, VertexBufferBinding,
};
use ferropipe_components::enums::{BindFlags, BlendFactor, BlendFunc, PrimType, ShaderType};
use ferropipe_components::format::Format;
use ferropipe_components::resource::{
    PipeResource, ResourceLayout, ResourceRef, ResourceStorage, ResourceTemplate,
};
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, FragmentShader, IoSlot, Lanes, Semantic, ShaderInfo,
    ShaderResources, VertexIo, VertexShader,
};
use ferropipe_components::state::{
    BlendColor, BlendState, ClipState, DepthStencilAlphaState, MAX_VIEWPORTS, PolyStipple,
    RasterizerState, ScissorState, StencilRef, VertexElement, ViewportState,
};
use ferropipe_components::view::{Surface, SurfaceDesc, SurfaceRef};
use ferropipe_systems::bin::{BinScratch, bin_prims};
use ferropipe_systems::clip::{ClipCounters, ClipScratch, clip_segment};
use ferropipe_systems::derived::DerivedState;
use ferropipe_systems::fetch::{
    BufferView, IndexSource, JobPart, Segment, Topology, VertexDedup, assemble_part, fetch_segment,
};
use ferropipe_systems::fragment::{self, BatchPrimRef, FragBatch, FragGroup, MAX_BATCH_GROUPS};
use ferropipe_systems::lanes::TileGrid;
use ferropipe_systems::locks::LockSet;
use ferropipe_systems::merge::{ColorTarget, StoreGroup, TargetMemory, Targets, store_batch};
use ferropipe_systems::raster::cover_prim;
use ferropipe_systems::scene::JOB_PRIMS;
use ferropipe_systems::setup::setup_prims;
use ferropipe_systems::shade;

const W: u32 = 1920;
const H: u32 = 1080;
/// Grid cell size in pixels (two triangles per cell).
const CELL: u32 = 8;
/// Vertex stride: position vec4 + colour vec4.
const STRIDE: u32 = 32;

/// Copies input 0 to the position and input 1 to GENERIC[0].
struct PassVs(ShaderInfo);
/// Copies GENERIC[0] (perspective) to COLOR[0].
struct PassFs(ShaderInfo);

impl VertexShader for PassVs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }
    fn run(&self, _: &ShaderResources<'_>, io: &mut VertexIo<'_>) {
        let n = 8 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

impl FragmentShader for PassFs {
    fn info(&self) -> &ShaderInfo {
        &self.0
    }
    fn run(&self, _: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
        let n = 4 * io.groups;
        io.outputs[..n].copy_from_slice(&io.inputs[..n]);
    }
}

fn shaders() -> (Arc<PassVs>, Arc<PassFs>) {
    let mut vs = ShaderInfo {
        stage: ShaderType::Vertex,
        ..Default::default()
    };
    vs.inputs.push(IoSlot::new(Semantic::Generic(0), 0));
    vs.inputs.push(IoSlot::new(Semantic::Generic(1), 1));
    vs.outputs.push(IoSlot::new(Semantic::Position, 0));
    vs.outputs.push(IoSlot::new(Semantic::Generic(0), 0));
    let mut fs = ShaderInfo {
        stage: ShaderType::Fragment,
        ..Default::default()
    };
    fs.inputs.push(IoSlot::new(Semantic::Generic(0), 0));
    fs.outputs.push(IoSlot::new(Semantic::Color(0), 0));
    (Arc::new(PassVs(vs)), Arc::new(PassFs(fs)))
}

fn resource(templ: ResourceTemplate, data: &[u8]) -> ResourceRef {
    let layout = ResourceLayout::new(&templ).expect("layout");
    let storage = ResourceStorage::new_zeroed(layout.size).expect("storage");
    storage.write()[..data.len()].copy_from_slice(data);
    Arc::new(PipeResource {
        id: 0,
        templ,
        layout,
        storage,
    })
}

fn surface(format: Format, w: u32, h: u32) -> SurfaceRef {
    let r = resource(
        ResourceTemplate::texture_2d(format, w, h, BindFlags::RENDER_TARGET),
        &[],
    );
    Arc::new(Surface {
        desc: SurfaceDesc {
            format,
            level: 0,
            first_layer: 0,
            last_layer: 0,
            width: w,
            height: h,
        },
        resource: r,
    })
}

/// The grid mesh: vertex bytes (position, colour) and u32 indices.
fn mesh() -> (Vec<u8>, Vec<u8>, u32) {
    let (cols, rows) = (W / CELL, H / CELL);
    let mut seed = 0x9e37_79b9u32;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut v: Vec<f32> = Vec::new();
    for j in 0..=rows {
        for i in 0..=cols {
            let (mut x, mut y) = ((i * CELL) as f32, (j * CELL) as f32);
            // Border vertices stay put so the mesh covers the target exactly.
            if i > 0 && i < cols {
                x += rnd() * 4.0 - 2.0;
            }
            if j > 0 && j < rows {
                y += rnd() * 4.0 - 2.0;
            }
            let w = 1.0 + x / W as f32;
            let (nx, ny) = (x / W as f32 * 2.0 - 1.0, y / H as f32 * 2.0 - 1.0);
            v.extend_from_slice(&[nx * w, ny * w, 0.5 * w, w]);
            v.extend_from_slice(&[rnd(), rnd(), rnd(), 0.5]);
        }
    }
    let mut idx: Vec<u32> = Vec::new();
    for j in 0..rows {
        for i in 0..cols {
            let a = j * (cols + 1) + i;
            let (b, c) = (a + 1, a + cols + 1);
            idx.extend_from_slice(&[a, b, c, b, c + 1, c]);
        }
    }
    let count = idx.len() as u32;
    (
        v.iter().flat_map(|f| f.to_le_bytes()).collect(),
        idx.iter().flat_map(|i| i.to_le_bytes()).collect(),
        count,
    )
}

/// A state block drawing the mesh into `fb`, opaque or alpha-blended.
fn state_block(
    fb: &Arc<FramebufferState>,
    vbuf: &ResourceRef,
    ibuf: &ResourceRef,
    blended: bool,
) -> StateBlock {
    let mut viewports = [ViewportState::default(); MAX_VIEWPORTS];
    viewports[0] = ViewportState {
        scale: [W as f32 / 2.0, H as f32 / 2.0, 0.5],
        translate: [W as f32 / 2.0, H as f32 / 2.0, 0.5],
    };
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    if blended {
        let rt = &mut blend.rt[0];
        rt.blend_enable = true;
        rt.rgb_func = BlendFunc::Add;
        rt.rgb_src_factor = BlendFactor::SrcAlpha;
        rt.rgb_dst_factor = BlendFactor::InvSrcAlpha;
        rt.alpha_func = BlendFunc::Add;
        rt.alpha_src_factor = BlendFactor::One;
        rt.alpha_dst_factor = BlendFactor::InvSrcAlpha;
    }
    let el = |src_offset| VertexElement {
        src_offset,
        vertex_buffer_index: 0,
        src_format: Format::R32G32B32A32_FLOAT,
        instance_divisor: 0,
    };
    let mut vbs: VertexBufferSlots = std::array::from_fn(|_| VertexBufferBinding::default());
    vbs[0] = VertexBufferBinding {
        buffer: Some(vbuf.clone()),
        stride: STRIDE,
        buffer_offset: 0,
    };
    let (vs, fs) = shaders();
    StateBlock {
        pipeline: Arc::new(PipelineState {
            rasterizer: Arc::new(RasterizerState::default()),
            dsa: Arc::new(DepthStencilAlphaState::default()),
            blend: Arc::new(blend),
            velems: Arc::from(vec![el(0), el(16)]),
            vs,
            fs,
            framebuffer: fb.clone(),
            vertex_buffers: Arc::new(vbs),
            index_buffer: IndexBufferBinding {
                buffer: Some(ibuf.clone()),
                index_size: 4,
                offset: 0,
            },
            blend_color: BlendColor::default(),
            stencil_ref: StencilRef::default(),
            sample_mask: !0,
            min_samples: 1,
            clip: ClipState::default(),
            poly_stipple: PolyStipple::default(),
            viewports: Arc::new(viewports),
            scissors: Arc::new([ScissorState::default(); MAX_VIEWPORTS]),
        }),
        vs_resources: StageResources::default(),
        fs_resources: StageResources::default(),
        stream_output: None,
    }
}

/// The draw cut into jobs of `JOB_PRIMS` primitives (one restart run).
fn job_parts(info: &DrawInfo, topo: Topology) -> Vec<JobPart> {
    let total = topo.prims_in_run(info.count);
    (0..total.div_ceil(JOB_PRIMS))
        .map(|k| JobPart {
            command: 0,
            state: 0,
            instance: 0,
            run_start: 0,
            run_len: info.count,
            first_prim: k * JOB_PRIMS,
            num_prims: JOB_PRIMS.min(total - k * JOB_PRIMS),
        })
        .collect()
}

/// The covered groups of one fragment batch, as the tile pass cuts them.
struct Chunk {
    groups: Vec<FragGroup>,
    prims: Vec<BatchPrimRef>,
}

fn take_chunk(batch: &mut FragBatch, chunks: &mut Vec<Chunk>) {
    if !batch.groups.is_empty() {
        chunks.push(Chunk {
            groups: std::mem::take(&mut batch.groups),
            prims: std::mem::take(&mut batch.prims),
        });
    }
    batch.clear();
}

fn pipeline_stages(c: &mut Criterion) {
    let (vbytes, ibytes, count) = mesh();
    let fb = Arc::new(FramebufferState {
        width: W,
        height: H,
        layers: 0,
        samples: 0,
        cbufs: vec![Some(surface(Format::R8G8B8A8_UNORM, W, H))],
        zsbuf: None,
    });
    let vbuf = resource(
        ResourceTemplate::buffer(vbytes.len() as u32, BindFlags::VERTEX_BUFFER),
        &vbytes,
    );
    let ibuf = resource(
        ResourceTemplate::buffer(ibytes.len() as u32, BindFlags::INDEX_BUFFER),
        &ibytes,
    );
    // State 0 opaque (every stage), state 1 blended (second merge bench).
    let states: Vec<DerivedState> = [false, true]
        .map(|blended| DerivedState::new(Arc::new(state_block(&fb, &vbuf, &ibuf, blended))))
        .into();
    let ds = &states[0];
    let info = DrawInfo {
        mode: PrimType::Triangles,
        count,
        indexed: true,
        ..Default::default()
    };
    let grid = TileGrid::new(W, H);
    let topo = Topology::new(info.mode, ds.setup.flatshade_first);
    let parts = job_parts(&info, topo);
    let no_resources = ShaderResources::default();

    // Vertex and index buffers locked for reading, as the fetch system does.
    let locks = LockSet::acquire([(&vbuf, false), (&ibuf, false)]);
    let index = Some(IndexSource {
        bytes: locks.bytes(&ibuf),
        offset: 0,
        size: 4,
    });
    let buffers = [BufferView {
        bytes: locks.bytes(&vbuf),
        stride: STRIDE,
        offset: 0,
    }];

    // ---- Fetch ------------------------------------------------------------
    let mut dedup = VertexDedup::default();
    let mut jobs: Vec<Vec<Segment>> = parts
        .iter()
        .map(|part| {
            let (mut segs, mut used) = (Vec::new(), 0);
            assemble_part(*part, &info, topo, index, &mut dedup, &mut segs, &mut used);
            segs.truncate(used);
            for seg in &mut segs {
                fetch_segment(seg, &info, &ds.fetch.elements, &ds.shade.vs_info, &buffers);
            }
            segs
        })
        .collect();
    let segments: usize = jobs.iter().map(Vec::len).sum();
    let vertices: usize = jobs.iter().flatten().map(|s| s.vids.len()).sum();
    let triangles: usize = jobs.iter().flatten().map(|s| s.prims.len()).sum();

    let mut g = c.benchmark_group("fetch");
    g.throughput(Throughput::Elements(vertices as u64));
    g.bench_function("assemble_part", |b| {
        let mut segs = Vec::new();
        b.iter(|| {
            for part in &parts {
                let mut used = 0;
                assemble_part(*part, &info, topo, index, &mut dedup, &mut segs, &mut used);
                black_box(used);
            }
        })
    });
    g.bench_function("fetch_segment", |b| {
        b.iter(|| {
            for seg in jobs.iter_mut().flatten() {
                fetch_segment(seg, &info, &ds.fetch.elements, &ds.shade.vs_info, &buffers);
            }
        })
    });
    g.finish();

    // ---- Vertex shading ---------------------------------------------------
    for seg in jobs.iter_mut().flatten() {
        shade::shade_batch(&mut seg.batch, &ds.shade, &ds.block.vs, &no_resources);
    }
    let mut g = c.benchmark_group("vertex_shading");
    g.throughput(Throughput::Elements(vertices as u64));
    g.bench_function("shade_batch", |b| {
        b.iter(|| {
            for seg in jobs.iter_mut().flatten() {
                shade::shade_batch(&mut seg.batch, &ds.shade, &ds.block.vs, &no_resources);
            }
        })
    });
    g.finish();

    // ---- Clip -------------------------------------------------------------
    let mut clip_scratch = ClipScratch::default();
    let mut counters = ClipCounters::default();
    let clipped: Vec<ClippedPrims> = jobs
        .iter()
        .map(|segs| {
            let mut out = ClippedPrims::default();
            for seg in segs {
                clip_segment(seg, ds, 0, 0, &mut out, &mut clip_scratch, &mut counters);
            }
            out
        })
        .collect();
    let mut g = c.benchmark_group("clip");
    g.throughput(Throughput::Elements(triangles as u64));
    g.bench_function("clip_segment", |b| {
        let mut out = ClippedPrims::default();
        b.iter(|| {
            for segs in &jobs {
                out.verts.clear();
                out.prims.clear();
                for seg in segs {
                    clip_segment(seg, ds, 0, 0, &mut out, &mut clip_scratch, &mut counters);
                }
                black_box(&out);
            }
        })
    });
    g.finish();

    // ---- Setup ------------------------------------------------------------
    let mut binned: Vec<BinnedJob> = clipped
        .iter()
        .map(|cl| {
            let mut job = BinnedJob::default();
            setup_prims(cl, &states, &mut job.prims);
            job
        })
        .collect();
    let set_up: usize = binned.iter().map(|j| j.prims.prims.len()).sum();
    let mut g = c.benchmark_group("setup");
    g.throughput(Throughput::Elements(
        clipped.iter().map(|c| c.prims.len()).sum::<usize>() as u64,
    ));
    g.bench_function("setup_prims", |b| {
        let mut out = SetupPrims::default();
        b.iter(|| {
            for cl in &clipped {
                out.prims.clear();
                out.planes.clear();
                setup_prims(cl, &states, &mut out);
                black_box(&out);
            }
        })
    });
    g.finish();

    // ---- Bin --------------------------------------------------------------
    let mut bin_scratch = BinScratch::default();
    let not_counted: [bool; 0] = [];
    for job in &mut binned {
        bin_prims(
            &job.prims,
            &states,
            &grid,
            &not_counted,
            &mut bin_scratch,
            &mut job.bins,
        );
    }
    let entries: usize = binned.iter().map(|j| j.bins.entries.len()).sum();
    let mut g = c.benchmark_group("bin");
    g.throughput(Throughput::Elements(set_up as u64));
    g.bench_function("bin_prims", |b| {
        let mut out = JobBins::default();
        b.iter(|| {
            for job in &binned {
                bin_prims(
                    &job.prims,
                    &states,
                    &grid,
                    &not_counted,
                    &mut bin_scratch,
                    &mut out,
                );
                black_box(&out);
            }
        })
    });
    g.finish();

    // ---- Raster coverage ---------------------------------------------------
    // Batches as the tile pass cuts them (raster::raster_entry without early
    // depth or stipple): per tile, entries job by job, <= MAX_BATCH_GROUPS groups each.
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut coverage = Vec::new();
    let mut batch = FragBatch::default();
    for t in 0..grid.tiles() {
        let rect = grid.tile_rect(t);
        for (j, job) in binned.iter().enumerate() {
            for e in job.tile_entries(t) {
                cover_prim(
                    &job.prims.prims[e.prim as usize],
                    e.edge_mask,
                    &rect,
                    &mut coverage,
                );
                let r = BatchPrimRef {
                    job: j as u32,
                    prim: e.prim,
                };
                let mut pi = batch.push_prim(r);
                for cov in &coverage {
                    batch.groups.push(FragGroup {
                        x: cov.x,
                        y: cov.y,
                        mask: cov.mask,
                        prim: pi,
                    });
                    if batch.is_full() {
                        take_chunk(&mut batch, &mut chunks);
                        pi = batch.push_prim(r);
                    }
                }
            }
        }
        take_chunk(&mut batch, &mut chunks);
    }
    let groups: usize = chunks.iter().map(|c| c.groups.len()).sum();
    // The mesh covers every pixel exactly once (fill rule).
    let mut hits = vec![0u8; (W * H) as usize];
    for g in chunks.iter().flat_map(|c| &c.groups) {
        for (l, (&dx, &dy)) in FRAG_LANE_X.iter().zip(&FRAG_LANE_Y).enumerate() {
            if g.mask & (1 << l) != 0 {
                hits[((g.y as u32 + dy) * W + g.x as u32 + dx) as usize] += 1;
            }
        }
    }
    assert!(
        hits.iter().all(|&h| h == 1),
        "mesh must cover each pixel once"
    );
    let pixels = hits.len();
    eprintln!(
        "pipeline_stages: {} jobs, {segments} segments, {vertices} vertices, {triangles} \
         triangles ({set_up} set up), {entries} bin entries, {} fragment batches of \
         {groups} 4x2 groups, {pixels} covered pixels",
        parts.len(),
        chunks.len(),
    );

    let mut g = c.benchmark_group("raster");
    g.throughput(Throughput::Elements(set_up as u64));
    g.bench_function("cover_prim", |b| {
        b.iter(|| {
            for t in 0..grid.tiles() {
                let rect = grid.tile_rect(t);
                for job in &binned {
                    for e in job.tile_entries(t) {
                        let p = &job.prims.prims[e.prim as usize];
                        cover_prim(p, e.edge_mask, &rect, &mut coverage);
                        black_box(&coverage);
                    }
                }
            }
        })
    });
    g.finish();

    // ---- Fragment shading ----------------------------------------------------
    let mut g = c.benchmark_group("fragment_shading");
    g.throughput(Throughput::Elements(pixels as u64));
    g.bench_function("shade_batch", |b| {
        b.iter(|| {
            for ch in &mut chunks {
                std::mem::swap(&mut batch.groups, &mut ch.groups);
                std::mem::swap(&mut batch.prims, &mut ch.prims);
                batch.state = Some(0);
                fragment::shade_batch(&mut batch, ds, &binned, &no_resources);
                black_box(&batch.outputs);
                std::mem::swap(&mut batch.groups, &mut ch.groups);
                std::mem::swap(&mut batch.prims, &mut ch.prims);
            }
        })
    });
    g.finish();

    // ---- Merge ------------------------------------------------------------
    let stores: Vec<Vec<StoreGroup>> = chunks
        .iter()
        .map(|c| {
            c.groups
                .iter()
                .map(|g| StoreGroup {
                    x: g.x,
                    y: g.y,
                    mask: g.mask,
                })
                .collect()
        })
        .collect();
    // One batch's worth of colours (`[component][group]`, any batch size).
    let outputs: Vec<Lanes> = (0..4 * MAX_BATCH_GROUPS)
        .map(|i| Lanes::new(std::array::from_fn(|l| ((i * 8 + l) % 251) as f32 / 250.0)))
        .collect();
    // The render target locked for writing, as the tile pass does.
    let cbuf = fb.cbufs[0].clone().expect("colour buffer");
    let target_locks = LockSet::acquire([(&cbuf.resource, true)]);
    let (ptr, len) = target_locks.target(&cbuf.resource).expect("locked");
    let targets = Targets {
        color: vec![Some(
            ColorTarget::new(
                TargetMemory::for_surface(&cbuf, ptr, len).expect("surface"),
                cbuf.desc.format,
            )
            .expect("RGBA8 target"),
        )],
        depth: None,
    };
    let mut g = c.benchmark_group("merge");
    g.throughput(Throughput::Elements(pixels as u64));
    for (name, state) in [("store_opaque", 0), ("store_blend", 1)] {
        let plan = &states[state].merge;
        g.bench_function(name, |b| {
            b.iter(|| {
                for s in &stores {
                    store_batch(plan, &targets, s, &outputs);
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, pipeline_stages);
criterion_main!(benches);
