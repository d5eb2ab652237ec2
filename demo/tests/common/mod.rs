//! Helpers shared by the demo's integration tests: PNG loading, pixel
//! statistics over regions, running the demo binary with a deadline.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// An RGBA8 image.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    pub fn load(path: &Path) -> Image {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
        let mut reader = decoder.read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
        let info = reader.next_frame(&mut buf).expect("png data");
        buf.truncate(info.buffer_size());
        assert_eq!(info.color_type, png::ColorType::Rgba, "{}", path.display());
        Image {
            width: info.width,
            height: info.height,
            rgba: buf,
        }
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.rgba[i..i + 4].try_into().unwrap()
    }

    /// Pixels of the rectangle `[x0, y0, x1, y1)` (clamped to the image).
    pub fn region(&self, r: [i64; 4]) -> Vec<[u8; 4]> {
        let cl = |v: i64, max: u32| v.clamp(0, max as i64) as u32;
        let (x0, y0, x1, y1) = (
            cl(r[0], self.width),
            cl(r[1], self.height),
            cl(r[2], self.width),
            cl(r[3], self.height),
        );
        let mut out = Vec::new();
        for y in y0..y1 {
            for x in x0..x1 {
                out.push(self.pixel(x, y));
            }
        }
        out
    }
}

/// Number of distinct RGB colours.
pub fn distinct_colors(px: &[[u8; 4]]) -> usize {
    let mut v: Vec<u32> = px
        .iter()
        .map(|p| u32::from_le_bytes([p[0], p[1], p[2], 0]))
        .collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// The most common RGB colour and the fraction of pixels that have it.
pub fn dominant(px: &[[u8; 4]]) -> ([u8; 3], f64) {
    let mut v: Vec<u32> = px
        .iter()
        .map(|p| u32::from_le_bytes([p[0], p[1], p[2], 0]))
        .collect();
    v.sort_unstable();
    let (mut best, mut best_n, mut i) = (0u32, 0usize, 0usize);
    while i < v.len() {
        let j = v[i..]
            .iter()
            .position(|&c| c != v[i])
            .map_or(v.len(), |k| i + k);
        if j - i > best_n {
            best = v[i];
            best_n = j - i;
        }
        i = j;
    }
    let b = best.to_le_bytes();
    ([b[0], b[1], b[2]], best_n as f64 / px.len().max(1) as f64)
}

/// Fraction of pixels whose colour is saturated (max - min channel > 80):
/// flamegraph bars, a lit coloured mesh; not text, not grey panels.
pub fn saturated_fraction(px: &[[u8; 4]]) -> f64 {
    let n = px
        .iter()
        .filter(|p| {
            let (mx, mn) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
            mx - mn > 80
        })
        .count();
    n as f64 / px.len().max(1) as f64
}

/// A fresh, empty directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The demo binary.
pub fn demo() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_demo"));
    c.stdin(Stdio::null());
    c
}

/// Waits for `child` with a deadline; kills it (and fails) past it.
pub fn wait_with_deadline(mut child: Child, deadline: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => return child.wait_with_output().expect("output"),
            None if start.elapsed() > deadline => {
                let _ = child.kill();
                let out = child.wait_with_output().expect("output");
                panic!(
                    "{what} did not finish in {deadline:?}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Runs the demo with `args` and a deadline.
pub fn run_demo(args: &[&str], env: &[(&str, Option<&str>)], deadline: Duration) -> Output {
    let mut cmd = demo();
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let child = cmd.spawn().expect("spawn demo");
    wait_with_deadline(child, deadline, "demo")
}

/// Runs `demo --headless ARGS --out DIR` and requires success.
pub fn render_headless(dir: &Path, args: &[&str]) {
    let mut all = vec!["--headless"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", dir.to_str().expect("utf-8 path")]);
    let out = run_demo(&all, &[], Duration::from_secs(120));
    assert!(
        out.status.success(),
        "demo {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
