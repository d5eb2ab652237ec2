//! Emitting lane-program ops: constant folding, uniform hoisting and
//! prologue common-subexpression elimination happen here, so every op the
//! lowering asks for lands in the cheapest place.
//!
//! * all operands constant → evaluated now (with the same `lanemath`
//!   functions the executor runs, so folding never changes a result);
//! * all operands uniform → a prologue op, computed once per `run` call
//!   (deduplicated: the same uniform op is emitted once);
//! * otherwise → a body op over all lanes.

use std::collections::HashMap;

use wide::f32x8;

use crate::ir::{
    Axis, BinOp, EXEC, InputSrc, MemSpace, Op, PackFn, Reg, TexDim, TexOp, TexQuery, TexQueryFn,
    TriOp, UnOp, UnpackFn,
};
use crate::lanemath::{self, as_u, splat_bits};

/// Uniform registers numbered from here are constants during lowering
/// (renumbered to the start of the uniform file at the end).
pub const CONST_TAG: u32 = 1 << 30;

/// The op lists under construction.
#[derive(Default)]
pub struct Builder {
    /// Constant values, by constant index.
    pub consts: Vec<u32>,
    const_map: HashMap<u32, Reg>,
    pub prologue: Vec<Op>,
    pub body: Vec<Op>,
    /// Next varying register (0 is EXEC).
    pub next_v: u32,
    /// Next computed uniform register.
    pub next_u: u32,
    cse: HashMap<String, Reg>,
}

impl Builder {
    pub fn new() -> Self {
        Builder {
            next_v: 1,
            ..Default::default()
        }
    }

    /// A fresh varying register.
    pub fn new_v(&mut self) -> Reg {
        let r = Reg::v(self.next_v);
        self.next_v += 1;
        r
    }

    fn new_u(&mut self) -> Reg {
        let r = Reg::u(self.next_u);
        self.next_u += 1;
        r
    }

    /// The constant register holding `bits`.
    pub fn konst(&mut self, bits: u32) -> Reg {
        if let Some(r) = self.const_map.get(&bits) {
            return *r;
        }
        let r = Reg::u(CONST_TAG | self.consts.len() as u32);
        self.consts.push(bits);
        self.const_map.insert(bits, r);
        r
    }

    pub fn kf(&mut self, v: f32) -> Reg {
        self.konst(v.to_bits())
    }
    pub fn ki(&mut self, v: i32) -> Reg {
        self.konst(v as u32)
    }
    pub fn ku(&mut self, v: u32) -> Reg {
        self.konst(v)
    }
    pub fn kbool(&mut self, v: bool) -> Reg {
        self.konst(if v { !0 } else { 0 })
    }
    pub fn zero(&mut self) -> Reg {
        self.konst(0)
    }

    /// The constant value of `r`, if it is a constant.
    pub fn const_of(&self, r: Reg) -> Option<u32> {
        if r.is_uniform() && (r.0 & CONST_TAG) != 0 {
            Some(self.consts[(r.index() as u32 & !CONST_TAG) as usize])
        } else {
            None
        }
    }

    fn lanes(&self, r: Reg) -> wide::f32x8 {
        splat_bits(self.const_of(r).unwrap_or(0))
    }

    fn bits_of(v: f32x8) -> u32 {
        as_u(v).to_array()[0]
    }

    /// Emits a pure op producing one register; `make` builds the op for a
    /// destination.  Folds or hoists as the operands allow.
    fn pure1(
        &mut self,
        operands: &[Reg],
        fold: impl FnOnce(&Self) -> Option<u32>,
        make: impl FnOnce(Reg) -> Op,
    ) -> Reg {
        if operands.iter().all(|r| self.const_of(*r).is_some())
            && let Some(bits) = fold(self)
        {
            return self.konst(bits);
        }
        if operands.iter().all(|r| r.is_uniform()) {
            let probe = make(Reg::u(u32::MAX >> 2));
            let key = format!("{probe:?}");
            if let Some(r) = self.cse.get(&key) {
                return *r;
            }
            let d = self.new_u();
            let mut op = probe;
            op.map_regs(|r| if r == Reg::u(u32::MAX >> 2) { d } else { r });
            self.prologue.push(op);
            self.cse.insert(key, d);
            return d;
        }
        let d = self.new_v();
        self.body.push(make(d));
        d
    }

    pub fn un(&mut self, f: UnOp, a: Reg) -> Reg {
        let la = self.lanes(a);
        self.pure1(
            &[a],
            |_| Some(Self::bits_of(lanemath::un(f, la))),
            |d| Op::Un { f, d, a },
        )
    }

