//! The lane-program interpreter (llvmpipe's counterpart: the JIT-compiled
//! fragment/vertex shader functions of `lp_state_fs.c` / `draw_llvm.c`).
//!
//! # Dispatch
//! One `match` per op, then a tight loop over the `groups` registers of the
//! operands: dispatch is paid once per `groups * 8` lanes.  Every arithmetic
//! op family is monomorphised per op (`un_dispatch!` and friends), so each
//! op's loop is straight SIMD code without an inner branch.
//!
//! # Register file
//! One contiguous `Vec<Lanes>` per thread: `[uniform registers][varying
//! registers]`.  A uniform register is one `Lanes`; varying register `r` is
//! `groups` consecutive `Lanes` at `nu + r * groups`.  An operand is
//! resolved to `(base, mask)` with `mask = 0` for uniform and `!0` for
//! varying registers, so `file[base + (g & mask)]` reads either without a
//! branch in the loop ([`crate::ir::loc`], through which the memory and
//! texture ops address the file too).
//!
//! # Chunks
//! A call with many groups is run in chunks whose varying registers fit in
//! about 64 KiB (at most 64 groups = 512 lanes), so big shaders stay in L1/L2
//! while small ones amortise dispatch over the whole chunk.  The prologue
//! (uniform ops) runs once per call.  A compute call (one workgroup, at
//! most 1024 invocations = 128 groups) is always one chunk, whatever its
//! register count: its barriers rely on every op finishing for the whole
//! workgroup before the next (`lower/memory.rs`).
//!
//! # Scratch memory
//! The register file lives in a thread-local [`Scratch`] that only grows,
//! so `run` is allocation-free in steady state.  The constants at the start
//! of the uniform file are copied only when the thread's previous call ran a
//! different program.  (A thread-local rather than a pool: the pipeline's
//! workers are long-lived pool threads, each shading one tile at a time, so
//! per-thread scratch is contention-free and naturally cache-warm.)

use std::cell::RefCell;

use smallvec::SmallVec;

use ferropipe_components::shader::{Lanes, ShaderResources};
use wide::{f32x8, u32x8};

use crate::call::CallIo;
use crate::ir::{BinOp, EXEC, InputSrc, LaneProgram, Op, Reg, TexOp, TriOp, UnOp, loc};
use crate::jit::{Chunk, InlineHow, InlineTex, JitCode};
use crate::lanemath::{self, as_u, from_u};
use crate::memory;
use crate::texture;

/// Largest chunk of groups run at once (512 lanes: a quarter of a full
/// fragment batch, the pipeline's `MAX_BATCH_GROUPS`).  Per-op work that
/// does not depend on the lanes (dispatch, a texture op's view and
/// sampler setup) is paid per chunk:
/// 64 instead of 16 made textured_mesh ~2 % faster at one thread (paired
/// A/B), and a small program's registers still fit L1 (`CHUNK_BYTES`
/// bounds large ones).
pub const MAX_CHUNK_GROUPS: usize = 64;
/// Register-file budget per chunk (varying registers).
const CHUNK_BYTES: usize = 64 * 1024;
/// Loop work one call may do before the executor gives up on a runaway
/// loop (the GPU analogue is a device-lost timeout), in group-trips: a
/// back edge costs the chunk's group count plus [`BACK_EDGE_COST`] (what
/// the executor pays per back edge whatever the chunk's size).  2^24 is
/// ~246,000 trips of a 64-group fragment batch (~0.6 s in the
/// interpreter: 2^20 back edges of 64 groups took 2.4 s on a nested loop)
/// and ~3.3 M of a one-group call, far beyond any loop that finishes in
/// a frame.  The call then returns `true` ([`run`]) and its outputs are
/// whatever they were: `launch_grid` and the draw's flush report it as
/// [`crate::ShaderError::LoopLimit`], never as a normal completion.
pub const MAX_LOOP_TRIPS: u64 = 1 << 24;
/// The fixed part of a back edge's cost in [`MAX_LOOP_TRIPS`]: the
/// dispatch of a loop's ops, paid per chunk, is about four groups' work.
const BACK_EDGE_COST: u64 = 4;

