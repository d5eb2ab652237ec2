//! Lane program regions to Cranelift IR.
//!
//! One function per region:
//!
//! ```text
//! entry(ctx):  load ctx fields; register and row base addresses;
//!              uniform registers the region reads (into SSA, once)
//! loop(g):     for each op: operands from SSA or the file, result in SSA
//!              store the registers defined here that are live after the
//!              region; g += 1; loop while g < groups
//! ```
//!
//! A `Lanes` register is two `f32x4` SSA values (Cranelift's x86-64 back
//! end has 128-bit vectors; both halves are independent, so each op is two
//! instructions, AVX-encoded).  Integer ops bitcast to `i32x4`.

use std::collections::{BTreeSet, HashMap};

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Endianness, InstBuilder, MemFlagsData, Signature, StackSlot, StackSlotData,
    StackSlotKind, Type, Value, types,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module as _};

use super::helpers::{self, Helper};
use super::{IoRow, JitError, Module, RegionCtx, region_regs};
use crate::ir::{BinOp, EXEC, InputSrc, LaneProgram, Op, Reg, TriOp, UnOp};

const LANES_BYTES: i64 = 32;
/// Most sources a dynamically indexed [`Op::Extract`] / [`Op::Insert`]
/// compiles to selects for (the interpreter's bound for its select chain).
pub(super) const MAX_SELECT_CHAIN: usize = 16;
const F4: Type = types::F32X4;
const I4: Type = types::I32X4;
const PTR: Type = types::I64;