    pub fn bin(&mut self, f: BinOp, a: Reg, b: Reg) -> Reg {
        // algebraic identities that cost nothing to spot
        let ca = self.const_of(a);
        let cb = self.const_of(b);
        match f {
            BinOp::FMul if cb == Some(1f32.to_bits()) => return a,
            BinOp::FMul if ca == Some(1f32.to_bits()) => return b,
            BinOp::FAdd if cb == Some(0) => return a,
            BinOp::FAdd if ca == Some(0) => return b,
            BinOp::FSub if cb == Some(0) => return a,
            BinOp::IAdd | BinOp::Or | BinOp::Xor if cb == Some(0) => return a,
            BinOp::IAdd | BinOp::Or | BinOp::Xor if ca == Some(0) => return b,
            BinOp::ISub | BinOp::Shl | BinOp::ShrS | BinOp::ShrU | BinOp::AndNot
                if cb == Some(0) =>
            {
                return a;
            }
            BinOp::FPow if ca.is_none() => {
                if let Some(n) = cb.and_then(small_integer_exponent) {
                    return self.pow_int(a, n);
                }
            }
            BinOp::IMul if cb == Some(1) => return a,
            BinOp::IMul if ca == Some(1) => return b,
            BinOp::And if cb == Some(!0) => return a,
            BinOp::And if ca == Some(!0) => return b,
            BinOp::And if ca == Some(0) || cb == Some(0) => return self.zero(),
            BinOp::Or if cb == Some(!0) || ca == Some(!0) => return self.konst(!0),
            BinOp::AndNot if ca == Some(0) || cb == Some(!0) => return self.zero(),
            _ => {}
        }
        if a == b {
            match f {
                BinOp::And | BinOp::Or => return a,
                BinOp::Xor | BinOp::AndNot => return self.zero(),
                _ => {}
            }
        }
        let (la, lb) = (self.lanes(a), self.lanes(b));
        self.pure1(
            &[a, b],
            |_| Some(Self::bits_of(lanemath::bin(f, la, lb))),
            |d| Op::Bin { f, d, a, b },
        )
    }

    /// `pow(x, n)` for a constant integer `n` in `2..=MAX_POW_CHAIN` as
    /// multiplications (square-and-multiply on `|x|`: at most 6 for
    /// `n <= 16`), with `pow`'s NaN for `x < 0` (and NaN) kept by a
    /// select.  Shaders write `pow(1 - v_h, 5.0)` (Schlick) and
    /// `pow(n_h, 32.0)` (Blinn-Phong); `lanemath::pow` is a log2, an exp2
    /// and a helper call (~95 instructions per 8 lanes) where this is
    /// 3-5 multiplies inline.  The products are within 2e-6 of the exact
    /// power (each squaring doubles the error; `lanemath::pow` is within
    /// 4e-7), and both back ends run the same ops, so they stay
    /// byte-identical (`tests/jit_pow.rs`).  `-0` gives `+0`, as `pow`
    /// does.
    fn pow_int(&mut self, x: Reg, n: u32) -> Reg {
        let mut base = self.un(UnOp::FAbs, x);
        let mut acc: Option<Reg> = None;
        let mut k = n;
        while k > 0 {
            if k & 1 != 0 {
                acc = Some(match acc {
                    None => base,
                    Some(r) => self.bin(BinOp::FMul, r, base),
                });
            }
            k >>= 1;
            if k > 0 {
                base = self.bin(BinOp::FMul, base, base);
            }
        }
        let chain = acc.unwrap_or(base);
        let zero = self.kf(0.0);
        let nonneg = self.bin(BinOp::FGe, x, zero);
        let nan = self.kf(f32::NAN);
        self.tri(TriOp::Select, nonneg, chain, nan)
    }

    pub fn tri(&mut self, f: TriOp, a: Reg, b: Reg, c: Reg) -> Reg {
        if f == TriOp::Select {
            match self.const_of(a) {
                Some(0) => return c,
                Some(_) => return b,
                None if b == c => return b,
                None => {}
            }
        }
        let (la, lb, lc) = (self.lanes(a), self.lanes(b), self.lanes(c));
        self.pure1(
            &[a, b, c],
            |_| Some(Self::bits_of(lanemath::tri(f, la, lb, lc))),
            |d| Op::Tri { f, d, a, b, c },
        )
    }

