//! A scalar reference interpreter of naga IR, for differential tests.
//!
//! It walks the IR directly, one invocation at a time, with ordinary
//! control flow (no masks, no inlining, no register allocation) and plain
//! `std` math, so any disagreement with the lane program points at the
//! lowering, the optimisation passes or the executor.  Derivatives and
//! textures are not modelled.

#![allow(dead_code)]

use std::collections::HashMap;

use naga::valid::{FunctionInfo, ModuleInfo};
use naga::{
    BinaryOperator, Expression, Function, Handle, Literal, MathFunction, Module,
    RelationalFunction, ScalarKind, Statement, TypeInner, UnaryOperator,
};

#[derive(Clone, Debug)]
enum RV {
    Val(Vec<u32>),
    Ptr(RPtr),
    Opaque,
}

#[derive(Clone, Copy, Debug)]
enum RRoot {
    Local { frame: usize, local: usize },
    Global(Handle<naga::GlobalVariable>),
    Uniform(u32),
}

#[derive(Clone, Copy, Debug)]
struct RPtr {
    root: RRoot,
    /// flat components for locals/globals, bytes for uniforms
    off: usize,
}

enum Flow {
    Next,
    Break,
    Continue,
    Return(Option<RV>),
    Kill,
}

struct Frame {
    locals: Vec<Vec<u32>>,
    exprs: Vec<Option<RV>>,
    args: Vec<RV>,
}

/// Runs entry points of one module.
pub struct Reference<'m> {
    pub module: &'m Module,
    pub info: &'m ModuleInfo,
    pub constants: Vec<Vec<u8>>,
    globals: HashMap<Handle<naga::GlobalVariable>, Vec<u32>>,
    frames: Vec<Frame>,
    steps: u64,
}

fn flat_len(m: &Module, ty: &TypeInner) -> usize {
    match *ty {
        TypeInner::Scalar(_) | TypeInner::Atomic(_) => 1,
        TypeInner::Vector { size, .. } => size as usize,
        TypeInner::Matrix { columns, rows, .. } => columns as usize * rows as usize,
        TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            ..
        } => n.get() as usize * flat_len(m, &m.types[base].inner),
        TypeInner::Struct { ref members, .. } => members
            .iter()
            .map(|mm| flat_len(m, &m.types[mm.ty].inner))
            .sum(),
        _ => 0,
    }
}