/// Per-thread scratch memory of the interpreter.
#[derive(Default)]
pub struct Scratch {
    file: Vec<Lanes>,
    /// Program whose constants are at the start of `file`.
    consts_of: u64,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `prog` over all groups of `io`, using this thread's scratch, with
/// `jit` (its native code, when the JIT back end compiled it) running the
/// regions it covers.  Returns whether the call stopped at
/// [`MAX_LOOP_TRIPS`] (the results are then incomplete).
#[must_use]
pub fn run(prog: &LaneProgram, jit: Option<&JitCode>, io: &mut CallIo<'_, '_>) -> bool {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut scratch) => run_with(prog, jit, io, &mut scratch),
        // Re-entered from inside a shader call (a Rust-native shader that
        // runs a compiled one): use a temporary scratch.
        Err(_) => run_with(prog, jit, io, &mut Scratch::default()),
    })
}

/// Groups per chunk for a program with `nv` varying registers.
pub fn chunk_groups(nv: usize) -> usize {
    (CHUNK_BYTES / (nv.max(1) * std::mem::size_of::<Lanes>())).clamp(1, MAX_CHUNK_GROUPS)
}

/// Runs `prog` with explicit scratch memory (returns as [`run`]).
#[must_use]
pub fn run_with(
    prog: &LaneProgram,
    jit: Option<&JitCode>,
    io: &mut CallIo<'_, '_>,
    scratch: &mut Scratch,
) -> bool {
    let total = io.groups;
    if total == 0 {
        return false;
    }
    let nu = prog.num_uniform as usize;
    let nv = prog.num_varying as usize;
    // A compute call is one workgroup and runs as one chunk whatever its
    // size: every op then finishes for all invocations before the next
    // starts, which is what makes barriers hold (see `memory.rs`).
    let chunk = if prog.compute.is_some() {
        total
    } else {
        chunk_groups(nv).min(total)
    };
    let need = nu + nv * chunk;
    if scratch.file.len() < need {
        scratch.file.resize(need, f32x8::ZERO);
        scratch.consts_of = 0;
    }
    let file = &mut scratch.file[..need];
    if scratch.consts_of != prog.id {
        file[..prog.consts.len()].copy_from_slice(&prog.consts);
        scratch.consts_of = prog.id;
    }
    let mut state = State {
        nu,
        nv,
        groups: 1,
        g0: 0,
        exec_any: true,
        exec_full: true,
        loop_trips: 0,
        loop_limit: false,
    };
    // One cache of views, samplers and sampling plans for the call: the
    // bindings are the call's, and every chunk reads the same ones.
    let mut samplers = texture::SamplerCache::default();
    run_ops(
        &prog.prologue,
        file,
        &mut state,
        io,
        None,
        &[],
        &mut samplers,
    );
    // the JIT's regions, unless the call's buffers are shorter than the
    // program's interface (then every op checks its accesses)
    let jit = jit.filter(|j| j.fits(prog, io));
    // and, where the call's bindings let the JIT sample inline, the
    // variant of its code keyed by their static sampler state, with the
    // descriptors it reads
    let mut descs: SmallVec<[texture::TexDesc; 2]> = SmallVec::new();
    let variant = match jit {
        Some(j) if !j.candidates().is_empty() => {
            inline_variant(prog, j, io.resources, &mut samplers, &mut descs)
        }
        _ => None,
    };
    // (a variant holds the same ops in regions as its base, so it fits the
    // call's buffers where the base does; checked all the same, as the
    // unsafe call boundary's contract); without one, the code without
    // inlined lookups, which a deferred tier compiles now if no call has
    // needed it before
    let jit = match variant.as_deref().filter(|v| v.fits(prog, io)) {
        Some(v) => Some(v),
        None => jit.and_then(|j| j.base(prog)).filter(|j| j.fits(prog, io)),
    };
    let mut g0 = 0;
    while g0 < total {
        let groups = chunk.min(total - g0);
        state.groups = groups;
        state.g0 = g0;
        init_exec(prog, file, &mut state, io);
        if state.exec_any || !prog.dead_lanes_idle {
            run_ops(&prog.body, file, &mut state, io, jit, &descs, &mut samplers);
        }
        if state.loop_limit {
            // The call's results are incomplete already (the caller
            // reports it as an error): the remaining chunks would each
            // spend the same trips on the same runaway loop.
            break;
        }
        g0 += groups;
    }
    state.loop_limit
}

