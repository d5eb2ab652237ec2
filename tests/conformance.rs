//! Conformance: every scene under `tests/scenes/conformance/` replayed and
//! compared with its llvmpipe reference (`ref/NAME/`) by compare.py's rule
//! (`ferropipe_scene::compare`).
//!
//! `tests/conformance-fails.txt` lists the scenes expected to fail, one per
//! line as `name: reason` (like Mesa CI's `*-fails.txt`).  The test fails
//! when a scene off the list fails (a regression) *or* a scene on the list
//! passes (progress: take it off the list), so the list is always the
//! truth.  Scenes that stop with "unsupported" (exit 3) are failures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ferropipe_scene::compare::{Tolerance, compare_with_reference};
use ferropipe_scene::{ReplayOptions, ReplayReport, Scene, SceneError, replay};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests")
}

fn scenes() -> Vec<(String, PathBuf)> {
    let dir = root().join("scenes/conformance");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    v.sort();
    v
}

/// The expected-failure list: name → reason.
fn expected_failures() -> BTreeMap<String, String> {
    let path = root().join("conformance-fails.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut m = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, reason) = line.split_once(':').unwrap_or((line, ""));
        let prev = m.insert(name.trim().to_string(), reason.trim().to_string());
        assert!(
            prev.is_none(),
            "{}:{}: {name} listed twice",
            path.display(),
            n + 1
        );
    }
    m
}

/// Replays a scene as llvmpipe renders it: the references are llvmpipe's,
/// which draws `poly_smooth` polygons as if the flag were off (scene
/// `smooth_polygon`), where ferropipe's default is GL's analytic coverage.
fn run(path: &Path, threads: usize) -> Result<ReplayReport, SceneError> {
    let scene = Scene::load(path)?;
    replay(
        &scene,
        &ReplayOptions {
            threads,
            poly_smooth: Some(ferropipe::PolySmooth::Off),
            ..Default::default()
        },
    )
}

