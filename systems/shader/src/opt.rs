//! Passes over the lane program before it is handed to the executor:
//! dead-code elimination, copy coalescing, register allocation, and
//! compaction of the uniform file.
//!
//! The body is linear code with structured jumps, so liveness is computed
//! on the linear order with one correction: a register live at the top of a
//! loop (defined before it, used inside) stays live to the loop's back
//! edge.  That is exact for the code the lowering emits, where values
//! computed inside a loop never flow into the next iteration except through
//! registers that are defined before the loop.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use ferropipe_components::shader::ShaderInfo;
use wide::f32x8;

use crate::ShaderError;
use crate::ir::{EXEC, InputSrc, LaneProgram, Op, OutputValue, Reg, TexFn};
use crate::lanemath::splat_bits;
use crate::lower::builder::{Builder, CONST_TAG};

static NEXT_PROGRAM_ID: AtomicU64 = AtomicU64::new(1);

/// Runs the passes and assembles the program.
pub fn finish(
    b: Builder,
    mut info: ShaderInfo,
    dead_lanes_idle: bool,
) -> Result<LaneProgram, ShaderError> {
    let nconst = b.consts.len() as u32;
    let next_v = b.next_v;
    let mut prologue = b.prologue;
    let mut body = b.body;
    // constants first in the uniform file, computed uniforms after them
    let renumber = |r: Reg| -> Reg {
        if !r.is_uniform() {
            r
        } else if r.0 & CONST_TAG != 0 {
            Reg::u((r.index() as u32) & !CONST_TAG)
        } else {
            Reg::u(r.index() as u32 + nconst)
        }
    };
    for op in prologue.iter_mut().chain(body.iter_mut()) {
        op.map_regs(renumber);
    }

    local_cse(&mut body);
    dce(&mut prologue, &mut body);
    for _ in 0..8 {
        if !coalesce(&mut body) {
            break;
        }
        dce(&mut prologue, &mut body);
    }

    mark_live_results(&mut prologue, &mut body);

    let mut prog = LaneProgram {
        id: NEXT_PROGRAM_ID.fetch_add(1, Ordering::Relaxed),
        info: ShaderInfo::default(),
        consts: b.consts.iter().map(|c| splat_bits(*c)).collect(),
        num_uniform: nconst + b.next_u,
        num_varying: next_v,
        prologue,
        body,
        dead_lanes_idle,
        compute: None,
    };
    compact_uniforms(&mut prog);

    // interface facts that depend on what survived
    info.frag_coord_mask = 0;
    // Which input components survive optimisation (read masks start empty
    // and collect every load below).
    for input in &mut info.inputs {
        input.read = 0;
    }
    info.reads_vertex_id = false;
    info.reads_instance_id = false;
    info.sampler_views_used = 0;
    info.samplers_used = 0;
    for op in prog.prologue.iter().chain(prog.body.iter()) {
        match op {
            Op::LoadInput {
                src: InputSrc::FragCoord(c),
                ..
            } => info.frag_coord_mask |= 1 << c,
            Op::LoadInput {
                src: InputSrc::Slot(row),
                ..
            } => {
                if let Some(input) = info.inputs.get_mut(*row as usize / 4) {
                    input.read |= 1 << (row % 4);
                }
            }
            Op::LoadInput {
                src: InputSrc::VertexId,
                ..
            } => info.reads_vertex_id = true,
            Op::LoadInput {
                src: InputSrc::InstanceId,
                ..
            } => info.reads_instance_id = true,
            Op::Texture(t) => {
                info.sampler_views_used |= 1u128 << (t.view & 127);
                if t.func != TexFn::Load {
                    info.samplers_used |= 1u32 << (t.sampler & 31);
                }
            }
            Op::TextureQuery(q) => info.sampler_views_used |= 1u128 << (q.view & 127),
            _ => {}
        }
    }
    prog.info = info;
    prog.info.output_values = output_values(&prog);

    allocate_registers(&mut prog);
    group_texture_lookups(&mut prog.body);
    prog.verify()
        .map_err(|e| ShaderError::validation(format!("internal compiler error: {e}")))?;
    Ok(prog)
}

