//! Lowering naga IR to a [`LaneProgram`](crate::ir::LaneProgram): every
//! function call inlined, every value flattened to scalar registers,
//! structured control flow turned into execution-mask updates.
//!
//! # Variables
//! A function-local (or `var<private>`) variable is a list of scalar
//! *bindings*, one register per flattened component.  In straight-line code
//! a store just re-binds the component to the stored value's register (no
//! op at all: `var o: VOut; o.color = in.color; return o;` costs nothing).
//! Before a construct (`if`, `switch`, loop) that stores to a variable, the
//! variable gets fresh *home* registers, and stores inside the construct
//! write them in place — masked by `EXEC` — so both paths agree on where the
//! value lives after the construct.  Loads from an open home take a copy
//! (later coalesced away when nothing overwrites the home in between).
//! A store may re-bind only at the variable's own construct depth, and —
//! for variables of an outer function or `var<private>` globals — only while
//! no lane of the inlined functions in between has returned early.
//!
//! # Control flow
//! See `ir.rs`: `if` narrows `EXEC` to `EXEC & cond`, then to
//! `EXEC_before & !cond`, and joins with the union of both ends; loops keep
//! a break mask (lanes that left) and a continue mask (lanes that skipped to
//! `continuing`), iterate while any lane is active and end with `EXEC =
//! break mask`; `switch` runs each case with the lanes that select it (plus
//! fall-through lanes); `return` inside a construct records the result with
//! a masked move and parks the lane in the function's return mask until the
//! function ends.

pub(crate) mod builder;
mod expr;
pub mod memory;
pub(crate) mod types;

use std::collections::HashMap;

use ferropipe_components::enums::ShaderType;
use ferropipe_components::shader::{
    Interpolation, IoSlot, Sampling, ScalarKind, Semantic, ShaderInfo,
};
use naga::valid::{FunctionInfo, ModuleInfo};
use naga::{
    AddressSpace, Binding, Block, BuiltIn, Expression, Function, Handle, Module, ShaderStage,
    Statement, TypeInner,
};
use smallvec::SmallVec;

use crate::ShaderError;
use crate::ir::{
    BinOp, ComputeInfo, ComputeValue, EXEC, InputSrc, LaneProgram, MemSpace, Op, Reg, UnOp,
};
use builder::Builder;
pub use types::unsupported;
use types::*;

/// Flattened scalar registers of a value.
pub type Regs = SmallVec<[Reg; 4]>;

/// A lowered naga expression.
#[derive(Clone, Debug)]
enum LVal {
    Val(Regs),
    Ptr(Place),
    Image(ImageBind),
    Sampler(SamplerBind),
}

/// A texture binding a shader refers to.
#[derive(Clone, Copy, Debug)]
struct ImageBind {
    view: u32,
    dim: naga::ImageDimension,
    arrayed: bool,
    class: naga::ImageClass,
}

/// A sampler binding.
#[derive(Clone, Copy, Debug)]
struct SamplerBind {
    slot: u32,
}

/// Where a pointer points.
#[derive(Clone, Debug)]
struct Place {
    root: Root,
    /// Static offset: flat components (variables) or bytes (uniforms).
    off: u32,
    /// Dynamic indices into a variable (each clamped to its range).
    terms: SmallVec<[DynTerm; 2]>,
    /// Dynamic byte offset into a uniform buffer (clamped indices times
    /// strides) or memory (indices times strides, see `valid`).
    dyn_bytes: Option<Reg>,
    /// Memory places: lanes whose every dynamic index was in range
    /// (`memory.rs`); `None` when all are.
    valid: Option<Reg>,
}

#[derive(Clone, Copy, Debug)]
enum Root {
    Var(usize),
    Uniform(u32),
    /// Storage-buffer or workgroup memory (compute shaders).
    Mem(MemSpace),
}

#[derive(Clone, Copy, Debug)]
struct DynTerm {
    index: Reg,
    count: u32,
    stride: u32,
}

/// A variable's state during lowering.
struct Var {
    comps: Vec<Reg>,
    /// Frame that owns it (0: the entry point, also for globals).
    owner: usize,
    /// Construct depth at which it was declared.
    scope_depth: u32,
    /// Whether `comps` are home registers that stores write in place.
    home_open: bool,
}

enum RetMode {
    Simple(Option<LVal>),
    Masked { homes: Vec<Reg>, mask: Reg },
}

/// One inlined function instance.
struct Frame<'m> {
    func: &'m Function,
    finfo: &'m FunctionInfo,
    exprs: Vec<Option<LVal>>,
    locals: Vec<usize>,
    args: Vec<LVal>,
    ret: RetMode,
    /// No lane has returned early from this instance so far.
    intact: bool,
}

/// A construct `break` (and for loops, `continue`) targets.
struct BreakCtx {
    is_loop: bool,
    brk: Reg,
    cont: Option<Reg>,
}

/// One interface slot with its registers.
fn one(key: (u32, u32, u32), slot: IoSlot, regs: Regs) -> Vec<(IoEntry, Regs)> {
    vec![(IoEntry { key, slot }, regs)]
}

/// What the callee of a call statement may store through.
#[derive(Clone, Default)]
struct FnSummary {
    stores_args: Vec<bool>,
    stores_globals: Vec<Handle<naga::GlobalVariable>>,
    uses_derivatives: bool,
}

/// Static facts about a lowered block.
#[derive(Clone, Copy, Default)]
struct Flow {
    /// Control never reaches the end of the block (break, continue,
    /// return, discard): the rest of the enclosing block is dead.
    terminated: bool,
}

/// Interface slots collected from the entry point.
struct IoEntry {
    key: (u32, u32, u32),
    slot: IoSlot,
}

pub struct Lowerer<'m> {
    module: &'m Module,
    /// The source text, to turn naga spans into lines and columns.
    source: &'m str,
    info: &'m ModuleInfo,
    stage: ShaderStage,
    semantics: &'m [(u32, Semantic)],
    b: Builder,
    vars: Vec<Var>,
    globals: HashMap<Handle<naga::GlobalVariable>, usize>,
    frames: Vec<Frame<'m>>,
    breaks: Vec<BreakCtx>,
    summaries: HashMap<Handle<Function>, FnSummary>,
    depth: u32,
    /// `EXEC` statically equals the lanes that entered the shader.
    static_full: bool,
    /// Lanes may leave for good (masked return, discard) — counts events.
    exits: u32,
    /// Lanes jumped by break/continue — counts events.
    jumps: u32,
    /// Discarded lanes leave `EXEC` (no derivatives need them).
    dead_lanes_idle: bool,
    info_out: ShaderInfo,
    /// Workgroup variables' byte offsets in the workgroup's memory.
    shared: HashMap<Handle<naga::GlobalVariable>, u32>,
    /// What a compute entry point needs from its launch.
    compute: ComputeInfo,
}

/// A stage in WGSL spelling, for messages.
fn stage_word(s: ShaderStage) -> &'static str {
    match s {
        ShaderStage::Vertex => "vertex",
        ShaderStage::Fragment => "fragment",
        ShaderStage::Compute => "compute",
        ShaderStage::Task => "task",
        ShaderStage::Mesh => "mesh",
        _ => "this kind of",
    }
}

/// Compiles entry point `entry` of a validated module.  `source` is the
/// text the module was parsed from: errors get the line and column of the
/// innermost statement, expression or global naga has a span for.
///
/// When the entry point's resources are bound outside ferropipe's groups
/// (FORMAT.md "Shaders"), every such global is reported in one error, not
/// only the first one the lowering meets.
pub fn lower_entry(
    module: &Module,
    info: &ModuleInfo,
    entry: usize,
    semantics: &[(u32, Semantic)],
    source: &str,
) -> Result<LaneProgram, ShaderError> {
    lower_entry_inner(module, info, entry, semantics, source).map_err(|e| {
        let all = binding_errors(module, info, entry, semantics, source);
        if all.len() > 1 && all.contains(&e) {
            let (line, column) = e.location().unwrap_or((0, 0));
            let list: Vec<String> = all
                .iter()
                .map(|e| match (e, e.location()) {
                    (ShaderError::Unsupported { construct, .. }, Some((l, c))) => {
                        format!("{l}:{c}: {construct}")
                    }
                    (ShaderError::Unsupported { construct, .. }, None) => construct.clone(),
                    (other, _) => other.to_string(),
                })
                .collect();
            ShaderError::Unsupported {
                construct: format!("{} resource bindings: {}", all.len(), list.join("; ")),
                line,
                column,
            }
        } else {
            e
        }
    })
}

