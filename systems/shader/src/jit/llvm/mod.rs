//! Lane program regions to LLVM IR, compiled by the host's LLVM (llvmpipe's
//! `gallivm` does the same with its shaders; here the IR is text, see
//! [`api`]).
//!
//! Same regions, same `RegionCtx` calling convention and the same helper
//! calls as the Cranelift code generator (`codegen.rs`), but a `Lanes`
//! register is one `<8 x float>` value: 256-bit AVX2 code, so an 8-lane op
//! is one instruction and a live value takes one of the 16 ymm registers
//! instead of two xmm ones.  pbr_barrels' 308-op region spilled 412 of its
//! 1,132 instructions a group under Cranelift; with LLVM the scene runs in
//! 0.78x the time (docs/shaders.md, "The JIT").
//!
//! On AMD cores with AVX-512 ([`wide`]), every region is one step wider:
//! a value is `<16 x float>`, two groups (a register's groups lie next to
//! each other in the file), the loop steps by two and masks the upper half
//! of an odd chunk's last step.  pbr_barrels' ~800 ops of lighting take
//! ~1,000 instructions for two groups' work where ~845 did one (the scene
//! in ~0.82x the time at one thread), and the inlined lookups' address
//! arithmetic and fixed-point filter (`sample.rs`) also do two groups an
//! instruction: postprocess in ~0.73x the time (docs/performance.md,
//! "Where the time goes", seventh and eighth sessions).
//!
//! Byte identity: each op is the IEEE operation `lanemath` performs, as in
//! `codegen.rs` (no fast-math flags, so LLVM contracts nothing; `fma` where
//! `lanemath` calls `mul_add`; WGSL `min`/`max` as `select(fcmp olt)`,
//! which x86 lowers to `minps`/`maxps`; rounding by `vroundps` with its
//! immediate; saturating conversions spelled out).  `pow` is inline, the
//! operations of `lanemath::pow_avx2` in its order: with 16 ymm registers
//! the call's spills cost more than the code.

mod api;
mod sample;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use super::codegen::is_live;
use super::helpers::{self, Helper};
use super::{InlineTex, IoRow, JitError, RegionCtx, region_regs};
use crate::ir::{BinOp, EXEC, Op, Reg, TriOp, UnOp};
use crate::lanemath::{POW_EXP2_RANGE, POW_EXP2_TAYLOR, POW_LOG2_SERIES};

pub use api::LLVM_ENV;
pub(super) use api::LlvmCode;

/// One region to compile: its ops, the varying registers live after it,
/// and per op how a texture lookup is inlined (`None` for the others).
pub(super) type RegionSrc<'a> = (&'a [Op], &'a [u64], &'a [InlineTex]);

const V: &str = "<8 x float>";
const VI: &str = "<8 x i32>";

fn inline_un(f: UnOp) -> bool {
    use UnOp::*;
    matches!(
        f,
        FNeg | FAbs
            | FFloor
            | FCeil
            | FTrunc
            | FRound
            | FFract
            | FSqrt
            | FInvSqrt
            | FSign
            | FSaturate
            | FIsNan
            | FIsInf
            | F2S
            | S2F
            | INeg
            | SAbs
            | Not
            | SSign
    )
}

fn inline_bin(f: BinOp) -> bool {
    use BinOp::*;
    matches!(
        f,
        FAdd | FSub
            | FMul
            | FDiv
            | FRem
            | FMin
            | FMax
            | FStep
            | FEq
            | FNe
            | FLt
            | FLe
            | FGt
            | FGe
            | IAdd
            | ISub
            | IMul
            | IEq
            | INe
            | SLt
            | SLe
            | SGt
            | SGe
            | ULt
            | ULe
            | UGt
            | UGe
            | And
            | Or
            | Xor
            | AndNot
            | SMin
            | SMax
            | UMin
            | UMax
    )
}

fn inline_tri(f: TriOp) -> bool {
    use TriOp::*;
    matches!(f, FFma | FMix | FClamp | SClamp | UClamp | Select)
}

/// The text of one module being written.
struct E {
    out: String,
    n: usize,
    nu: usize,
    cache: HashMap<u32, String>,
    dirty: BTreeSet<u32>,
    written: BTreeSet<u32>,
    vbase: HashMap<u32, String>,
    io_base: HashMap<IoRow, String>,
    /// LLVM 14: typed pointers (`i8*`); later versions: `ptr`.
    typed: bool,
    /// The region's texture descriptors, by slot (`sample.rs`).
    desc: HashMap<u8, sample::DescVals>,
    /// Values carried from one group to the next by the group loop's
    /// header phis: `(name, type, initial value, value at the latch)`
    /// (`sample.rs`' level layouts).
    carry: Vec<(String, String, String, String)>,
    /// The region being written runs 16 lanes (two groups) a vector,
    /// 512-bit AVX-512 code ([`wide`]); else 8, 256-bit AVX2 code.
    w16: bool,
}

fn hexf(x: f32) -> String {
    format!("0x{:016X}", (x as f64).to_bits())
}