/// Moves each texture op up to just after an earlier texture op that
/// reads the same coordinate registers, across the register-only ops
/// between them, where that changes nothing: a material's maps sampled
/// at one UV set then sit side by side, and the executor runs them as one
/// loop that addresses the texels once (`texture::fusable_ops`;
/// pbr_barrels' normal map was six ops away from the other two).
///
/// An op `x` between is crossed only when it is a register op (no memory,
/// control flow, execution mask or texture), defines none of the moved
/// op's operands or results and reads none of its results, and no jump
/// lands on it or on the moved op; so every register holds what it held
/// before at every read, and every path runs the same ops.  Runs after
/// register allocation, on the final registers.
fn group_texture_lookups(body: &mut Vec<Op>) {
    let mut targets = vec![false; body.len() + 1];
    for op in body.iter() {
        if let Some(t) = op.target()
            && let Some(f) = targets.get_mut(t as usize)
        {
            *f = true;
        }
    }
    for j in 1..body.len() {
        let Op::Texture(t) = &body[j] else {
            continue;
        };
        if targets[j] {
            continue;
        }
        let coords = &t.coord[..t.coord_count().min(3)];
        let mut uses: Vec<Reg> = Vec::new();
        body[j].for_each_use(|r| uses.push(r));
        let dsts = t.dst;
        let mut at = None;
        for i in (0..j).rev() {
            if let Op::Texture(u) = &body[i] {
                if u.coord[..u.coord_count().min(3)] == *coords && i + 1 < j {
                    at = Some(i + 1);
                }
                break;
            }
            let crossable = matches!(
                body[i],
                Op::Un { .. }
                    | Op::Bin { .. }
                    | Op::Tri { .. }
                    | Op::Mov { .. }
                    | Op::LoadInput { .. }
                    | Op::LoadConst { .. }
            );
            let mut conflict = !crossable || targets[i];
            body[i].for_each_def(|r| conflict |= uses.contains(&r) || dsts.contains(&r));
            body[i].for_each_use(|r| conflict |= dsts.contains(&r));
            if conflict {
                break;
            }
        }
        if let Some(p) = at {
            // (no jump lands in p..=j, so no target moves)
            let op = body.remove(j);
            body.insert(p, op);
            targets.remove(j);
            targets.insert(p, false);
        }
    }
}

/// Output component values the pipeline can use without running the shader
/// (a constant, an input passed through, or computed), read off the
/// finished body.
pub fn output_values(prog: &LaneProgram) -> Vec<[OutputValue; 4]> {
    let n = prog.info.outputs.len();
    let mut out = vec![[OutputValue::Undefined; 4]; n];
    // single definitions of varying registers
    let mut defs: HashMap<Reg, Option<&Op>> = HashMap::new();
    for op in &prog.body {
        op.for_each_def(|r| {
            defs.entry(r).and_modify(|e| *e = None).or_insert(Some(op));
        });
    }
    for op in &prog.body {
        if let Op::StoreOutput { slot, a } = op {
            let (s, c) = (*slot as usize / 4, *slot as usize % 4);
            if s >= n {
                continue;
            }
            out[s][c] = if a.is_uniform() {
                if a.index() < prog.consts.len() {
                    OutputValue::Constant(
                        crate::lanemath::as_u(prog.consts[a.index()]).to_array()[0],
                    )
                } else {
                    OutputValue::Computed
                }
            } else {
                match defs.get(a).copied().flatten() {
                    Some(Op::LoadInput {
                        src: InputSrc::Slot(sc),
                        ..
                    }) => OutputValue::Input {
                        slot: sc / 4,
                        component: (sc % 4) as u8,
                    },
                    _ => OutputValue::Computed,
                }
            };
        }
    }
    out
}

/// Removes pure ops whose results nothing reads (flow-insensitive, to a
/// fixed point).  A partial write's read of its own destination does not
/// keep it alive.
pub fn dce(prologue: &mut Vec<Op>, body: &mut Vec<Op>) {
    loop {
        let mut uses: HashMap<Reg, u32> = HashMap::new();
        for op in prologue.iter().chain(body.iter()) {
            let mut defs = Vec::new();
            op.for_each_def(|r| defs.push(r));
            op.for_each_use(|r| {
                if !(op.is_partial_write() && defs.contains(&r)) {
                    *uses.entry(r).or_default() += 1;
                }
            });
        }
        let live = |op: &Op| {
            if op.has_side_effects() {
                return true;
            }
            let mut any = false;
            op.for_each_def(|r| any |= r == EXEC || uses.get(&r).copied().unwrap_or(0) > 0);
            any
        };
        let before = prologue.len() + body.len();
        prologue.retain(live);
        retain_body(body, |op| live(op));
        if prologue.len() + body.len() == before {
            return;
        }
    }
}

