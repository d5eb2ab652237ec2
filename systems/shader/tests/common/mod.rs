//! Test harness: run a compiled shader over lanes, and the same entry point
//! through the scalar reference interpreter, lane by lane.

#![allow(dead_code)]

pub mod reference;

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, FragmentShader, LANES, Lanes, ScalarKind, Semantic,
    ShaderResources, VertexIo, VertexShader,
};
use ferropipe_shader::{Backend, CompiledShader, Language, compile_with_backend};
use naga::{Binding, BuiltIn, ShaderStage, TypeInner};
use wide::{f32x8, u32x8};

/// What one input leaf of the entry point is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// Input slot semantic and component count.
    Slot(Semantic, usize, ScalarKind),
    FragCoord,
    VertexId,
    InstanceId,
}

/// Per-lane input values: `inputs(leaf, component, lane)` as bits (bools as
/// 0/1; the harness converts to masks for the lanes).
pub type Gen<'a> = &'a dyn Fn(Leaf, usize, usize) -> u32;

pub struct Setup {
    pub module: naga::Module,
    pub info: naga::valid::ModuleInfo,
    pub ep: usize,
    /// The program on the interpreter.
    pub shader: CompiledShader,
    /// The same program with each JIT code generator's native code (LLVM
    /// where the host has `libLLVM` 14, and Cranelift): every run through
    /// the harness runs them all and requires the interpreter's bytes.
    pub jits: Vec<(Backend, CompiledShader)>,
    pub stage: ShaderType,
}

pub fn setup(lang: Language, src: &str, entry: &str, stage: ShaderType) -> Setup {
    let build = |backend| {
        compile_with_backend(lang, src, entry, stage, &[], &[], backend)
            .unwrap_or_else(|e| panic!("compile {entry}: {e}"))
    };
    let shader = build(Backend::Interp);
    let jits: Vec<(Backend, CompiledShader)> = [Backend::Llvm, Backend::Cranelift]
        .into_iter()
        .map(|b| (b, build(b)))
        .collect();
    assert!(shader.jit().is_none());
    // Where CI requires LLVM, a program Cranelift compiles must have
    // LLVM's code too (not the interpreter's fallback, unnoticed).
    if std::env::var_os(ferropipe_shader::REQUIRE_LLVM_ENV).is_some() && jits[1].1.jit().is_some() {
        let code = jits[0].1.jit().expect("LLVM compiles what Cranelift does");
        assert_eq!(code.codegen(), ferropipe_shader::Codegen::Llvm);
    }
    let ns = if stage == ShaderType::Vertex {
        ShaderStage::Vertex
    } else {
        ShaderStage::Fragment
    };
    let parsed = ferropipe_shader::front::parse(lang, src, ns).unwrap();
    let ep = ferropipe_shader::front::find_entry(&parsed.module, entry, ns).unwrap();
    Setup {
        module: parsed.module,
        info: parsed.info,
        ep,
        shader,
        jits,
        stage,
    }
}