fn kind_of(ty: &TypeInner) -> ScalarKind {
    match *ty {
        TypeInner::Scalar(s)
        | TypeInner::Vector { scalar: s, .. }
        | TypeInner::Matrix { scalar: s, .. } => s.kind,
        TypeInner::ValuePointer { scalar, .. } => scalar.kind,
        _ => ScalarKind::Float,
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn is_f16(ty: &TypeInner) -> bool {
    matches!(
        *ty,
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } | TypeInner::Matrix { scalar: s, .. }
            if s == naga::Scalar::F16
    )
}
fn b(x: bool) -> u32 {
    if x { 1 } else { 0 }
}

impl<'m> Reference<'m> {
    pub fn new(module: &'m Module, info: &'m ModuleInfo, constants: Vec<Vec<u8>>) -> Self {
        Reference {
            module,
            info,
            constants,
            globals: HashMap::new(),
            frames: Vec::new(),
            steps: 0,
        }
    }

    /// Runs entry point `ep` with flat argument values; returns the flat
    /// result (None if the invocation was discarded).  Booleans are 0/1.
    pub fn run(&mut self, ep: usize, args: Vec<Vec<u32>>) -> Option<Vec<u32>> {
        self.globals.clear();
        self.steps = 0;
        let e = &self.module.entry_points[ep];
        let finfo = self.info.get_entry_point(ep);
        let args = args.into_iter().map(RV::Val).collect();
        match self.call(&e.function, finfo, args) {
            Some(Some(RV::Val(v))) => Some(v),
            Some(_) => Some(Vec::new()),
            None => None,
        }
    }

    /// None: killed.
    fn call(
        &mut self,
        func: &'m Function,
        finfo: &'m FunctionInfo,
        args: Vec<RV>,
    ) -> Option<Option<RV>> {
        let mut locals = Vec::new();
        for (_, l) in func.local_variables.iter() {
            locals.push(vec![
                0;
                flat_len(self.module, &self.module.types[l.ty].inner)
            ]);
        }
        self.frames.push(Frame {
            locals,
            exprs: vec![None; func.expressions.len()],
            args,
        });
        for (i, (_, l)) in func.local_variables.iter().enumerate() {
            if let Some(init) = l.init {
                let RV::Val(v) = self.expr(func, finfo, init) else {
                    panic!("init")
                };
                self.frames.last_mut().unwrap().locals[i] = v;
            }
        }
        let flow = self.block(func, finfo, &func.body);
        self.frames.pop();
        match flow {
            Flow::Return(v) => Some(v),
            Flow::Kill => None,
            _ => Some(None),
        }
    }

    fn block(&mut self, func: &'m Function, fi: &'m FunctionInfo, block: &'m naga::Block) -> Flow {
        for st in block.iter() {
            self.steps += 1;
            assert!(self.steps < 50_000_000, "reference: runaway loop");
            match st {
                Statement::Emit(r) => {
                    for h in r.clone() {
                        let v = self.eval(func, fi, h);
                        self.frames.last_mut().unwrap().exprs[h.index()] = Some(v);
                    }
                }
                Statement::Block(b) => match self.block(func, fi, b) {
                    Flow::Next => {}
                    other => return other,
                },
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let c = self.scalar(func, fi, *condition) != 0;
                    match self.block(func, fi, if c { accept } else { reject }) {
                        Flow::Next => {}
                        other => return other,
                    }
                }
                Statement::Switch { selector, cases } => {
                    let s = self.scalar(func, fi, *selector);
                    let start = cases
                        .iter()
                        .position(|c| match c.value {
                            naga::SwitchValue::I32(v) => v as u32 == s,
                            naga::SwitchValue::U32(v) => v == s,
                            naga::SwitchValue::Default => false,
                        })
                        .or_else(|| {
                            cases
                                .iter()
                                .position(|c| c.value == naga::SwitchValue::Default)
                        })
                        .unwrap();
                    for c in &cases[start..] {
                        match self.block(func, fi, &c.body) {
                            Flow::Next => {
                                if !c.fall_through {
                                    break;
                                }
                            }
                            Flow::Break => break,
                            other => return other,
                        }
                    }
                }
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } => loop {
                    match self.block(func, fi, body) {
                        Flow::Break => break,
                        Flow::Next | Flow::Continue => {}
                        other => return other,
                    }
                    match self.block(func, fi, continuing) {
                        Flow::Next => {}
                        other => return other,
                    }
                    if let Some(bi) = break_if {
                        // break_if reads expressions emitted in the continuing block
                        if self.scalar(func, fi, *bi) != 0 {
                            break;
                        }
                    }
                    // re-evaluate per iteration: drop cached expressions
                    // emitted inside the loop (they are re-emitted)
                },
                Statement::Break => return Flow::Break,
                Statement::Continue => return Flow::Continue,
                Statement::Return { value } => {
                    let v = value.map(|h| self.expr(func, fi, h));
                    return Flow::Return(v);
                }
                Statement::Kill => return Flow::Kill,
                Statement::Store { pointer, value } => {
                    let RV::Ptr(p) = self.expr(func, fi, *pointer) else {
                        panic!("store ptr")
                    };
                    let RV::Val(v) = self.expr(func, fi, *value) else {
                        panic!("store val")
                    };
                    self.write(p, &v);
                }
                Statement::Call {
                    function,
                    arguments,
                    result,
                } => {
                    let args: Vec<RV> = arguments.iter().map(|a| self.expr(func, fi, *a)).collect();
                    let callee = &self.module.functions[*function];
                    let cinfo = &self.info[*function];
                    match self.call(callee, cinfo, args) {
                        Some(r) => {
                            if let (Some(res), Some(v)) = (result, r) {
                                self.frames.last_mut().unwrap().exprs[res.index()] = Some(v);
                            }
                        }
                        None => return Flow::Kill,
                    }
                }
                other => panic!("reference: unsupported statement {other:?}"),
            }
        }
        Flow::Next
    }

    fn storage(&mut self, root: RRoot) -> &mut Vec<u32> {
        match root {
            RRoot::Local { frame, local } => &mut self.frames[frame].locals[local],
            RRoot::Global(g) => {
                let m = self.module;
                self.globals.entry(g).or_insert_with(|| {
                    let gv = &m.global_variables[g];
                    let n = flat_len(m, &m.types[gv.ty].inner);
                    match gv.init {
                        Some(init) => const_eval(m, init),
                        None => vec![0; n],
                    }
                })
            }
            RRoot::Uniform(_) => panic!("write to uniform"),
        }
    }

    fn write(&mut self, p: RPtr, v: &[u32]) {
        let s = self.storage(p.root);
        s[p.off..p.off + v.len()].copy_from_slice(v);
    }

    fn read(&mut self, p: RPtr, ty: &TypeInner) -> Vec<u32> {
        match p.root {
            RRoot::Uniform(cb) => {
                let mut layout = Vec::new();
                ulayout(self.module, ty, p.off as u32, &mut layout);
                let buf = self.constants.get(cb as usize).cloned().unwrap_or_default();
                layout
                    .iter()
                    .map(|&o| {
                        let o = o as usize;
                        if o + 4 <= buf.len() {
                            u32::from_le_bytes(buf[o..o + 4].try_into().unwrap())
                        } else {
                            0
                        }
                    })
                    .collect()
            }
            root => {
                let n = flat_len(self.module, ty);
                let s = self.storage(root);
                s[p.off..p.off + n].to_vec()
            }
        }
    }

    fn expr(&mut self, func: &'m Function, fi: &'m FunctionInfo, h: Handle<Expression>) -> RV {
        if let Some(v) = &self.frames.last().unwrap().exprs[h.index()] {
            return v.clone();
        }
        let v = self.eval(func, fi, h);
        // only context-free expressions are cached lazily
        if !matches!(func.expressions[h], Expression::Load { .. }) {
            self.frames.last_mut().unwrap().exprs[h.index()] = Some(v.clone());
        }
        v
    }

    fn val(&mut self, func: &'m Function, fi: &'m FunctionInfo, h: Handle<Expression>) -> Vec<u32> {
        match self.expr(func, fi, h) {
            RV::Val(v) => v,
            other => panic!("not a value: {other:?}"),
        }
    }

    fn scalar(&mut self, func: &'m Function, fi: &'m FunctionInfo, h: Handle<Expression>) -> u32 {
        self.val(func, fi, h)[0]
    }

    fn ty(&self, fi: &'m FunctionInfo, h: Handle<Expression>) -> &'m TypeInner {
        fi[h].ty.inner_with(&self.module.types)
    }

    fn eval(&mut self, func: &'m Function, fi: &'m FunctionInfo, h: Handle<Expression>) -> RV {
        let mut v = self.eval_raw(func, fi, h);
        // f16: every computed value is the nearest half of its f32 result
        // (the `half` crate's scalar conversion)
        if let RV::Val(vals) = &mut v
            && matches!(
                func.expressions[h],
                Expression::Binary { .. } | Expression::Math { .. } | Expression::As { .. }
            )
            && is_f16(self.ty(fi, h))
        {
            for x in vals.iter_mut() {
                *x = half::f16::from_f32(f(*x)).to_f32().to_bits();
            }
        }
        v
    }

    fn eval_raw(&mut self, func: &'m Function, fi: &'m FunctionInfo, h: Handle<Expression>) -> RV {
        let m = self.module;
        let frame = self.frames.len() - 1;
        match &func.expressions[h] {
            Expression::Literal(l) => RV::Val(vec![lit(l)]),
            Expression::Constant(c) => RV::Val(const_eval(m, m.constants[*c].init)),
            Expression::ZeroValue(ty) => RV::Val(vec![0; flat_len(m, &m.types[*ty].inner)]),
            Expression::Compose { components, .. } => RV::Val(
                components
                    .iter()
                    .flat_map(|c| self.val(func, fi, *c))
                    .collect(),
            ),
            Expression::Splat { size, value } => {
                let v = self.scalar(func, fi, *value);
                RV::Val(vec![v; *size as usize])
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let v = self.val(func, fi, *vector);
                RV::Val(
                    pattern[..*size as usize]
                        .iter()
                        .map(|c| v[*c as usize])
                        .collect(),
                )
            }
            Expression::FunctionArgument(i) => self.frames[frame].args[*i as usize].clone(),
            Expression::GlobalVariable(g) => {
                let gv = &m.global_variables[*g];
                match gv.space {
                    naga::AddressSpace::Uniform => RV::Ptr(RPtr {
                        root: RRoot::Uniform(gv.binding.as_ref().unwrap().binding),
                        off: 0,
                    }),
                    naga::AddressSpace::Handle => RV::Opaque,
                    _ => RV::Ptr(RPtr {
                        root: RRoot::Global(*g),
                        off: 0,
                    }),
                }
            }
            Expression::LocalVariable(l) => RV::Ptr(RPtr {
                root: RRoot::Local {
                    frame,
                    local: l.index(),
                },
                off: 0,
            }),
            Expression::Load { pointer } => {
                let RV::Ptr(p) = self.expr(func, fi, *pointer) else {
                    panic!("load")
                };
                let ty = pointee(m, self.ty(fi, *pointer));
                RV::Val(self.read(p, &ty))
            }
            Expression::AccessIndex { base, index } => {
                self.access(func, fi, *base, *index as usize)
            }
            Expression::Access { base, index } => {
                let i = self.scalar(func, fi, *index);
                let i = if kind_of(self.ty(fi, *index)) == ScalarKind::Sint {
                    (i as i32).max(0) as usize
                } else {
                    i as usize
                };
                self.access(func, fi, *base, i)
            }
            Expression::Unary { op, expr } => {
                let k = kind_of(self.ty(fi, *expr));
                let v = self.val(func, fi, *expr);
                RV::Val(
                    v.iter()
                        .map(|&x| match (op, k) {
                            (UnaryOperator::Negate, ScalarKind::Float) => (-f(x)).to_bits(),
                            (UnaryOperator::Negate, _) => (x as i32).wrapping_neg() as u32,
                            (UnaryOperator::LogicalNot, _) => b(x == 0),
                            (UnaryOperator::BitwiseNot, _) => !x,
                        })
                        .collect(),
                )
            }
            Expression::Binary { op, left, right } => {
                let lt = self.ty(fi, *left);
                let rt = self.ty(fi, *right);
                let a = self.val(func, fi, *left);
                let c = self.val(func, fi, *right);
                RV::Val(binary(*op, lt, rt, &a, &c))
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                let c = self.val(func, fi, *condition);
                let a = self.val(func, fi, *accept);
                let r = self.val(func, fi, *reject);
                RV::Val(
                    (0..a.len())
                        .map(|i| {
                            if c[i.min(c.len() - 1)] != 0 {
                                a[i]
                            } else {
                                r[i]
                            }
                        })
                        .collect(),
                )
            }
            Expression::Relational { fun, argument } => {
                let v = self.val(func, fi, *argument);
                RV::Val(match fun {
                    RelationalFunction::All => vec![b(v.iter().all(|x| *x != 0))],
                    RelationalFunction::Any => vec![b(v.iter().any(|x| *x != 0))],
                    RelationalFunction::IsNan => v.iter().map(|x| b(f(*x).is_nan())).collect(),
                    RelationalFunction::IsInf => v.iter().map(|x| b(f(*x).is_infinite())).collect(),
                })
            }
            Expression::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => {
                let t = self.ty(fi, *arg);
                let a = self.val(func, fi, *arg);
                let b1 = arg1.map(|h| self.val(func, fi, h)).unwrap_or_default();
                let b2 = arg2.map(|h| self.val(func, fi, h)).unwrap_or_default();
                let b3 = arg3.map(|h| self.val(func, fi, h)).unwrap_or_default();
                RV::Val(math(*fun, t, &a, &b1, &b2, &b3))
            }
            Expression::As {
                expr,
                kind,
                convert,
            } => {
                let from = kind_of(self.ty(fi, *expr));
                let v = self.val(func, fi, *expr);
                RV::Val(match convert {
                    None => v,
                    Some(_) => v.iter().map(|&x| convert_scalar(x, from, *kind)).collect(),
                })
            }
            Expression::CallResult(_) => panic!("call result before call"),
            other => panic!("reference: unsupported expression {other:?}"),
        }
    }

    fn access(
        &mut self,
        func: &'m Function,
        fi: &'m FunctionInfo,
        base: Handle<Expression>,
        i: usize,
    ) -> RV {
        let m = self.module;
        match self.expr(func, fi, base) {
            RV::Ptr(mut p) => {
                let bt = pointee(m, self.ty(fi, base));
                let uniform = matches!(p.root, RRoot::Uniform(_));
                match &bt {
                    TypeInner::Struct { members, .. } => {
                        if uniform {
                            p.off += members[i].offset as usize;
                        } else {
                            p.off += members[..i]
                                .iter()
                                .map(|mm| flat_len(m, &m.types[mm.ty].inner))
                                .sum::<usize>();
                        }
                    }
                    TypeInner::Array {
                        base: eb,
                        size: naga::ArraySize::Constant(n),
                        stride,
                    } => {
                        let i = i.min(n.get() as usize - 1);
                        p.off += i * if uniform {
                            *stride as usize
                        } else {
                            flat_len(m, &m.types[*eb].inner)
                        };
                    }
                    TypeInner::Matrix { columns, rows, .. } => {
                        let i = i.min(*columns as usize - 1);
                        p.off += i * if uniform {
                            if *rows as usize == 2 { 8 } else { 16 }
                        } else {
                            *rows as usize
                        };
                    }
                    TypeInner::Vector { size, .. } => {
                        let i = i.min(*size as usize - 1);
                        p.off += i * if uniform { 4 } else { 1 };
                    }
                    other => panic!("index {other:?}"),
                }
                RV::Ptr(p)
            }
            RV::Val(v) => {
                let bt = self.ty(fi, base);
                let (count, stride, off) = match bt {
                    TypeInner::Struct { members, .. } => {
                        let off: usize = members[..i]
                            .iter()
                            .map(|mm| flat_len(m, &m.types[mm.ty].inner))
                            .sum();
                        let n = flat_len(m, &m.types[members[i].ty].inner);
                        return RV::Val(v[off..off + n].to_vec());
                    }
                    TypeInner::Array {
                        base: eb,
                        size: naga::ArraySize::Constant(n),
                        ..
                    } => (n.get() as usize, flat_len(m, &m.types[*eb].inner), 0),
                    TypeInner::Matrix { columns, rows, .. } => {
                        (*columns as usize, *rows as usize, 0)
                    }
                    TypeInner::Vector { size, .. } => (*size as usize, 1, 0),
                    other => panic!("index {other:?}"),
                };
                let i = i.min(count - 1);
                RV::Val(v[off + i * stride..off + (i + 1) * stride].to_vec())
            }
            RV::Opaque => RV::Opaque,
        }
    }
}