impl E {
    /// The region's float vector type.
    fn v(&self) -> &'static str {
        if self.w16 { "<16 x float>" } else { V }
    }
    /// The region's integer vector type.
    fn vi(&self) -> &'static str {
        if self.w16 { "<16 x i32>" } else { VI }
    }
    /// The region's lane mask type.
    fn m1(&self) -> &'static str {
        if self.w16 { "<16 x i1>" } else { "<8 x i1>" }
    }
    /// The overload suffix of a float vector intrinsic.
    fn fs(&self) -> &'static str {
        if self.w16 { "v16f32" } else { "v8f32" }
    }
    /// The overload suffix of an integer vector intrinsic.
    fn is(&self) -> &'static str {
        if self.w16 { "v16i32" } else { "v8i32" }
    }
    /// The region's vector of 16-bit lanes (the lookups' fixed-point
    /// filter, two per 32-bit lane).
    fn vw(&self) -> &'static str {
        if self.w16 { "<32 x i16>" } else { "<16 x i16>" }
    }
    /// Lanes of the region's vectors.
    fn lanes(&self) -> usize {
        if self.w16 { 16 } else { 8 }
    }
    /// `base` overloaded on the region's vector of `elem` (`f32`, `i32`).
    fn nm(&self, base: &str, elem: &str) -> String {
        format!("{base}.v{}{elem}", self.lanes())
    }
    /// `x` of type `ty` in each lane of the region's vector, a constant.
    fn splat(&self, ty: &str, x: &str) -> String {
        let one = format!("{ty} {x}");
        format!("<{}>", vec![one; self.lanes()].join(", "))
    }
    fn t(&mut self) -> String {
        self.n += 1;
        format!("%t{}", self.n)
    }
    fn ins(&mut self, s: &str) -> String {
        let t = self.t();
        let _ = writeln!(self.out, "  {t} = {s}");
        t
    }
    fn line(&mut self, s: &str) {
        let _ = writeln!(self.out, "  {s}");
    }
    fn i(&mut self, v: &str) -> String {
        let (vt, vit) = (self.v(), self.vi());
        self.ins(&format!("bitcast {vt} {v} to {vit}"))
    }
    fn f(&mut self, v: &str) -> String {
        let (vt, vit) = (self.v(), self.vi());
        self.ins(&format!("bitcast {vit} {v} to {vt}"))
    }
    fn fsplat(&self, x: f32) -> String {
        self.splat("float", &hexf(x))
    }
    /// `x` in each lane of the region's integer vector.
    fn isp(&self, x: i32) -> String {
        self.splat("i32", &x.to_string())
    }
    /// `x` in each of 8 lanes (the inlined lookups' vectors).
    fn isplat(x: i32) -> String {
        format!("<i32 {x}, i32 {x}, i32 {x}, i32 {x}, i32 {x}, i32 {x}, i32 {x}, i32 {x}>")
    }
    /// The type of a pointer to `ty`: `ty*` in LLVM 14's typed pointers,
    /// `ptr` from LLVM 15 on.
    fn ptr(&self, ty: &str) -> String {
        if self.typed {
            format!("{ty}*")
        } else {
            "ptr".to_string()
        }
    }
    /// A byte pointer `p` as a pointer to `ty` (a no-op with opaque
    /// pointers).
    fn cast(&mut self, p: &str, ty: &str) -> String {
        if self.typed {
            self.ins(&format!("bitcast i8* {p} to {ty}*"))
        } else {
            p.to_string()
        }
    }
    /// The current group's row at byte pointer `base` (in a 16-lane
    /// region, the rows of groups `g` and `g + 1`, which lie next to each
    /// other in the register file and the call's rows).
    fn addr(&mut self, base: &str) -> String {
        let b = self.ptr("i8");
        let p = self.ins(&format!("getelementptr i8, {b} {base}, i64 %off"));
        let vt = self.v();
        self.cast(&p, vt)
    }
    /// Loads a row at `p` ([`Self::addr`]).  A 16-lane region loads under
    /// the loop's lane mask `%km`: in a chunk of odd groups the last
    /// iteration's upper half is past the row (the next register's first
    /// group, or past the file), and a masked-off lane neither reads nor
    /// faults (it reads as 0, an inactive lane for `EXEC`; a masked load
    /// takes no `!invariant.load`).
    fn load(&mut self, p: &str, inv: bool) -> String {
        let vt = self.v();
        let vp = self.ptr(vt);
        if self.w16 {
            let (mt, name) = (self.m1(), self.masked("load"));
            return self.ins(&format!(
                "call {vt} @{name}({vp} {p}, i32 16, {mt} %km, {vt} zeroinitializer)"
            ));
        }
        let md = if inv { ", !invariant.load !0" } else { "" };
        self.ins(&format!("load {vt}, {vp} {p}, align 16{md}"))
    }
    /// Stores `v` to a row at `p`, under `%km` in a 16-lane region (as
    /// [`Self::load`]: the upper half of an odd chunk's last iteration
    /// must not reach the next register's first group).
    fn store(&mut self, v: &str, p: &str) {
        let vt = self.v();
        let vp = self.ptr(vt);
        if self.w16 {
            let (mt, name) = (self.m1(), self.masked("store"));
            self.line(&format!(
                "call void @{name}({vt} {v}, {vp} {p}, i32 16, {mt} %km)"
            ));
        } else {
            self.line(&format!("store {vt} {v}, {vp} {p}, align 16"));
        }
    }
    /// The name of LLVM's masked `load` or `store` of a 16-lane float
    /// vector (the pointer's overload differs with typed pointers).
    fn masked(&self, what: &str) -> &'static str {
        match (what, self.typed) {
            ("load", true) => "llvm.masked.load.v16f32.p0v16f32",
            ("load", false) => "llvm.masked.load.v16f32.p0",
            (_, true) => "llvm.masked.store.v16f32.p0v16f32",
            (_, false) => "llvm.masked.store.v16f32.p0",
        }
    }
    fn get(&mut self, r: Reg) -> String {
        if let Some(v) = self.cache.get(&r.0) {
            return v.clone();
        }
        let v = if r.is_uniform() {
            let b = self.ptr("i8");
            let p = self.ins(&format!(
                "getelementptr i8, {b} %file, i64 {}",
                r.index() * 32
            ));
            let q = self.cast(&p, V);
            let vp = self.ptr(V);
            let u = self.ins(&format!("load {V}, {vp} {q}, align 16, !invariant.load !0"));
            if self.w16 {
                // the same 8 lanes for both groups
                let both: Vec<String> = (0..16).map(|k| format!("i32 {}", k % 8)).collect();
                self.ins(&format!(
                    "shufflevector {V} {u}, {V} undef, <16 x i32> <{}>",
                    both.join(", ")
                ))
            } else {
                u
            }
        } else {
            let base = self.vbase[&r.0].clone();
            let q = self.addr(&base);
            let inv = !self.written.contains(&r.0);
            self.load(&q, inv)
        };
        self.cache.insert(r.0, v.clone());
        v
    }
    fn set(&mut self, r: Reg, v: String) {
        self.cache.insert(r.0, v);
        self.dirty.insert(r.0);
    }
    fn call1(&mut self, name: &str, ty: &str, args: &[&str]) -> String {
        let a: Vec<String> = args.iter().map(|a| format!("{ty} {a}")).collect();
        self.ins(&format!("call {ty} @{name}({})", a.join(", ")))
    }
    /// `vroundps` with immediate `imm` (AVX-512: `vrndscaleps` at scale
    /// 0, whose low four immediate bits mean the same).
    fn round(&mut self, a: &str, imm: i32) -> String {
        let vt = self.v();
        if self.w16 {
            return self.ins(&format!(
                "call {vt} @llvm.x86.avx512.mask.rndscale.ps.512({vt} {a}, i32 {imm}, {vt} {a}, i16 -1, i32 4)"
            ));
        }
        self.ins(&format!(
            "call {vt} @llvm.x86.avx.round.ps.256({vt} {a}, i32 {imm})"
        ))
    }
    /// `cvt(t)ps2dq`: float to i32 rounding by MXCSR (`t`: truncating),
    /// `0x8000_0000` for NaN and out of range, as x86 converts.
    fn cvt_ps2dq(&mut self, a: &str, truncate: bool) -> String {
        let (vt, vit) = (self.v(), self.vi());
        let t = if truncate { "t" } else { "" };
        if self.w16 {
            return self.ins(&format!(
                "call {vit} @llvm.x86.avx512.mask.cvt{t}ps2dq.512({vt} {a}, {vit} zeroinitializer, i16 -1, i32 4)"
            ));
        }
        self.ins(&format!(
            "call {vit} @llvm.x86.avx.cvt{t}.ps2dq.256({vt} {a})"
        ))
    }
    fn fcmp(&mut self, cc: &str, a: &str, b: &str) -> String {
        let (vt, vit, mt) = (self.v(), self.vi(), self.m1());
        let m = self.ins(&format!("fcmp {cc} {vt} {a}, {b}"));
        let s = self.ins(&format!("sext {mt} {m} to {vit}"));
        self.f(&s)
    }
    fn icmp(&mut self, cc: &str, a: &str, b: &str) -> String {
        let (vit, mt) = (self.vi(), self.m1());
        let (a, b) = (self.i(a), self.i(b));
        let m = self.ins(&format!("icmp {cc} {vit} {a}, {b}"));
        let s = self.ins(&format!("sext {mt} {m} to {vit}"));
        self.f(&s)
    }
    fn int2(&mut self, op: &str, a: &str, b: &str) -> String {
        let vit = self.vi();
        let (a, b) = (self.i(a), self.i(b));
        let r = self.ins(&format!("{op} {vit} {a}, {b}"));
        self.f(&r)
    }
    fn intr2(&mut self, name: &str, a: &str, b: &str) -> String {
        let vit = self.vi();
        let (a, b) = (self.i(a), self.i(b));
        let r = self.ins(&format!("call {vit} @{name}({vit} {a}, {vit} {b})"));
        self.f(&r)
    }
    fn fsel(&mut self, m1: &str, x: &str, y: &str) -> String {
        let (vt, mt) = (self.v(), self.m1());
        self.ins(&format!("select {mt} {m1}, {vt} {x}, {vt} {y}"))
    }
    fn fmin(&mut self, a: &str, b: &str) -> String {
        let vt = self.v();
        let m = self.ins(&format!("fcmp olt {vt} {b}, {a}"));
        self.fsel(&m, b, a)
    }
    fn fmax(&mut self, a: &str, b: &str) -> String {
        let vt = self.v();
        let m = self.ins(&format!("fcmp olt {vt} {a}, {b}"));
        self.fsel(&m, b, a)
    }
    /// `m ? x : y` by the sign bit of `m`.
    fn blend(&mut self, m: &str, x: &str, y: &str) -> String {
        let vit = self.vi();
        let mi = self.i(m);
        let c = self.ins(&format!("icmp slt {vit} {mi}, zeroinitializer"));
        self.fsel(&c, x, y)
    }
    fn and_bits(&mut self, m: &str, bits: f32) -> String {
        let vit = self.vi();
        let mi = self.i(m);
        let r = self.ins(&format!(
            "and {vit} {mi}, {}",
            self.isp(bits.to_bits() as i32)
        ));
        self.f(&r)
    }

    fn un(&mut self, f: UnOp, a: &str) -> String {
        let (vt, vit, mt, is) = (self.v(), self.vi(), self.m1(), self.is());
        use UnOp::*;
        match f {
            FNeg => self.ins(&format!("fneg {vt} {a}")),
            FAbs => self.call1(&self.nm("llvm.fabs", "f32"), vt, &[a]),
            FFloor => self.round(a, 9),
            FCeil => self.round(a, 10),
            FTrunc => self.round(a, 11),
            FRound => self.round(a, 8),
            FFract => {
                let fl = self.round(a, 9);
                self.ins(&format!("fsub {vt} {a}, {fl}"))
            }
            FSqrt => self.call1(&self.nm("llvm.sqrt", "f32"), vt, &[a]),
            FInvSqrt => {
                let s = self.call1(&self.nm("llvm.sqrt", "f32"), vt, &[a]);
                let one = self.fsplat(1.0);
                self.ins(&format!("fdiv {vt} {one}, {s}"))
            }
            FSign => {
                let z = self.fsplat(0.0);
                let gt = self.fcmp("ogt", a, &z);
                let lt = self.fcmp("olt", a, &z);
                let pos = self.and_bits(&gt, 1.0);
                let neg = self.and_bits(&lt, -1.0);
                self.int2("or", &pos, &neg)
            }
            FSaturate => {
                let z = self.fsplat(0.0);
                let one = self.fsplat(1.0);
                let t = self.fmax(a, &z);
                self.fmin(&t, &one)
            }
            FIsNan => self.fcmp("une", a, a),
            FIsInf => {
                let x = self.call1(&self.nm("llvm.fabs", "f32"), vt, &[a]);
                let inf = self.fsplat(f32::INFINITY);
                self.fcmp("oeq", &x, &inf)
            }
            F2S => {
                let t = self.cvt_ps2dq(a, true);
                let big = self.ins(&format!("fcmp oge {vt} {a}, {}", self.fsplat(2147483648.0)));
                let t = self.ins(&format!(
                    "select {mt} {big}, {vit} {}, {vit} {t}",
                    self.isp(i32::MAX)
                ));
                let nan = self.ins(&format!("fcmp uno {vt} {a}, {a}"));
                let t = self.ins(&format!(
                    "select {mt} {nan}, {vit} zeroinitializer, {vit} {t}"
                ));
                self.f(&t)
            }
            S2F => {
                let x = self.i(a);
                self.ins(&format!("sitofp {vit} {x} to {vt}"))
            }
            INeg => {
                let x = self.i(a);
                let r = self.ins(&format!("sub {vit} zeroinitializer, {x}"));
                self.f(&r)
            }
            SAbs => {
                let x = self.i(a);
                let r = self.ins(&format!("call {vit} @llvm.abs.{is}({vit} {x}, i1 false)"));
                self.f(&r)
            }
            Not => {
                let x = self.i(a);
                let r = self.ins(&format!("xor {vit} {x}, {}", self.isp(-1)));
                self.f(&r)
            }
            SSign => {
                let x = self.i(a);
                let gt = self.ins(&format!("icmp sgt {vit} {x}, zeroinitializer"));
                let lt = self.ins(&format!("icmp slt {vit} {x}, zeroinitializer"));
                let gt = self.ins(&format!("zext {mt} {gt} to {vit}"));
                let lt = self.ins(&format!("sext {mt} {lt} to {vit}"));
                let r = self.ins(&format!("or {vit} {gt}, {lt}"));
                self.f(&r)
            }
            _ => unreachable!(),
        }
    }

    fn bin(&mut self, f: BinOp, a: &str, b: &str) -> String {
        let (vt, vit) = (self.v(), self.vi());
        use BinOp::*;
        match f {
            FAdd => self.ins(&format!("fadd {vt} {a}, {b}")),
            FSub => self.ins(&format!("fsub {vt} {a}, {b}")),
            FMul => self.ins(&format!("fmul {vt} {a}, {b}")),
            FDiv => self.ins(&format!("fdiv {vt} {a}, {b}")),
            FRem => {
                let q = self.ins(&format!("fdiv {vt} {a}, {b}"));
                let t = self.round(&q, 11);
                let p = self.ins(&format!("fmul {vt} {b}, {t}"));
                self.ins(&format!("fsub {vt} {a}, {p}"))
            }
            FMin => self.fmin(a, b),
            FMax => self.fmax(a, b),
            FStep => {
                let m = self.fcmp("oge", b, a);
                self.and_bits(&m, 1.0)
            }
            FEq => self.fcmp("oeq", a, b),
            FNe => self.fcmp("une", a, b),
            FLt => self.fcmp("olt", a, b),
            FLe => self.fcmp("ole", a, b),
            FGt => self.fcmp("ogt", a, b),
            FGe => self.fcmp("oge", a, b),
            IAdd => self.int2("add", a, b),
            ISub => self.int2("sub", a, b),
            IMul => self.int2("mul", a, b),
            IEq => self.icmp("eq", a, b),
            INe => self.icmp("ne", a, b),
            SLt => self.icmp("slt", a, b),
            SLe => self.icmp("sle", a, b),
            SGt => self.icmp("sgt", a, b),
            SGe => self.icmp("sge", a, b),
            ULt => self.icmp("ult", a, b),
            ULe => self.icmp("ule", a, b),
            UGt => self.icmp("ugt", a, b),
            UGe => self.icmp("uge", a, b),
            And => self.int2("and", a, b),
            Or => self.int2("or", a, b),
            Xor => self.int2("xor", a, b),
            AndNot => {
                let (x, y) = (self.i(a), self.i(b));
                let ny = self.ins(&format!("xor {vit} {y}, {}", self.isp(-1)));
                let r = self.ins(&format!("and {vit} {x}, {ny}"));
                self.f(&r)
            }
            SMin => self.intr2(&self.nm("llvm.smin", "i32"), a, b),
            SMax => self.intr2(&self.nm("llvm.smax", "i32"), a, b),
            UMin => self.intr2(&self.nm("llvm.umin", "i32"), a, b),
            UMax => self.intr2(&self.nm("llvm.umax", "i32"), a, b),
            _ => unreachable!(),
        }
    }

    fn tri(&mut self, f: TriOp, a: &str, b: &str, c: &str) -> String {
        let (vt, fs) = (self.v(), self.fs());
        use TriOp::*;
        match f {
            FFma => self.ins(&format!(
                "call {vt} @llvm.fma.{fs}({vt} {a}, {vt} {b}, {vt} {c})"
            )),
            FMix => {
                let d = self.ins(&format!("fsub {vt} {b}, {a}"));
                self.ins(&format!(
                    "call {vt} @llvm.fma.{fs}({vt} {d}, {vt} {c}, {vt} {a})"
                ))
            }
            FClamp => {
                let t = self.fmax(a, b);
                self.fmin(&t, c)
            }
            SClamp => {
                let t = self.intr2(&self.nm("llvm.smax", "i32"), a, b);
                self.intr2(&self.nm("llvm.smin", "i32"), &t, c)
            }
            UClamp => {
                let t = self.intr2(&self.nm("llvm.umax", "i32"), a, b);
                self.intr2(&self.nm("llvm.umin", "i32"), &t, c)
            }
            Select => self.blend(a, b, c),
            _ => unreachable!(),
        }
    }

    /// Element `i` of the helper buffer.
    fn buf(&mut self, i: usize) -> String {
        let ap = self.ptr(&format!("[8 x {V}]"));
        self.ins(&format!(
            "getelementptr [8 x {V}], {ap} %buf, i64 0, i64 {i}"
        ))
    }

    /// Calls `h` on `args` through the stack buffer (`helpers`' calling
    /// convention); returns `results` values.
    ///
    /// The helpers take one group (8 lanes): a 16-lane region calls `h`
    /// on each half and joins the results.
    fn call_helper(&mut self, h: Helper, args: &[String], results: usize) -> Vec<String> {
        if self.w16 {
            let halves: Vec<Vec<String>> = args
                .iter()
                .map(|a| self.split_groups_of(a, "float"))
                .collect();
            let outs: Vec<Vec<String>> = (0..2)
                .map(|k| {
                    let half: Vec<String> = halves.iter().map(|a| a[k].clone()).collect();
                    self.call_helper8(h, &half, results)
                })
                .collect();
            return (0..results)
                .map(|r| self.join_groups_of(&[outs[0][r].clone(), outs[1][r].clone()], "float"))
                .collect();
        }
        self.call_helper8(h, args, results)
    }

    /// The region's `<n x elem>` vector of the 8-lane `parts`.
    fn join_groups_of(&mut self, parts: &[String], elem: &str) -> String {
        match parts {
            [one] => one.clone(),
            [lo, hi] => {
                let all: Vec<String> = (0..16).map(|k| format!("i32 {k}")).collect();
                self.ins(&format!(
                    "shufflevector <8 x {elem}> {lo}, <8 x {elem}> {hi}, <16 x i32> <{}>",
                    all.join(", ")
                ))
            }
            _ => unreachable!("8 or 16 lanes"),
        }
    }

    /// The 8-lane groups of the region's `<n x elem>` vector `v`.
    fn split_groups_of(&mut self, v: &str, elem: &str) -> Vec<String> {
        if !self.w16 {
            return vec![v.to_string()];
        }
        [0, 8]
            .map(|from| {
                let sel: Vec<String> = (from..from + 8).map(|k| format!("i32 {k}")).collect();
                self.ins(&format!(
                    "shufflevector <16 x {elem}> {v}, <16 x {elem}> undef, <8 x i32> <{}>",
                    sel.join(", ")
                ))
            })
            .to_vec()
    }

    /// [`Self::call_helper`] on 8-lane values.
    fn call_helper8(&mut self, h: Helper, args: &[String], results: usize) -> Vec<String> {
        let vp = self.ptr(V);
        for (i, a) in args.iter().enumerate() {
            let p = self.buf(i);
            self.line(&format!("store {V} {a}, {vp} {p}, align 32"));
        }
        let fty = self.ptr(&format!("void ({vp})"));
        let fp = self.ins(&format!("inttoptr i64 {} to {fty}", h as usize as i64));
        let p0 = self.buf(0);
        self.line(&format!("call void {fp}({vp} {p0})"));
        (0..results)
            .map(|i| {
                let p = self.buf(i);
                self.ins(&format!("load {V}, {vp} {p}, align 32"))
            })
            .collect()
    }

    /// `pow(x, y)` inline: `lanemath::pow_avx2`, step for step.
    fn pow_inline(&mut self, x: &str, y: &str) -> String {
        let vt = self.v();
        let l = self.log2(x);
        let p = self.ins(&format!("fmul {vt} {y}, {l}"));
        self.exp2(&p)
    }

    fn fma(&mut self, a: &str, b: &str, c: &str) -> String {
        let (vt, fs) = (self.v(), self.fs());
        self.ins(&format!(
            "call {vt} @llvm.fma.{fs}({vt} {a}, {vt} {b}, {vt} {c})"
        ))
    }

    fn sel_cmp(&mut self, cc: &str, a: &str, b: &str, t: &str, f: &str) -> String {
        let vt = self.v();
        let m = self.ins(&format!("fcmp {cc} {vt} {a}, {b}"));
        self.fsel(&m, t, f)
    }

    fn log2(&mut self, x: &str) -> String {
        let (vt, vit, mt) = (self.v(), self.vi(), self.m1());
        let ks: Vec<String> = POW_LOG2_SERIES
            .iter()
            .map(|&b| self.fsplat(f32::from_bits(b)))
            .collect();
        let k = |i: usize| ks[i].clone();
        let minpos = self.fsplat(f32::MIN_POSITIVE);
        let sub = self.ins(&format!("fcmp olt {vt} {x}, {minpos}"));
        let sc = self.ins(&format!("fmul {vt} {x}, {}", self.fsplat(8_388_608.0)));
        let xs = self.fsel(&sub, &sc, x);
        let bits = self.i(&xs);
        let sh = self.ins(&format!("ashr {vit} {bits}, {}", self.isp(23)));
        let e = self.ins(&format!("and {vit} {sh}, {}", self.isp(0xff)));
        let e = self.ins(&format!("sub {vit} {e}, {}", self.isp(127)));
        let subi = self.ins(&format!("sext {mt} {sub} to {vit}"));
        let s23 = self.ins(&format!("and {vit} {subi}, {}", self.isp(23)));
        let e = self.ins(&format!("sub {vit} {e}, {s23}"));
        let mb = self.ins(&format!("and {vit} {bits}, {}", self.isp(0x007f_ffff)));
        let mb = self.ins(&format!("or {vit} {mb}, {}", self.isp(0x3f80_0000)));
        let m = self.f(&mb);
        let big = self.ins(&format!(
            "fcmp ogt {vt} {m}, {}",
            self.fsplat(std::f32::consts::SQRT_2)
        ));
        let mh = self.ins(&format!("fmul {vt} {m}, {}", self.fsplat(0.5)));
        let m = self.fsel(&big, &mh, &m);
        let bigi = self.ins(&format!("sext {mt} {big} to {vit}"));
        let e = self.ins(&format!("sub {vit} {e}, {bigi}"));
        let one = self.fsplat(1.0);
        let num = self.ins(&format!("fsub {vt} {m}, {one}"));
        let den = self.ins(&format!("fadd {vt} {m}, {one}"));
        let t = self.ins(&format!("fdiv {vt} {num}, {den}"));
        let t2 = self.ins(&format!("fmul {vt} {t}, {t}"));
        let p = self.fma(&t2, &k(4), &k(3));
        let p = self.fma(&p, &t2, &k(2));
        let p = self.fma(&p, &t2, &k(1));
        let p = self.fma(&p, &t2, &k(0));
        let ef = self.ins(&format!("sitofp {vit} {e} to {vt}"));
        let r = self.fma(&t, &p, &ef);
        let z = self.fsplat(0.0);
        let ninf = self.fsplat(f32::NEG_INFINITY);
        let r = self.sel_cmp("oeq", x, &z, &ninf, &r);
        let inf = self.fsplat(f32::INFINITY);
        let r = self.sel_cmp("oeq", x, &inf, &inf, &r);
        let lt = self.ins(&format!("fcmp olt {vt} {x}, {z}"));
        let nn = self.ins(&format!("fcmp une {vt} {x}, {x}"));
        let bad = self.ins(&format!("or {mt} {lt}, {nn}"));
        let nan = self.fsplat(f32::NAN);
        self.fsel(&bad, &nan, &r)
    }

    fn exp2(&mut self, y: &str) -> String {
        let (vt, vit) = (self.v(), self.vi());
        let ks: Vec<String> = POW_EXP2_TAYLOR
            .iter()
            .map(|&b| self.fsplat(f32::from_bits(b)))
            .collect();
        let k = |i: usize| ks[i].clone();
        let lo = self.fsplat(POW_EXP2_RANGE.0);
        let hi = self.fsplat(POW_EXP2_RANGE.1);
        let yc = self.sel_cmp("ogt", y, &lo, y, &lo);
        let yc = self.sel_cmp("olt", &yc, &hi, &yc, &hi);
        let h = self.ins(&format!("fadd {vt} {yc}, {}", self.fsplat(0.5)));
        let i = self.round(&h, 9);
        let f = self.ins(&format!("fsub {vt} {yc}, {i}"));
        let p = self.fma(&f, &k(6), &k(5));
        let p = self.fma(&p, &f, &k(4));
        let p = self.fma(&p, &f, &k(3));
        let p = self.fma(&p, &f, &k(2));
        let p = self.fma(&p, &f, &k(1));
        let p = self.fma(&p, &f, &k(0));
        let one = self.fsplat(1.0);
        let p = self.fma(&p, &f, &one);
        let ii = self.cvt_ps2dq(&i, false);
        let i1 = self.ins(&format!("ashr {vit} {ii}, {}", self.isp(1)));
        let i2 = self.ins(&format!("sub {vit} {ii}, {i1}"));
        let s1 = self.ins(&format!("add {vit} {i1}, {}", self.isp(127)));
        let s1 = self.ins(&format!("shl {vit} {s1}, {}", self.isp(23)));
        let s1 = self.f(&s1);
        let s2 = self.ins(&format!("add {vit} {i2}, {}", self.isp(127)));
        let s2 = self.ins(&format!("shl {vit} {s2}, {}", self.isp(23)));
        let s2 = self.f(&s2);
        let r = self.ins(&format!("fmul {vt} {p}, {s1}"));
        let r = self.ins(&format!("fmul {vt} {r}, {s2}"));
        let nan = self.fsplat(f32::NAN);
        self.sel_cmp("une", y, y, &nan, &r)
    }

    fn op(&mut self, op: &Op) {
        let (vit, mt, is) = (self.vi(), self.m1(), self.is());
        match op {
            Op::Mov { d, a } => {
                let v = self.get(*a);
                self.set(*d, v);
            }
            Op::MovMasked { d, a } => {
                let (m, x, old) = (self.get(EXEC), self.get(*a), self.get(*d));
                let v = self.blend(&m, &x, &old);
                self.set(*d, v);
            }
            Op::Un { f, d, a } => {
                let x = self.get(*a);
                let v = if inline_un(*f) {
                    self.un(*f, &x)
                } else {
                    self.call_helper(helpers::un(*f), &[x], 1).remove(0)
                };
                self.set(*d, v);
            }
            Op::Bin { f, d, a, b } => {
                let (x, y) = (self.get(*a), self.get(*b));
                let v = if inline_bin(*f) {
                    self.bin(*f, &x, &y)
                } else if *f == BinOp::FPow {
                    self.pow_inline(&x, &y)
                } else {
                    self.call_helper(helpers::bin(*f), &[x, y], 1).remove(0)
                };
                self.set(*d, v);
            }
            Op::Tri { f, d, a, b, c } => {
                let (x, y, z) = (self.get(*a), self.get(*b), self.get(*c));
                let v = if inline_tri(*f) {
                    self.tri(*f, &x, &y, &z)
                } else {
                    self.call_helper(helpers::tri(*f), &[x, y, z], 1).remove(0)
                };
                self.set(*d, v);
            }
            Op::InsertBits { d, e, n, off, cnt } => {
                let args = [*e, *n, *off, *cnt].map(|r| self.get(r));
                let v = self.call_helper(helpers::insert_bits, &args, 1).remove(0);
                self.set(*d, v);
            }
            Op::Pack { f, d, a } => {
                let n = f.arity();
                let args: Vec<String> = (0..4)
                    .map(|k| {
                        if k < n {
                            self.get(a[k])
                        } else {
                            "zeroinitializer".to_string()
                        }
                    })
                    .collect();
                let v = self.call_helper(helpers::pack(*f), &args, 1).remove(0);
                self.set(*d, v);
            }
            Op::Unpack { f, d, a } => {
                let x = self.get(*a);
                let r = self.call_helper(helpers::unpack(*f), &[x], 4);
                for k in 0..f.arity() {
                    self.set(d[k], r[k].clone());
                }
            }
            Op::Deriv { axis, fine, d, a } => {
                let x = self.get(*a);
                let v = self
                    .call_helper(helpers::deriv(*axis, *fine), &[x], 1)
                    .remove(0);
                self.set(*d, v);
            }
            Op::LoadInput { d, src } => {
                let base = self.io_base[&IoRow::In(*src)].clone();
                let q = self.addr(&base);
                let v = self.load(&q, true);
                self.set(*d, v);
            }
            Op::StoreOutput { slot, a } => {
                let v = self.get(*a);
                let base = self.io_base[&IoRow::Out(*slot)].clone();
                let q = self.addr(&base);
                self.store(&v, &q);
            }
            Op::Extract { d, index, srcs } => {
                // d = srcs[min(index, n - 1)] (unsigned), as `exec::extract`
                let idx = self.get(*index);
                let ii = self.i(&idx);
                let last = self.isp(srcs.len() as i32 - 1);
                let c = self.ins(&format!(
                    "call {vit} @llvm.umin.{is}({vit} {ii}, {vit} {last})"
                ));
                let mut r = self.get(srcs[0]);
                for (k, src) in srcs.iter().enumerate().skip(1) {
                    let x = self.get(*src);
                    let hit = self.ins(&format!("icmp eq {vit} {c}, {}", self.isp(k as i32)));
                    r = self.fsel(&hit, &x, &r);
                }
                self.set(*d, r);
            }
            Op::Insert {
                dsts,
                srcs,
                index,
                value,
                masked,
            } => {
                // dsts[k] = (min(index, n - 1) == k [&& EXEC < 0]) ? value :
                // srcs[k], in k order, as `exec::insert`
                let n = dsts.len().min(srcs.len());
                let (idx, val) = (self.get(*index), self.get(*value));
                let exec = if *masked {
                    let e = self.get(EXEC);
                    let ei = self.i(&e);
                    Some(self.ins(&format!("icmp slt {vit} {ei}, zeroinitializer")))
                } else {
                    None
                };
                let ii = self.i(&idx);
                let last = self.isp(n as i32 - 1);
                let c = self.ins(&format!(
                    "call {vit} @llvm.umin.{is}({vit} {ii}, {vit} {last})"
                ));
                for k in 0..n {
                    let old = self.get(srcs[k]);
                    let hit = self.ins(&format!("icmp eq {vit} {c}, {}", self.isp(k as i32)));
                    let hit = match &exec {
                        Some(e) => self.ins(&format!("and {mt} {hit}, {e}")),
                        None => hit,
                    };
                    let v = self.fsel(&hit, &val, &old);
                    self.set(dsts[k], v);
                }
            }
            _ => unreachable!(),
        }
    }

    /// Writes region `name`: a loop over the chunk's groups, one group
    /// an iteration, or two in a 16-lane region (`w16`).
    fn region(&mut self, name: &str, (ops, live_out, inline): RegionSrc<'_>, w16: bool) {
        self.w16 = w16;
        self.cache.clear();
        self.dirty.clear();
        self.vbase.clear();
        self.io_base.clear();
        let b = self.ptr("i8");
        let attrs = if w16 { "#2" } else { "#0" };
        let _ = writeln!(self.out, "define void @{name}({b} %ctx) {attrs} {{\nentry:");
        self.line(&format!("%buf = alloca [8 x {V}], align 32"));
        // `RegionCtx` field at byte `off`, of type `ty`, loaded into `%name`
        // (a fresh value without a name)
        let field = |e: &mut E, off: usize, ty: &str, name: Option<&str>| -> String {
            let p = e.ins(&format!("getelementptr i8, {b} %ctx, i64 {off}"));
            let q = e.cast(&p, ty);
            let tp = e.ptr(ty);
            let load = format!("load {ty}, {tp} {q}");
            match name {
                Some(n) => {
                    e.line(&format!("%{n} = {load}"));
                    format!("%{n}")
                }
                None => e.ins(&load),
            }
        };
        field(
            self,
            std::mem::offset_of!(RegionCtx, file),
            &b,
            Some("file"),
        );
        field(
            self,
            std::mem::offset_of!(RegionCtx, groups),
            "i64",
            Some("groups"),
        );
        let io_stride = field(
            self,
            std::mem::offset_of!(RegionCtx, io_stride),
            "i64",
            None,
        );
        let stride = self.ins("mul i64 %groups, 32");
        let vfile = self.ins(&format!(
            "getelementptr i8, {b} %file, i64 {}",
            self.nu * 32
        ));
        let (regs, written) = region_regs(ops);
        self.written = written;
        for r in regs {
            if !r.is_uniform() {
                let o = self.ins(&format!("mul i64 {stride}, {}", r.index()));
                let a = self.ins(&format!("getelementptr i8, {b} {vfile}, i64 {o}"));
                self.vbase.insert(r.0, a);
            }
        }
        for row in ops.iter().filter_map(IoRow::of) {
            if !self.io_base.contains_key(&row) {
                let (f, index) = row.field_and_row();
                let p = field(self, f, &b, None);
                let o = self.ins(&format!("mul i64 {io_stride}, {index}"));
                let a = self.ins(&format!("getelementptr i8, {b} {p}, i64 {o}"));
                self.io_base.insert(row, a);
            }
        }
        self.desc.clear();
        for h in inline.iter().flatten() {
            if !self.desc.contains_key(&h.slot) {
                let v = self.desc_vals(h.slot);
                self.desc.insert(h.slot, v);
            }
        }
        self.line("br label %loop");
        let _ = writeln!(self.out, "loop:");
        self.line("%g = phi i64 [0, %entry], [%g1, %latch]");
        self.line(CARRY_MARK);
        self.line("%off = mul i64 %g, 32");
        if w16 {
            // both groups, or group `g` alone at an odd chunk's end
            self.line("%gn = add i64 %g, 1");
            self.line("%full = icmp ult i64 %gn, %groups");
            self.line("%kb = select i1 %full, i16 -1, i16 255");
            self.line("%km = bitcast i16 %kb to <16 x i1>");
        }
        let mut k = 0;
        while k < ops.len() {
            let (Op::Texture(t), Some(h)) = (&ops[k], inline[k]) else {
                self.op(&ops[k]);
                k += 1;
                continue;
            };
            // the lookups after it that share its addressing
            let mut group: Vec<(&crate::ir::TexOp, super::InlineHow)> = vec![(&**t, h)];
            while let (Some(Op::Texture(u)), Some(Some(hu))) =
                (ops.get(k + group.len()), inline.get(k + group.len()))
                && sample::shares(&group, u, *hu)
            {
                group.push((&**u, *hu));
            }
            k += group.len();
            self.sample_inline(&group);
        }
        let dirty = std::mem::take(&mut self.dirty);
        for r in dirty {
            if is_live(live_out, Reg(r)) {
                let v = self.cache[&r].clone();
                let base = self.vbase[&r].clone();
                let q = self.addr(&base);
                self.store(&v, &q);
            }
        }
        // the header phis of the values carried between groups
        let phis: String = std::mem::take(&mut self.carry)
            .into_iter()
            .map(|(name, ty, init, next)| {
                format!("  {name} = phi {ty} [{init}, %entry], [{next}, %latch]\n")
            })
            .collect();
        let mark = format!("  {CARRY_MARK}\n");
        if let Some(at) = self.out.rfind(&mark) {
            self.out.replace_range(at..at + mark.len(), &phis);
        }
        // (the loop's last block: inlined lookups branch inside the body)
        self.line("br label %latch");
        let _ = writeln!(self.out, "latch:");
        self.line(&format!("%g1 = add i64 %g, {}", if w16 { 2 } else { 1 }));
        self.line("%more = icmp ult i64 %g1, %groups");
        self.line("br i1 %more, label %loop, label %exit");
        let _ = writeln!(self.out, "exit:\n  ret void\n}}\n");
    }
}