/// Leaves of the entry point's arguments (in flattening order) with their
/// component counts.
fn arg_leaves(s: &Setup) -> Vec<Vec<(Leaf, usize)>> {
    let m = &s.module;
    let f = &m.entry_points[s.ep].function;
    let mut out = Vec::new();
    for arg in &f.arguments {
        let mut leaves = Vec::new();
        let mut push = |b: &Binding, ty: &TypeInner| {
            let n = match ty {
                TypeInner::Vector { size, .. } => *size as usize,
                _ => 1,
            };
            let kind = match ty {
                TypeInner::Scalar(sc) | TypeInner::Vector { scalar: sc, .. } => match sc.kind {
                    naga::ScalarKind::Float => ScalarKind::Float,
                    naga::ScalarKind::Sint => ScalarKind::Sint,
                    naga::ScalarKind::Uint => ScalarKind::Uint,
                    _ => ScalarKind::Bool,
                },
                _ => ScalarKind::Float,
            };
            let leaf = match b {
                Binding::Location { location, .. } => {
                    Leaf::Slot(Semantic::Generic(*location as u8), n, kind)
                }
                Binding::BuiltIn(BuiltIn::Position { .. }) => Leaf::FragCoord,
                Binding::BuiltIn(BuiltIn::VertexIndex) => Leaf::VertexId,
                Binding::BuiltIn(BuiltIn::InstanceIndex) => Leaf::InstanceId,
                Binding::BuiltIn(BuiltIn::FrontFacing) => {
                    Leaf::Slot(Semantic::FrontFacing, 1, ScalarKind::Bool)
                }
                Binding::BuiltIn(BuiltIn::PointCoord) => {
                    Leaf::Slot(Semantic::PointCoord, 2, ScalarKind::Float)
                }
                Binding::BuiltIn(BuiltIn::SampleIndex) => {
                    Leaf::Slot(Semantic::SampleId, 1, ScalarKind::Uint)
                }
                Binding::BuiltIn(BuiltIn::SampleMask) => {
                    Leaf::Slot(Semantic::SampleMask, 1, ScalarKind::Uint)
                }
                other => panic!("harness: binding {other:?}"),
            };
            let n = if leaf == Leaf::FragCoord {
                4
            } else if matches!(leaf, Leaf::VertexId | Leaf::InstanceId) {
                1
            } else {
                n
            };
            leaves.push((leaf, n));
        };
        match &arg.binding {
            Some(b) => push(b, &m.types[arg.ty].inner),
            None => {
                if let TypeInner::Struct { members, .. } = &m.types[arg.ty].inner {
                    for mm in members {
                        push(mm.binding.as_ref().unwrap(), &m.types[mm.ty].inner);
                    }
                }
            }
        }
        out.push(leaves);
    }
    out
}

/// Output leaves of the entry point's result: (slot index in the
/// compiled shader's outputs, component count).
fn result_leaves(s: &Setup) -> Vec<(usize, usize)> {
    let m = &s.module;
    let f = &m.entry_points[s.ep].function;
    let Some(res) = &f.result else {
        return Vec::new();
    };
    let info = s.shader.info();
    let vs = s.stage == ShaderType::Vertex;
    let mut out = Vec::new();
    let mut push = |b: &Binding, ty: &TypeInner| {
        let n = match ty {
            TypeInner::Vector { size, .. } => *size as usize,
            TypeInner::Array {
                size: naga::ArraySize::Constant(n),
                ..
            } => n.get() as usize,
            _ => 1,
        };
        let sem = match b {
            Binding::Location {
                location,
                blend_src,
                ..
            } => {
                if vs {
                    Semantic::Generic(*location as u8)
                } else {
                    let _ = blend_src;
                    Semantic::Color(*location as u8)
                }
            }
            Binding::BuiltIn(BuiltIn::Position { .. }) => Semantic::Position,
            Binding::BuiltIn(BuiltIn::PointSize) => Semantic::PointSize,
            Binding::BuiltIn(BuiltIn::FragDepth) => Semantic::Depth,
            Binding::BuiltIn(BuiltIn::SampleMask) => Semantic::SampleMask,
            Binding::BuiltIn(BuiltIn::ClipDistances) => Semantic::ClipDistance(0),
            other => panic!("harness: output {other:?}"),
        };
        let slot = info
            .output_slot(sem)
            .unwrap_or_else(|| panic!("no output {sem:?}"));
        out.push((slot, n));
    };
    match &res.binding {
        Some(b) => push(b, &m.types[res.ty].inner),
        None => {
            if let TypeInner::Struct { members, .. } = &m.types[res.ty].inner {
                for mm in members {
                    push(mm.binding.as_ref().unwrap(), &m.types[mm.ty].inner);
                }
            }
        }
    }
    out
}

/// Results of one run: per output (slot, component) per lane the bits, and
/// per lane whether it was discarded.
pub struct Outcome {
    pub outputs: Vec<[Vec<u32>; 4]>,
    pub killed: Vec<bool>,
}