fn pointee(m: &Module, t: &TypeInner) -> TypeInner {
    match t {
        TypeInner::Pointer { base, .. } => m.types[*base].inner.clone(),
        TypeInner::ValuePointer {
            size: None, scalar, ..
        } => TypeInner::Scalar(*scalar),
        TypeInner::ValuePointer {
            size: Some(s),
            scalar,
            ..
        } => TypeInner::Vector {
            size: *s,
            scalar: *scalar,
        },
        other => panic!("pointee of {other:?}"),
    }
}

fn ulayout(m: &Module, ty: &TypeInner, base: u32, out: &mut Vec<u32>) {
    match *ty {
        TypeInner::Scalar(_) => out.push(base),
        TypeInner::Vector { size, .. } => out.extend((0..size as u32).map(|i| base + 4 * i)),
        TypeInner::Matrix { columns, rows, .. } => {
            let stride = if rows as u32 == 2 { 8 } else { 16 };
            for c in 0..columns as u32 {
                for r in 0..rows as u32 {
                    out.push(base + c * stride + 4 * r);
                }
            }
        }
        TypeInner::Array {
            base: eb,
            size: naga::ArraySize::Constant(n),
            stride,
        } => {
            for i in 0..n.get() {
                ulayout(m, &m.types[eb].inner, base + i * stride, out);
            }
        }
        TypeInner::Struct { ref members, .. } => {
            for mm in members {
                ulayout(m, &m.types[mm.ty].inner, base + mm.offset, out);
            }
        }
        _ => panic!("uniform layout"),
    }
}