/// The error of each resource global the entry point uses whose binding
/// ferropipe cannot map (each resolved by a fresh lowerer: this runs only
/// after the lowering failed, so its side effects do not matter).
fn binding_errors(
    module: &Module,
    info: &ModuleInfo,
    entry: usize,
    semantics: &[(u32, Semantic)],
    source: &str,
) -> Vec<ShaderError> {
    let ep_info = info.get_entry_point(entry);
    let mut out = Vec::new();
    for (g, gv) in module.global_variables.iter() {
        if ep_info[g].is_empty() || gv.binding.is_none() {
            continue;
        }
        let mut l = Lowerer::new(module, info, entry, semantics, source);
        if let Err(e) = l.global(g) {
            out.push(e);
        }
    }
    out
}

fn lower_entry_inner(
    module: &Module,
    info: &ModuleInfo,
    entry: usize,
    semantics: &[(u32, Semantic)],
    source: &str,
) -> Result<LaneProgram, ShaderError> {
    let ep = &module.entry_points[entry];
    let stage = ep.stage;
    if !matches!(
        stage,
        ShaderStage::Vertex | ShaderStage::Fragment | ShaderStage::Compute
    ) {
        return Err(unsupported(format!("{} shaders", stage_word(stage))));
    }
    if ep.workgroup_size_overrides.is_some() {
        return Err(unsupported("override-sized workgroups"));
    }
    let mut l = Lowerer::new(module, info, entry, semantics, source);
    let summary = l.summary_of_function(&ep.function)?;
    l.info_out.uses_derivatives = stage == ShaderStage::Fragment && summary.uses_derivatives;
    l.dead_lanes_idle = !l.info_out.uses_derivatives;
    l.entry(ep, info.get_entry_point(entry))?;
    l.info_out.shader_buffers_used = l.compute.buffers_used;
    l.info_out.shader_images_used = l.compute.images_used;
    l.info_out.early_fragment_tests = stage == ShaderStage::Fragment
        && matches!(ep.early_depth_test, Some(naga::EarlyDepthTest::Force));
    let compute = (stage == ShaderStage::Compute).then_some(l.compute);
    let mut prog = crate::opt::finish(l.b, l.info_out, l.dead_lanes_idle)?;
    prog.compute = compute;
    // side effects that outlive the call: stores and atomics on shader
    // buffers and images (workgroup memory dies with the workgroup)
    let outside = |space: &MemSpace| !matches!(space, MemSpace::Workgroup);
    prog.info.writes_memory = prog.body.iter().any(|op| match op {
        Op::MemStore { space, .. } => outside(space),
        Op::MemAtomic(a) => outside(&a.space),
        Op::ImageStore(_) => true,
        _ => false,
    });
    // per slot, what the bound views must allow (`writable_bitmask`,
    // `PIPE_IMAGE_ACCESS_*`): taken from the final body, so only the
    // accesses that survive optimisation count
    for op in &prog.body {
        let info = &mut prog.info;
        match op {
            Op::MemStore {
                space: MemSpace::Buffer(slot),
                ..
            } => info.shader_buffers_written |= 1 << slot,
            Op::MemAtomic(a) => {
                if let MemSpace::Buffer(slot) = a.space {
                    info.shader_buffers_written |= 1 << slot;
                }
            }
            Op::ImageLoad(i) => info.shader_images_read |= 1 << i.image,
            Op::ImageStore(i) => info.shader_images_written |= 1 << i.image,
            _ => {}
        }
    }
    Ok(prog)
}

impl<'m> Lowerer<'m> {
    fn new(
        module: &'m Module,
        info: &'m ModuleInfo,
        entry: usize,
        semantics: &'m [(u32, Semantic)],
        source: &'m str,
    ) -> Self {
        let ep = &module.entry_points[entry];
        let shader_type = match ep.stage {
            ShaderStage::Vertex => ShaderType::Vertex,
            ShaderStage::Fragment => ShaderType::Fragment,
            // only vertex, fragment and compute entry points are lowered
            _ => ShaderType::Compute,
        };
        Lowerer {
            module,
            source,
            info,
            stage: ep.stage,
            semantics,
            b: Builder::new(),
            vars: Vec::new(),
            globals: HashMap::new(),
            frames: Vec::new(),
            breaks: Vec::new(),
            summaries: HashMap::new(),
            depth: 0,
            static_full: true,
            exits: 0,
            jumps: 0,
            dead_lanes_idle: false,
            info_out: ShaderInfo::new(shader_type),
            shared: HashMap::new(),
            compute: ComputeInfo {
                workgroup_size: ep.workgroup_size,
                ..Default::default()
            },
        }
    }

    /// `e` with the location of `span`, unless an inner one is set.
    pub(super) fn locate(&self, mut e: ShaderError, span: naga::Span) -> ShaderError {
        let (line, column) = crate::front::span_location(span, self.source);
        if line != 0 {
            e.locate(line, column);
        }
        e
    }

    // ------------------------------------------------------------------
    // entry point and interface