/// Clears [`crate::ir::TexOp::live`] bits of texture results nothing reads.  Runs
/// on the virtual registers (before allocation), where a register that is
/// never read anywhere is dead wherever it is written: flow-insensitive,
/// so exact for the lowering's single-definition results and
/// conservative for anything else.  Allocation still gives a dead result
/// a register (its interval is the op), so leaving it unwritten changes
/// no other value.
fn mark_live_results(prologue: &mut [Op], body: &mut [Op]) {
    let mut read: HashSet<Reg> = HashSet::new();
    for op in prologue.iter().chain(body.iter()) {
        op.for_each_use(|r| {
            read.insert(r);
        });
    }
    for op in prologue.iter_mut().chain(body.iter_mut()) {
        if let Op::Texture(t) = op {
            let mut live = 0u8;
            for (k, r) in t.dst.iter().enumerate().take(t.result_count()) {
                if read.contains(r) {
                    live |= 1 << k;
                }
            }
            t.live = live;
        }
    }
}

/// Local common-subexpression elimination on the body's virtual
/// registers: inside a basic block, an op that repeats an earlier one
/// (same operation, same operands, none of them written in between)
/// becomes moves from the earlier op's results, which [`coalesce`] then
/// removes.  NIR's `nir_opt_cse` does this for llvmpipe, texture
/// instructions included; naga's IR repeats what the source repeats:
/// postprocess samples `uv` twice (`.rgb` first, `.g` for the sharp
/// image), one of its 16 bilinear samples per pixel, and the unrolled
/// tap loop recomputes its loop-invariant products per tap.
///
/// Pure ops only, and conservatively: the table empties at every jump
/// and jump target, at `SetExec`, `Kill` and `Barrier` (an op under a
/// different `EXEC` is not assumed to compute the same lanes), and a
/// memory write forgets every memory and image read (a texture may be
/// the view of a written image).  An op that writes one of its own
/// operands is never reused.
fn local_cse(body: &mut Vec<Op>) {
    let targets: HashSet<u32> = body.iter().filter_map(Op::target).collect();
    let mut table: HashMap<String, usize> = HashMap::new();
    // each entry: its key (to remove it), and its results
    let mut entries: Vec<(String, Vec<Reg>)> = Vec::new();
    // register -> entries that read or write it
    let mut by_reg: HashMap<Reg, Vec<usize>> = HashMap::new();
    let mut memory_reads: Vec<usize> = Vec::new();
    let mut replaced: HashMap<usize, Vec<Op>> = HashMap::new();
    for (i, op) in body.iter().enumerate() {
        let boundary = targets.contains(&(i as u32))
            || op.target().is_some()
            || matches!(op, Op::SetExec { .. } | Op::Kill { .. } | Op::Barrier);
        if boundary {
            table.clear();
            by_reg.clear();
            memory_reads.clear();
        }
        if matches!(
            op,
            Op::MemStore { .. } | Op::MemAtomic(_) | Op::ImageStore(_)
        ) {
            for e in memory_reads.drain(..) {
                forget(&mut table, &entries, e);
            }
        }
        let mut defs: Vec<Reg> = Vec::new();
        op.for_each_def(|r| defs.push(r));
        let key = cse_key(op, &defs);
        let reuse = key
            .as_ref()
            .and_then(|k| table.get(k))
            .map(|&e| entries[e].1.clone());
        if let Some(src) = &reuse {
            let movs = defs
                .iter()
                .zip(src)
                .map(|(&d, &a)| Op::Mov { d, a })
                .collect();
            replaced.insert(i, movs);
        }
        // what this op writes is no longer what earlier entries read or
        // produced
        for d in &defs {
            if let Some(es) = by_reg.remove(d) {
                for e in es {
                    forget(&mut table, &entries, e);
                }
            }
        }
        if let (Some(k), None) = (key, reuse) {
            let e = entries.len();
            let mut regs: Vec<Reg> = defs.clone();
            op.for_each_use(|r| regs.push(r));
            for r in regs {
                by_reg.entry(r).or_default().push(e);
            }
            if matches!(op, Op::MemLoad { .. } | Op::ImageLoad(_) | Op::Texture(_)) {
                memory_reads.push(e);
            }
            table.insert(k.clone(), e);
            entries.push((k, defs));
        }
    }
    if !replaced.is_empty() {
        splice_body(body, replaced);
    }
}