fn lit(l: &Literal) -> u32 {
    match *l {
        Literal::F32(v) => v.to_bits(),
        Literal::U32(v) => v,
        Literal::I32(v) => v as u32,
        Literal::Bool(v) => b(v),
        Literal::AbstractInt(v) => v as i32 as u32,
        Literal::AbstractFloat(v) => (v as f32).to_bits(),
        Literal::F16(v) => v.to_f32().to_bits(),
        _ => panic!("literal"),
    }
}

fn const_eval(m: &Module, h: Handle<Expression>) -> Vec<u32> {
    match &m.global_expressions[h] {
        Expression::Literal(l) => vec![lit(l)],
        Expression::Constant(c) => const_eval(m, m.constants[*c].init),
        Expression::ZeroValue(ty) => vec![0; flat_len(m, &m.types[*ty].inner)],
        Expression::Compose { components, .. } => {
            components.iter().flat_map(|c| const_eval(m, *c)).collect()
        }
        Expression::Splat { size, value } => vec![const_eval(m, *value)[0]; *size as usize],
        other => panic!("const {other:?}"),
    }
}

fn convert_scalar(x: u32, from: ScalarKind, to: ScalarKind) -> u32 {
    use ScalarKind as K;
    match (from, to) {
        (a, c) if a == c => x,
        (K::Sint, K::Uint) | (K::Uint, K::Sint) => x,
        (K::Float, K::Sint) => f(x) as i32 as u32,
        (K::Float, K::Uint) => f(x) as u32,
        (K::Sint, K::Float) => (x as i32 as f32).to_bits(),
        (K::Uint, K::Float) => (x as f32).to_bits(),
        (K::Bool, K::Float) => {
            if x != 0 {
                1f32.to_bits()
            } else {
                0
            }
        }
        (K::Bool, _) => b(x != 0),
        (K::Float, K::Bool) => b(f(x) != 0.0),
        (_, K::Bool) => b(x != 0),
        _ => panic!("convert"),
    }
}

