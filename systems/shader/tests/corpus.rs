//! Every shader of the shared scene corpus compiles (the image-level checks
//! run in the engine's conformance tests).

use std::path::PathBuf;

use ferropipe_components::enums::ShaderType;
use ferropipe_shader::{Language, compile};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/scenes/shaders")
}

/// (file, entry point, stage) for every shader entry point in the corpus.
fn entries() -> Vec<(String, String, ShaderType)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(corpus_dir()) else {
        return out;
    };
    let mut files: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        if name.ends_with(".wgsl") {
            let mut stage = None;
            for line in src.lines() {
                let t = line.trim();
                if t.starts_with("@vertex") {
                    stage = Some(ShaderType::Vertex);
                } else if t.starts_with("@fragment") {
                    stage = Some(ShaderType::Fragment);
                } else if let (Some(s), Some(rest)) = (stage, t.strip_prefix("fn ")) {
                    let ep = rest.split('(').next().unwrap().trim().to_string();
                    out.push((name.clone(), ep, s));
                    stage = None;
                }
            }
        } else if name.ends_with(".vert") {
            out.push((name, "main".into(), ShaderType::Vertex));
        } else if name.ends_with(".frag") {
            out.push((name, "main".into(), ShaderType::Fragment));
        }
    }
    out
}

/// Entry points that must report `Unsupported` until the sampler lands
/// (a list, so the test fails once they compile and the list must shrink).
const EXPECTED_UNSUPPORTED: &[&str] = &["shader_texture_ops.wgsl:fs_main", "tex.wgsl:fs_main"];

#[test]
fn every_corpus_shader_compiles() {
    let entries = entries();
    if entries.is_empty() {
        eprintln!("scene corpus not found at {:?}; skipping", corpus_dir());
        return;
    }
    let mut failures = Vec::new();
    for (file, ep, stage) in &entries {
        let src = std::fs::read_to_string(corpus_dir().join(file)).unwrap();
        let lang = if file.ends_with(".wgsl") {
            Language::Wgsl
        } else {
            Language::Glsl
        };
        match compile(lang, &src, ep, *stage, &[]) {
            Ok(s) => {
                let p = s.program();
                eprintln!(
                    "{file}:{ep}: {} body ops, {} prologue ops, {} varying / {} uniform registers",
                    p.body.len(),
                    p.prologue.len(),
                    p.num_varying,
                    p.num_uniform
                );
            }
            Err(ferropipe_shader::ShaderError::Unsupported { .. })
                if EXPECTED_UNSUPPORTED.contains(&format!("{file}:{ep}").as_str()) => {}
            Err(e) => failures.push(format!("{file}:{ep}: {e}")),
        }
        if EXPECTED_UNSUPPORTED.contains(&format!("{file}:{ep}").as_str())
            && compile(lang, &src, ep, *stage, &[]).is_ok()
        {
            failures.push(format!(
                "{file}:{ep} compiles now: remove it from EXPECTED_UNSUPPORTED"
            ));
        }
    }
    assert!(failures.is_empty(), "failed:\n{}", failures.join("\n"));
}