/// Removes entry `e` from [`local_cse`]'s table (unless its key now
/// names a later entry).
fn forget(table: &mut HashMap<String, usize>, entries: &[(String, Vec<Reg>)], e: usize) {
    let key = &entries[e].0;
    if table.get(key) == Some(&e) {
        table.remove(key);
    }
}

/// The key under which [`local_cse`] finds `op` (its `Debug` text with
/// the results blanked), or `None` when it is not a candidate.
fn cse_key(op: &Op, defs: &[Reg]) -> Option<String> {
    let pure = matches!(
        op,
        Op::Un { .. }
            | Op::Bin { .. }
            | Op::Tri { .. }
            | Op::InsertBits { .. }
            | Op::Pack { .. }
            | Op::Unpack { .. }
            | Op::Deriv { .. }
            | Op::Extract { .. }
            | Op::LoadInput { .. }
            | Op::LoadConst { .. }
            | Op::LoadConstDyn { .. }
            | Op::MemLoad { .. }
            | Op::ImageLoad(_)
            | Op::Texture(_)
            | Op::TextureQuery(_)
    );
    if !pure || defs.is_empty() || defs.iter().any(|d| *d == EXEC || d.is_uniform()) {
        return None;
    }
    let mut reads_own_result = false;
    op.for_each_use(|r| reads_own_result |= defs.contains(&r));
    if reads_own_result {
        return None;
    }
    let mut k = op.clone();
    let blank = Reg::u(u32::MAX >> 2);
    k.map_regs(|r| if defs.contains(&r) { blank } else { r });
    Some(format!("{k:?}"))
}

/// Replaces op `i` of the body by `replaced[i]` (one or more ops), fixing
/// jump targets.
fn splice_body(body: &mut Vec<Op>, mut replaced: HashMap<usize, Vec<Op>>) {
    let old = std::mem::take(body);
    let mut new_index = Vec::with_capacity(old.len() + 1);
    for (i, op) in old.into_iter().enumerate() {
        new_index.push(body.len() as u32);
        match replaced.remove(&i) {
            Some(ops) => body.extend(ops),
            None => body.push(op),
        }
    }
    new_index.push(body.len() as u32);
    for op in body.iter_mut() {
        if let Some(t) = op.target_mut() {
            *t = new_index[*t as usize];
        }
    }
}

/// `Vec::retain` for the body, fixing jump targets.
fn retain_body(body: &mut Vec<Op>, mut keep: impl FnMut(&Op) -> bool) {
    let mut new_index = Vec::with_capacity(body.len() + 1);
    let mut n = 0u32;
    let flags: Vec<bool> = body.iter().map(&mut keep).collect();
    for k in &flags {
        new_index.push(n);
        if *k {
            n += 1;
        }
    }
    new_index.push(n);
    let old = std::mem::take(body);
    for (op, k) in old.into_iter().zip(flags) {
        if k {
            body.push(op);
        }
    }
    for op in body.iter_mut() {
        if let Some(t) = op.target_mut() {
            *t = new_index[*t as usize];
        }
    }
}

/// Live intervals of varying registers in "positions" (use of op i at
/// 2i, defs at 2i + 1, or at 2i for ops with several results, which must
/// not share registers between operands and results).
struct Intervals {
    range: HashMap<u32, (u32, u32)>,
    defs: HashMap<u32, Vec<u32>>,
}

