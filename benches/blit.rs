//! `Context::blit` at 1080p: the byte-copy path (same format, 1:1), a
//! format conversion (RGBA8 → BGRA8 and → RGBA16F), and scaled blits
//! (nearest and linear 960x540 → 1920x1080).  Throughput is destination
//! bytes; a 1:1 copy should run near memory bandwidth.
//!
//! `cargo bench -p ferropipe --bench blit` (threads: FERROPIPE_THREADS, default
//! all CPUs).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferropipe::{
    BindFlags, BlitInfo, BlitSide, Format, PipeBox, Resource, ResourceTemplate, Screen,
    ScreenConfig, TexFilter,
};

const W: u32 = 1920;
const H: u32 = 1080;

fn tex(s: &Screen, format: Format, w: u32, h: u32) -> Resource {
    s.resource_create(&ResourceTemplate::texture_2d(
        format,
        w,
        h,
        BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
    ))
    .unwrap()
}

fn blits(c: &mut Criterion) {
    let threads = std::env::var("FERROPIPE_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let screen = Screen::new(ScreenConfig {
        threads,
        ..Default::default()
    })
    .unwrap();
    let mut ctx = screen.context_create().unwrap();
    let src = tex(&screen, Format::R8G8B8A8_UNORM, W, H);
    let bytes: Vec<u8> = (0..W * H * 4).map(|i| (i * 7 % 251) as u8).collect();
    ctx.texture_subdata(
        &src,
        0,
        &PipeBox::new_2d(0, 0, W as i32, H as i32),
        &bytes,
        0,
        0,
    )
    .unwrap();
    let half = tex(&screen, Format::R8G8B8A8_UNORM, W / 2, H / 2);
    let full = PipeBox::new_2d(0, 0, W as i32, H as i32);
    let half_box = PipeBox::new_2d(0, 0, W as i32 / 2, H as i32 / 2);

    let mut g = c.benchmark_group("blit_1080p");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Bytes(u64::from(W * H * 4)));
    let cases: [(&str, Format, &Resource, PipeBox, TexFilter); 5] = [
        (
            "copy_rgba8",
            Format::R8G8B8A8_UNORM,
            &src,
            full,
            TexFilter::Nearest,
        ),
        (
            "rgba8_to_bgra8",
            Format::B8G8R8A8_UNORM,
            &src,
            full,
            TexFilter::Nearest,
        ),
        (
            "rgba8_to_rgba16f",
            Format::R16G16B16A16_FLOAT,
            &src,
            full,
            TexFilter::Nearest,
        ),
        (
            "upscale_nearest",
            Format::R8G8B8A8_UNORM,
            &half,
            half_box,
            TexFilter::Nearest,
        ),
        (
            "upscale_linear",
            Format::R8G8B8A8_UNORM,
            &half,
            half_box,
            TexFilter::Linear,
        ),
    ];
    for (name, format, s, sbox, filter) in cases {
        let dst = tex(&screen, format, W, H);
        let mut info = BlitInfo::new(BlitSide::new(&dst, 0, full), BlitSide::new(s, 0, sbox));
        info.filter = filter;
        g.bench_function(name, |b| b.iter(|| ctx.blit(black_box(&info)).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, blits);
criterion_main!(benches);
