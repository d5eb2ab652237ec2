//! Third-party shaders: naga's own test inputs (vendored in
//! `tests/corpus/`, see its README) through the whole front end, lowering
//! and interpreter.  Every entry point either runs a workgroup / a few
//! lanes with zeroed inputs and bindings, or gets a typed `ShaderError`;
//! none panics or hangs.  The test prints the counts and fails if the
//! number that runs drops below [`MIN_RUNS`].
//!
//! naga's inputs bind resources wherever they like; ferropipe's groups are
//! fixed (FORMAT.md "Shaders"), so each entry point is tried twice: as
//! written, through the public `compile`, and with its resources moved to
//! ferropipe's groups (uniform buffers to 0, textures 1, samplers 2,
//! storage buffers 3, storage textures 4), which is what a port would do.
//! The second one is run.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32};

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{Lanes, ShaderResources};
use ferropipe_shader::call::CallIo;
use ferropipe_shader::exec;
use ferropipe_shader::{ComputeCall, WordBuffer};
use ferropipe_shader::{LaneProgram, Language, ShaderError, compile, front, lower};
use naga::{AddressSpace, ImageClass, ShaderStage, TypeInner};

/// Entry points that ran on 2026-11-26 (of 149 in the corpus; 117 before
/// storage resources in vertex and fragment shaders and f16 landed); the
/// count may grow, never drop.
const MIN_RUNS: usize = 123;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// `(file, language, entry point, stage)` of every entry point.
fn entries() -> Vec<(PathBuf, Language, String, ShaderStage)> {
    let mut out = Vec::new();
    for sub in ["wgsl", "glsl"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus().join(sub))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for path in files {
            let ext = path.extension().unwrap().to_string_lossy().to_string();
            match ext.as_str() {
                "wgsl" => {
                    let src = std::fs::read_to_string(&path).unwrap();
                    // entry points from naga's own parse (files it cannot
                    // parse count once, as a typed parse error)
                    match naga::front::wgsl::parse_str(&src) {
                        Ok(m) => {
                            for ep in &m.entry_points {
                                out.push((path.clone(), Language::Wgsl, ep.name.clone(), ep.stage));
                            }
                        }
                        Err(_) => {
                            out.push((path, Language::Wgsl, "main".into(), ShaderStage::Vertex))
                        }
                    }
                }
                "vert" => out.push((path, Language::Glsl, "main".into(), ShaderStage::Vertex)),
                "frag" => out.push((path, Language::Glsl, "main".into(), ShaderStage::Fragment)),
                "comp" => out.push((path, Language::Glsl, "main".into(), ShaderStage::Compute)),
                _ => {}
            }
        }
    }
    out
}

fn shader_type(s: ShaderStage) -> ShaderType {
    match s {
        ShaderStage::Vertex => ShaderType::Vertex,
        ShaderStage::Fragment => ShaderType::Fragment,
        _ => ShaderType::Compute,
    }
}

/// Moves every resource of `m` to ferropipe's groups.
fn rebind(m: &mut naga::Module) {
    let mut next = [0u32; 5];
    let handles: Vec<_> = m.global_variables.iter().map(|(h, _)| h).collect();
    for h in handles {
        let gv = &m.global_variables[h];
        if gv.binding.is_none() {
            continue;
        }
        let group = match (gv.space, &m.types[gv.ty].inner) {
            (AddressSpace::Uniform, _) => 0,
            (AddressSpace::Storage { .. }, _) => 3,
            (
                _,
                TypeInner::Image {
                    class: ImageClass::Storage { .. },
                    ..
                },
            ) => 4,
            (_, TypeInner::Image { .. }) => 1,
            (_, TypeInner::Sampler { .. }) => 2,
            _ => continue,
        };
        let binding = next[group];
        next[group] += 1;
        m.global_variables[h].binding = Some(naga::ResourceBinding {
            group: group as u32,
            binding,
        });
    }
}

fn compile_rebound(
    lang: Language,
    src: &str,
    ep: &str,
    stage: ShaderStage,
) -> Result<LaneProgram, ShaderError> {
    let mut module = front::parse_module(lang, src, stage)?;
    rebind(&mut module);
    let (parsed, entry) = front::prepare_module(module, src, ep, stage, &[])?;
    lower::lower_entry(&parsed.module, &parsed.info, entry, &[], src)
}