#[test]
fn conformance_scenes_match_llvmpipe() {
    let expected = expected_failures();
    let mut unexpected_failures = Vec::new();
    let mut unexpected_passes = Vec::new();
    let mut summary = Vec::new();
    let all = scenes();
    for (name, path) in &all {
        let ref_dir = root().join("scenes/conformance/ref").join(name);
        let verdict: Result<(), String> = match run(path, 2) {
            Err(e) => Err(format!("exit {}: {e}", e.exit_code())),
            Ok(report) => {
                let failed: Vec<String> =
                    compare_with_reference(&report, &ref_dir, Tolerance::default())
                        .into_iter()
                        .filter(|r| !r.pass)
                        .map(|r| format!("{}: {}", r.file, r.message))
                        .collect();
                if failed.is_empty() {
                    Ok(())
                } else {
                    Err(failed.join("; "))
                }
            }
        };
        let listed = expected.contains_key(name);
        match (&verdict, listed) {
            (Ok(()), false) => summary.push(format!("PASS  {name}")),
            (Ok(()), true) => {
                summary.push(format!("XPASS {name}"));
                unexpected_passes.push(name.clone());
            }
            (Err(why), true) => summary.push(format!("xfail {name}: {why}")),
            (Err(why), false) => {
                summary.push(format!("FAIL  {name}: {why}"));
                unexpected_failures.push(format!("{name}: {why}"));
            }
        }
    }
    let stale: Vec<&String> = expected
        .keys()
        .filter(|k| !all.iter().any(|(n, _)| n == *k))
        .collect();
    let passed = summary.iter().filter(|s| s.starts_with("PASS")).count();
    eprintln!("{}", summary.join("\n"));
    eprintln!("conformance: {passed}/{} scenes pass", all.len());
    let mut problems = Vec::new();
    if !unexpected_failures.is_empty() {
        problems.push(format!(
            "scenes that fail but are not in tests/conformance-fails.txt (regressions):\n  {}",
            unexpected_failures.join("\n  ")
        ));
    }
    if !unexpected_passes.is_empty() {
        problems.push(format!(
            "scenes that now pass: remove them from tests/conformance-fails.txt:\n  {}",
            unexpected_passes.join("\n  ")
        ));
    }
    if !stale.is_empty() {
        problems.push(format!(
            "tests/conformance-fails.txt lists scenes that do not exist: {stale:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Images never depend on the thread count or on timing (ARCHITECTURE.md,
/// "Determinism"): every scene gives byte-identical outputs, and the same
/// query list, with 1, 2 and 8 worker threads and again on a second
/// 2-thread run, or fails the same way each time.
#[test]
fn outputs_do_not_depend_on_thread_count() {
    let runs = [1usize, 2, 8, 2];
    for (name, path) in scenes() {
        let results: Vec<_> = runs.iter().map(|&t| run(&path, t)).collect();
        let (first, rest) = results.split_first().unwrap();
        for (i, other) in rest.iter().enumerate() {
            let label = format!(
                "{name}: 1 thread vs run {} ({} threads)",
                i + 2,
                runs[i + 1]
            );
            match (first, other) {
                (Ok(a), Ok(b)) => {
                    assert!(a.outputs == b.outputs, "{label}: outputs differ");
                    let ids = |r: &ReplayReport| {
                        r.queries
                            .iter()
                            .map(|(id, _)| id.clone())
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(ids(a), ids(b), "{label}: query lists differ");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{label}: fails differently"),
                (a, b) => panic!("{label}: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
            }
        }
    }
}

/// The reference compared with itself passes; in a 64x64 image 4 pixels
/// beyond tolerance pass (0.1% of 4096 is 4.096) and 5 fail: the harness
/// can fail.
#[test]
fn comparison_follows_compare_py() {
    use ferropipe_scene::output::read_png;
    use ferropipe_scene::{OutputData, OutputPixels};
    let ref_dir = root().join("scenes/conformance/ref/clear_subrect");
    let (w, h, rgba) = read_png(&ref_dir.join("color.png")).unwrap();
    let z: Vec<f32> = std::fs::read(ref_dir.join("zs.depth.f32"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let s = std::fs::read(ref_dir.join("zs.stencil.u8")).unwrap();
    let report = |rgba: Vec<u8>, z: Vec<f32>, s: Vec<u8>| ReplayReport {
        outputs: vec![
            OutputData {
                name: "color".into(),
                width: w,
                height: h,
                format: ferropipe::Format::R8G8B8A8_UNORM,
                pixels: OutputPixels::Color(rgba),
            },
            OutputData {
                name: "zs".into(),
                width: w,
                height: h,
                format: ferropipe::Format::Z24_UNORM_S8_UINT,
                pixels: OutputPixels::DepthStencil {
                    depth: Some(z),
                    stencil: Some(s),
                },
            },
        ],
        queries: vec![],
        expect_failures: vec![],
        timing: None,
    };
    let all_pass = |r: &ReplayReport| {
        compare_with_reference(r, &ref_dir, Tolerance::default())
            .iter()
            .all(|f| f.pass)
    };
    assert!(all_pass(&report(rgba.clone(), z.clone(), s.clone())));
    // Off by one everywhere is within tolerance.
    let mut near = rgba.clone();
    near.iter_mut()
        .for_each(|v| *v = v.saturating_sub(1).max(1).min(*v));
    assert!(all_pass(&report(near, z.clone(), s.clone())));
    let mut off = rgba.clone();
    for px in 0..4 {
        off[px * 4] = off[px * 4].wrapping_add(2);
    }
    assert!(all_pass(&report(off.clone(), z.clone(), s.clone())));
    off[16] = off[16].wrapping_add(2);
    assert!(!all_pass(&report(off, z.clone(), s.clone())));
    let mut zz = z.clone();
    zz[..4].iter_mut().for_each(|v| *v += 9e-6);
    assert!(all_pass(&report(rgba.clone(), zz.clone(), s.clone())));
    zz[..4].iter_mut().for_each(|v| *v += 2e-5);
    zz[4] = f32::NAN;
    assert!(!all_pass(&report(rgba.clone(), zz, s.clone())));
    let mut ss = s.clone();
    ss[..5].iter_mut().for_each(|v| *v ^= 1);
    assert!(!all_pass(&report(rgba.clone(), z.clone(), ss)));
    assert!(!all_pass(&report(rgba[4..].to_vec(), z, s)));
}

/// `clear_subrect` draws with depth and stencil writes off, so its depth
/// and stencil outputs are the clears' alone: they must match llvmpipe's
/// exactly even while drawing is not implemented (the draws are skipped).
#[test]
fn clear_subrect_depth_stencil_match_llvmpipe() {
    use ferropipe_scene::Replayer;
    let path = root().join("scenes/conformance/clear_subrect.json");
    let scene = Scene::load(&path).unwrap();
    let mut r = Replayer::new(1).unwrap();
    r.keep_going = true;
    let _ = r.run(&scene, 0..scene.calls.len(), true);
    let report = ReplayReport {
        outputs: r.read_outputs(&scene).unwrap(),
        queries: vec![],
        expect_failures: vec![],
        timing: None,
    };
    let ref_dir = root().join("scenes/conformance/ref/clear_subrect");
    let results = compare_with_reference(&report, &ref_dir, Tolerance::default());
    for f in &results {
        if f.file.starts_with("zs.") {
            assert!(f.pass, "{}: {}", f.file, f.message);
            assert!(f.message.contains(" 0 exceed"), "{}: {}", f.file, f.message);
        }
    }
    assert_eq!(
        results.iter().filter(|f| f.file.starts_with("zs.")).count(),
        2
    );
}