    pub fn insert_bits(&mut self, e: Reg, n: Reg, off: Reg, cnt: Reg) -> Reg {
        let l = [e, n, off, cnt].map(|r| self.lanes(r));
        self.pure1(
            &[e, n, off, cnt],
            |_| Some(Self::bits_of(lanemath::insert_bits(l[0], l[1], l[2], l[3]))),
            |d| Op::InsertBits { d, e, n, off, cnt },
        )
    }

    pub fn pack(&mut self, f: PackFn, a: [Reg; 4]) -> Reg {
        let used = &a[..f.arity()];
        let l = a.map(|r| self.lanes(r));
        self.pure1(
            used,
            |_| Some(Self::bits_of(lanemath::pack(f, l))),
            |d| Op::Pack { f, d, a },
        )
    }

    pub fn unpack(&mut self, f: UnpackFn, a: Reg) -> [Reg; 4] {
        let n = f.arity();
        if let Some(bits) = self.const_of(a) {
            let r = lanemath::unpack(f, splat_bits(bits));
            return std::array::from_fn(|k| {
                if k < n {
                    self.konst(Self::bits_of(r[k]))
                } else {
                    self.zero()
                }
            });
        }
        let mut d = [Reg::v(0); 4];
        if a.is_uniform() {
            for slot in d.iter_mut().take(n) {
                *slot = self.new_u();
            }
            let z = self.zero();
            for slot in d.iter_mut().skip(n) {
                *slot = z;
            }
            self.prologue.push(Op::Unpack { f, d, a });
        } else {
            for slot in d.iter_mut().take(n) {
                *slot = self.new_v();
            }
            let z = self.zero();
            for slot in d.iter_mut().skip(n) {
                *slot = z;
            }
            let mut dd = d;
            // unused destinations of the op itself must be writable registers
            for slot in dd.iter_mut().skip(n) {
                *slot = Reg::v(0);
            }
            self.body.push(Op::Unpack { f, d: dd, a });
        }
        d
    }

    /// Screen-space derivative (0 for uniform values).
    pub fn deriv(&mut self, axis: Axis, fine: bool, a: Reg) -> Reg {
        if a.is_uniform() {
            return self.kf(0.0);
        }
        let d = self.new_v();
        self.body.push(Op::Deriv { axis, fine, d, a });
        d
    }

    /// `srcs[index]` per lane (index clamped to the list).
    pub fn extract(&mut self, index: Reg, srcs: Vec<Reg>) -> Reg {
        if srcs.len() == 1 {
            return srcs[0];
        }
        if let Some(i) = self.const_of(index) {
            return srcs[(i as usize).min(srcs.len() - 1)];
        }
        if srcs.iter().all(|s| *s == srcs[0]) {
            return srcs[0];
        }
        let mut all = vec![index];
        all.extend_from_slice(&srcs);
        let srcs = srcs.into_boxed_slice();
        self.pure1(&all, |_| None, |d| Op::Extract { d, index, srcs })
    }

    /// A fresh copy of `a` in a varying register.
    pub fn copy(&mut self, a: Reg) -> Reg {
        let d = self.new_v();
        self.body.push(Op::Mov { d, a });
        d
    }

    pub fn mov(&mut self, d: Reg, a: Reg) {
        if d != a {
            self.body.push(Op::Mov { d, a });
        }
    }

    pub fn mov_masked(&mut self, d: Reg, a: Reg) {
        if d != a {
            self.body.push(Op::MovMasked { d, a });
        }
    }

    /// Moves the active lanes into `mask` (`mask |= EXEC`) and clears
    /// `EXEC`: how break, continue and return leave the current block.
    pub fn park(&mut self, mask: &Reg) {
        let m = *mask;
        self.body.push(Op::Bin {
            f: BinOp::Or,
            d: m,
            a: m,
            b: EXEC,
        });
        let z = self.zero();
        self.set_exec(z);
    }

    pub fn set_exec(&mut self, a: Reg) {
        self.body.push(Op::SetExec { a });
    }

    /// A copy of the current `EXEC`.
    pub fn exec_copy(&mut self) -> Reg {
        self.copy(EXEC)
    }

    pub fn load_input(&mut self, src: InputSrc) -> Reg {
        let d = self.new_v();
        self.body.push(Op::LoadInput { d, src });
        d
    }

    pub fn store_output(&mut self, slot: u32, a: Reg) {
        self.body.push(Op::StoreOutput { slot, a });
    }

