//! The work budget (`Context::set_work_budget`, systems/src/budget.rs):
//! huge but valid draws and launches stop at a safe point, the context is
//! lost (every call `Error::DeviceLost`), and nothing else is affected —
//! another context of the same screen renders, shared resources the lost
//! work did not write keep their bytes.
//!
//! The time assertions are bounds, not benchmarks: without the budget each
//! of these runs for minutes.

mod support;

use std::time::{Duration, Instant};

use ferropipe::*;
use ferropipe::{
    ComputeState, Context, DrawInfo, Error, GridInfo, IndexBuffer, Resource, ResourceTemplate,
    Screen, ScreenConfig, ShaderBuffer, ShaderCode, VertexBuffer, WorkBudget,
};

const W: u32 = 32;
const H: u32 = 32;
/// Well under what any of these draws would take unbounded (minutes).
const BOUND: Duration = Duration::from_secs(5);

/// A context on `screen` drawing into its own RGBA8 target with the
/// pass-through shaders, reading vertex buffer `vb`.
fn context(screen: &Screen, vb: &Resource, rast: &RasterizerState) -> (Context, Resource) {
    let mut ctx = screen.context_create().unwrap();
    let (rt, _) = support::bind_rgba8_target(screen, &mut ctx, W, H, None);
    let mut blend = BlendState::default();
    blend.rt[0].colormask = 0xf;
    support::bind_blend_and_default_dsa(&mut ctx, &blend);
    let r = ctx.create_rasterizer_state(rast).unwrap();
    ctx.bind_rasterizer_state(Some(r)).unwrap();
    support::bind_vec4_pair_elements(&mut ctx);
    support::bind_pass_shaders(&mut ctx);
    ctx.set_vertex_buffers(
        0,
        &[VertexBuffer {
            buffer: Some(vb),
            stride: 32,
            buffer_offset: 0,
        }],
    )
    .unwrap();
    (ctx, rt)
}

/// Three vertices of a green triangle covering the lower-left half of the
/// target: 96 bytes, the "tiny buffer" a 2^31-vertex draw runs over.
fn tiny_vertex_buffer(screen: &Screen) -> (Resource, Vec<u8>) {
    let g = [0.0f32, 1.0, 0.0, 1.0];
    let data: Vec<u8> = [[-1.0f32, -1.0], [1.0, -1.0], [-1.0, 1.0]]
        .iter()
        .flat_map(|p| [p[0], p[1], 0.5, 1.0, g[0], g[1], g[2], g[3]])
        .flat_map(f32::to_le_bytes)
        .collect();
    let vb = screen
        .resource_create(&ResourceTemplate::buffer(
            data.len() as u32,
            BindFlags::VERTEX_BUFFER | BindFlags::INDEX_BUFFER,
        ))
        .unwrap();
    (vb, data)
}

fn read_buffer(ctx: &mut Context, r: &Resource) -> Vec<u8> {
    let n = r.template().width0 as i32;
    let t = ctx
        .transfer_map(r, 0, TransferFlags::READ, &PipeBox::new_1d(0, n))
        .unwrap();
    let v = t.data().to_vec();
    ctx.transfer_unmap(t).unwrap();
    v
}

fn is_lost<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::DeviceLost { .. }))
}

/// Every kind of call on a lost context returns `DeviceLost`.
fn assert_stays_lost(ctx: &mut Context, rt: &Resource, vb: &Resource) {
    assert!(ctx.lost_reason().is_some());
    assert!(is_lost(ctx.flush()));
    assert!(is_lost(ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: 3,
        ..Default::default()
    })));
    assert!(is_lost(ctx.create_blend_state(&BlendState::default())));
    assert!(is_lost(ctx.bind_blend_state(None)));
    assert!(is_lost(
        ctx.set_viewport_states(0, &[ViewportState::default()])
    ));
    assert!(is_lost(ctx.clear(
        ClearFlags::COLOR,
        &ColorUnion::float([0.0; 4]),
        1.0,
        0
    )));
    assert!(is_lost(ctx.transfer_map(
        rt,
        0,
        TransferFlags::READ,
        &PipeBox::new_2d(0, 0, 1, 1)
    )));
    assert!(is_lost(ctx.buffer_subdata(vb, 0, &[0; 4])));
    assert!(is_lost(ctx.launch_grid(&GridInfo::default())));
    assert!(is_lost(ctx.set_work_budget(WorkBudget::default())));
    // Still lost after all that.
    assert!(is_lost(ctx.flush()));
}

