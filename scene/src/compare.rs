//! Comparison with a reference output directory, by exactly the rule of
//! `../shared/scenes/reference/compare.py`:
//!
//! * the reference's files are those its `manifest.json` lists (else every
//!   `*.png`, `*.depth.f32`, `*.stencil.u8` in it);
//! * colour: a pixel exceeds when its largest channel difference is above
//!   `tol` (1, in 8-bit units); depth: absolute difference above
//!   `depth_tol` (1e-5, NaN counts as infinite); stencil: any difference;
//!   an output passes when at most `max_frac` (0.1%) of its values exceed;
//!   a missing output or a size mismatch fails;
//! * buffer outputs (`*.bin`) byte for byte: every differing byte exceeds
//!   and one is a failure (sizes must match too); with `bin_f32_tol` they
//!   are read as little-endian f32 and a value exceeds when it differs by
//!   more than that (NaN matches only NaN), compare.py's `--bin-f32-tol`;
//! * `queries.jsonl` must match line for line (Python equality), except
//!   queries the manifest marks nondeterministic, which need only be there.

use std::path::Path;

use serde_json::Value;

use super::ReplayReport;
use super::output::{OutputPixels, py_eq, read_png};

/// The tolerances (compare.py's defaults via [`Default`]).
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Largest per-channel difference (out of 255) a pixel may have and
    /// still match: 1.
    pub tol: u8,
    /// Largest fraction of pixels that may exceed `tol`: 0.001 (0.1 %).
    pub max_frac: f64,
    /// Largest depth difference: 1e-5.
    pub depth_tol: f64,
    /// `--bin-f32-tol`: compare `*.bin` as f32 with this absolute
    /// tolerance instead of byte for byte (`None`, the default).
    pub bin_f32_tol: Option<f64>,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            tol: 1,
            max_frac: 0.001,
            depth_tol: 1e-5,
            bin_f32_tol: None,
        }
    }
}

/// One compared file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileResult {
    /// The file name (`color.png`, `queries.txt`, ...).
    pub file: String,
    /// Whether it matched within the tolerances.
    pub pass: bool,
    /// "4096 values, 3 exceed tolerance, max diff 7", or the error.
    pub message: String,
}

/// Compares a replay's in-memory outputs and queries with `ref_dir`.
pub fn compare_with_reference(
    report: &ReplayReport,
    ref_dir: &Path,
    t: Tolerance,
) -> Vec<FileResult> {
    let (files, nondet) = reference_files(ref_dir);
    let mut results = Vec::new();
    for file in files {
        let path = ref_dir.join(&file);
        let res = compare_file(report, &file, &path, t);
        // buffers are exact: one value beyond tolerance fails
        let exact = file.ends_with(".bin");
        results.push(match res {
            Ok((count, exceed, max)) => FileResult {
                pass: if exact {
                    exceed == 0
                } else {
                    exceed as f64 <= t.max_frac * count as f64
                },
                message: format!("{count} values, {exceed} exceed tolerance, max diff {max}"),
                file,
            },
            Err(e) => FileResult {
                file,
                pass: false,
                message: e,
            },
        });
    }
    let (pass, message) = compare_queries(report, ref_dir, &nondet);
    results.push(FileResult {
        file: "queries.jsonl".into(),
        pass,
        message,
    });
    results
}