/// Whether the JIT compiles `op` (the rest runs on the interpreter).
pub(super) fn supported(op: &Op) -> bool {
    match op {
        Op::Mov { .. }
        | Op::MovMasked { .. }
        | Op::Un { .. }
        | Op::Bin { .. }
        | Op::Tri { .. }
        | Op::InsertBits { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::Deriv { .. }
        | Op::StoreOutput { .. } => true,
        Op::LoadInput { src, .. } => !matches!(src, InputSrc::Compute(_)),
        // a select chain per source, as the interpreter's (which gathers
        // per lane past 16: the same values, more code than it is worth)
        Op::Extract { srcs, .. } => (1..=MAX_SELECT_CHAIN).contains(&srcs.len()),
        Op::Insert { dsts, srcs, .. } => {
            (1..=MAX_SELECT_CHAIN).contains(&dsts.len().min(srcs.len()))
        }
        _ => false,
    }
}

/// Varying registers live on entry to each body op (index `body.len()`:
/// the end, nothing live), as bitsets: a region stores back only these.
pub(super) fn live_in(prog: &LaneProgram) -> Vec<Vec<u64>> {
    let n = prog.body.len();
    let words = (prog.num_varying as usize).div_ceil(64).max(1);
    let mut uses = vec![vec![0u64; words]; n];
    let mut defs = vec![vec![0u64; words]; n];
    for (i, op) in prog.body.iter().enumerate() {
        op.for_each_use(|r| {
            if !r.is_uniform() {
                uses[i][r.index() / 64] |= 1 << (r.index() % 64);
            }
        });
        op.for_each_def(|r| {
            if !r.is_uniform() {
                defs[i][r.index() / 64] |= 1 << (r.index() % 64);
            }
        });
    }
    let succ = |i: usize| -> [Option<usize>; 2] {
        match &prog.body[i] {
            Op::Jump { target } => [Some(*target as usize), None],
            Op::JumpIfNone { target } | Op::JumpIfAny { target } => {
                [Some(i + 1), Some(*target as usize)]
            }
            _ => [Some(i + 1), None],
        }
    };
    let mut live = vec![vec![0u64; words]; n + 1];
    loop {
        let mut changed = false;
        for i in (0..n).rev() {
            let mut out = vec![0u64; words];
            for s in succ(i).into_iter().flatten() {
                if let Some(l) = live.get(s) {
                    for (o, w) in out.iter_mut().zip(l) {
                        *o |= w;
                    }
                }
            }
            for w in 0..words {
                out[w] = uses[i][w] | (out[w] & !defs[i][w]);
            }
            if out != live[i] {
                live[i] = out;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

pub(super) fn is_live(set: &[u64], r: Reg) -> bool {
    set.get(r.index() / 64)
        .is_some_and(|w| w & (1 << (r.index() % 64)) != 0)
}

/// A register's value: two `f32x4` halves.
type V = [Value; 2];

/// Builds one module of region functions.
pub(super) struct Compiler {
    module: JITModule,
    nu: usize,
    fctx: FunctionBuilderContext,
    ctx: cranelift_codegen::Context,
    helper_sig: Signature,
    next: usize,
    /// [`DISASM_ENV`] is set: print each region's machine code.
    disasm: bool,
}

/// Set (to anything) to print every region's machine code to stderr as it
/// is compiled, a developer's aid (`FERROPIPE_JIT_DISASM=1 cargo run
/// --release -p ferropipe-shader --example disasm -- FILE ENTRY fs`):
/// reading it is how the spills and placements in docs/shaders.md were
/// found.
pub(super) const DISASM_ENV: &str = "FERROPIPE_JIT_DISASM";

impl Compiler {
    pub(super) fn new(prog: &LaneProgram) -> Result<Compiler, JitError> {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v)
                .map_err(|e| JitError::Isa(format!("{k}={v}: {e}")))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        let isa = cranelift_native::builder()
            .map_err(|e| JitError::Isa(e.to_string()))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| JitError::Isa(e.to_string()))?;
        // The inline ops assume SSE4.1 rounding and fused multiply-add, as
        // the interpreter's x86-64-v3 build does.
        let isa_flags = isa.isa_flags();
        for need in ["has_sse41", "has_avx", "has_fma"] {
            if !isa_flags
                .iter()
                .any(|f| f.name == need && f.as_bool() == Some(true))
            {
                return Err(JitError::Isa(format!("host lacks {need}")));
            }
        }
        let call_conv = isa.default_call_conv();
        let module = JITModule::new(JITBuilder::with_isa(
            isa,
            cranelift_module::default_libcall_names(),
        ));
        let mut helper_sig = Signature::new(call_conv);
        helper_sig.params.push(AbiParam::new(PTR));
        let ctx = module.make_context();
        Ok(Compiler {
            module,
            nu: prog.num_uniform as usize,
            fctx: FunctionBuilderContext::new(),
            ctx,
            helper_sig,
            next: 0,
            disasm: std::env::var_os(DISASM_ENV).is_some(),
        })
    }

    /// Compiles one region (`ops`, straight-line) into a function;
    /// `live_out` is what must be in the register file after it.
    pub(super) fn region(&mut self, ops: &[Op], live_out: &[u64]) -> Result<FuncId, JitError> {
        let err = |e: cranelift_module::ModuleError| JitError::Codegen(format!("{e:?}"));
        self.module.clear_context(&mut self.ctx);
        self.ctx.func.signature.params.push(AbiParam::new(PTR));
        let name = format!("region{}", self.next);
        self.next += 1;
        let id = self
            .module
            .declare_function(&name, Linkage::Local, &self.ctx.func.signature)
            .map_err(err)?;
        let config = self.module.isa().frontend_config();
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
            let sig = b.import_signature(self.helper_sig.clone());
            let mut g = Gen {
                nu: self.nu,
                b: &mut b,
                sig,
                slot: None,
                vbase: HashMap::new(),
                ufile: None,
                io_base: HashMap::new(),
                cache: HashMap::new(),
                dirty: BTreeSet::new(),
                off: None,
                written: BTreeSet::new(),
            };
            g.emit(ops, live_out);
            b.seal_all_blocks();
            b.finalize(config);
        }
        self.ctx.set_disasm(self.disasm);
        self.module
            .define_function(id, &mut self.ctx)
            .map_err(|e| JitError::Codegen(format!("{e:?}")))?;
        if self.disasm
            && let Some(code) = self.ctx.compiled_code()
        {
            eprintln!(
                "=== {name} ({} ops)\n{}",
                ops.len(),
                code.vcode.as_deref().unwrap_or("")
            );
        }
        Ok(id)
    }

    /// Finalizes the module (code pages become read-execute) and returns
    /// it with each region's address.
    pub(super) fn finish(mut self, ids: &[FuncId]) -> Result<(Module, Vec<*const u8>), JitError> {
        self.module.clear_context(&mut self.ctx);
        let fin = self.module.finalize_definitions();
        let module = Module(Some(self.module));
        fin.map_err(|e| JitError::Codegen(format!("{e:?}")))?;
        let m = module.0.as_ref().expect("just built");
        let ptrs = ids.iter().map(|&id| m.get_finalized_function(id)).collect();
        Ok((module, ptrs))
    }
}

/// Code generation state of one region.
struct Gen<'a, 'b> {
    nu: usize,
    b: &'a mut FunctionBuilder<'b>,
    sig: cranelift_codegen::ir::SigRef,
    slot: Option<StackSlot>,
    /// Address of group 0 of each varying register the region touches.
    vbase: HashMap<u32, Value>,
    /// The register file, when the region reads uniform registers.
    ufile: Option<Value>,
    /// Address of group 0 of each I/O row it reads or writes.
    io_base: HashMap<IoRow, Value>,
    /// Values of the current group's registers.
    cache: HashMap<u32, V>,
    /// Registers written in this group.
    dirty: BTreeSet<u32>,
    /// Byte offset of the current group.
    off: Option<Value>,
    /// Varying registers the region writes; the others it only reads.
    written: BTreeSet<u32>,
}

/// How many `pow`s open `ops` that can run in one helper call: up to
/// [`helpers::MAX_POW_RUN`] consecutive `Bin { FPow }` ops none of which
/// reads a result of an earlier one in the run or writes a register a
/// later one reads (so computing them all before storing any is the same
/// as one after another).  0 or 1: no batch.
fn pow_run(ops: &[Op]) -> usize {
    let mut written: Vec<Reg> = Vec::new();
    for op in ops.iter().take(helpers::MAX_POW_RUN) {
        match op {
            Op::Bin {
                f: BinOp::FPow,
                d,
                a,
                b,
            } if !written.contains(a) && !written.contains(b) && !written.contains(d) => {
                written.push(*d)
            }
            _ => break,
        }
    }
    // (an op writing a register an earlier one reads is fine: every
    // operand is read before the call)
    written.len()
}

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// A load of memory no region writes: uniform registers (the prologue
/// computes them; the body never writes one) and the shader's inputs.
/// Pure, so the optimizer may place it next to its uses, or hoist a
/// uniform out of the group loop, instead of keeping it where it was first
/// read: there it stayed live, and spilled, while one half of every
/// register was computed before the other (bench fragment_shader: the JIT
/// went from 28.55 to 27.26 us per 512 groups with uniforms alone).
fn uniform_flags() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

fn cast() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

impl Gen<'_, '_> {
    fn emit(&mut self, ops: &[Op], live_out: &[u64]) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let ctxp = self.b.block_params(entry)[0];
        let field =
            |b: &mut FunctionBuilder<'_>, off: usize| b.ins().load(PTR, flags(), ctxp, off as i32);
        let file = field(self.b, std::mem::offset_of!(RegionCtx, file));
        let groups = field(self.b, std::mem::offset_of!(RegionCtx, groups));
        let io_stride = field(self.b, std::mem::offset_of!(RegionCtx, io_stride));
        let stride = self.b.ins().imul_imm_s(groups, LANES_BYTES);
        let vfile = self.b.ins().iadd_imm_s(file, self.nu as i64 * LANES_BYTES);

        // base addresses and uniforms, ahead of the loop
        let (regs, written) = region_regs(ops);
        self.written = written;
        for r in regs {
            if r.is_uniform() {
                // loaded where used, once per group: preloading them all
                // ahead of the loop spills most of them (16 xmm registers
                // for two halves each), and a reload from the L1-hot file
                // can fold into the op's memory operand
                self.ufile = Some(file);
            } else {
                let o = self.b.ins().imul_imm_s(stride, r.index() as i64);
                let a = self.b.ins().iadd(vfile, o);
                self.vbase.insert(r.0, a);
            }
        }
        for row in ops.iter().filter_map(IoRow::of) {
            if !self.io_base.contains_key(&row) {
                let (f, index) = row.field_and_row();
                let p = field(self.b, f);
                let o = self.b.ins().imul_imm_s(io_stride, index as i64);
                let a = self.b.ins().iadd(p, o);
                self.io_base.insert(row, a);
            }
        }

        let g = self.b.declare_var(PTR);
        let zero = self.b.ins().iconst(PTR, 0);
        self.b.def_var(g, zero);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(body, &[]);
        self.b.switch_to_block(body);
        let gv = self.b.use_var(g);
        self.off = Some(self.b.ins().imul_imm_s(gv, LANES_BYTES));

        let mut i = 0;
        while i < ops.len() {
            let n = pow_run(&ops[i..]);
            if n > 1 {
                self.pow_batch(&ops[i..i + n]);
                i += n;
            } else {
                self.op(&ops[i]);
                i += 1;
            }
        }
        let dirty = std::mem::take(&mut self.dirty);
        for r in dirty {
            let reg = Reg(r);
            if is_live(live_out, reg) {
                let v = self.cache[&r];
                let a = self.vaddr(reg);
                self.b.ins().store(flags(), v[0], a, 0);
                self.b.ins().store(flags(), v[1], a, 16);
            }
        }
        let g1 = self.b.ins().iadd_imm_s(gv, 1);
        self.b.def_var(g, g1);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, g1, groups);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
    }

    fn vaddr(&mut self, r: Reg) -> Value {
        let base = self.vbase[&r.0];
        let off = self.off.expect("inside the loop");
        self.b.ins().iadd(base, off)
    }

    fn get(&mut self, r: Reg) -> V {
        if let Some(v) = self.cache.get(&r.0) {
            return *v;
        }
        let (a, fl) = if r.is_uniform() {
            let file = self.ufile.expect("uniform operands seen");
            let a = self
                .b
                .ins()
                .iadd_imm_s(file, r.index() as i64 * LANES_BYTES);
            (a, uniform_flags())
        } else if self.written.contains(&r.0) {
            (self.vaddr(r), flags())
        } else {
            // A register the region only reads: no store of the region
            // reaches its rows, so the load is pure and may sit at its
            // uses.  Where it was first read it stayed live, and spilled
            // (pbr_barrels' 308-op region loaded its inputs at the top of
            // the group loop, stored each to the stack and reloaded it at
            // its use).
            (self.vaddr(r), uniform_flags())
        };
        let lo = self.b.ins().load(F4, fl, a, 0);
        let hi = self.b.ins().load(F4, fl, a, 16);
        let v = [lo, hi];
        self.cache.insert(r.0, v);
        v
    }

    fn set(&mut self, r: Reg, v: V) {
        self.cache.insert(r.0, v);
        self.dirty.insert(r.0);
    }

    fn i(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(I4, cast(), v)
    }

    fn f(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(F4, cast(), v)
    }

    fn fsplat(&mut self, x: f32) -> Value {
        let c = self.b.ins().f32const(x);
        self.b.ins().splat(F4, c)
    }

    fn isplat(&mut self, x: i32) -> Value {
        let c = self.b.ins().iconst(types::I32, x as i64);
        self.b.ins().splat(I4, c)
    }

    /// `m ? x : y` by the sign bit of each lane of `m` (x86 `blendv`, as
    /// `wide`'s `select`).
    fn blend(&mut self, m: Value, x: Value, y: Value) -> Value {
        let mi = self.i(m);
        let full = self.b.ins().sshr_imm_s(mi, 31);
        let (xi, yi) = (self.i(x), self.i(y));
        let r = self.b.ins().bitselect(full, xi, yi);
        self.f(r)
    }

    /// `m ? x : y` for a full mask `m` (an `i32x4` compare result).
    fn pick(&mut self, m: Value, x: Value, y: Value) -> Value {
        let (xi, yi) = (self.i(x), self.i(y));
        let r = self.b.ins().bitselect(m, xi, yi);
        self.f(r)
    }

    /// WGSL `min(a, b)` = `b < a ? b : a` (`lanemath::wgsl_min`), in the
    /// float-typed `bitselect` shape Cranelift's x64 backend lowers to one
    /// `minps(b, a)` (a compare and a blend otherwise).
    fn fmin(&mut self, a: Value, b: Value) -> Value {
        let m = self.b.ins().fcmp(FloatCC::LessThan, b, a);
        let m = self.f(m);
        self.b.ins().bitselect(m, b, a)
    }

    /// WGSL `max(a, b)` = `b > a ? b : a` = `a < b ? b : a`, the shape
    /// lowered to one `maxps(b, a)`.
    fn fmax(&mut self, a: Value, b: Value) -> Value {
        let m = self.b.ins().fcmp(FloatCC::LessThan, a, b);
        let m = self.f(m);
        self.b.ins().bitselect(m, b, a)
    }

    fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        let m = self.b.ins().fcmp(cc, a, b);
        self.f(m)
    }

    fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        let (a, b) = (self.i(a), self.i(b));
        let m = self.b.ins().icmp(cc, a, b);
        self.f(m)
    }

    fn int2(&mut self, a: Value, b: Value, f: impl Fn(&mut Self, Value, Value) -> Value) -> Value {
        let (a, b) = (self.i(a), self.i(b));
        let r = f(self, a, b);
        self.f(r)
    }

    fn and_bits(&mut self, m: Value, bits: f32) -> Value {
        let c = self.fsplat(bits);
        let (m, c) = (self.i(m), self.i(c));
        let r = self.b.ins().band(m, c);
        self.f(r)
    }

    /// One half of an inline unary op, or `None` for a helper.
    fn un(&mut self, f: UnOp, a: Value) -> Option<Value> {
        Some(match f {
            UnOp::FNeg => self.b.ins().fneg(a),
            UnOp::FAbs => self.b.ins().fabs(a),
            UnOp::FFloor => self.b.ins().floor(a),
            UnOp::FCeil => self.b.ins().ceil(a),
            UnOp::FTrunc => self.b.ins().trunc(a),
            UnOp::FRound => self.b.ins().nearest(a),
            UnOp::FFract => {
                let fl = self.b.ins().floor(a);
                self.b.ins().fsub(a, fl)
            }
            UnOp::FSqrt => self.b.ins().sqrt(a),
            UnOp::FInvSqrt => {
                let s = self.b.ins().sqrt(a);
                let one = self.fsplat(1.0);
                self.b.ins().fdiv(one, s)
            }
            UnOp::FSign => {
                let z = self.fsplat(0.0);
                let gt = self.fcmp(FloatCC::GreaterThan, a, z);
                let lt = self.fcmp(FloatCC::LessThan, a, z);
                let pos = self.and_bits(gt, 1.0);
                let neg = self.and_bits(lt, -1.0);
                let (p, n) = (self.i(pos), self.i(neg));
                let r = self.b.ins().bor(p, n);
                self.f(r)
            }
            UnOp::FSaturate => {
                let z = self.fsplat(0.0);
                let one = self.fsplat(1.0);
                let t = self.fmax(a, z);
                self.fmin(t, one)
            }
            UnOp::FIsNan => self.fcmp(FloatCC::NotEqual, a, a),
            UnOp::FIsInf => {
                let x = self.b.ins().fabs(a);
                let inf = self.fsplat(f32::INFINITY);
                self.fcmp(FloatCC::Equal, x, inf)
            }
            UnOp::F2S => {
                let r = self.b.ins().fcvt_to_sint_sat(I4, a);
                self.f(r)
            }
            UnOp::F2U => {
                let r = self.b.ins().fcvt_to_uint_sat(I4, a);
                self.f(r)
            }
            UnOp::S2F => {
                let x = self.i(a);
                self.b.ins().fcvt_from_sint(F4, x)
            }
            UnOp::INeg => {
                let x = self.i(a);
                let r = self.b.ins().ineg(x);
                self.f(r)
            }
            UnOp::SAbs => {
                let x = self.i(a);
                let r = self.b.ins().iabs(x);
                self.f(r)
            }
            UnOp::Not => {
                let x = self.i(a);
                let r = self.b.ins().bnot(x);
                self.f(r)
            }
            UnOp::SSign => {
                let x = self.i(a);
                let z = self.isplat(0);
                let one = self.isplat(1);
                let gt = self.b.ins().icmp(IntCC::SignedGreaterThan, x, z);
                let lt = self.b.ins().icmp(IntCC::SignedLessThan, x, z);
                let pos = self.b.ins().band(gt, one);
                let r = self.b.ins().bor(pos, lt);
                self.f(r)
            }
            _ => return None,
        })
    }

    /// One half of an inline binary op, or `None` for a helper.
    fn bin(&mut self, f: BinOp, a: Value, b: Value) -> Option<Value> {
        Some(match f {
            BinOp::FAdd => self.b.ins().fadd(a, b),
            BinOp::FSub => self.b.ins().fsub(a, b),
            BinOp::FMul => self.b.ins().fmul(a, b),
            BinOp::FDiv => self.b.ins().fdiv(a, b),
            BinOp::FRem => {
                let q = self.b.ins().fdiv(a, b);
                let t = self.b.ins().trunc(q);
                let p = self.b.ins().fmul(b, t);
                self.b.ins().fsub(a, p)
            }
            BinOp::FMin => self.fmin(a, b),
            BinOp::FMax => self.fmax(a, b),
            BinOp::FStep => {
                let m = self.fcmp(FloatCC::GreaterThanOrEqual, b, a);
                self.and_bits(m, 1.0)
            }
            BinOp::FEq => self.fcmp(FloatCC::Equal, a, b),
            BinOp::FNe => self.fcmp(FloatCC::NotEqual, a, b),
            BinOp::FLt => self.fcmp(FloatCC::LessThan, a, b),
            BinOp::FLe => self.fcmp(FloatCC::LessThanOrEqual, a, b),
            BinOp::FGt => self.fcmp(FloatCC::GreaterThan, a, b),
            BinOp::FGe => self.fcmp(FloatCC::GreaterThanOrEqual, a, b),
            BinOp::IAdd => self.int2(a, b, |s, x, y| s.b.ins().iadd(x, y)),
            BinOp::ISub => self.int2(a, b, |s, x, y| s.b.ins().isub(x, y)),
            BinOp::IMul => self.int2(a, b, |s, x, y| s.b.ins().imul(x, y)),
            BinOp::IEq => self.icmp(IntCC::Equal, a, b),
            BinOp::INe => self.icmp(IntCC::NotEqual, a, b),
            BinOp::SLt => self.icmp(IntCC::SignedLessThan, a, b),
            BinOp::SLe => self.icmp(IntCC::SignedLessThanOrEqual, a, b),
            BinOp::SGt => self.icmp(IntCC::SignedGreaterThan, a, b),
            BinOp::SGe => self.icmp(IntCC::SignedGreaterThanOrEqual, a, b),
            BinOp::ULt => self.icmp(IntCC::UnsignedLessThan, a, b),
            BinOp::ULe => self.icmp(IntCC::UnsignedLessThanOrEqual, a, b),
            BinOp::UGt => self.icmp(IntCC::UnsignedGreaterThan, a, b),
            BinOp::UGe => self.icmp(IntCC::UnsignedGreaterThanOrEqual, a, b),
            BinOp::And => self.int2(a, b, |s, x, y| s.b.ins().band(x, y)),
            BinOp::Or => self.int2(a, b, |s, x, y| s.b.ins().bor(x, y)),
            BinOp::Xor => self.int2(a, b, |s, x, y| s.b.ins().bxor(x, y)),
            BinOp::AndNot => self.int2(a, b, |s, x, y| s.b.ins().band_not(x, y)),
            BinOp::SMin => self.int2(a, b, |s, x, y| s.b.ins().smin(x, y)),
            BinOp::SMax => self.int2(a, b, |s, x, y| s.b.ins().smax(x, y)),
            BinOp::UMin => self.int2(a, b, |s, x, y| s.b.ins().umin(x, y)),
            BinOp::UMax => self.int2(a, b, |s, x, y| s.b.ins().umax(x, y)),
            _ => return None,
        })
    }

    /// One half of an inline ternary op, or `None` for a helper.
    fn tri(&mut self, f: TriOp, a: Value, b: Value, c: Value) -> Option<Value> {
        Some(match f {
            TriOp::FFma => self.b.ins().fma(a, b, c),
            TriOp::FMix => {
                let d = self.b.ins().fsub(b, a);
                self.b.ins().fma(d, c, a)
            }
            TriOp::FClamp => {
                let t = self.fmax(a, b);
                self.fmin(t, c)
            }
            TriOp::SClamp => {
                let (x, lo, hi) = (self.i(a), self.i(b), self.i(c));
                let t = self.b.ins().smax(x, lo);
                let r = self.b.ins().smin(t, hi);
                self.f(r)
            }
            TriOp::UClamp => {
                let (x, lo, hi) = (self.i(a), self.i(b), self.i(c));
                let t = self.b.ins().umax(x, lo);
                let r = self.b.ins().umin(t, hi);
                self.f(r)
            }
            TriOp::Select => self.blend(a, b, c),
            _ => return None,
        })
    }

    /// Calls `h` on `args` through the stack buffer; returns `results`
    /// registers' values.
    fn call_helper(&mut self, h: Helper, args: &[V], results: usize) -> Vec<V> {
        let slot = *self.slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                2 * helpers::MAX_POW_RUN as u32 * LANES_BYTES as u32,
                5,
            ))
        });
        let p = self.b.ins().stack_addr(PTR, slot, 0);
        for (i, v) in args.iter().enumerate() {
            let o = i as i32 * LANES_BYTES as i32;
            self.b.ins().store(flags(), v[0], p, o);
            self.b.ins().store(flags(), v[1], p, o + 16);
        }
        let callee = self.b.ins().iconst(PTR, h as usize as i64);
        self.b.ins().call_indirect(self.sig, callee, &[p]);
        (0..results)
            .map(|i| {
                let o = i as i32 * LANES_BYTES as i32;
                let lo = self.b.ins().load(F4, flags(), p, o);
                let hi = self.b.ins().load(F4, flags(), p, o + 16);
                [lo, hi]
            })
            .collect()
    }

    /// A run of independent `pow`s (see [`pow_run`]) as one helper call
    /// (`helpers::pow_run`): each `pow` is a ~60-cycle dependency chain,
    /// and in one call the chains of a `vec3`'s channels overlap instead
    /// of following each other call by call.
    fn pow_batch(&mut self, run: &[Op]) {
        let mut args = Vec::with_capacity(2 * run.len());
        for op in run {
            if let Op::Bin { a, b, .. } = op {
                args.push(self.get(*a));
                args.push(self.get(*b));
            }
        }
        let r = self.call_helper(helpers::pow_run(run.len()), &args, run.len());
        for (op, v) in run.iter().zip(r) {
            if let Op::Bin { d, .. } = op {
                self.set(*d, v);
            }
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Mov { d, a } => {
                let v = self.get(*a);
                self.set(*d, v);
            }
            Op::MovMasked { d, a } => {
                let (m, x, old) = (self.get(EXEC), self.get(*a), self.get(*d));
                let v = [0, 1].map(|h| self.blend(m[h], x[h], old[h]));
                self.set(*d, v);
            }
            Op::Un { f, d, a } => {
                let x = self.get(*a);
                let v = match self.un(*f, x[0]) {
                    Some(lo) => {
                        let hi = self.un(*f, x[1]).expect("same op");
                        [lo, hi]
                    }
                    None => self.call_helper(helpers::un(*f), &[x], 1)[0],
                };
                self.set(*d, v);
            }
            Op::Bin { f, d, a, b } => {
                let (x, y) = (self.get(*a), self.get(*b));
                let v = match self.bin(*f, x[0], y[0]) {
                    Some(lo) => {
                        let hi = self.bin(*f, x[1], y[1]).expect("same op");
                        [lo, hi]
                    }
                    None => self.call_helper(helpers::bin(*f), &[x, y], 1)[0],
                };
                self.set(*d, v);
            }
            Op::Tri { f, d, a, b, c } => {
                let (x, y, z) = (self.get(*a), self.get(*b), self.get(*c));
                let v = match self.tri(*f, x[0], y[0], z[0]) {
                    Some(lo) => {
                        let hi = self.tri(*f, x[1], y[1], z[1]).expect("same op");
                        [lo, hi]
                    }
                    None => self.call_helper(helpers::tri(*f), &[x, y, z], 1)[0],
                };
                self.set(*d, v);
            }
            Op::InsertBits { d, e, n, off, cnt } => {
                let args = [*e, *n, *off, *cnt].map(|r| self.get(r));
                let v = self.call_helper(helpers::insert_bits, &args, 1)[0];
                self.set(*d, v);
            }
            Op::Pack { f, d, a } => {
                // operands past the arity are never read by `pack`; the
                // buffer gets zeros there
                let n = f.arity();
                let zero = self.fsplat(0.0);
                let args: [V; 4] =
                    std::array::from_fn(|k| if k < n { self.get(a[k]) } else { [zero, zero] });
                let v = self.call_helper(helpers::pack(*f), &args, 1)[0];
                self.set(*d, v);
            }
            Op::Unpack { f, d, a } => {
                let x = self.get(*a);
                let r = self.call_helper(helpers::unpack(*f), &[x], 4);
                for k in 0..f.arity() {
                    self.set(d[k], r[k]);
                }
            }
            Op::Deriv { axis, fine, d, a } => {
                let x = self.get(*a);
                let v = self.call_helper(helpers::deriv(*axis, *fine), &[x], 1)[0];
                self.set(*d, v);
            }
            Op::LoadInput { d, src } => {
                let base = self.io_base[&IoRow::In(*src)];
                let off = self.off.expect("inside the loop");
                let a = self.b.ins().iadd(base, off);
                // Inputs are read-only to the program (`&[Lanes]` in the
                // I/O structs): pure loads, placed next to their uses.
                let lo = self.b.ins().load(F4, uniform_flags(), a, 0);
                let hi = self.b.ins().load(F4, uniform_flags(), a, 16);
                self.set(*d, [lo, hi]);
            }
            Op::StoreOutput { slot, a } => {
                let v = self.get(*a);
                let base = self.io_base[&IoRow::Out(*slot)];
                let off = self.off.expect("inside the loop");
                let p = self.b.ins().iadd(base, off);
                self.b.ins().store(flags(), v[0], p, 0);
                self.b.ins().store(flags(), v[1], p, 16);
            }
            Op::Extract { d, index, srcs } => {
                // d = srcs[min(index, n - 1)] (unsigned), as `exec::extract`
                let idx = self.get(*index);
                let last = self.isplat(srcs.len() as i32 - 1);
                let mut v = [idx[0], idx[1]];
                for h in 0..2 {
                    let i = self.i(idx[h]);
                    let c = self.b.ins().umin(i, last);
                    let mut r = self.get(srcs[0])[h];
                    for (k, src) in srcs.iter().enumerate().skip(1) {
                        let x = self.get(*src)[h];
                        let kk = self.isplat(k as i32);
                        let hit = self.b.ins().icmp(IntCC::Equal, c, kk);
                        r = self.pick(hit, x, r);
                    }
                    v[h] = r;
                }
                self.set(*d, v);
            }
            Op::Insert {
                dsts,
                srcs,
                index,
                value,
                masked,
            } => {
                // dsts[k] = (min(index, n - 1) == k [&& EXEC]) ? value :
                // srcs[k], in k order, as `exec::insert`; EXEC's sign bits
                // select (when they are all set the mask changes nothing,
                // the interpreter's `exec_full` shortcut)
                let n = dsts.len().min(srcs.len());
                let (idx, val) = (self.get(*index), self.get(*value));
                let exec = if *masked { Some(self.get(EXEC)) } else { None };
                let last = self.isplat(n as i32 - 1);
                let c = [0, 1].map(|h| {
                    let i = self.i(idx[h]);
                    self.b.ins().umin(i, last)
                });
                for k in 0..n {
                    let old = self.get(srcs[k]);
                    let kk = self.isplat(k as i32);
                    let v = [0, 1].map(|h| {
                        let hit = self.b.ins().icmp(IntCC::Equal, c[h], kk);
                        match exec {
                            Some(e) => {
                                let ei = self.i(e[h]);
                                let m = self.b.ins().band(hit, ei);
                                let m = self.f(m);
                                self.blend(m, val[h], old[h])
                            }
                            None => self.pick(hit, val[h], old[h]),
                        }
                    });
                    self.set(dsts[k], v);
                }
            }
            other => unreachable!("unsupported op in a region: {other:?}"),
        }
    }
}