/// Where the group loop's header phis of carried values go, replaced once
/// the body is written ([`E::carry`]).
const CARRY_MARK: &str = "; carried values";

const DECLS: &str = "
declare <8 x float> @llvm.fabs.v8f32(<8 x float>)
declare <8 x float> @llvm.sqrt.v8f32(<8 x float>)
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
declare <8 x float> @llvm.x86.avx.round.ps.256(<8 x float>, i32)
declare <8 x i32> @llvm.x86.avx.cvtt.ps2dq.256(<8 x float>)
declare <8 x i32> @llvm.x86.avx.cvt.ps2dq.256(<8 x float>)
declare <8 x i32> @llvm.abs.v8i32(<8 x i32>, i1)
declare <8 x i32> @llvm.smin.v8i32(<8 x i32>, <8 x i32>)
declare <8 x i32> @llvm.smax.v8i32(<8 x i32>, <8 x i32>)
declare <8 x i32> @llvm.umin.v8i32(<8 x i32>, <8 x i32>)
declare <8 x i32> @llvm.umax.v8i32(<8 x i32>, <8 x i32>)
attributes #0 = { nounwind \"target-cpu\"=\"x86-64-v3\" }
attributes #2 = { nounwind \"target-cpu\"=\"x86-64-v4\" }
!0 = !{}
";