    /// A builtin that is the same for every lane of a call (a compute
    /// workgroup's id and count): loaded once, in the prologue.
    pub fn load_input_uniform(&mut self, src: InputSrc) -> Reg {
        self.pure1(&[], |_| None, |d| Op::LoadInput { d, src })
    }

    /// Bytes bound to shader buffer `slot` (uniform, deduplicated).
    pub fn buffer_length(&mut self, space: MemSpace) -> Reg {
        self.pure1(&[], |_| None, |d| Op::BufferLength { d, space })
    }

    /// A memory word: always a body op, never hoisted or merged with
    /// another load, because stores between two loads change the answer.
    pub fn mem_load(&mut self, space: MemSpace, addr: Reg, offset: u32) -> Reg {
        let d = self.new_v();
        self.body.push(Op::MemLoad {
            d,
            space,
            addr,
            offset,
        });
        d
    }

    /// A storage-image query (uniform, in the prologue); 3 result
    /// registers, the unused ones repeating the first.
    pub fn image_query(
        &mut self,
        image: u32,
        func: TexQueryFn,
        dim: TexDim,
        arrayed: bool,
    ) -> [Reg; 3] {
        let n = crate::ir::image_query_count(func, dim);
        let first = self.new_u();
        let mut dst = [first; 3];
        for d in dst.iter_mut().take(n).skip(1) {
            *d = self.new_u();
        }
        self.prologue.push(Op::ImageQuery {
            image,
            func,
            dim,
            arrayed,
            dst,
        });
        dst
    }

    /// A constant-buffer word at a static offset (uniform, deduplicated).
    pub fn load_const(&mut self, cb: u32, offset: u32) -> Reg {
        self.pure1(&[], |_| None, |d| Op::LoadConst { d, cb, offset })
    }

    /// A constant-buffer word at `offset + index` (per lane, or uniform
    /// when the index is).
    pub fn load_const_dyn(&mut self, cb: u32, offset: u32, index: Reg) -> Reg {
        if let Some(i) = self.const_of(index) {
            return self.load_const(cb, offset.wrapping_add(i));
        }
        self.pure1(
            &[index],
            |_| None,
            |d| Op::LoadConstDyn {
                d,
                cb,
                offset,
                index,
            },
        )
    }

    /// A texture access (per lane, in the body); returns its 4 result
    /// registers (unused ones are EXEC placeholders the op never writes).
    pub fn texture(&mut self, mut op: TexOp) -> [Reg; 4] {
        let n = op.result_count();
        for d in op.dst.iter_mut().take(n) {
            *d = self.new_v();
        }
        let d = op.dst;
        self.body.push(Op::Texture(Box::new(op)));
        d
    }

    /// A texture query; uniform (computed once per call in the prologue)
    /// unless the level varies per lane.
    pub fn texture_query(&mut self, mut q: TexQuery) -> [Reg; 3] {
        let n = q.result_count();
        let uniform = q.level.is_none_or(|l| l.is_uniform());
        for d in q.dst.iter_mut().take(n) {
            *d = if uniform { self.new_u() } else { self.new_v() };
        }
        let d = q.dst;
        if uniform {
            // unused destinations must still name uniform registers here
            for r in q.dst.iter_mut().skip(n) {
                *r = d[0];
            }
            self.prologue.push(Op::TextureQuery(Box::new(q)));
        } else {
            self.body.push(Op::TextureQuery(Box::new(q)));
        }
        d
    }

    /// Position of the next body op.
    pub fn here(&self) -> u32 {
        self.body.len() as u32
    }

    /// Emits a jump op with a target to patch later; returns its position.
    pub fn jump_placeholder(&mut self, op: Op) -> usize {
        self.body.push(op);
        self.body.len() - 1
    }

    /// Points the jump at `at` to the current position.
    pub fn patch_here(&mut self, at: usize) {
        let here = self.here();
        if let Some(t) = self.body[at].target_mut() {
            *t = here;
        }
    }

    /// Pushes an op whose destinations the caller allocated.
    pub fn push(&mut self, op: Op) {
        self.body.push(op);
    }
}

/// Largest exponent [`Builder::pow_int`] expands (at most 6
/// multiplies: 15 is 3 squarings and 3 products).
const MAX_POW_CHAIN: u32 = 16;

/// `bits` as an `f32` that is an integer in `2..=MAX_POW_CHAIN`.
fn small_integer_exponent(bits: u32) -> Option<u32> {
    let y = f32::from_bits(bits);
    (y.fract() == 0.0 && (2.0..=MAX_POW_CHAIN as f32).contains(&y)).then_some(y as u32)
}