/// The sampling variant of `j` for the call's bindings `res`
/// ([`JitCode::variant`]): each candidate lookup's static half, where the
/// bindings let it be inlined, and its descriptor pushed to `descs` (one
/// slot per (view, sampler) pair).  `None`: no lookup is inlined, and the
/// call runs `j`.
fn inline_variant<'r>(
    prog: &LaneProgram,
    j: &JitCode,
    res: &ShaderResources<'r>,
    samplers: &mut texture::SamplerCache<'r>,
    descs: &mut SmallVec<[texture::TexDesc; 2]>,
) -> Option<std::sync::Arc<JitCode>> {
    let mut key: SmallVec<[InlineTex; 16]> = SmallVec::new();
    let mut pairs: SmallVec<[(u32, u32); 2]> = SmallVec::new();
    // the previous candidate: its body op, and its spec and descriptor
    // where it is inlined
    let mut prev: Option<(u32, Option<(texture::InlineSample, usize)>)> = None;
    for &op in j.candidates() {
        let how = match prog.body.get(op as usize) {
            Some(Op::Texture(t)) => samplers.inline_plan(res, t).and_then(|(spec, desc)| {
                let pair = (t.view, t.sampler);
                let slot = match pairs.iter().position(|&p| p == pair) {
                    Some(s) => s,
                    None if pairs.len() < u8::MAX as usize => {
                        pairs.push(pair);
                        descs.push(desc);
                        pairs.len() - 1
                    }
                    None => return None,
                };
                let shares = matches!(prev, Some((p, Some((ps, pslot))))
                    if p + 1 == op
                        && ps.same_addressing(&spec)
                        && matches!(&prog.body[p as usize], Op::Texture(pt) if texture::same_coordinates(pt, t))
                        && descs[pslot].same_addressing(&descs[slot]));
                Some(InlineHow {
                    spec,
                    slot: slot as u8,
                    shares,
                })
            }),
            _ => None,
        };
        prev = Some((op, how.map(|h| (h.spec, h.slot as usize))));
        key.push(how);
    }
    j.variant(prog, &key)
}

struct State {
    nu: usize,
    nv: usize,
    groups: usize,
    /// First group of the chunk inside the call's buffers.
    g0: usize,
    exec_any: bool,
    exec_full: bool,
    /// Loop trips of the call so far, in groups ([`MAX_LOOP_TRIPS`]).
    loop_trips: u64,
    /// Set when the call stopped at [`MAX_LOOP_TRIPS`].
    loop_limit: bool,
}

impl State {
    /// `(base, mask)` of a register operand, see [`loc`].
    #[inline(always)]
    fn loc(&self, r: Reg) -> (usize, usize) {
        loc(r, self.nu, self.groups)
    }
}

fn init_exec(prog: &LaneProgram, file: &mut [Lanes], st: &mut State, io: &CallIo<'_, '_>) {
    let (e0, _) = st.loc(EXEC);
    let all = from_u(u32x8::splat(!0));
    for g in 0..st.groups {
        let gg = st.g0 + g;
        file[e0 + g] = match io.live.as_deref() {
            // fragment: helper lanes run too unless nothing needs them
            Some(live) if prog.dead_lanes_idle => live.get(gg).copied().unwrap_or(f32x8::ZERO),
            Some(_) => all,
            // vertex: lanes past `count` are padding; compute: so are the
            // invocations a partial last block leaves out
            None if io.compute.is_some_and(|c| c.is_partial()) => {
                let bits = memory::active_lanes(io.count, gg, io.compute);
                lanemath::mask_from_bools(std::array::from_fn(|l| bits & (1 << l) != 0))
            }
            None => {
                let base = gg * 8;
                lanemath::mask_from_bools(std::array::from_fn(|l| base + l < io.count))
            }
        };
    }
    update_exec_flags(file, st);
}