/// Runs the compiled shader over `groups` groups of lanes, on the
/// interpreter and on each JIT code generator; panics unless all give the
/// same bits.
pub fn run_lanes(s: &Setup, groups: usize, inputs: Gen<'_>, constants: &[Vec<u8>]) -> Outcome {
    let interp = run_lanes_on(&s.shader, s.stage, groups, inputs, constants);
    for (backend, shader) in &s.jits {
        let jit = run_lanes_on(shader, s.stage, groups, inputs, constants);
        assert_eq!(
            interp.killed, jit.killed,
            "{backend:?} and the interpreter kill different lanes"
        );
        for (slot, (a, b)) in interp.outputs.iter().zip(&jit.outputs).enumerate() {
            for c in 0..4 {
                if let Some(lane) = (0..a[c].len()).find(|&l| a[c][l] != b[c][l]) {
                    panic!(
                        "output {slot}.{c} lane {lane}: interpreter {:#010x}, {backend:?} {:#010x}\n{}",
                        a[c][lane],
                        b[c][lane],
                        s.shader.program()
                    );
                }
            }
        }
    }
    interp
}

/// Runs `shader` over `groups` groups of lanes.
pub fn run_lanes_on(
    shader: &CompiledShader,
    stage: ShaderType,
    groups: usize,
    inputs: Gen<'_>,
    constants: &[Vec<u8>],
) -> Outcome {
    let info = shader.info().clone();
    let lanes = groups * LANES;
    let lane_vec = |f: &dyn Fn(usize) -> u32| -> Vec<Lanes> {
        (0..groups)
            .map(|g| bytemuck::cast(u32x8::new(std::array::from_fn(|l| f(g * LANES + l)))))
            .collect()
    };
    let mut lane_inputs = vec![f32x8::ZERO; info.inputs.len() * 4 * groups];
    for (slot, io) in info.inputs.iter().enumerate() {
        for c in 0..io.components as usize {
            let leaf = Leaf::Slot(io.semantic, io.components as usize, io.kind);
            let rows = lane_vec(&|lane| {
                let v = inputs(leaf, c, lane);
                if io.kind == ScalarKind::Bool {
                    if v != 0 { !0 } else { 0 }
                } else {
                    v
                }
            });
            lane_inputs[(slot * 4 + c) * groups..(slot * 4 + c + 1) * groups]
                .copy_from_slice(&rows);
        }
    }
    let mut outputs = vec![f32x8::ZERO; info.outputs.len() * 4 * groups];
    let cb: Vec<&[u8]> = constants.iter().map(|c| c.as_slice()).collect();
    let res = ShaderResources {
        constants: &cb,
        ..Default::default()
    };
    let mut killed = vec![false; lanes];
    if stage == ShaderType::Vertex {
        let vid = lane_vec(&|lane| inputs(Leaf::VertexId, 0, lane));
        let iid = lane_vec(&|lane| inputs(Leaf::InstanceId, 0, lane));
        let mut io = VertexIo {
            groups,
            count: lanes,
            inputs: &lane_inputs,
            vertex_id: &vid,
            instance_id: &iid,
            outputs: &mut outputs,
        };
        VertexShader::run(shader, &res, &mut io);
    } else {
        let mut fc = Vec::new();
        for c in 0..4 {
            fc.extend(lane_vec(&|lane| inputs(Leaf::FragCoord, c, lane)));
        }
        let mut mask = vec![bytemuck::cast::<u32x8, Lanes>(u32x8::splat(!0)); groups];
        let mut io = FragmentIo {
            groups,
            inputs: &lane_inputs,
            frag_coord: &fc,
            mask: &mut mask,
            outputs: &mut outputs,
        };
        FragmentShader::run(shader, &res, &mut io);
        for (g, m) in mask.iter().enumerate() {
            let bits = bytemuck::cast::<Lanes, u32x8>(*m).to_array();
            for l in 0..LANES {
                killed[g * LANES + l] = bits[l] == 0;
            }
        }
    }
    let outs = (0..info.outputs.len())
        .map(|slot| {
            std::array::from_fn(|c| {
                (0..lanes)
                    .map(|lane| {
                        let v = outputs[(slot * 4 + c) * groups + lane / LANES];
                        bytemuck::cast::<Lanes, u32x8>(v).to_array()[lane % LANES]
                    })
                    .collect()
            })
        })
        .collect();
    Outcome {
        outputs: outs,
        killed,
    }
}