#[test]
fn huge_draws_over_a_tiny_buffer_lose_only_their_context() {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let (vb, data) = tiny_vertex_buffer(&screen);
    let (mut good, good_rt) = context(&screen, &vb, &RasterizerState::default());
    good.buffer_subdata(&vb, 0, &data).unwrap();

    let stippled = RasterizerState {
        line_stipple_enable: true,
        line_stipple_factor: 1,
        line_stipple_pattern: 0xf0f0,
        ..Default::default()
    };
    let huge = 1u32 << 31;
    let cases: [(&str, RasterizerState, DrawInfo); 5] = [
        (
            "2^31 triangles' vertices",
            RasterizerState::default(),
            DrawInfo {
                mode: PrimType::Triangles,
                count: huge,
                ..Default::default()
            },
        ),
        (
            "2^32-1 points",
            RasterizerState::default(),
            DrawInfo {
                mode: PrimType::Points,
                count: u32::MAX,
                ..Default::default()
            },
        ),
        (
            // One job may not split a stippled strip: the planner must
            // refuse it before assembling 2^31 primitives.
            "a stippled 2^31-vertex line strip",
            stippled,
            DrawInfo {
                mode: PrimType::LineStrip,
                count: huge,
                ..Default::default()
            },
        ),
        (
            // Restart runs are found without reading 2^32-1 indices.
            "2^32-1 restart-indexed triangle strip vertices",
            RasterizerState::default(),
            DrawInfo {
                mode: PrimType::TriangleStrip,
                count: u32::MAX,
                indexed: true,
                primitive_restart: true,
                restart_index: 0xffff,
                ..Default::default()
            },
        ),
        (
            "2^31 instances of a triangle",
            RasterizerState::default(),
            DrawInfo {
                mode: PrimType::Triangles,
                count: 3,
                instance_count: huge,
                ..Default::default()
            },
        ),
    ];
    for (what, rast, info) in cases {
        let (mut lost, lost_rt) = context(&screen, &vb, &rast);
        lost.set_index_buffer(Some(IndexBuffer {
            buffer: &vb,
            index_size: 2,
            offset: 0,
        }))
        .unwrap();
        lost.set_work_budget(WorkBudget {
            units: Some(100_000),
            time: None,
        })
        .unwrap();
        let t = Instant::now();
        lost.draw_vbo(&info).unwrap();
        let r = lost.flush();
        assert!(
            matches!(&r, Err(Error::DeviceLost { call: "flush", reason }) if reason.contains("100000")),
            "{what}: {r:?}"
        );
        assert!(t.elapsed() < BOUND, "{what}: took {:?}", t.elapsed());
        assert_stays_lost(&mut lost, &lost_rt, &vb);
    }

    // A wall-clock deadline stops the same draw (timing-dependent where it
    // stops, not whether).
    let (mut lost, lost_rt) = context(&screen, &vb, &RasterizerState::default());
    lost.set_work_budget(WorkBudget {
        units: None,
        time: Some(Duration::from_millis(50)),
    })
    .unwrap();
    let t = Instant::now();
    lost.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: huge,
        ..Default::default()
    })
    .unwrap();
    let r = lost.flush();
    assert!(
        matches!(&r, Err(Error::DeviceLost { reason, .. }) if reason.contains("deadline")),
        "{r:?}"
    );
    assert!(t.elapsed() < BOUND, "deadline: took {:?}", t.elapsed());
    assert_stays_lost(&mut lost, &lost_rt, &vb);
    drop(lost);

    // The other context, on the same screen, with a generous budget:
    // renders its triangle exactly, and the shared vertex buffer the lost
    // draws read is intact.
    good.set_work_budget(WorkBudget {
        units: Some(100_000),
        time: Some(Duration::from_secs(60)),
    })
    .unwrap();
    good.clear(
        ClearFlags::COLOR,
        &ColorUnion::float([0.0, 0.0, 0.0, 1.0]),
        1.0,
        0,
    )
    .unwrap();
    good.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: 3,
        ..Default::default()
    })
    .unwrap();
    let px = support::read_level0(&mut good, &good_rt, W, H);
    let at = |x: u32, y: u32| {
        let o = ((y * W + x) * 4) as usize;
        [px[o], px[o + 1], px[o + 2], px[o + 3]]
    };
    // Window y grows with NDC y (viewport scale +h/2): the triangle covers
    // the pixels with x + y < 31.
    assert_eq!(at(2, 2), [0, 255, 0, 255]);
    assert_eq!(at(29, 29), [0, 0, 0, 255]);
    let green = (0..W * H)
        .filter(|&i| at(i % W, i / W) == [0, 255, 0, 255])
        .count();
    assert!((400..=560).contains(&green), "{green} green pixels");
    assert_eq!(read_buffer(&mut good, &vb), data);
}