#[inline]
fn update_exec_flags(file: &[Lanes], st: &mut State) {
    let (e0, _) = st.loc(EXEC);
    let mut any = false;
    let mut full = true;
    for m in &file[e0..e0 + st.groups] {
        let bits = m.to_bitmask();
        any |= bits != 0;
        full &= bits == 0xff;
    }
    st.exec_any = any;
    st.exec_full = full;
}

#[inline(always)]
fn map1(file: &mut [Lanes], st: &State, d: Reg, a: Reg, f: impl Fn(Lanes) -> Lanes) {
    let (d0, dm) = st.loc(d);
    let (a0, am) = st.loc(a);
    for g in 0..st.groups {
        let x = file[a0 + (g & am)];
        file[d0 + (g & dm)] = f(x);
    }
}

#[inline(always)]
fn map2(file: &mut [Lanes], st: &State, d: Reg, a: Reg, b: Reg, f: impl Fn(Lanes, Lanes) -> Lanes) {
    let (d0, dm) = st.loc(d);
    let (a0, am) = st.loc(a);
    let (b0, bm) = st.loc(b);
    for g in 0..st.groups {
        let x = file[a0 + (g & am)];
        let y = file[b0 + (g & bm)];
        file[d0 + (g & dm)] = f(x, y);
    }
}

#[inline(always)]
fn map3(
    file: &mut [Lanes],
    st: &State,
    d: Reg,
    a: Reg,
    b: Reg,
    c: Reg,
    f: impl Fn(Lanes, Lanes, Lanes) -> Lanes,
) {
    let (d0, dm) = st.loc(d);
    let (a0, am) = st.loc(a);
    let (b0, bm) = st.loc(b);
    let (c0, cm) = st.loc(c);
    for g in 0..st.groups {
        let x = file[a0 + (g & am)];
        let y = file[b0 + (g & bm)];
        let z = file[c0 + (g & cm)];
        file[d0 + (g & dm)] = f(x, y, z);
    }
}

macro_rules! un_dispatch {
    ($f:expr, $file:expr, $st:expr, $d:expr, $a:expr; $($v:ident)*) => {
        match $f { $( UnOp::$v => map1($file, $st, $d, $a, |x| lanemath::un(UnOp::$v, x)), )* }
    };
}

macro_rules! bin_dispatch {
    ($f:expr, $file:expr, $st:expr, $d:expr, $a:expr, $b:expr; $($v:ident)*) => {
        match $f { $( BinOp::$v => map2($file, $st, $d, $a, $b, |x, y| lanemath::bin(BinOp::$v, x, y)), )* }
    };
}

macro_rules! tri_dispatch {
    ($f:expr, $file:expr, $st:expr, $d:expr, $a:expr, $b:expr, $c:expr; $($v:ident)*) => {
        match $f { $( TriOp::$v => map3($file, $st, $d, $a, $b, $c, |x, y, z| lanemath::tri(TriOp::$v, x, y, z)), )* }
    };
}

/// Reads 4 bytes of a constant buffer (0 past the end).
#[inline]
fn cb_word(res: &ShaderResources<'_>, cb: u32, offset: u64) -> u32 {
    let Some(buf) = res.constants.get(cb as usize) else {
        return 0;
    };
    let o = offset as usize;
    if offset > usize::MAX as u64 - 4 || o + 4 > buf.len() {
        return 0;
    }
    u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]])
}

/// A fragment shader chunk's live masks (from group `g0`): only live lanes
/// may write memory.  `None` for the other stages.
#[inline]
fn chunk_live<'a>(io: &'a CallIo<'_, '_>, g0: usize) -> Option<&'a [Lanes]> {
    io.live.as_deref().map(|l| l.get(g0..).unwrap_or(&[]))
}