/// Runs one call of `prog` with zeroed inputs, resources and memory:
/// 16 vertices, 16 pixels or one workgroup.  Returns whether the loop
/// limit stopped it.
fn run_zeroed(prog: &LaneProgram) -> bool {
    let groups = match &prog.compute {
        Some(c) => (c.invocations() as usize).div_ceil(8).max(1),
        None => 2,
    };
    let zero = Lanes::ZERO;
    let inputs = vec![zero; prog.info.inputs.len() * 4 * groups];
    let mut outputs = vec![zero; prog.info.outputs.len() * 4 * groups];
    let frag_coord = vec![zero; 4 * groups];
    let ids = vec![zero; groups];
    let mut live = vec![Lanes::from_bits(wide::u32x8::splat(!0)); groups];
    let words = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect::<Vec<_>>();
    let buffer_words: Vec<Vec<AtomicU32>> = (0..32).map(|_| words(256)).collect();
    let buffers: Vec<Option<WordBuffer>> = buffer_words
        .iter()
        .map(|w| {
            Some(WordBuffer {
                words: w,
                bytes: 1024,
            })
        })
        .collect();
    let shared = words(
        prog.compute
            .as_ref()
            .map_or(0, |c| c.shared_bytes as usize / 4),
    );
    let diverged = AtomicBool::new(false);
    let call = prog.compute.as_ref().map(|c| ComputeCall {
        buffers: &buffers,
        globals: &buffers[..16],
        images: &[],
        shared: &shared,
        workgroup_id: [0; 3],
        num_workgroups: [1; 3],
        workgroup_size: c.workgroup_size,
        active: c.workgroup_size,
        diverged: &diverged,
    });
    let fragment = prog.info.stage == ShaderType::Fragment;
    let mut io = CallIo {
        resources: &ShaderResources::default(),
        groups,
        inputs: &inputs,
        frag_coord: &frag_coord,
        vertex_id: &ids,
        instance_id: &ids,
        outputs: &mut outputs,
        live: fragment.then_some(&mut live[..]),
        count: match &prog.compute {
            Some(c) => c.invocations() as usize,
            None => groups * 8,
        },
        compute: call.as_ref(),
    };
    exec::run(prog, None, &mut io)
}

fn kind(e: &ShaderError) -> &'static str {
    match e {
        ShaderError::Parse { .. } => "parse",
        ShaderError::Validation { .. } => "validation",
        ShaderError::MissingEntryPoint { .. } => "missing entry point",
        ShaderError::MissingOverride { .. } => "missing override",
        ShaderError::BadOverride { .. } => "bad override",
        ShaderError::Unsupported { .. } => "unsupported",
        ShaderError::LoopLimit { .. } => "loop limit",
    }
}

#[test]
fn naga_corpus_runs_or_fails_typed() {
    let entries = entries();
    let (mut as_written, mut runs, mut panics) = (0, 0, Vec::new());
    let mut errors: std::collections::BTreeMap<&str, usize> = Default::default();
    for (path, lang, ep, stage) in &entries {
        let name = path
            .strip_prefix(corpus())
            .unwrap_or(Path::new("?"))
            .display();
        let src = std::fs::read_to_string(path).unwrap();
        let outcome = std::panic::catch_unwind(|| {
            let written = compile(*lang, &src, ep, shader_type(*stage), &[]).is_ok();
            let rebound = compile_rebound(*lang, &src, ep, *stage);
            let ran = rebound.as_ref().ok().map(run_zeroed);
            (written, rebound.err(), ran)
        });
        match outcome {
            Err(_) => panics.push(format!("{name}:{ep}")),
            Ok((written, err, ran)) => {
                as_written += usize::from(written);
                if let Some(e) = &err {
                    *errors.entry(kind(e)).or_default() += 1;
                    eprintln!("{name}:{ep}: {e}");
                }
                match ran {
                    Some(false) => runs += 1,
                    Some(true) => *errors.entry("loop limit").or_default() += 1,
                    None => {}
                }
            }
        }
    }
    eprintln!(
        "{} entry points: {as_written} compile as written, {runs} run with ferropipe's groups; typed errors {errors:?}; {} panics",
        entries.len(),
        panics.len()
    );
    assert!(panics.is_empty(), "panicked: {panics:?}");
    assert!(runs >= MIN_RUNS, "{runs} ran, fewer than {MIN_RUNS}");
}