fn intervals(body: &[Op]) -> Intervals {
    let mut range: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut defs: HashMap<u32, Vec<u32>> = HashMap::new();
    let touch = |r: Reg, p: u32, range: &mut HashMap<u32, (u32, u32)>| {
        if r.is_uniform() || r == EXEC {
            return;
        }
        let e = range.entry(r.0).or_insert((p, p));
        e.0 = e.0.min(p);
        e.1 = e.1.max(p);
    };
    for (i, op) in body.iter().enumerate() {
        let u = 2 * i as u32;
        let mut ndefs = 0;
        op.for_each_def(|_| ndefs += 1);
        let d = if ndefs > 1 { u } else { u + 1 };
        op.for_each_use(|r| touch(r, u, &mut range));
        op.for_each_def(|r| {
            touch(r, d, &mut range);
            if !r.is_uniform() {
                defs.entry(r.0).or_default().push(d);
            }
        });
    }
    // loops: live at the top means live to the back edge
    let loops: Vec<(u32, u32)> = body
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match op {
            Op::JumpIfAny { target } | Op::Jump { target } if (*target as usize) <= i => {
                Some((2 * *target, 2 * i as u32 + 1))
            }
            _ => None,
        })
        .collect();
    if !loops.is_empty() {
        loop {
            let mut changed = false;
            for (s, e) in range.values_mut() {
                for &(top, bottom) in &loops {
                    if *s < top && *e >= top && *e < bottom {
                        *e = bottom;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    Intervals { range, defs }
}

/// Removes `Mov`s whose destination can share the source's register.
/// Returns whether anything changed.
fn coalesce(body: &mut Vec<Op>) -> bool {
    let iv = intervals(body);
    let mut replace: HashMap<Reg, Reg> = HashMap::new();
    let mut rename: HashMap<Reg, Reg> = HashMap::new();
    let mut dead = vec![false; body.len()];
    let mut touched: Vec<u32> = Vec::new();
    for (i, op) in body.iter().enumerate() {
        let Op::Mov { d, a } = op else { continue };
        let (d, a) = (*d, *a);
        if d == EXEC
            || d.is_uniform()
            || touched.contains(&d.0)
            || (!a.is_uniform() && touched.contains(&a.0))
        {
            continue;
        }
        let d_defs = iv.defs.get(&d.0).map_or(0, |v| v.len());
        if d_defs != 1 {
            continue;
        }
        let Some(&(ds, de)) = iv.range.get(&d.0) else {
            continue;
        };
        let pos = 2 * i as u32 + 1;
        if a.is_uniform() {
            replace.insert(d, a);
        } else if a != EXEC {
            let a_written_inside = iv
                .defs
                .get(&a.0)
                .is_some_and(|v| v.iter().any(|&p| p > pos && p <= de));
            if !a_written_inside && ds == pos {
                replace.insert(d, a);
            } else {
                // the source dies here and is defined once by a plain op:
                // let that op write the destination directly
                let a_defs = iv.defs.get(&a.0).map_or(0, |v| v.len());
                let Some(&(as_, ae)) = iv.range.get(&a.0) else {
                    continue;
                };
                if a_defs == 1 && ae == 2 * i as u32 && ds == pos && iv.defs[&a.0][0] == as_ {
                    rename.insert(a, d);
                } else {
                    continue;
                }
            }
        } else {
            continue;
        }
        dead[i] = true;
        touched.push(d.0);
        if !a.is_uniform() {
            touched.push(a.0);
        }
    }
    if replace.is_empty() && rename.is_empty() {
        return false;
    }
    for op in body.iter_mut() {
        op.map_regs(|r| *replace.get(&r).or_else(|| rename.get(&r)).unwrap_or(&r));
    }
    let mut i = 0;
    retain_body(body, |_| {
        i += 1;
        !dead[i - 1]
    });
    true
}

/// Linear-scan allocation of varying registers (EXEC stays register 0).
fn allocate_registers(prog: &mut LaneProgram) {
    let iv = intervals(&prog.body);
    let mut order: Vec<(u32, u32, u32)> = iv.range.iter().map(|(r, (s, e))| (*s, *e, *r)).collect();
    order.sort_unstable();
    let mut free: Vec<u32> = Vec::new();
    let mut active: Vec<(u32, u32)> = Vec::new(); // (end, phys)
    let mut next = 1u32;
    let mut map: HashMap<u32, u32> = HashMap::new();
    for (s, e, r) in order {
        active.retain(|&(end, phys)| {
            if end < s {
                free.push(phys);
                false
            } else {
                true
            }
        });
        let phys = free.pop().unwrap_or_else(|| {
            next += 1;
            next - 1
        });
        map.insert(r, phys);
        active.push((e, phys));
    }
    for op in prog.body.iter_mut() {
        op.map_regs(|r| {
            if r.is_uniform() || r == EXEC {
                r
            } else {
                Reg::v(*map.get(&r.0).unwrap_or(&0))
            }
        });
    }
    prog.num_varying = next;
}

/// Drops unused constants and uniform registers and renumbers the rest.
fn compact_uniforms(prog: &mut LaneProgram) {
    let nconst = prog.consts.len();
    let mut used = vec![false; prog.num_uniform as usize];
    for op in prog.prologue.iter().chain(prog.body.iter()) {
        op.for_each_use(|r| {
            if r.is_uniform() {
                used[r.index()] = true;
            }
        });
        op.for_each_def(|r| {
            if r.is_uniform() {
                used[r.index()] = true;
            }
        });
    }
    let mut map = vec![0u32; used.len()];
    let mut consts = Vec::new();
    let mut n = 0u32;
    for (i, u) in used.iter().enumerate().take(nconst) {
        if *u {
            map[i] = n;
            consts.push(prog.consts[i]);
            n += 1;
        }
    }
    for (i, u) in used.iter().enumerate().skip(nconst) {
        if *u {
            map[i] = n;
            n += 1;
        }
    }
    for op in prog.prologue.iter_mut().chain(prog.body.iter_mut()) {
        op.map_regs(|r| {
            if r.is_uniform() {
                Reg::u(map[r.index()])
            } else {
                r
            }
        });
    }
    prog.consts = consts;
    prog.num_uniform = n;
    let _ = f32x8::ZERO;
}

#[cfg(test)]
mod tests {
    use crate::ir::{BinOp, Op, Reg, TexOp};
    use crate::{Language, compile};
    use ferropipe_components::enums::ShaderType;

    /// A texture op moves up beside an earlier one at the same coordinates
    /// across register ops that neither change its operands nor touch its
    /// results, and stays where a crossed op would, where a jump lands in
    /// between, or where the coordinates differ; jumps keep their ops.
    #[test]
    fn texture_lookups_group_only_where_nothing_changes() {
        let tex = |view: u32, c0: u32, d: u32| {
            Op::Texture(Box::new(TexOp::sample_2d(view, Reg::v(c0), Reg::v(1), d)))
        };
        let mul = |d: u32, a: u32| Op::Bin {
            f: BinOp::FMul,
            d: Reg::v(d),
            a: Reg::v(a),
            b: Reg::u(1),
        };
        let views = |body: &[Op]| -> Vec<Option<u32>> {
            body.iter()
                .map(|op| match op {
                    Op::Texture(t) => Some(t.view),
                    _ => None,
                })
                .collect()
        };
        let run = |mut body: Vec<Op>| {
            super::group_texture_lookups(&mut body);
            body
        };
        // moves over two multiplies (one reads the first lookup's result)
        let body = run(vec![tex(0, 0, 2), mul(20, 2), mul(21, 20), tex(1, 0, 6)]);
        assert_eq!(views(&body), [Some(0), Some(1), None, None]);
        // a crossed op writes a coordinate, reads a result, writes a result
        for blocker in [mul(0, 2), mul(20, 6), mul(7, 2)] {
            let body = run(vec![tex(0, 0, 2), blocker, tex(1, 0, 6)]);
            assert_eq!(views(&body), [Some(0), None, Some(1)]);
        }
        // other coordinates
        let body = run(vec![tex(0, 0, 2), mul(20, 2), tex(1, 12, 6)]);
        assert_eq!(views(&body), [Some(0), None, Some(1)]);
        // a jump lands on the crossed op: stays; a jump after it keeps its
        // target op when the lookup moves ahead of the jump's target
        let body = run(vec![
            Op::JumpIfNone { target: 2 },
            tex(0, 0, 2),
            mul(20, 2),
            tex(1, 0, 6),
        ]);
        assert_eq!(views(&body), [None, Some(0), None, Some(1)]);
        let body = run(vec![
            tex(0, 0, 2),
            mul(20, 2),
            tex(1, 0, 6),
            Op::JumpIfNone { target: 4 },
            mul(21, 20),
        ]);
        assert_eq!(views(&body), [Some(0), Some(1), None, None, None]);
        assert!(matches!(body[3], Op::JumpIfNone { target: 4 }));
        assert!(matches!(body[4], Op::Bin { d, .. } if d == Reg::v(21)));
    }

    /// Input read masks list the components that survive optimisation:
    /// setup and interpolation skip the rest.
    #[test]
    fn input_read_masks_follow_the_loads() {
        let src = "
            struct V { @builtin(position) p: vec4<f32>, @location(0) uv: vec4<f32>,
                       @location(1) c: vec4<f32> };
            @fragment fn fs(v: V) -> @location(0) vec4<f32> {
                let unused = v.c.y * 0.0;
                return vec4<f32>(v.uv.xy, v.c.w, 1.0);
            }";
        let c = compile(Language::Wgsl, src, "fs", ShaderType::Fragment, &[]).unwrap();
        let read: Vec<u8> = c.info().inputs.iter().map(|i| i.read).collect();
        let slot = |loc: u32| {
            c.info()
                .inputs
                .iter()
                .position(|i| {
                    i.location == loc
                        && i.semantic != ferropipe_components::shader::Semantic::Position
                })
                .unwrap()
        };
        assert_eq!(read[slot(0)], 0b0011, "{read:?}");
        assert_eq!(read[slot(1)], 0b1000, "{read:?}");
    }

    /// A texture op's `live` mask lists the results the program reads:
    /// the executors write (and the sampler converts) only those.
    #[test]
    fn texture_results_nothing_reads_are_not_live() {
        let src = "
            @group(1) @binding(0) var t: texture_2d<f32>;
            @group(2) @binding(0) var s: sampler;
            struct V { @builtin(position) p: vec4<f32>, @location(0) uv: vec4<f32> };
            @fragment fn fs(v: V) -> @location(0) vec4<f32> {
                let a = textureSample(t, s, v.uv.xy).rgb;
                let b = textureSample(t, s, v.uv.yx).g;
                let c = textureSample(t, s, v.uv.zw);
                return vec4<f32>(a * b, c.w);
            }";
        let c = compile(Language::Wgsl, src, "fs", ShaderType::Fragment, &[]).unwrap();
        let live: Vec<u8> = c
            .program()
            .body
            .iter()
            .filter_map(|op| match op {
                crate::ir::Op::Texture(t) => Some(t.live),
                _ => None,
            })
            .collect();
        assert_eq!(live, [0b0111, 0b0010, 0b1000]);
    }

    fn count(ops: &[crate::ir::Op], f: impl Fn(&crate::ir::Op) -> bool) -> usize {
        ops.iter().filter(|op| f(op)).count()
    }

    /// A sample or product a block repeats is computed once
    /// (`local_cse`): postprocess samples `uv` twice.  The merged sample
    /// keeps the results either use live.
    #[test]
    fn repeats_in_a_block_are_computed_once() {
        let src = "
            @group(1) @binding(0) var t: texture_2d<f32>;
            @group(2) @binding(0) var s: sampler;
            struct V { @builtin(position) p: vec4<f32>, @location(0) uv: vec4<f32> };
            @fragment fn fs(v: V) -> @location(0) vec4<f32> {
                let a = textureSample(t, s, v.uv.xy).rb;
                let k = v.uv.z * v.uv.w;
                let b = textureSample(t, s, v.uv.xy).g;
                let k2 = v.uv.z * v.uv.w;
                return vec4<f32>(a, b, k + k2);
            }";
        let c = compile(Language::Wgsl, src, "fs", ShaderType::Fragment, &[]).unwrap();
        let body = &c.program().body;
        let tex: Vec<u8> = body
            .iter()
            .filter_map(|op| match op {
                crate::ir::Op::Texture(t) => Some(t.live),
                _ => None,
            })
            .collect();
        assert_eq!(tex, [0b0111], "{body:?}");
        let muls = count(body, |op| {
            matches!(
                op,
                crate::ir::Op::Bin {
                    f: crate::ir::BinOp::FMul,
                    ..
                }
            )
        });
        assert_eq!(muls, 1, "{body:?}");
    }

    /// A load after a store to memory is not the earlier load's value.
    #[test]
    fn a_load_after_a_store_reads_again() {
        let src = "
            @group(3) @binding(0) var<storage, read_write> buf: array<u32>;
            @compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) {
                let a = buf[3];
                buf[3] = a + i;
                let b = buf[3];
                buf[i + 8u] = a * b;
            }";
        let k = crate::compile_compute(Language::Wgsl, src, "main").unwrap();
        let body = &k.program().body;
        let loads = count(body, |op| matches!(op, crate::ir::Op::MemLoad { .. }));
        assert_eq!(loads, 2, "{body:?}");
    }
}