/// The files a reference holds and its nondeterministic query ids.
fn reference_files(ref_dir: &Path) -> (Vec<String>, Vec<String>) {
    if let Ok(text) = std::fs::read_to_string(ref_dir.join("manifest.json"))
        && let Ok(m) = serde_json::from_str::<Value>(&text)
    {
        let files = m["outputs"]
            .as_array()
            .map(|outs| {
                outs.iter()
                    .flat_map(|o| o["files"].as_array().cloned().unwrap_or_default())
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let nondet = m["nondeterministic_queries"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return (files, nondet);
    }
    let mut files: Vec<String> = std::fs::read_dir(ref_dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| {
                    (n.ends_with(".png") && !n.ends_with(".diff.png"))
                        || n.ends_with(".depth.f32")
                        || n.ends_with(".stencil.u8")
                        || n.ends_with(".bin")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    (files, Vec::new())
}

/// (values, values exceeding, max difference as text) for one file.
fn compare_file(
    report: &ReplayReport,
    file: &str,
    ref_path: &Path,
    t: Tolerance,
) -> Result<(usize, usize, String), String> {
    let (name, kind) = if let Some(n) = file.strip_suffix(".png") {
        (n, 0)
    } else if let Some(n) = file.strip_suffix(".depth.f32") {
        (n, 1)
    } else if let Some(n) = file.strip_suffix(".stencil.u8") {
        (n, 2)
    } else if let Some(n) = file.strip_suffix(".bin") {
        (n, 3)
    } else {
        return Err("unknown file kind".into());
    };
    let out = report
        .outputs
        .iter()
        .find(|o| o.name == name)
        .ok_or("missing")?;
    match (kind, &out.pixels) {
        (0, OutputPixels::Color(ours)) => {
            let (w, h, theirs) = read_png(ref_path)?;
            if (w, h) != (out.width, out.height) {
                return Err(format!(
                    "size {}x{} != reference {w}x{h}",
                    out.width, out.height
                ));
            }
            let mut exceed = 0;
            let mut max = 0u8;
            for (a, b) in ours.chunks_exact(4).zip(theirs.chunks_exact(4)) {
                let d = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| x.abs_diff(*y))
                    .max()
                    .unwrap_or(0);
                max = max.max(d);
                if d > t.tol {
                    exceed += 1;
                }
            }
            Ok((w as usize * h as usize, exceed, max.to_string()))
        }
        (1, OutputPixels::DepthStencil { depth: Some(z), .. }) => {
            let bytes = std::fs::read(ref_path).map_err(|e| e.to_string())?;
            let theirs: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if theirs.len() != z.len() {
                return Err(format!("{} values != reference {}", z.len(), theirs.len()));
            }
            let mut exceed = 0;
            let mut max = 0f64;
            for (a, b) in z.iter().zip(&theirs) {
                let d = (*a as f64 - *b as f64).abs();
                let d = if d.is_nan() { f64::INFINITY } else { d };
                max = max.max(d);
                if d > t.depth_tol {
                    exceed += 1;
                }
            }
            Ok((z.len(), exceed, format!("{max:.3e}")))
        }
        (
            2,
            OutputPixels::DepthStencil {
                stencil: Some(s), ..
            },
        ) => {
            let theirs = std::fs::read(ref_path).map_err(|e| e.to_string())?;
            if theirs.len() != s.len() {
                return Err(format!("{} values != reference {}", s.len(), theirs.len()));
            }
            let exceed = s.iter().zip(&theirs).filter(|(a, b)| a != b).count();
            let max = s
                .iter()
                .zip(&theirs)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap_or(0);
            Ok((s.len(), exceed, max.to_string()))
        }
        (3, OutputPixels::Bytes(ours)) => {
            let theirs = std::fs::read(ref_path).map_err(|e| e.to_string())?;
            compare_bytes(ours, &theirs, t.bin_f32_tol)
        }
        _ => Err("missing".into()),
    }
}

/// compare.py's `compare_bin`: (values, values exceeding, max difference).
fn compare_bytes(
    ours: &[u8],
    theirs: &[u8],
    f32_tol: Option<f64>,
) -> Result<(usize, usize, String), String> {
    if ours.len() != theirs.len() {
        return Err(format!(
            "{} bytes != reference {}",
            ours.len(),
            theirs.len()
        ));
    }
    match f32_tol {
        Some(tol) if ours.len().is_multiple_of(4) => {
            let f = |c: &[u8]| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            let mut exceed = 0;
            let mut max = 0f64;
            for (a, b) in ours.chunks_exact(4).zip(theirs.chunks_exact(4)) {
                let (x, y) = (f(a), f(b));
                let d = if x == y || (x.is_nan() && y.is_nan()) {
                    0.0
                } else {
                    let d = (x - y).abs();
                    if d.is_nan() { f64::INFINITY } else { d }
                };
                max = max.max(d);
                if d > tol {
                    exceed += 1;
                }
            }
            Ok((ours.len() / 4, exceed, format!("{max:.3}")))
        }
        _ => {
            let exceed = ours.iter().zip(theirs).filter(|(a, b)| a != b).count();
            let max = ours
                .iter()
                .zip(theirs)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap_or(0);
            Ok((ours.len(), exceed, max.to_string()))
        }
    }
}

fn compare_queries(report: &ReplayReport, ref_dir: &Path, nondet: &[String]) -> (bool, String) {
    let refs: Vec<Value> = std::fs::read_to_string(ref_dir.join("queries.jsonl"))
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default();
    let ours = &report.queries;
    if refs.len() != ours.len() {
        return (
            false,
            format!("{} results, reference has {}", ours.len(), refs.len()),
        );
    }
    for (k, (r, (id, v))) in refs.iter().zip(ours).enumerate() {
        let rid = r["query"].as_str().unwrap_or_default();
        if rid != id {
            return (
                false,
                format!("line {}: query {id:?}, reference {rid:?}", k + 1),
            );
        }
        if nondet.iter().any(|n| n == id) {
            continue;
        }
        let mine = serde_json::json!({"query": id, "result": v});
        if !py_eq(r, &mine) {
            return (false, format!("line {}: {mine} != reference {r}", k + 1));
        }
    }
    (true, format!("{} results match", refs.len()))
}