fn run_ops<'r>(
    ops: &[Op],
    file: &mut [Lanes],
    st: &mut State,
    io: &mut CallIo<'_, 'r>,
    jit: Option<&JitCode>,
    tex: &[texture::TexDesc],
    samplers: &mut texture::SamplerCache<'r>,
) {
    let mut pc = 0usize;
    while pc < ops.len() {
        if let Some(j) = jit
            && let Some((region, end)) = j.region_at(pc)
        {
            let chunk = Chunk {
                nu: st.nu,
                nv: st.nv,
                groups: st.groups,
                g0: st.g0,
            };
            j.call(region, file, chunk, io, tex);
            pc = end;
            continue;
        }
        match &ops[pc] {
            Op::MemLoad {
                d,
                space,
                addr,
                offset,
            } => memory::exec_load(
                file,
                st.nu,
                st.groups,
                (*d, *space, *addr, *offset),
                io.compute,
            ),
            Op::MemStore {
                space,
                addr,
                offset,
                a,
            } => memory::exec_store(
                file,
                st.nu,
                st.groups,
                (*space, *addr, *offset, *a),
                io.compute,
                chunk_live(io, st.g0),
            ),
            Op::MemAtomic(m) => {
                let live = chunk_live(io, st.g0);
                memory::exec_atomic(file, st.nu, st.groups, m, io.compute, live)
            }
            Op::BufferLength { d, space } => {
                memory::exec_buffer_length(file, st.nu, st.groups, (*d, *space), io.compute)
            }
            Op::ImageLoad(i) => memory::exec_image_load(file, st.nu, st.groups, i, io.compute),
            Op::ImageStore(i) => {
                let live = chunk_live(io, st.g0);
                memory::exec_image_store(file, st.nu, st.groups, i, io.compute, live)
            }
            Op::ImageQuery {
                image,
                func,
                dim,
                dst,
                ..
            } => memory::exec_image_query(
                file,
                st.nu,
                st.groups,
                (*image, *func, *dim, dst),
                io.compute,
            ),
            Op::Barrier => memory::exec_barrier(file, st.nu, st.groups, io.count, io.compute),
            Op::Mov { d, a } => map1(file, st, *d, *a, |x| x),
            Op::MovMasked { d, a } => {
                if st.exec_full {
                    map1(file, st, *d, *a, |x| x);
                } else {
                    map3(file, st, *d, EXEC, *a, *d, |m, x, old| m.select(x, old));
                }
            }
            Op::Un { f, d, a } => un_dispatch!(*f, file, st, *d, *a;
                FNeg FAbs FFloor FCeil FTrunc FRound FFract FSqrt FInvSqrt FSin FCos FTan FAsin
                FAcos FAtan FSinh FCosh FTanh FAsinh FAcosh FAtanh FExp FExp2 FLog FLog2 FSign
                FSaturate FIsNan FIsInf FFrexpMant FFrexpExp FQuantizeF16 F2S F2U S2F U2F INeg SAbs
                SSign Not CountOneBits ReverseBits SFirstLeadingBit UFirstLeadingBit
                FirstTrailingBit CountLeadingZeros CountTrailingZeros),
            Op::Bin { f, d, a, b } => bin_dispatch!(*f, file, st, *d, *a, *b;
                FAdd FSub FMul FDiv FRem FMin FMax FPow FAtan2 FStep FLdexp FEq FNe FLt FLe FGt
                FGe IAdd ISub IMul SDiv SRem UDiv URem IEq INe SLt SLe SGt SGe ULt ULe UGt UGe And
                Or Xor AndNot Shl ShrS ShrU SMin SMax UMin UMax),
            Op::Tri { f, d, a, b, c } => tri_dispatch!(*f, file, st, *d, *a, *b, *c;
                FFma FMix FClamp SClamp UClamp FSmoothStep Select SExtractBits UExtractBits),
            Op::InsertBits { d, e, n, off, cnt } => {
                let (d0, dm) = st.loc(*d);
                let l = [*e, *n, *off, *cnt].map(|r| st.loc(r));
                for g in 0..st.groups {
                    let v = l.map(|(b, m)| file[b + (g & m)]);
                    file[d0 + (g & dm)] = lanemath::insert_bits(v[0], v[1], v[2], v[3]);
                }
            }
            Op::Pack { f, d, a } => {
                let (d0, dm) = st.loc(*d);
                let l = a.map(|r| st.loc(r));
                for g in 0..st.groups {
                    let v = l.map(|(b, m)| file[b + (g & m)]);
                    file[d0 + (g & dm)] = lanemath::pack(*f, v);
                }
            }
            Op::Unpack { f, d, a } => {
                let (a0, am) = st.loc(*a);
                let dl = d.map(|r| st.loc(r));
                let n = f.arity();
                for g in 0..st.groups {
                    let r = lanemath::unpack(*f, file[a0 + (g & am)]);
                    for k in 0..n {
                        file[dl[k].0 + (g & dl[k].1)] = r[k];
                    }
                }
            }
            Op::Deriv { axis, fine, d, a } => {
                let (axis, fine) = (*axis, *fine);
                map1(file, st, *d, *a, |x| lanemath::deriv(axis, fine, x))
            }
            Op::Extract { d, index, srcs } => extract(file, st, *d, *index, srcs),
            Op::Insert {
                dsts,
                srcs,
                index,
                value,
                masked,
            } => insert(
                file,
                st,
                dsts,
                srcs,
                *index,
                *value,
                *masked && !st.exec_full,
            ),
            Op::LoadInput { d, src } => load_input(file, st, io, *d, *src),
            Op::StoreOutput { slot, a } => {
                let (a0, am) = st.loc(*a);
                let base = *slot as usize * io.groups + st.g0;
                for g in 0..st.groups {
                    if let Some(o) = io.outputs.get_mut(base + g) {
                        *o = file[a0 + (g & am)];
                    }
                }
            }
            Op::LoadConst { d, cb, offset } => {
                let v = lanemath::splat_bits(cb_word(io.resources, *cb, *offset as u64));
                let (d0, dm) = st.loc(*d);
                for g in 0..st.groups {
                    file[d0 + (g & dm)] = v;
                }
            }
            Op::LoadConstDyn {
                d,
                cb,
                offset,
                index,
            } => {
                let res = io.resources;
                let (cb, offset) = (*cb, *offset as u64);
                map1(file, st, *d, *index, |x| {
                    let idx = as_u(x).to_array();
                    from_u(u32x8::new(idx.map(|i| cb_word(res, cb, offset + i as u64))))
                })
            }
            Op::Texture(t) => {
                // Adjacent lookups at the same coordinates (a material's
                // maps) run as one chunk loop that addresses once.
                let n = texture::fusable_ops(&ops[pc..]);
                if n > 1 {
                    let mut ts: [&TexOp; texture::MAX_FUSED] = [t; texture::MAX_FUSED];
                    for (d, op) in ts.iter_mut().zip(&ops[pc..pc + n]) {
                        if let Op::Texture(u) = op {
                            *d = u;
                        }
                    }
                    let (nu, groups) = (st.nu, st.groups);
                    texture::exec_texture_group(&ts[..n], file, nu, groups, io.resources, samplers);
                    pc += n;
                    continue;
                }
                texture::exec_texture(t, file, st.nu, st.groups, io.resources, samplers)
            }
            Op::TextureQuery(q) => texture::exec_query(q, file, st.nu, st.groups, io.resources),
            Op::SetExec { a } => {
                map1(file, st, EXEC, *a, |x| x);
                update_exec_flags(file, st);
            }
            Op::Jump { target } => {
                pc = *target as usize;
                continue;
            }
            Op::JumpIfNone { target } => {
                if !st.exec_any {
                    pc = *target as usize;
                    continue;
                }
            }
            Op::JumpIfAny { target } => {
                if st.exec_any {
                    st.loop_trips += st.groups as u64 + BACK_EDGE_COST;
                    if st.loop_trips > MAX_LOOP_TRIPS {
                        st.loop_limit = true;
                        return;
                    }
                    pc = *target as usize;
                    continue;
                }
            }
            Op::Kill { exit } => {
                let (e0, _) = st.loc(EXEC);
                let mut any_live = false;
                if let Some(live) = io.live.as_deref_mut() {
                    for g in 0..st.groups {
                        if let Some(l) = live.get_mut(st.g0 + g) {
                            *l = from_u(as_u(*l) & !as_u(file[e0 + g]));
                            any_live |= l.to_bitmask() != 0;
                        }
                    }
                }
                if *exit {
                    for g in 0..st.groups {
                        file[e0 + g] = f32x8::ZERO;
                    }
                    update_exec_flags(file, st);
                }
                if !any_live {
                    // every pixel of the chunk is discarded: nothing the
                    // rest of the shader computes can be observed
                    return;
                }
            }
        }
        pc += 1;
    }
}