/// Names the lane width of LLVM's regions: `8` or `16` (default: 16 on
/// AMD cores with AVX-512, else 8; [`wide`]).  For A/B measurement, and
/// for a host that wants 16 lanes on an unmeasured CPU; the bits are the
/// same either way.
pub const LANES_ENV: &str = "FERROPIPE_JIT_LANES";

/// Whether LLVM's regions run 16 lanes (two groups) a vector, in 512-bit
/// AVX-512 registers.  The CPU must have AVX-512 F, BW, DQ and VL; then
/// [`LANES_ENV`] decides (`8` or `16`), and without it (or empty), the
/// vendor: yes on AMD cores, where it was measured (below), no elsewhere.
/// Any other value is an error, as an unknown [`LLVM_ENV`] is: LLVM
/// compiles nothing, and the program keeps the tier below, where a silent
/// 8 would have passed for a measurement.  Intel's AVX-512 cores are not
/// measured, and on some of them 512-bit arithmetic lowers the core's
/// clock or runs on one 512-bit unit only, where 256-bit code uses two: a
/// default that could make their frames slower waits for a measurement
/// (the same per-vendor rule as `fast_gathers`).
///
/// Why: pbr_barrels' fragment arithmetic is ~845 instructions a group
/// with ~99 spills in 256-bit code (docs/performance.md, "Latest
/// table"); at 16 lanes the same instructions do two groups' work, and
/// each spill carries twice the lanes: 0.82x pbr_barrels' time on a Zen
/// 5 core, which runs 512-bit operations at full width (Zen 4 splits
/// them into two halves, which still halves the instructions to decode
/// and retire).  The inlined lookups' coordinates, levels and 16-bit
/// filter likewise (their texel loads stay one per lane): postprocess's
/// 16 bilinear taps a pixel in 0.73x the time.  The bits cannot change:
/// each lane's operations are the same IEEE and integer ones, and the
/// x86 operations with their own semantics (`vroundps`, `cvtps2dq`,
/// `vpmulhrsw`, `vpermd`) have 512-bit forms of the same meaning.  Read
/// once, like `std`'s feature cache.
pub(super) fn wide() -> Result<bool, JitError> {
    static WIDE: std::sync::OnceLock<Result<bool, String>> = std::sync::OnceLock::new();
    WIDE.get_or_init(|| {
        let asked = match std::env::var(LANES_ENV) {
            Ok(v) if v.trim() == "8" => Some(false),
            Ok(v) if v.trim() == "16" => Some(true),
            Ok(v) if !v.trim().is_empty() => {
                return Err(format!("{LANES_ENV}={v}: expected 8 or 16"));
            }
            _ => None,
        };
        Ok(cpu_wide() && asked.unwrap_or_else(ferropipe_components::simd::amd_cores))
    })
    .clone()
    .map_err(JitError::Llvm)
}