    fn entry(
        &mut self,
        ep: &'m naga::EntryPoint,
        finfo: &'m FunctionInfo,
    ) -> Result<(), ShaderError> {
        let func = &ep.function;
        // inputs: collect, order, then load
        let mut leaves: Vec<(Binding, &'m TypeInner)> = Vec::new();
        let mut per_arg: Vec<usize> = Vec::new();
        for arg in &func.arguments {
            let before = leaves.len();
            self.collect_bindings(arg.binding.as_ref(), arg.ty, &mut |b, ty| {
                leaves.push((b, ty))
            })?;
            per_arg.push(leaves.len() - before);
        }
        let mut entries: Vec<IoEntry> = Vec::new();
        for (b, ty) in &leaves {
            if let Some(e) = self.input_entry(b, ty)? {
                entries.push(e);
            }
        }
        entries.sort_by_key(|e| e.key);
        for w in entries.windows(2) {
            if w[0].slot.semantic == w[1].slot.semantic {
                return Err(ShaderError::validation(format!(
                    "input {:?} declared twice",
                    w[0].slot.semantic
                )));
            }
        }
        let slots: Vec<Semantic> = entries.iter().map(|e| e.slot.semantic).collect();
        let slot_of = |sem: Semantic| slots.iter().position(|s| *s == sem);
        let mut arg_vals = Vec::new();
        let mut cursor = 0;
        for count in per_arg {
            let mut regs = Regs::new();
            for (bind, ty) in &leaves[cursor..cursor + count] {
                let r = input_regs(
                    &mut self.b,
                    self.stage,
                    self.semantics,
                    bind,
                    ty,
                    &slot_of,
                    &mut self.info_out,
                )?;
                regs.extend(r);
            }
            cursor += count;
            arg_vals.push(LVal::Val(regs));
        }
        self.info_out.inputs = entries.iter().map(|e| e.slot).collect();

        // body
        let result = self.call_function(func, finfo, arg_vals)?;

        // outputs
        if let Some(res) = &func.result {
            let vals = match result {
                Some(LVal::Val(r)) => r,
                _ => {
                    let n = flat_len(self.module, inner(self.module, res.ty))?;
                    (0..n).map(|_| self.b.zero()).collect()
                }
            };
            let mut outs: Vec<(IoEntry, Regs)> = Vec::new();
            let mut cursor = 0usize;
            let mut pending: Vec<(Binding, &'m TypeInner)> = Vec::new();
            self.collect_bindings(res.binding.as_ref(), res.ty, &mut |b, ty| {
                pending.push((b, ty))
            })?;
            for (b, ty) in pending {
                let n = flat_len(self.module, ty)?;
                let regs: Regs = vals[cursor..cursor + n].iter().copied().collect();
                cursor += n;
                outs.extend(self.output_entries(&b, ty, regs)?);
            }
            outs.sort_by_key(|(e, _)| e.key);
            for (slot, (e, regs)) in outs.iter().enumerate() {
                for (c, r) in regs.iter().enumerate() {
                    self.b.store_output((slot * 4 + c) as u32, *r);
                }
                self.info_out.outputs.push(e.slot);
            }
            for w in outs.windows(2) {
                if w[0].0.slot.semantic == w[1].0.slot.semantic
                    && w[0].0.slot.blend_src == w[1].0.slot.blend_src
                {
                    return Err(ShaderError::validation(format!(
                        "output {:?} declared twice",
                        w[0].0.slot.semantic
                    )));
                }
            }
        }
        if self.stage == ShaderStage::Vertex
            && self.info_out.output_slot(Semantic::Position).is_none()
        {
            return Err(ShaderError::validation(
                "vertex shader has no position output",
            ));
        }
        Ok(())
    }

    /// Calls `f` for every bound leaf of an entry-point argument or result
    /// (a binding, or the members of a struct).
    fn collect_bindings(
        &self,
        binding: Option<&Binding>,
        ty: Handle<naga::Type>,
        f: &mut dyn FnMut(Binding, &'m TypeInner),
    ) -> Result<(), ShaderError> {
        let module = self.module;
        match binding {
            Some(b) => f(b.clone(), &module.types[ty].inner),
            None => match &module.types[ty].inner {
                TypeInner::Struct { members, .. } => {
                    for m in members {
                        match &m.binding {
                            Some(b) => f(b.clone(), &module.types[m.ty].inner),
                            None => {
                                return Err(unsupported(
                                    "entry-point struct member without a binding",
                                ));
                            }
                        }
                    }
                }
                _ => return Err(unsupported("entry-point value without a binding")),
            },
        }
        Ok(())
    }

    fn semantic_of(&self, location: u32) -> Semantic {
        self.semantics
            .iter()
            .find(|(l, _)| *l == location)
            .map(|(_, s)| *s)
            .unwrap_or(Semantic::Generic(location.min(255) as u8))
    }

    /// The interface slot an input binding occupies (None: no slot, e.g.
    /// frag_coord and vertex ids, which arrive separately).
    fn input_entry(&self, b: &Binding, ty: &TypeInner) -> Result<Option<IoEntry>, ShaderError> {
        let kind = elem_kind(ty).ok_or_else(|| unsupported("non-scalar shader inputs"))?;
        let comps = components(ty) as u8;
        Ok(match (self.stage, b) {
            (
                _,
                Binding::Location {
                    location,
                    interpolation,
                    sampling,
                    per_primitive,
                    ..
                },
            ) => {
                if *per_primitive {
                    return Err(unsupported("per-primitive inputs"));
                }
                if *location > 255 {
                    return Err(unsupported("locations above 255"));
                }
                let sem = if self.stage == ShaderStage::Vertex {
                    Semantic::Generic(*location as u8)
                } else {
                    self.semantic_of(*location)
                };
                let mut slot = IoSlot::new(sem, *location)
                    .with_components(comps)
                    .with_kind(kind);
                slot.interpolation = map_interpolation(*interpolation)?;
                slot.sampling = map_sampling(*sampling);
                if kind != ScalarKind::Float {
                    slot.interpolation = Interpolation::Flat;
                }
                Some(IoEntry {
                    key: (0, *location, 0),
                    slot,
                })
            }
            (
                ShaderStage::Vertex,
                Binding::BuiltIn(BuiltIn::VertexIndex | BuiltIn::InstanceIndex),
            ) => None,
            (ShaderStage::Fragment, Binding::BuiltIn(BuiltIn::Position { .. })) => None,
            // compute builtins are computed per lane, not interface slots
            (
                ShaderStage::Compute,
                Binding::BuiltIn(
                    BuiltIn::LocalInvocationId
                    | BuiltIn::LocalInvocationIndex
                    | BuiltIn::GlobalInvocationId
                    | BuiltIn::WorkGroupId
                    | BuiltIn::NumWorkGroups,
                ),
            ) => None,
            (ShaderStage::Fragment, Binding::BuiltIn(bi)) => {
                let (sem, comps, kind) = match bi {
                    BuiltIn::FrontFacing => (Semantic::FrontFacing, 1, ScalarKind::Bool),
                    BuiltIn::PointCoord => (Semantic::PointCoord, 2, ScalarKind::Float),
                    BuiltIn::SampleIndex => (Semantic::SampleId, 1, ScalarKind::Uint),
                    BuiltIn::SampleMask => (Semantic::SampleMask, 1, ScalarKind::Uint),
                    other => {
                        return Err(unsupported(format!(
                            "fragment input @builtin({})",
                            types::builtin_name(*other)
                        )));
                    }
                };
                let slot = IoSlot::new(sem, 0)
                    .with_components(comps)
                    .with_kind(kind)
                    .with_interpolation(Interpolation::Flat);
                Some(IoEntry {
                    key: (1, sem_order(sem), 0),
                    slot,
                })
            }
            (_, Binding::BuiltIn(bi)) => {
                return Err(unsupported(format!(
                    "{} input @builtin({})",
                    stage_word(self.stage),
                    types::builtin_name(*bi)
                )));
            }
        })
    }

    /// Output slots of a result binding with its registers.
    fn output_entries(
        &mut self,
        b: &Binding,
        ty: &TypeInner,
        regs: Regs,
    ) -> Result<Vec<(IoEntry, Regs)>, ShaderError> {
        let kind = elem_kind(ty).unwrap_or(ScalarKind::Float);
        let comps = regs.len().clamp(1, 4) as u8;
        let vs = self.stage == ShaderStage::Vertex;
        Ok(match b {
            Binding::Location {
                location,
                interpolation,
                sampling,
                blend_src,
                per_primitive,
            } => {
                if *per_primitive {
                    return Err(unsupported("per-primitive outputs"));
                }
                if *location > 255 {
                    return Err(unsupported("locations above 255"));
                }
                if elem_kind(ty).is_none() {
                    return Err(unsupported("non-scalar shader outputs"));
                }
                let (sem, key) = if vs {
                    (self.semantic_of(*location), (1, *location, 0))
                } else {
                    (
                        Semantic::Color((*location).min(255) as u8),
                        (0, *location, blend_src.unwrap_or(0)),
                    )
                };
                let mut slot = IoSlot::new(sem, *location)
                    .with_components(comps)
                    .with_kind(kind);
                slot.interpolation = map_interpolation(*interpolation)?;
                slot.sampling = map_sampling(*sampling);
                if kind != ScalarKind::Float {
                    slot.interpolation = Interpolation::Flat;
                }
                slot.blend_src = blend_src.unwrap_or(0).min(1) as u8;
                vec![(IoEntry { key, slot }, regs)]
            }
            Binding::BuiltIn(bi) => match (vs, bi) {
                (true, BuiltIn::Position { .. }) => {
                    one((0, 0, 0), IoSlot::new(Semantic::Position, 0), regs)
                }
                (true, BuiltIn::PointSize) => {
                    let slot = IoSlot::new(Semantic::PointSize, 0).with_components(1);
                    one((2, 0, 0), slot, regs)
                }
                (true, BuiltIn::ClipDistances) => {
                    let n = regs.len();
                    if n > 8 {
                        return Err(unsupported("more than 8 clip distances"));
                    }
                    self.info_out.num_clip_distances = n as u8;
                    let mut v = Vec::new();
                    for (k, chunk) in regs.chunks(4).enumerate() {
                        let slot = IoSlot::new(Semantic::ClipDistance(k as u8), k as u32)
                            .with_components(chunk.len() as u8);
                        v.push((
                            IoEntry {
                                key: (3, k as u32, 0),
                                slot,
                            },
                            chunk.iter().copied().collect(),
                        ));
                    }
                    v
                }
                (false, BuiltIn::FragDepth) => {
                    let slot = IoSlot::new(Semantic::Depth, 0).with_components(1);
                    one((1, 0, 0), slot, regs)
                }
                (false, BuiltIn::SampleMask) => {
                    let slot = IoSlot::new(Semantic::SampleMask, 0)
                        .with_components(1)
                        .with_kind(ScalarKind::Uint);
                    one((2, 0, 0), slot, regs)
                }
                (_, other) => {
                    return Err(unsupported(format!(
                        "{} output @builtin({})",
                        stage_word(self.stage),
                        types::builtin_name(*other)
                    )));
                }
            },
        })
    }

    // ------------------------------------------------------------------
    // functions

    /// Inlines a call; returns the function's result.
    fn call_function(
        &mut self,
        func: &'m Function,
        finfo: &'m FunctionInfo,
        args: Vec<LVal>,
    ) -> Result<Option<LVal>, ShaderError> {
        if self.frames.len() > 64 {
            return Err(unsupported("call chains deeper than 64"));
        }
        if self.b.body.len() > 1 << 20 {
            return Err(unsupported(
                "programs of more than a million operations after inlining",
            ));
        }
        let ret = if has_nested_return(&func.body) {
            let n = match &func.result {
                Some(r) => flat_len(self.module, inner(self.module, r.ty))?,
                None => 0,
            };
            let zero = self.b.zero();
            let homes = (0..n).map(|_| self.b.copy(zero)).collect();
            let mask = self.b.copy(zero);
            RetMode::Masked { homes, mask }
        } else {
            RetMode::Simple(None)
        };
        let frame_index = self.frames.len();
        self.frames.push(Frame {
            func,
            finfo,
            exprs: vec![None; func.expressions.len()],
            locals: Vec::new(),
            args,
            ret,
            intact: true,
        });
        // locals start zeroed (WGSL) or at their constant initialiser
        for (_, local) in func.local_variables.iter() {
            let n = flat_len(self.module, inner(self.module, local.ty))?;
            let comps: Vec<Reg> = match local.init {
                Some(init) => self.value(init)?.into_vec(),
                None => (0..n).map(|_| self.b.zero()).collect(),
            };
            let id = self.vars.len();
            self.vars.push(Var {
                comps,
                owner: frame_index,
                scope_depth: self.depth,
                home_open: false,
            });
            self.frames[frame_index].locals.push(id);
        }
        let saved_full = self.static_full;
        self.block(&func.body)?;
        self.static_full = saved_full;
        let frame = self.frames.pop().expect("frame");
        Ok(match frame.ret {
            RetMode::Simple(v) => match (v, &func.result) {
                (Some(v), _) => Some(v),
                (None, Some(r)) => {
                    let n = flat_len(self.module, inner(self.module, r.ty))?;
                    Some(LVal::Val((0..n).map(|_| self.b.zero()).collect()))
                }
                (None, None) => None,
            },
            RetMode::Masked { homes, mask } => {
                let joined = self.b.bin(BinOp::Or, EXEC, mask);
                self.b.set_exec(joined);
                func.result
                    .as_ref()
                    .map(|_| LVal::Val(homes.into_iter().collect()))
            }
        })
    }

    fn frame(&self) -> &Frame<'m> {
        self.frames.last().expect("inside a function")
    }

    /// What a function stores through its pointer arguments and to
    /// private globals, and whether it takes derivatives (memoised).
    fn summary(&mut self, fh: Handle<Function>) -> Result<FnSummary, ShaderError> {
        if let Some(s) = self.summaries.get(&fh) {
            return Ok(s.clone());
        }
        let func = &self.module.functions[fh];
        let s = self.summary_of_function(func)?;
        self.summaries.insert(fh, s.clone());
        Ok(s)
    }

    fn summary_of_function(&mut self, func: &'m Function) -> Result<FnSummary, ShaderError> {
        let mut s = FnSummary {
            stores_args: vec![false; func.arguments.len()],
            ..Default::default()
        };
        for (_, e) in func.expressions.iter() {
            match e {
                Expression::Derivative { .. } => s.uses_derivatives = true,
                Expression::ImageSample {
                    level: naga::SampleLevel::Auto | naga::SampleLevel::Bias(_),
                    ..
                } => s.uses_derivatives = true,
                _ => {}
            }
        }
        self.summarise_block(func, &func.body, &mut s)?;
        Ok(s)
    }

    fn summarise_block(
        &mut self,
        func: &'m Function,
        block: &'m Block,
        s: &mut FnSummary,
    ) -> Result<(), ShaderError> {
        for st in block.iter() {
            match st {
                Statement::Store { pointer, .. } => match static_root(func, *pointer) {
                    StaticRoot::Arg(i) => s.stores_args[i as usize] = true,
                    StaticRoot::Global(g) => {
                        if !s.stores_globals.contains(&g) {
                            s.stores_globals.push(g)
                        }
                    }
                    StaticRoot::Local | StaticRoot::Other => {}
                },
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    let cs = self.summary(*function)?;
                    s.uses_derivatives |= cs.uses_derivatives;
                    for g in cs.stores_globals {
                        if !s.stores_globals.contains(&g) {
                            s.stores_globals.push(g)
                        }
                    }
                    for (i, stored) in cs.stores_args.iter().enumerate() {
                        if *stored && let StaticRoot::Arg(a) = static_root(func, arguments[i]) {
                            s.stores_args[a as usize] = true;
                        }
                        if *stored
                            && let StaticRoot::Global(g) = static_root(func, arguments[i])
                            && !s.stores_globals.contains(&g)
                        {
                            s.stores_globals.push(g)
                        }
                    }
                }
                Statement::Block(b) => self.summarise_block(func, b, s)?,
                Statement::If { accept, reject, .. } => {
                    self.summarise_block(func, accept, s)?;
                    self.summarise_block(func, reject, s)?;
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        self.summarise_block(func, &c.body, s)?;
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    self.summarise_block(func, body, s)?;
                    self.summarise_block(func, continuing, s)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // variables

    /// Variable id of a `var<private>` global, created on first use.
    fn global_var(&mut self, g: Handle<naga::GlobalVariable>) -> Result<usize, ShaderError> {
        if let Some(v) = self.globals.get(&g) {
            return Ok(*v);
        }
        let gv = &self.module.global_variables[g];
        let n = flat_len(self.module, inner(self.module, gv.ty))?;
        let comps: Vec<Reg> = match gv.init {
            Some(init) => self.const_expr(init)?.into_vec(),
            None => (0..n).map(|_| self.b.zero()).collect(),
        };
        let id = self.vars.len();
        self.vars.push(Var {
            comps,
            owner: 0,
            scope_depth: 0,
            home_open: false,
        });
        self.globals.insert(g, id);
        Ok(id)
    }

    /// Variables a block may store to (for opening homes before it).
    fn stored_vars(&mut self, blocks: &[&'m Block]) -> Result<Vec<usize>, ShaderError> {
        let mut out = Vec::new();
        for b in blocks {
            self.stored_vars_in(b, &mut out)?;
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn stored_vars_in(
        &mut self,
        block: &'m Block,
        out: &mut Vec<usize>,
    ) -> Result<(), ShaderError> {
        for st in block.iter() {
            match st {
                Statement::Store { pointer, .. } => {
                    if let Some(v) = self.root_var(*pointer)? {
                        out.push(v)
                    }
                }
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    let s = self.summary(*function)?;
                    for g in s.stores_globals {
                        if self.module.global_variables[g].space == AddressSpace::Private {
                            out.push(self.global_var(g)?);
                        }
                    }
                    for (i, stored) in s.stores_args.iter().enumerate() {
                        if *stored && let Some(v) = self.root_var(arguments[i])? {
                            out.push(v)
                        }
                    }
                }
                Statement::Block(b) => self.stored_vars_in(b, out)?,
                Statement::If { accept, reject, .. } => {
                    self.stored_vars_in(accept, out)?;
                    self.stored_vars_in(reject, out)?;
                }
                Statement::Switch { cases, .. } => {
                    for c in cases {
                        self.stored_vars_in(&c.body, out)?;
                    }
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    self.stored_vars_in(body, out)?;
                    self.stored_vars_in(continuing, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The variable a pointer expression of the current frame points into.
    fn root_var(&mut self, e: Handle<Expression>) -> Result<Option<usize>, ShaderError> {
        let func = self.frame().func;
        Ok(match &func.expressions[e] {
            Expression::LocalVariable(l) => Some(self.frame().locals[l.index()]),
            Expression::GlobalVariable(g) => {
                if self.module.global_variables[*g].space == AddressSpace::Private {
                    Some(self.global_var(*g)?)
                } else {
                    None
                }
            }
            Expression::FunctionArgument(i) => match &self.frame().args[*i as usize] {
                LVal::Ptr(Place {
                    root: Root::Var(v), ..
                }) => Some(*v),
                _ => None,
            },
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                self.root_var(*base)?
            }
            _ => None,
        })
    }

    /// Gives every variable in `vars` that has no open home fresh home
    /// registers holding its current value; returns those it opened.
    fn open_homes(&mut self, vars: &[usize]) -> Vec<usize> {
        let mut opened = Vec::new();
        for &v in vars {
            if self.vars[v].home_open {
                continue;
            }
            let comps = std::mem::take(&mut self.vars[v].comps);
            let homes = comps.iter().map(|c| self.b.copy(*c)).collect();
            self.vars[v].comps = homes;
            self.vars[v].home_open = true;
            opened.push(v);
        }
        opened
    }

    fn close_homes(&mut self, opened: &[usize]) {
        for &v in opened {
            self.vars[v].home_open = false;
        }
    }

    /// Whether a store to `v` may simply re-bind (see the module docs).
    fn can_rebind(&self, v: usize) -> bool {
        let var = &self.vars[v];
        var.scope_depth == self.depth && self.frames.iter().skip(var.owner + 1).all(|f| f.intact)
    }

    fn store_comp(&mut self, v: usize, c: usize, val: Reg) {
        if !self.vars[v].home_open && !self.can_rebind(v) {
            self.open_homes(&[v]);
        }
        if self.vars[v].home_open {
            let h = self.vars[v].comps[c];
            if self.static_full {
                self.b.mov(h, val);
            } else {
                self.b.mov_masked(h, val);
            }
        } else {
            self.vars[v].comps[c] = val;
        }
    }

    fn load_comp(&mut self, v: usize, c: usize) -> Reg {
        let r = self.vars[v].comps[c];
        if self.vars[v].home_open {
            self.b.copy(r)
        } else {
            r
        }
    }

    // ------------------------------------------------------------------
    // statements

    fn block(&mut self, block: &'m Block) -> Result<Flow, ShaderError> {
        for (st, span) in block.span_iter() {
            let f = self.statement(st).map_err(|e| self.locate(e, *span))?;
            if f.terminated {
                return Ok(f);
            }
        }
        Ok(Flow::default())
    }

    fn statement(&mut self, st: &'m Statement) -> Result<Flow, ShaderError> {
        match st {
            Statement::Emit(range) => {
                for h in range.clone() {
                    self.expr(h)?;
                }
            }
            Statement::Block(b) => return self.block(b),
            Statement::If {
                condition,
                accept,
                reject,
            } => return self.if_stmt(*condition, accept, reject),
            Statement::Switch { selector, cases } => return self.switch_stmt(*selector, cases),
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => return self.loop_stmt(body, continuing, *break_if),
            Statement::Break => {
                let ctx = self
                    .breaks
                    .last()
                    .ok_or_else(|| unsupported("break outside a loop or switch"))?;
                let brk = ctx.brk;
                self.b.park(&brk);
                self.jumps += 1;
                return Ok(Flow { terminated: true });
            }
            Statement::Continue => {
                let cont = self
                    .breaks
                    .iter()
                    .rev()
                    .find(|c| c.is_loop)
                    .and_then(|c| c.cont)
                    .ok_or_else(|| unsupported("continue outside a loop"))?;
                self.b.park(&cont);
                self.jumps += 1;
                return Ok(Flow { terminated: true });
            }
            Statement::Return { value } => return self.return_stmt(*value),
            Statement::Kill => {
                if self.stage != ShaderStage::Fragment {
                    return Err(unsupported("discard outside a fragment shader"));
                }
                self.info_out.uses_discard = true;
                let exit = self.dead_lanes_idle;
                self.b.push(Op::Kill { exit });
                if exit {
                    self.exits += 1;
                    return Ok(Flow { terminated: true });
                }
            }
            Statement::Store { pointer, value } => {
                let place = self.place(*pointer)?;
                let vals = self.value(*value)?;
                let ty = self.pointee(*pointer)?;
                self.store(&place, &ty, &vals)?;
            }
            Statement::Call {
                function,
                arguments,
                result,
            } => {
                let mut args = Vec::with_capacity(arguments.len());
                for a in arguments {
                    args.push(self.expr(*a)?);
                }
                let func = &self.module.functions[*function];
                let finfo = &self.info[*function];
                let r = self.call_function(func, finfo, args)?;
                if let (Some(res), Some(v)) = (result, r) {
                    let fi = self.frames.len() - 1;
                    self.frames[fi].exprs[res.index()] = Some(v);
                }
            }
            Statement::ControlBarrier(_) | Statement::MemoryBarrier(_) => self.barrier_stmt()?,
            Statement::ImageStore {
                image,
                coordinate,
                array_index,
                value,
            } => self.image_store(*image, *coordinate, *array_index, *value)?,
            Statement::Atomic {
                pointer,
                fun,
                value,
                result,
            } => self.atomic_stmt(*pointer, fun, *value, *result)?,
            Statement::ImageAtomic { .. } => {
                return Err(unsupported("texture atomics"));
            }
            Statement::WorkGroupUniformLoad { pointer, result } => {
                self.workgroup_uniform_load(*pointer, *result)?
            }
            Statement::RayQuery { .. } | Statement::RayPipelineFunction(_) => {
                return Err(unsupported("ray tracing"));
            }
            Statement::SubgroupBallot { .. }
            | Statement::SubgroupGather { .. }
            | Statement::SubgroupCollectiveOperation { .. } => {
                return Err(unsupported("subgroup operations"));
            }
            Statement::CooperativeStore { .. } => return Err(unsupported("cooperative matrices")),
        }
        Ok(Flow::default())
    }

    fn return_stmt(&mut self, value: Option<Handle<Expression>>) -> Result<Flow, ShaderError> {
        let val = match value {
            Some(v) => Some(self.expr(v)?),
            None => None,
        };
        let fi = self.frames.len() - 1;
        match &mut self.frames[fi].ret {
            RetMode::Simple(slot) => *slot = val,
            RetMode::Masked { homes, mask } => {
                let homes = homes.clone();
                let mask = *mask;
                if let Some(LVal::Val(v)) = val {
                    for (h, r) in homes.iter().zip(v.iter()) {
                        if self.static_full {
                            self.b.mov(*h, *r);
                        } else {
                            self.b.mov_masked(*h, *r);
                        }
                    }
                }
                self.b.park(&mask);
                self.frames[fi].intact = false;
                self.exits += 1;
            }
        }
        Ok(Flow { terminated: true })
    }

    fn if_stmt(
        &mut self,
        condition: Handle<Expression>,
        accept: &'m Block,
        reject: &'m Block,
    ) -> Result<Flow, ShaderError> {
        let cond = self.scalar(condition)?;
        if let Some(c) = self.b.const_of(cond) {
            // statically decided: the taken branch is straight-line code
            return self.block(if c != 0 { accept } else { reject });
        }
        // `if (c) { break; }` / `if (c) {} else { break; }` inside a loop or
        // switch: move the lanes to the break mask directly
        if let Some(ctx) = self.breaks.last() {
            let brk = ctx.brk;
            let is_break =
                |b: &Block| b.len() == 1 && matches!(b.iter().next(), Some(Statement::Break));
            let leave = if is_break(accept) && reject.is_empty() {
                Some(true)
            } else if accept.is_empty() && is_break(reject) {
                Some(false)
            } else {
                None
            };
            if let Some(on_true) = leave {
                let (go, stay) = if on_true {
                    (
                        self.b.bin(BinOp::And, EXEC, cond),
                        self.b.bin(BinOp::AndNot, EXEC, cond),
                    )
                } else {
                    (
                        self.b.bin(BinOp::AndNot, EXEC, cond),
                        self.b.bin(BinOp::And, EXEC, cond),
                    )
                };
                self.b.push(Op::Bin {
                    f: BinOp::Or,
                    d: brk,
                    a: brk,
                    b: go,
                });
                self.b.set_exec(stay);
                self.static_full = false;
                self.jumps += 1;
                return Ok(Flow::default());
            }
        }
        let stored = self.stored_vars(&[accept, reject])?;
        let opened = self.open_homes(&stored);
        self.depth += 1;
        let saved_full = self.static_full;
        let (exits0, jumps0) = (self.exits, self.jumps);
        self.static_full = false;

        let e0 = self.b.exec_copy();
        let m_then = self.b.bin(BinOp::And, EXEC, cond);
        let then_end;
        let mut both_terminated = true;
        if accept.is_empty() {
            then_end = m_then;
            both_terminated = false;
        } else {
            self.b.set_exec(m_then);
            let j = self.b.jump_placeholder(Op::JumpIfNone { target: 0 });
            let f = self.block(accept)?;
            self.b.patch_here(j);
            both_terminated &= f.terminated;
            then_end = if f.terminated {
                self.b.zero()
            } else {
                self.b.exec_copy()
            };
        }
        let m_else = self.b.bin(BinOp::AndNot, e0, cond);
        if reject.is_empty() {
            both_terminated = false;
            let joined = self.b.bin(BinOp::Or, then_end, m_else);
            self.b.set_exec(joined);
        } else {
            self.b.set_exec(m_else);
            let j = self.b.jump_placeholder(Op::JumpIfNone { target: 0 });
            let f = self.block(reject)?;
            self.b.patch_here(j);
            both_terminated &= f.terminated;
            let joined = if f.terminated {
                then_end
            } else {
                self.b.bin(BinOp::Or, EXEC, then_end)
            };
            self.b.set_exec(joined);
        }

        self.depth -= 1;
        self.close_homes(&opened);
        self.static_full = saved_full && self.exits == exits0 && self.jumps == jumps0;
        Ok(Flow {
            terminated: both_terminated,
        })
    }

    fn loop_stmt(
        &mut self,
        body: &'m Block,
        continuing: &'m Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<Flow, ShaderError> {
        if self.peel_loop(body, continuing, break_if)? {
            return Ok(Flow::default());
        }
        let stored = self.stored_vars(&[body, continuing])?;
        let opened = self.open_homes(&stored);
        self.depth += 1;
        let saved_full = self.static_full;
        let exits0 = self.exits;
        self.static_full = false;

        let zero = self.b.zero();
        let brk = self.b.copy(zero);
        let cont = self.b.new_v();
        let top = self.b.here();
        self.b.mov(cont, zero);
        self.breaks.push(BreakCtx {
            is_loop: true,
            brk,
            cont: Some(cont),
        });
        let f = self.block(body)?;
        // lanes that finished the body or continued run the continuing block
        let resumed = if f.terminated {
            cont
        } else {
            self.b.bin(BinOp::Or, EXEC, cont)
        };
        self.b.set_exec(resumed);
        let skip = self.b.jump_placeholder(Op::JumpIfNone { target: 0 });
        let fc = self.block(continuing)?;
        if !fc.terminated
            && let Some(bi) = break_if
        {
            let c = self.scalar(bi)?;
            let go = self.b.bin(BinOp::And, EXEC, c);
            self.b.push(Op::Bin {
                f: BinOp::Or,
                d: brk,
                a: brk,
                b: go,
            });
            let stay = self.b.bin(BinOp::AndNot, EXEC, c);
            self.b.set_exec(stay);
        }
        self.b.patch_here(skip);
        self.b.push(Op::JumpIfAny { target: top });
        self.breaks.pop();
        self.b.set_exec(brk);

        self.depth -= 1;
        self.close_homes(&opened);
        self.static_full = saved_full && self.exits == exits0;
        Ok(Flow::default())
    }

    /// Unrolls a loop whose exit test is a constant on every iteration
    /// (`for (var i = 0; i < 12; i++)` over a constant bound): each
    /// iteration is lowered as straight-line code with the counter a
    /// constant, so the test, the counter and `TAPS[i]`-style indexing fold
    /// away and the body's ops run without jumps, masks or homes.  This is
    /// what llvmpipe gets from LLVM's loop unroller; for ferropipe it also
    /// turns the body into one JIT region instead of a dozen cut at the
    /// loop's jumps (perf_post.wgsl's 12-tap loop: docs/shaders.md).
    ///
    /// Peeling an iteration is exact whatever happens next, so when a test
    /// stops being constant, or the budget ([`PEEL_MAX_ITERATIONS`],
    /// [`PEEL_MAX_OPS`]) runs out, the loop is lowered as a loop from the
    /// state the peeled iterations left, and `false` says so.  Only loops
    /// whose body opens with the exit test (`if c {} else { break; }` or
    /// `if c { break; }` after its `Emit`s) and that leave in no other way
    /// are peeled: no other `break` or `continue` of this loop, no
    /// `return`, no `discard`, no `break if`.
    fn peel_loop(
        &mut self,
        body: &'m Block,
        continuing: &'m Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<bool, ShaderError> {
        if break_if.is_some() {
            return Ok(false);
        }
        let Some((header, condition, break_on_true)) = loop_header(body) else {
            return Ok(false);
        };
        if !body.iter().skip(header + 1).all(peelable) || !continuing.iter().all(peelable) {
            return Ok(false);
        }
        let mut emitted = Vec::new();
        emitted_exprs(body, &mut emitted);
        emitted_exprs(continuing, &mut emitted);
        let start = self.b.here();
        for _ in 0..PEEL_MAX_ITERATIONS {
            self.forget_exprs(&emitted);
            for (st, span) in body.span_iter().take(header) {
                self.statement(st).map_err(|e| self.locate(e, *span))?;
            }
            let cond = self.scalar(condition)?;
            let Some(c) = self.b.const_of(cond) else {
                break;
            };
            if (c != 0) == break_on_true {
                return Ok(true);
            }
            if (self.b.here() - start) as usize > PEEL_MAX_OPS {
                break;
            }
            for (st, span) in body
                .span_iter()
                .skip(header + 1)
                .chain(continuing.span_iter())
            {
                let f = self.statement(st).map_err(|e| self.locate(e, *span))?;
                // `peelable` admits nothing that leaves the body
                debug_assert!(!f.terminated, "a peeled loop iteration left its body");
            }
        }
        self.forget_exprs(&emitted);
        Ok(false)
    }

    /// Drops the current frame's cached values of `exprs`, so a block
    /// lowered again computes them afresh.
    fn forget_exprs(&mut self, exprs: &[Handle<Expression>]) {
        let fi = self.frames.len() - 1;
        for h in exprs {
            self.frames[fi].exprs[h.index()] = None;
        }
    }

    fn switch_stmt(
        &mut self,
        selector: Handle<Expression>,
        cases: &'m [naga::SwitchCase],
    ) -> Result<Flow, ShaderError> {
        let sel = self.scalar(selector)?;
        let blocks: Vec<&'m Block> = cases.iter().map(|c| &c.body).collect();
        let stored = self.stored_vars(&blocks)?;
        let opened = self.open_homes(&stored);
        self.depth += 1;
        let saved_full = self.static_full;
        let (exits0, jumps0) = (self.exits, self.jumps);
        self.static_full = false;

        let e0 = self.b.exec_copy();
        let zero = self.b.zero();
        let brk = self.b.copy(zero);
        // lanes matching each value, and lanes matching none (default)
        let mut eqs = Vec::with_capacity(cases.len());
        let mut any = zero;
        for c in cases {
            let eq = match c.value {
                naga::SwitchValue::I32(v) => {
                    let k = self.b.ki(v);
                    Some(self.b.bin(BinOp::IEq, sel, k))
                }
                naga::SwitchValue::U32(v) => {
                    let k = self.b.ku(v);
                    Some(self.b.bin(BinOp::IEq, sel, k))
                }
                naga::SwitchValue::Default => None,
            };
            if let Some(eq) = eq {
                any = self.b.bin(BinOp::Or, any, eq);
            }
            eqs.push(eq);
        }
        self.breaks.push(BreakCtx {
            is_loop: false,
            brk,
            cont: None,
        });
        let mut done = zero;
        let mut carry: Option<Reg> = None;
        let mut all_terminated = true;
        for (c, eq) in cases.iter().zip(eqs) {
            let m = match eq {
                Some(eq) => self.b.bin(BinOp::And, e0, eq),
                None => self.b.bin(BinOp::AndNot, e0, any),
            };
            let entry = match carry {
                Some(cy) => self.b.bin(BinOp::Or, m, cy),
                None => m,
            };
            if c.body.is_empty() {
                if c.fall_through {
                    carry = Some(entry);
                } else {
                    done = self.b.bin(BinOp::Or, done, entry);
                    carry = None;
                    all_terminated = false;
                }
                continue;
            }
            self.b.set_exec(entry);
            let j = self.b.jump_placeholder(Op::JumpIfNone { target: 0 });
            let f = self.block(&c.body)?;
            self.b.patch_here(j);
            all_terminated &= f.terminated;
            let end = if f.terminated {
                zero
            } else {
                self.b.exec_copy()
            };
            if c.fall_through {
                carry = Some(end);
            } else {
                done = self.b.bin(BinOp::Or, done, end);
                carry = None;
            }
        }
        if let Some(cy) = carry {
            done = self.b.bin(BinOp::Or, done, cy);
        }
        self.breaks.pop();
        let after = self.b.bin(BinOp::Or, done, brk);
        self.b.set_exec(after);

        self.depth -= 1;
        self.close_homes(&opened);
        self.static_full = saved_full && self.exits == exits0 && self.jumps == jumps0;
        // lanes that broke out continue after the switch, so it only ends
        // control flow when no case breaks and every case ends it
        let breaks_out = self.jumps != jumps0;
        Ok(Flow {
            terminated: all_terminated && !breaks_out && !cases.is_empty(),
        })
    }

    // ------------------------------------------------------------------
    // places

    fn store(&mut self, place: &Place, ty: &TypeInner, vals: &[Reg]) -> Result<(), ShaderError> {
        let v = match place.root {
            Root::Var(v) => v,
            Root::Uniform(_) => return Err(unsupported("stores to uniform buffers")),
            Root::Mem(space) => return self.mem_store(space, place, ty, vals),
        };
        if place.terms.is_empty() {
            for (i, r) in vals.iter().enumerate() {
                self.store_comp(v, place.off as usize + i, *r);
            }
            return Ok(());
        }
        let (index, cands) = self.candidates(place)?;
        if !self.vars[v].home_open && !self.can_rebind(v) {
            self.open_homes(&[v]);
        }
        for (i, r) in vals.iter().enumerate() {
            let comps: Vec<usize> = cands.iter().map(|o| *o as usize + i).collect();
            let srcs: Box<[Reg]> = comps.iter().map(|c| self.vars[v].comps[*c]).collect();
            if self.vars[v].home_open {
                self.b.push(Op::Insert {
                    dsts: srcs.clone(),
                    srcs,
                    index,
                    value: *r,
                    masked: !self.static_full,
                });
            } else {
                let dsts: Box<[Reg]> = comps.iter().map(|_| self.b.new_v()).collect();
                for (c, d) in comps.iter().zip(dsts.iter()) {
                    self.vars[v].comps[*c] = *d;
                }
                self.b.push(Op::Insert {
                    dsts,
                    srcs,
                    index,
                    value: *r,
                    masked: false,
                });
            }
        }
        Ok(())
    }

    fn load(&mut self, place: &Place, ty: &TypeInner) -> Result<Regs, ShaderError> {
        match place.root {
            Root::Mem(space) => self.mem_load(space, place, ty),
            Root::Var(v) => {
                let n = flat_len(self.module, ty)?;
                if place.terms.is_empty() {
                    return Ok((0..n)
                        .map(|i| self.load_comp(v, place.off as usize + i))
                        .collect());
                }
                let (index, cands) = self.candidates(place)?;
                let mut out = Regs::new();
                for i in 0..n {
                    let srcs: Vec<Reg> = cands
                        .iter()
                        .map(|o| self.vars[v].comps[*o as usize + i])
                        .collect();
                    let r = self.b.extract(index, srcs.clone());
                    let r = if self.vars[v].home_open && srcs.contains(&r) {
                        self.b.copy(r)
                    } else {
                        r
                    };
                    out.push(r);
                }
                Ok(out)
            }
            Root::Uniform(cb) => {
                let mut layout = Vec::new();
                uniform_layout(self.module, ty, place.off, &mut layout)?;
                self.info_out.const_buffers_used |= 1u32.checked_shl(cb).unwrap_or(0);
                let mut out = Regs::new();
                for leaf in layout {
                    if !leaf.half {
                        out.push(match place.dyn_bytes {
                            None => self.b.load_const(cb, leaf.off),
                            Some(d) => self.b.load_const_dyn(cb, leaf.off, d),
                        });
                        continue;
                    }
                    // an f16: the aligned word holding it, then its half
                    // (`memory.rs`; uniform indices are clamped, never
                    // invalid)
                    let (off, word, sel) = self.half_word(leaf.off, place.dyn_bytes);
                    let w = match word {
                        None => self.b.load_const(cb, off),
                        Some(d) => self.b.load_const_dyn(cb, off, d),
                    };
                    out.push(self.half_from_word(w, sel));
                }
                Ok(out)
            }
        }
    }

    /// Combined dynamic index and candidate component offsets of a place
    /// with dynamic terms.
    fn candidates(&mut self, place: &Place) -> Result<(Reg, Vec<u32>), ShaderError> {
        let mut cands = vec![place.off];
        let mut index = self.b.zero();
        for t in &place.terms {
            if cands.len().saturating_mul(t.count as usize) > 4096 {
                return Err(unsupported(
                    "dynamically indexed arrays of more than 4096 elements",
                ));
            }
            let mut next = Vec::with_capacity(cands.len() * t.count as usize);
            for c in &cands {
                for k in 0..t.count {
                    next.push(c + k * t.stride);
                }
            }
            cands = next;
            let count = self.b.ku(t.count);
            let scaled = self.b.bin(BinOp::IMul, index, count);
            index = self.b.bin(BinOp::IAdd, scaled, t.index);
        }
        Ok((index, cands))
    }
}

/// What a pointer expression is rooted at, without lowering anything.
enum StaticRoot {
    Arg(u32),
    Global(Handle<naga::GlobalVariable>),
    Local,
    Other,
}

fn static_root(func: &Function, e: Handle<Expression>) -> StaticRoot {
    match &func.expressions[e] {
        Expression::FunctionArgument(i) => StaticRoot::Arg(*i),
        Expression::GlobalVariable(g) => StaticRoot::Global(*g),
        Expression::LocalVariable(_) => StaticRoot::Local,
        Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
            static_root(func, *base)
        }
        _ => StaticRoot::Other,
    }
}

/// Most iterations [`Lowering::peel_loop`] unrolls: past it the loop stays
/// a loop (a 64-tap kernel unrolled is still a few hundred ops).
const PEEL_MAX_ITERATIONS: u32 = 64;
/// Most ops peeling may add to the body, so a long loop over a big body
/// (the op count grows with the product) stays a loop.
const PEEL_MAX_OPS: usize = 4096;

/// A loop body's exit test: the index of its first non-`Emit` statement
/// when that is `if c {} else { break; }` or `if c { break; }`, with `c`
/// and whether `c` true leaves.
fn loop_header(body: &Block) -> Option<(usize, Handle<Expression>, bool)> {
    let is_break = |b: &Block| b.len() == 1 && matches!(b.iter().next(), Some(Statement::Break));
    let (at, st) = body
        .iter()
        .enumerate()
        .find(|(_, s)| !matches!(s, Statement::Emit(_)))?;
    match st {
        Statement::If {
            condition,
            accept,
            reject,
        } => {
            if accept.is_empty() && is_break(reject) {
                Some((at, *condition, false))
            } else if is_break(accept) && reject.is_empty() {
                Some((at, *condition, true))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether a statement of a loop body can be lowered as straight-line
/// code: it neither leaves the loop (`break`/`continue` of this loop,
/// `return`) nor the shader (`discard`).  Nested loops keep their own
/// `break`/`continue`, a nested `switch` its `break`.
fn peelable(st: &Statement) -> bool {
    fn walk(st: &Statement, in_loop: bool, in_switch: bool) -> bool {
        match st {
            Statement::Break => in_loop || in_switch,
            Statement::Continue => in_loop,
            Statement::Return { .. } | Statement::Kill => false,
            Statement::Block(b) => b.iter().all(|s| walk(s, in_loop, in_switch)),
            Statement::If { accept, reject, .. } => accept
                .iter()
                .chain(reject.iter())
                .all(|s| walk(s, in_loop, in_switch)),
            Statement::Switch { cases, .. } => cases
                .iter()
                .all(|c| c.body.iter().all(|s| walk(s, in_loop, true))),
            Statement::Loop {
                body, continuing, ..
            } => body
                .iter()
                .chain(continuing.iter())
                .all(|s| walk(s, true, false)),
            _ => true,
        }
    }
    walk(st, false, false)
}

/// Every expression an `Emit` in `block` (nested blocks included)
/// evaluates: the values a second lowering of the block must recompute.
fn emitted_exprs(block: &Block, out: &mut Vec<Handle<Expression>>) {
    for st in block.iter() {
        match st {
            Statement::Emit(range) => out.extend(range.clone()),
            Statement::Block(b) => emitted_exprs(b, out),
            Statement::If { accept, reject, .. } => {
                emitted_exprs(accept, out);
                emitted_exprs(reject, out);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    emitted_exprs(&c.body, out)
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                emitted_exprs(body, out);
                emitted_exprs(continuing, out);
            }
            _ => {}
        }
    }
}

/// Whether a function returns from inside a construct (needs a return mask).
fn has_nested_return(block: &Block) -> bool {
    fn nested(block: &Block) -> bool {
        block.iter().any(|s| match s {
            Statement::Return { .. } => true,
            Statement::Block(b) => nested(b),
            Statement::If { accept, reject, .. } => nested(accept) || nested(reject),
            Statement::Switch { cases, .. } => cases.iter().any(|c| nested(&c.body)),
            Statement::Loop {
                body, continuing, ..
            } => nested(body) || nested(continuing),
            _ => false,
        })
    }
    block.iter().any(|s| match s {
        Statement::Block(b) => has_nested_return(b),
        Statement::If { accept, reject, .. } => nested(accept) || nested(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|c| nested(&c.body)),
        Statement::Loop {
            body, continuing, ..
        } => nested(body) || nested(continuing),
        _ => false,
    })
}

fn map_interpolation(i: Option<naga::Interpolation>) -> Result<Interpolation, ShaderError> {
    Ok(match i {
        None | Some(naga::Interpolation::Perspective) => Interpolation::Perspective,
        Some(naga::Interpolation::Linear) => Interpolation::Linear,
        Some(naga::Interpolation::Flat) => Interpolation::Flat,
        Some(naga::Interpolation::PerVertex) => {
            return Err(unsupported("@interpolate(per_vertex)"));
        }
    })
}

fn map_sampling(s: Option<naga::Sampling>) -> Sampling {
    match s {
        Some(naga::Sampling::Centroid) => Sampling::Centroid,
        Some(naga::Sampling::Sample) => Sampling::Sample,
        // `first` / `either` only choose the provoking vertex of flat
        // inputs, which the rasterizer state decides in Gallium
        _ => Sampling::Center,
    }
}

/// Sort order of fragment system-value inputs.
fn sem_order(s: Semantic) -> u32 {
    match s {
        Semantic::FrontFacing => 0,
        Semantic::PointCoord => 1,
        Semantic::SampleId => 2,
        Semantic::SampleMask => 3,
        _ => 4,
    }
}

/// Registers of one entry-point input binding.
fn input_regs(
    b: &mut Builder,
    stage: ShaderStage,
    semantics: &[(u32, Semantic)],
    bind: &Binding,
    ty: &TypeInner,
    slot_of: &dyn Fn(Semantic) -> Option<usize>,
    info: &mut ShaderInfo,
) -> Result<Regs, ShaderError> {
    let n = components(ty);
    let from_slot = |b: &mut Builder, sem: Semantic| -> Result<Regs, ShaderError> {
        let slot = slot_of(sem).ok_or_else(|| unsupported("input without a slot"))?;
        Ok((0..n)
            .map(|c| b.load_input(InputSrc::Slot((slot * 4 + c) as u32)))
            .collect())
    };
    match bind {
        Binding::Location { location, .. } => {
            let sem = if stage == ShaderStage::Vertex {
                Semantic::Generic(*location as u8)
            } else {
                semantics
                    .iter()
                    .find(|(l, _)| l == location)
                    .map(|(_, s)| *s)
                    .unwrap_or(Semantic::Generic((*location).min(255) as u8))
            };
            let regs = from_slot(b, sem)?;
            // the interface is f32 (vertex attributes as fetched,
            // interpolated varyings): an f16 input is its nearest half
            if types::is_f16(ty) {
                return Ok(regs
                    .into_iter()
                    .map(|r| b.un(UnOp::FQuantizeF16, r))
                    .collect());
            }
            Ok(regs)
        }
        Binding::BuiltIn(bi) => match bi {
            BuiltIn::VertexIndex => {
                info.reads_vertex_id = true;
                Ok([b.load_input(InputSrc::VertexId)].into_iter().collect())
            }
            BuiltIn::InstanceIndex => {
                info.reads_instance_id = true;
                Ok([b.load_input(InputSrc::InstanceId)].into_iter().collect())
            }
            BuiltIn::Position { .. } => Ok((0..4)
                .map(|c| b.load_input(InputSrc::FragCoord(c as u8)))
                .collect()),
            BuiltIn::FrontFacing => from_slot(b, Semantic::FrontFacing),
            BuiltIn::PointCoord => from_slot(b, Semantic::PointCoord),
            BuiltIn::SampleIndex => from_slot(b, Semantic::SampleId),
            BuiltIn::SampleMask => from_slot(b, Semantic::SampleMask),
            BuiltIn::LocalInvocationId => Ok((0..3)
                .map(|c| b.load_input(InputSrc::Compute(ComputeValue::LocalId(c))))
                .collect()),
            BuiltIn::LocalInvocationIndex => {
                Ok([b.load_input(InputSrc::Compute(ComputeValue::LocalIndex))]
                    .into_iter()
                    .collect())
            }
            BuiltIn::GlobalInvocationId => Ok((0..3)
                .map(|c| b.load_input(InputSrc::Compute(ComputeValue::GlobalId(c))))
                .collect()),
            BuiltIn::WorkGroupId => Ok((0..3)
                .map(|c| b.load_input_uniform(InputSrc::Compute(ComputeValue::WorkgroupId(c))))
                .collect()),
            BuiltIn::NumWorkGroups => Ok((0..3)
                .map(|c| b.load_input_uniform(InputSrc::Compute(ComputeValue::NumWorkgroups(c))))
                .collect()),
            other => Err(unsupported(format!(
                "input @builtin({})",
                types::builtin_name(*other)
            ))),
        },
    }
}