fn binary(op: BinaryOperator, lt: &TypeInner, rt: &TypeInner, a: &[u32], c: &[u32]) -> Vec<u32> {
    use BinaryOperator as O;
    if op == O::Multiply {
        match (lt, rt) {
            (TypeInner::Matrix { columns, rows, .. }, TypeInner::Vector { .. }) => {
                let (nc, nr) = (*columns as usize, *rows as usize);
                return (0..nr)
                    .map(|i| {
                        (0..nc)
                            .map(|k| f(a[k * nr + i]) as f64 * f(c[k]) as f64)
                            .sum::<f64>() as f32
                    })
                    .map(f32::to_bits)
                    .collect();
            }
            (TypeInner::Vector { .. }, TypeInner::Matrix { columns, rows, .. }) => {
                let (nc, nr) = (*columns as usize, *rows as usize);
                return (0..nc)
                    .map(|k| {
                        (0..nr)
                            .map(|i| f(a[i]) as f64 * f(c[k * nr + i]) as f64)
                            .sum::<f64>() as f32
                    })
                    .map(f32::to_bits)
                    .collect();
            }
            (TypeInner::Matrix { columns, rows, .. }, TypeInner::Matrix { columns: kc, .. }) => {
                let (nc, nr, nk) = (*columns as usize, *rows as usize, *kc as usize);
                let mut out = Vec::new();
                for k in 0..nk {
                    for i in 0..nr {
                        out.push(
                            ((0..nc)
                                .map(|j| f(a[j * nr + i]) as f64 * f(c[k * nc + j]) as f64)
                                .sum::<f64>() as f32)
                                .to_bits(),
                        );
                    }
                }
                return out;
            }
            _ => {}
        }
    }
    let k = kind_of(lt);
    let n = a.len().max(c.len());
    (0..n)
        .map(|i| {
            let x = a[i.min(a.len() - 1)];
            let y = c[i.min(c.len() - 1)];
            match k {
                ScalarKind::Float => {
                    let (p, q) = (f(x), f(y));
                    match op {
                        O::Add => (p + q).to_bits(),
                        O::Subtract => (p - q).to_bits(),
                        O::Multiply => (p * q).to_bits(),
                        O::Divide => (p / q).to_bits(),
                        O::Modulo => (p - q * (p / q).trunc()).to_bits(),
                        O::Equal => b(p == q),
                        O::NotEqual => b(p != q),
                        O::Less => b(p < q),
                        O::LessEqual => b(p <= q),
                        O::Greater => b(p > q),
                        O::GreaterEqual => b(p >= q),
                        _ => panic!("float op {op:?}"),
                    }
                }
                ScalarKind::Sint => {
                    let (p, q) = (x as i32, y as i32);
                    match op {
                        O::Add => p.wrapping_add(q) as u32,
                        O::Subtract => p.wrapping_sub(q) as u32,
                        O::Multiply => p.wrapping_mul(q) as u32,
                        O::Divide => {
                            if q == 0 {
                                p as u32
                            } else {
                                p.wrapping_div(q) as u32
                            }
                        }
                        O::Modulo => {
                            if q == 0 {
                                0
                            } else {
                                p.wrapping_rem(q) as u32
                            }
                        }
                        O::Equal => b(p == q),
                        O::NotEqual => b(p != q),
                        O::Less => b(p < q),
                        O::LessEqual => b(p <= q),
                        O::Greater => b(p > q),
                        O::GreaterEqual => b(p >= q),
                        O::And => x & y,
                        O::InclusiveOr => x | y,
                        O::ExclusiveOr => x ^ y,
                        O::ShiftLeft => x << (y & 31),
                        O::ShiftRight => (p >> (y & 31)) as u32,
                        _ => panic!("sint op {op:?}"),
                    }
                }
                _ => match op {
                    O::Add => x.wrapping_add(y),
                    O::Subtract => x.wrapping_sub(y),
                    O::Multiply => x.wrapping_mul(y),
                    O::Divide => x.checked_div(y).unwrap_or(x),
                    O::Modulo => x.checked_rem(y).unwrap_or(0),
                    O::Equal => b(x == y),
                    O::NotEqual => b(x != y),
                    O::Less => b(x < y),
                    O::LessEqual => b(x <= y),
                    O::Greater => b(x > y),
                    O::GreaterEqual => b(x >= y),
                    O::And | O::LogicalAnd => x & y,
                    O::InclusiveOr | O::LogicalOr => x | y,
                    O::ExclusiveOr => x ^ y,
                    O::ShiftLeft => x << (y & 31),
                    O::ShiftRight => x >> (y & 31),
                },
            }
        })
        .collect()
}