/// Whether the CPU runs the 16-lane regions ([`wide`]).
pub(super) fn cpu_wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The 16-lane regions' intrinsics ([`wide`]); `vp`: the `<16 x float>`
/// pointer type.
fn decls16(vp: &str) -> String {
    let ov = if vp == "ptr" { "p0" } else { "p0v16f32" };
    format!(
        "declare <16 x float> @llvm.fabs.v16f32(<16 x float>)
declare <16 x float> @llvm.sqrt.v16f32(<16 x float>)
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
declare <16 x float> @llvm.x86.avx512.mask.rndscale.ps.512(<16 x float>, i32, <16 x float>, i16, i32)
declare <16 x i32> @llvm.x86.avx512.mask.cvttps2dq.512(<16 x float>, <16 x i32>, i16, i32)
declare <16 x i32> @llvm.x86.avx512.mask.cvtps2dq.512(<16 x float>, <16 x i32>, i16, i32)
declare <16 x i32> @llvm.abs.v16i32(<16 x i32>, i1)
declare <16 x i32> @llvm.smin.v16i32(<16 x i32>, <16 x i32>)
declare <16 x i32> @llvm.smax.v16i32(<16 x i32>, <16 x i32>)
declare <16 x i32> @llvm.umin.v16i32(<16 x i32>, <16 x i32>)
declare <16 x i32> @llvm.umax.v16i32(<16 x i32>, <16 x i32>)
declare <16 x float> @llvm.masked.load.v16f32.{ov}({vp}, i32, <16 x i1>, <16 x float>)
declare void @llvm.masked.store.v16f32.{ov}(<16 x float>, {vp}, i32, <16 x i1>)
"
    )
}