fn load_input(file: &mut [Lanes], st: &State, io: &CallIo<'_, '_>, d: Reg, src: InputSrc) {
    let (d0, _) = st.loc(d);
    let (data, base) = match src {
        InputSrc::Compute(v) => {
            memory::exec_compute_input(file, st.nu, st.groups, st.g0, (d, v), io.compute);
            return;
        }
        InputSrc::Slot(sc) => (io.inputs, sc as usize * io.groups),
        InputSrc::FragCoord(c) => (io.frag_coord, c as usize * io.groups),
        InputSrc::VertexId => (io.vertex_id, 0),
        InputSrc::InstanceId => (io.instance_id, 0),
    };
    let start = base + st.g0;
    match data.get(start..start + st.groups) {
        Some(rows) => file[d0..d0 + st.groups].copy_from_slice(rows),
        None => {
            for g in 0..st.groups {
                file[d0 + g] = data.get(start + g).copied().unwrap_or(f32x8::ZERO);
            }
        }
    }
}

fn extract(file: &mut [Lanes], st: &State, d: Reg, index: Reg, srcs: &[Reg]) {
    let n = srcs.len();
    if n == 0 {
        return;
    }
    let (d0, dm) = st.loc(d);
    let (i0, im) = st.loc(index);
    let last = u32x8::splat(n as u32 - 1);
    for g in 0..st.groups {
        let idx = as_u(file[i0 + (g & im)]).min(last);
        let r = if n <= 16 {
            let (b, m) = st.loc(srcs[0]);
            let mut r = file[b + (g & m)];
            for (k, s) in srcs.iter().enumerate().skip(1) {
                let (b, m) = st.loc(*s);
                let hit = from_u(idx.simd_eq(u32x8::splat(k as u32)));
                r = hit.select(file[b + (g & m)], r);
            }
            r
        } else {
            let idx = idx.to_array();
            let mut out = [0f32; 8];
            for (l, o) in out.iter_mut().enumerate() {
                let (b, m) = st.loc(srcs[idx[l] as usize]);
                *o = file[b + (g & m)].to_array()[l];
            }
            f32x8::new(out)
        };
        file[d0 + (g & dm)] = r;
    }
}

fn insert(
    file: &mut [Lanes],
    st: &State,
    dsts: &[Reg],
    srcs: &[Reg],
    index: Reg,
    value: Reg,
    masked: bool,
) {
    let n = dsts.len().min(srcs.len());
    if n == 0 {
        return;
    }
    let (i0, im) = st.loc(index);
    let (v0, vm) = st.loc(value);
    let (e0, _) = st.loc(EXEC);
    let last = u32x8::splat(n as u32 - 1);
    for g in 0..st.groups {
        let idx = as_u(file[i0 + (g & im)]).min(last);
        let v = file[v0 + (g & vm)];
        let exec = if masked {
            as_u(file[e0 + g])
        } else {
            u32x8::splat(!0)
        };
        for k in 0..n {
            let (sb, sm) = st.loc(srcs[k]);
            let (db, dm) = st.loc(dsts[k]);
            let hit = from_u(idx.simd_eq(u32x8::splat(k as u32)) & exec);
            file[db + (g & dm)] = hit.select(v, file[sb + (g & sm)]);
        }
    }
}