/// A draw inside its budget renders exactly as without one.
#[test]
fn a_draw_inside_its_budget_renders_the_same() {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let (vb, data) = tiny_vertex_buffer(&screen);
    let mut images = Vec::new();
    for budget in [
        WorkBudget::default(),
        WorkBudget {
            // 1 primitive + the bin entries of one clear and one triangle over
            // a 32x32 target (one tile each).
            units: Some(3),
            time: Some(Duration::from_secs(60)),
        },
    ] {
        let (mut ctx, rt) = context(&screen, &vb, &RasterizerState::default());
        ctx.buffer_subdata(&vb, 0, &data).unwrap();
        ctx.set_work_budget(budget).unwrap();
        ctx.clear(ClearFlags::COLOR, &ColorUnion::float([0.0; 4]), 1.0, 0)
            .unwrap();
        ctx.draw_vbo(&DrawInfo {
            mode: PrimType::Triangles,
            count: 3,
            ..Default::default()
        })
        .unwrap();
        images.push(support::read_level0(&mut ctx, &rt, W, H));
    }
    assert_eq!(images[0], images[1]);
    // One unit less and the same flush is lost: units are exact.
    let (mut ctx, _rt) = context(&screen, &vb, &RasterizerState::default());
    ctx.set_work_budget(WorkBudget {
        units: Some(2),
        time: None,
    })
    .unwrap();
    ctx.clear(ClearFlags::COLOR, &ColorUnion::float([0.0; 4]), 1.0, 0)
        .unwrap();
    ctx.draw_vbo(&DrawInfo {
        mode: PrimType::Triangles,
        count: 3,
        ..Default::default()
    })
    .unwrap();
    assert!(is_lost(ctx.flush()));
}

const SPIN: &str = "
@group(3) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var x = g.x;
    for (var i = 0u; i < 4096u; i = i + 1u) {
        x = x * 1664525u + 1013904223u;
    }
    out[g.x % 64u] = x;
}";

#[test]
fn launch_grid_obeys_the_budget() {
    let screen = Screen::new(ScreenConfig {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let out = screen
        .resource_create(&ResourceTemplate::buffer(256, BindFlags::SHADER_BUFFER))
        .unwrap();
    let setup = |budget: WorkBudget| {
        let mut ctx = screen.context_create().unwrap();
        let cs = ctx
            .create_compute_state(&ComputeState {
                code: ShaderCode::Wgsl {
                    code: SPIN.into(),
                    entry_point: "main".into(),
                },
                req_local_mem: 0,
                req_input_mem: 0,
            })
            .unwrap();
        ctx.bind_compute_state(Some(cs)).unwrap();
        ctx.set_shader_buffers(
            ShaderType::Compute,
            0,
            &[Some(ShaderBuffer {
                buffer: &out,
                offset: 0,
                size: 256,
            })],
            !0,
        )
        .unwrap();
        ctx.set_work_budget(budget).unwrap();
        ctx
    };
    // 65535 x 64 invocations of 4096 iterations: minutes, unbounded.
    let big = GridInfo {
        work_dim: 1,
        block: [64, 1, 1],
        grid: [65535, 1, 1],
        ..Default::default()
    };
    let mut ctx = setup(WorkBudget::default());
    ctx.clear_buffer(&out, 0, 256, &[0xab]).unwrap();
    let before = read_buffer(&mut ctx, &out);

    // Units: known before the launch, so no workgroup runs at all.
    let mut lost = setup(WorkBudget {
        units: Some(1 << 20),
        time: None,
    });
    let r = lost.launch_grid(&big);
    assert!(
        matches!(&r, Err(Error::DeviceLost { call: "launch_grid", reason }) if reason.contains("4194240")),
        "{r:?}"
    );
    assert_eq!(read_buffer(&mut ctx, &out), before);
    assert!(is_lost(lost.launch_grid(&big)));
    assert!(is_lost(lost.flush()));

    // Deadline: stops between workgroups.
    let mut lost = setup(WorkBudget {
        units: None,
        time: Some(Duration::from_millis(50)),
    });
    let t = Instant::now();
    let r = lost.launch_grid(&big);
    assert!(
        matches!(&r, Err(Error::DeviceLost { reason, .. }) if reason.contains("deadline")),
        "{r:?}"
    );
    assert!(t.elapsed() < BOUND, "took {:?}", t.elapsed());
    assert!(is_lost(lost.flush()));

    // Within budget (64 invocations): runs and writes.
    let mut ok = setup(WorkBudget {
        units: Some(64),
        time: Some(Duration::from_secs(60)),
    });
    ok.launch_grid(&GridInfo {
        grid: [1, 1, 1],
        ..big
    })
    .unwrap();
    assert_ne!(read_buffer(&mut ok, &out), before);
}