/// The host's `libLLVM`, loaded: a deferred tier holds it
/// (`JitCode::deferred`), so that its later compiles do not load it again
/// (~20 ms of relocations and page faults the process's first time).
pub(super) use api::Llvm;

/// Loads the host's `libLLVM` ([`Llvm`]).
pub(super) fn load() -> Result<Llvm, JitError> {
    api::Llvm::load()
}

#[cfg(test)]
/// Whether LLVM's code generator can run here (the host's `libLLVM` 14
/// loads and has every function it calls); the error says why not.
pub(super) fn available() -> Result<(), JitError> {
    api::Llvm::load().map(drop)
}

/// Compiles `regions` (each [`RegionSrc`]: every op one
/// `codegen::supported` accepts, or a texture lookup it names inlined)
/// into one module; returns its code and each region's address, in order.
/// With `wide` ([`wide`]), the regions run 16 lanes a vector.
pub(super) fn compile(
    nu: usize,
    regions: &[RegionSrc<'_>],
    wide: bool,
    disasm: bool,
) -> Result<(LlvmCode, Vec<*const u8>), JitError> {
    let llvm = api::Llvm::load()?;
    let mut e = E {
        out: String::new(),
        n: 0,
        nu,
        cache: HashMap::new(),
        dirty: BTreeSet::new(),
        written: BTreeSet::new(),
        vbase: HashMap::new(),
        io_base: HashMap::new(),
        typed: llvm.major() == 14,
        desc: HashMap::new(),
        carry: Vec::new(),
        w16: false,
    };
    let mut names = Vec::with_capacity(regions.len());
    for (i, &src) in regions.iter().enumerate() {
        let name = format!("region{i}");
        e.region(&name, src, wide);
        names.push(name);
    }
    e.out.push_str(DECLS);
    let (p, vp) = (e.ptr("i8"), e.ptr(V));
    let vp16 = e.ptr("<16 x float>");
    let _ = write!(e.out, "{}", decls16(&vp16));
    let _ = write!(e.out, "{}", sample::decls(&p, &vp, wide));
    if disasm {
        eprintln!("=== LLVM module ({} regions)\n{}", regions.len(), e.out);
    }
    llvm.compile(&e.out, &names)
}