/// Float comparison tolerance.
#[derive(Clone, Copy)]
pub struct Tol {
    pub abs: f32,
    pub rel: f32,
}

pub const EXACT: Tol = Tol { abs: 0.0, rel: 0.0 };

/// Runs both and compares every live lane; returns the number of lanes
/// compared.  Panics with a description of the first mismatch.
pub fn differential(
    s: &Setup,
    groups: usize,
    inputs: Gen<'_>,
    constants: &[Vec<u8>],
    tol: Tol,
) -> usize {
    let lanes = run_lanes(s, groups, inputs, constants);
    let leaves = arg_leaves(s);
    let outs = result_leaves(s);
    let info = s.shader.info();
    let mut reference = reference::Reference::new(&s.module, &s.info, constants.to_vec());
    let mut compared = 0;
    for lane in 0..groups * LANES {
        let args: Vec<Vec<u32>> = leaves
            .iter()
            .map(|arg| {
                let mut flat = Vec::new();
                for (leaf, n) in arg {
                    // the lane program sees the interface slot's semantic
                    let leaf = match *leaf {
                        Leaf::Slot(Semantic::Generic(l), _, _) => {
                            let slot = info
                                .inputs
                                .iter()
                                .find(|io| {
                                    io.location == l as u32
                                        && matches!(
                                            io.semantic,
                                            Semantic::Generic(_)
                                                | Semantic::Color(_)
                                                | Semantic::BColor(_)
                                        )
                                })
                                .unwrap();
                            Leaf::Slot(slot.semantic, slot.components as usize, slot.kind)
                        }
                        Leaf::Slot(sem, _, _) => {
                            let slot = info.inputs.iter().find(|io| io.semantic == sem).unwrap();
                            Leaf::Slot(sem, slot.components as usize, slot.kind)
                        }
                        other => other,
                    };
                    for c in 0..*n {
                        flat.push(inputs(leaf, c, lane));
                    }
                }
                flat
            })
            .collect();
        let r = reference.run(s.ep, args);
        match r {
            None => {
                assert!(
                    lanes.killed[lane],
                    "lane {lane}: reference discards, lanes do not"
                );
            }
            Some(vals) => {
                assert!(
                    !lanes.killed[lane],
                    "lane {lane}: lanes discard, reference does not"
                );
                compared += 1;
                let mut cursor = 0;
                for &(slot, n) in &outs {
                    let kind = info.outputs[slot].kind;
                    for c in 0..n {
                        let want = vals[cursor];
                        cursor += 1;
                        let (sl, cc) = (slot + c / 4, c % 4);
                        let got = lanes.outputs[sl][cc][lane];
                        let ok = if kind == ScalarKind::Float {
                            let (g, w) = (f32::from_bits(got), f32::from_bits(want));
                            g == w
                                || (g.is_nan() && w.is_nan())
                                || (g - w).abs() <= tol.abs.max(tol.rel * w.abs())
                        } else {
                            got == want
                        };
                        assert!(
                            ok,
                            "lane {lane}: output slot {sl} ({:?}) component {cc}: got {got:#x} ({}) want {want:#x} ({})",
                            info.outputs[slot].semantic,
                            f32::from_bits(got),
                            f32::from_bits(want)
                        );
                    }
                }
            }
        }
    }
    compared
}

/// Pixel coordinates of lane `lane` when groups tile a `width`-wide
/// target in 4x2 blocks, starting at `origin`.
pub fn pixel_of(lane: usize, width: u32, origin: (u32, u32)) -> (u32, u32) {
    let g = (lane / LANES) as u32;
    let l = lane % LANES;
    let blocks_per_row = width / 4;
    let bx = g % blocks_per_row;
    let by = g / blocks_per_row;
    (
        origin.0 + bx * 4 + FRAG_LANE_X[l],
        origin.1 + by * 2 + FRAG_LANE_Y[l],
    )
}