fn wmin(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

fn wmax(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}

fn math(
    fun: MathFunction,
    t: &TypeInner,
    a: &[u32],
    b1: &[u32],
    b2: &[u32],
    b3: &[u32],
) -> Vec<u32> {
    use MathFunction as M;
    let k = kind_of(t);
    let n = a.len();
    let at = |v: &[u32], i: usize| v[i.min(v.len() - 1)];
    let fl =
        |g: &dyn Fn(f32) -> f32| -> Vec<u32> { a.iter().map(|x| g(f(*x)).to_bits()).collect() };
    let fl2 = |g: &dyn Fn(f32, f32) -> f32| -> Vec<u32> {
        (0..n).map(|i| g(f(a[i]), f(at(b1, i))).to_bits()).collect()
    };
    let dot = |x: &[u32], y: &[u32]| -> f32 {
        x.iter()
            .zip(y)
            .map(|(p, q)| f(*p) as f64 * f(*q) as f64)
            .sum::<f64>() as f32
    };
    match fun {
        M::Abs => match k {
            ScalarKind::Float => fl(&|x| x.abs()),
            ScalarKind::Sint => a
                .iter()
                .map(|x| (*x as i32).wrapping_abs() as u32)
                .collect(),
            _ => a.to_vec(),
        },
        M::Min | M::Max | M::Clamp => (0..n)
            .map(|i| {
                let (x, lo) = (a[i], at(b1, i));
                match (fun, k) {
                    // WGSL: min(e1, e2) = e2 < e1 ? e2 : e1, max = e1 < e2 ? e2 : e1
                    (M::Min, ScalarKind::Float) => wmin(f(x), f(lo)).to_bits(),
                    (M::Max, ScalarKind::Float) => wmax(f(x), f(lo)).to_bits(),
                    (M::Clamp, ScalarKind::Float) => {
                        wmin(wmax(f(x), f(lo)), f(at(b2, i))).to_bits()
                    }
                    (M::Min, ScalarKind::Sint) => (x as i32).min(lo as i32) as u32,
                    (M::Max, ScalarKind::Sint) => (x as i32).max(lo as i32) as u32,
                    (M::Clamp, ScalarKind::Sint) => {
                        (x as i32).max(lo as i32).min(at(b2, i) as i32) as u32
                    }
                    (M::Min, _) => x.min(lo),
                    (M::Max, _) => x.max(lo),
                    _ => x.max(lo).min(at(b2, i)),
                }
            })
            .collect(),
        M::Saturate => fl(&|x| wmin(wmax(x, 0.0), 1.0)),
        M::Cos => fl(&f32::cos),
        M::Cosh => fl(&f32::cosh),
        M::Sin => fl(&f32::sin),
        M::Sinh => fl(&f32::sinh),
        M::Tan => fl(&f32::tan),
        M::Tanh => fl(&f32::tanh),
        M::Acos => fl(&f32::acos),
        M::Asin => fl(&f32::asin),
        M::Atan => fl(&f32::atan),
        M::Atan2 => fl2(&f32::atan2),
        M::Asinh => fl(&f32::asinh),
        M::Acosh => fl(&f32::acosh),
        M::Atanh => fl(&f32::atanh),
        M::Radians => fl(&|x| x * (std::f32::consts::PI / 180.0)),
        M::Degrees => fl(&|x| x * (180.0 / std::f32::consts::PI)),
        M::Ceil => fl(&f32::ceil),
        M::Floor => fl(&f32::floor),
        M::Round => fl(&f32::round_ties_even),
        M::Fract => fl(&|x| x - x.floor()),
        M::Trunc => fl(&f32::trunc),
        M::Modf => {
            let mut v: Vec<u32> = a
                .iter()
                .map(|x| (f(*x) - f(*x).trunc()).to_bits())
                .collect();
            v.extend(a.iter().map(|x| f(*x).trunc().to_bits()));
            v
        }
        M::Ldexp => (0..n)
            .map(|i| ((f(a[i]) as f64) * 2f64.powi(at(b1, i) as i32)) as f32)
            .map(f32::to_bits)
            .collect(),
        M::Exp => fl(&f32::exp),
        M::Exp2 => fl(&f32::exp2),
        M::Log => fl(&f32::ln),
        M::Log2 => fl(&f32::log2),
        M::Pow => fl2(&f32::powf),
        M::Dot => match k {
            ScalarKind::Float => vec![dot(a, b1).to_bits()],
            _ => vec![
                a.iter()
                    .zip(b1)
                    .fold(0u32, |s, (p, q)| s.wrapping_add(p.wrapping_mul(*q))),
            ],
        },
        M::Cross => {
            let (x, y) = (
                a.iter().map(|v| f(*v)).collect::<Vec<_>>(),
                b1.iter().map(|v| f(*v)).collect::<Vec<_>>(),
            );
            vec![
                x[1] * y[2] - x[2] * y[1],
                x[2] * y[0] - x[0] * y[2],
                x[0] * y[1] - x[1] * y[0],
            ]
            .into_iter()
            .map(f32::to_bits)
            .collect()
        }
        M::Length => vec![dot(a, a).sqrt().to_bits()],
        M::Distance => {
            let d: Vec<u32> = (0..n).map(|i| (f(a[i]) - f(b1[i])).to_bits()).collect();
            vec![dot(&d, &d).sqrt().to_bits()]
        }
        M::Normalize => {
            let l = dot(a, a).sqrt();
            fl(&|x| x / l)
        }
        M::FaceForward => {
            let neg = dot(b2, b1) < 0.0;
            a.iter()
                .map(|x| if neg { *x } else { (-f(*x)).to_bits() })
                .collect()
        }
        M::Reflect => {
            let d = dot(b1, a);
            (0..n)
                .map(|i| (f(a[i]) - 2.0 * d * f(b1[i])).to_bits())
                .collect()
        }
        M::Refract => {
            let eta = f(b2[0]);
            let d = dot(b1, a);
            let kk = 1.0 - eta * eta * (1.0 - d * d);
            (0..n)
                .map(|i| {
                    if kk < 0.0 {
                        0
                    } else {
                        (eta * f(a[i]) - (eta * d + kk.sqrt()) * f(b1[i])).to_bits()
                    }
                })
                .collect()
        }
        M::Sign => match k {
            ScalarKind::Float => fl(&|x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }),
            _ => a.iter().map(|x| (*x as i32).signum() as u32).collect(),
        },
        M::Fma => (0..n)
            .map(|i| f(a[i]).mul_add(f(at(b1, i)), f(at(b2, i))).to_bits())
            .collect(),
        M::Mix => (0..n)
            .map(|i| {
                let (x, y, t) = (f(a[i]), f(at(b1, i)), f(at(b2, i)));
                x + (y - x) * t
            })
            .map(f32::to_bits)
            .collect(),
        M::Step => (0..n)
            .map(|i| if f(at(b1, i)) >= f(a[i]) { 1f32 } else { 0.0 })
            .map(f32::to_bits)
            .collect(),
        M::SmoothStep => (0..b2.len())
            .map(|i| {
                let (e0, e1, x) = (f(at(a, i)), f(at(b1, i)), f(b2[i]));
                let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
                (t * t * (3.0 - 2.0 * t)).to_bits()
            })
            .collect(),
        M::Sqrt => fl(&f32::sqrt),
        M::InverseSqrt => fl(&|x| 1.0 / x.sqrt()),
        M::CountTrailingZeros => a.iter().map(|x| x.trailing_zeros()).collect(),
        M::CountLeadingZeros => a.iter().map(|x| x.leading_zeros()).collect(),
        M::CountOneBits => a.iter().map(|x| x.count_ones()).collect(),
        M::ReverseBits => a.iter().map(|x| x.reverse_bits()).collect(),
        M::FirstTrailingBit => a
            .iter()
            .map(|x| {
                if *x == 0 {
                    u32::MAX
                } else {
                    x.trailing_zeros()
                }
            })
            .collect(),
        M::FirstLeadingBit => a
            .iter()
            .map(|&x| {
                let v = if k == ScalarKind::Sint && (x as i32) < 0 {
                    !x
                } else {
                    x
                };
                if v == 0 {
                    u32::MAX
                } else {
                    31 - v.leading_zeros()
                }
            })
            .collect(),
        M::ExtractBits => a
            .iter()
            .map(|&e| {
                let o = b1[0].min(32);
                let c = b2[0].min(32 - o);
                let mut v = 0u32;
                for j in 0..c {
                    v |= ((e >> (o + j)) & 1) << j;
                }
                if k == ScalarKind::Sint && c > 0 && c < 32 && (v >> (c - 1)) & 1 == 1 {
                    v | (u32::MAX << c)
                } else {
                    v
                }
            })
            .collect(),
        M::InsertBits => (0..n)
            .map(|i| {
                let o = b2[0].min(32);
                let c = b3[0].min(32 - o);
                let mut v = a[i];
                for j in 0..c {
                    v = (v & !(1 << (o + j))) | (((b1[i] >> j) & 1) << (o + j));
                }
                v
            })
            .collect(),
        M::Transpose => {
            let TypeInner::Matrix { columns, rows, .. } = t else {
                panic!()
            };
            let (nc, nr) = (*columns as usize, *rows as usize);
            let mut out = Vec::new();
            for i in 0..nr {
                for kk in 0..nc {
                    out.push(a[kk * nr + i]);
                }
            }
            out
        }
        other => panic!("reference: math {other:?}"),
    }
}
