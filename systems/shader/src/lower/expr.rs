//! Lowering naga expressions: values to flattened scalar registers,
//! pointers to places.

use ferropipe_components::shader::ScalarKind;
use naga::{
    BinaryOperator, DerivativeAxis, DerivativeControl, Expression, Handle, Literal, MathFunction,
    RelationalFunction, TypeInner, UnaryOperator,
};

use super::types::*;
use super::{DynTerm, ImageBind, LVal, Lowerer, Place, Regs, Root, SamplerBind};
use crate::ShaderError;
use crate::ir::{
    Axis, BinOp, PackFn, Reg, TexDim, TexFn, TexKind, TexOp, TexQuery, TexQueryFn, TriOp, UnOp,
    UnpackFn,
};

fn tex_dim(d: naga::ImageDimension) -> TexDim {
    match d {
        naga::ImageDimension::D1 => TexDim::D1,
        naga::ImageDimension::D2 => TexDim::D2,
        naga::ImageDimension::D3 => TexDim::D3,
        naga::ImageDimension::Cube => TexDim::Cube,
    }
}

fn tex_kind(c: naga::ImageClass) -> Result<TexKind, ShaderError> {
    Ok(match c {
        naga::ImageClass::Sampled {
            kind: naga::ScalarKind::Float,
            ..
        } => TexKind::Float,
        naga::ImageClass::Sampled {
            kind: naga::ScalarKind::Sint,
            ..
        } => TexKind::Sint,
        naga::ImageClass::Sampled {
            kind: naga::ScalarKind::Uint,
            ..
        } => TexKind::Uint,
        naga::ImageClass::Depth { .. } => TexKind::Depth,
        naga::ImageClass::Storage { .. } => return Err(unsupported("storage textures")),
        naga::ImageClass::External => return Err(unsupported("external textures")),
        _ => return Err(unsupported("textures of this sample type")),
    })
}

fn internal(what: &str) -> ShaderError {
    ShaderError::validation(format!("malformed module: {what}"))
}

impl<'m> Lowerer<'m> {
    /// The type of an expression of the current frame.
    pub(super) fn ty(&self, h: Handle<Expression>) -> &'m TypeInner {
        let module = self.module;
        self.frame().finfo[h].ty.inner_with(&module.types)
    }

    /// The type a pointer expression points to.
    pub(super) fn pointee(&self, h: Handle<Expression>) -> Result<TypeInner, ShaderError> {
        Ok(match self.ty(h) {
            TypeInner::Pointer { base, .. } => self.module.types[*base].inner.clone(),
            TypeInner::ValuePointer {
                size: None, scalar, ..
            } => TypeInner::Scalar(*scalar),
            TypeInner::ValuePointer {
                size: Some(size),
                scalar,
                ..
            } => TypeInner::Vector {
                size: *size,
                scalar: *scalar,
            },
            _ => return Err(internal("load through a non-pointer")),
        })
    }

    /// Lowers (once) and returns an expression of the current frame.
    pub(super) fn expr(&mut self, h: Handle<Expression>) -> Result<LVal, ShaderError> {
        let fi = self.frames.len() - 1;
        if let Some(v) = &self.frames[fi].exprs[h.index()] {
            return Ok(v.clone());
        }
        let mut v = self.expr_uncached(h).map_err(|e| {
            let span = self.frames[fi].func.expressions.get_span(h);
            self.locate(e, span)
        })?;
        // f16 arithmetic: computed in f32, rounded once to the nearest half
        // (docs/shaders.md "f16").  Only expressions that compute can leave
        // a value that is not a half: literals, loads, swizzles, compose,
        // select, negation and function results are halves already.
        if let LVal::Val(regs) = &mut v
            && matches!(
                self.frames[fi].func.expressions[h],
                Expression::Binary { .. } | Expression::Math { .. } | Expression::As { .. }
            )
            && is_f16(self.ty(h))
        {
            for r in regs.iter_mut() {
                *r = self.b.un(UnOp::FQuantizeF16, *r);
            }
        }
        self.frames[fi].exprs[h.index()] = Some(v.clone());
        Ok(v)
    }

    /// The registers of a value expression.
    pub(super) fn value(&mut self, h: Handle<Expression>) -> Result<Regs, ShaderError> {
        match self.expr(h)? {
            LVal::Val(r) => Ok(r),
            _ => Err(internal("a pointer, texture or sampler used as a value")),
        }
    }

    /// The register of a scalar value expression.
    pub(super) fn scalar(&mut self, h: Handle<Expression>) -> Result<Reg, ShaderError> {
        let v = self.value(h)?;
        v.first().copied().ok_or_else(|| internal("empty scalar"))
    }

    /// The place a pointer expression designates.
    pub(super) fn place(&mut self, h: Handle<Expression>) -> Result<Place, ShaderError> {
        match self.expr(h)? {
            LVal::Ptr(p) => Ok(p),
            _ => Err(internal("store through a non-pointer")),
        }
    }

    fn literal(&mut self, l: &Literal) -> Result<Reg, ShaderError> {
        Ok(match *l {
            Literal::F32(v) => self.b.kf(v),
            Literal::U32(v) => self.b.ku(v),
            Literal::I32(v) => self.b.ki(v),
            Literal::Bool(v) => self.b.kbool(v),
            // abstract literals only survive in dead code; concretise them
            Literal::AbstractInt(v) => self.b.ki(v as i32),
            Literal::AbstractFloat(v) => self.b.kf(v as f32),
            Literal::F64(_) => return Err(unsupported(scalar_feature(naga::ScalarKind::Float, 8))),
            // every half is an f32 exactly
            Literal::F16(v) => self.b.kf(v.to_f32()),
            Literal::I64(_) | Literal::U64(_) => {
                return Err(unsupported(scalar_feature(naga::ScalarKind::Uint, 8)));
            }
            Literal::I16(_) | Literal::U16(_) => {
                return Err(unsupported(scalar_feature(naga::ScalarKind::Uint, 2)));
            }
        })
    }

    /// Evaluates a module-scope constant expression (the forms naga's
    /// constant evaluator leaves).
    pub(super) fn const_expr(&mut self, h: Handle<Expression>) -> Result<Regs, ShaderError> {
        let module = self.module;
        Ok(match &module.global_expressions[h] {
            Expression::Literal(l) => [self.literal(l)?].into_iter().collect(),
            Expression::Constant(c) => self.const_expr(module.constants[*c].init)?,
            Expression::ZeroValue(ty) => {
                let n = flat_len(module, inner(module, *ty))?;
                (0..n).map(|_| self.b.zero()).collect()
            }
            Expression::Compose { components, .. } => {
                let mut out = Regs::new();
                for c in components {
                    out.extend(self.const_expr(*c)?);
                }
                out
            }
            Expression::Splat { size, value } => {
                let v = self.const_expr(*value)?;
                (0..vsize(*size)).map(|_| v[0]).collect()
            }
            Expression::Override(_) => return Err(unsupported("pipeline-overridable constants")),
            other => {
                let what = snake(&format!("{other:?}")).replace('_', " ");
                return Err(unsupported(format!("`{what}` in a constant expression")));
            }
        })
    }

    fn expr_uncached(&mut self, h: Handle<Expression>) -> Result<LVal, ShaderError> {
        let module = self.module;
        let func = self.frame().func;
        let val = |r: Regs| Ok(LVal::Val(r));
        match &func.expressions[h] {
            Expression::Literal(l) => val([self.literal(l)?].into_iter().collect()),
            Expression::Constant(c) => val(self.const_expr(module.constants[*c].init)?),
            Expression::Override(_) => Err(unsupported("pipeline-overridable constants")),
            Expression::ZeroValue(ty) => {
                let n = flat_len(module, inner(module, *ty))?;
                val((0..n).map(|_| self.b.zero()).collect())
            }
            Expression::Compose { components, .. } => {
                let mut out = Regs::new();
                for c in components {
                    out.extend(self.value(*c)?);
                }
                val(out)
            }
            Expression::Splat { size, value } => {
                let v = self.scalar(*value)?;
                val((0..vsize(*size)).map(|_| v).collect())
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                let v = self.value(*vector)?;
                val(pattern[..vsize(*size)]
                    .iter()
                    .map(|c| v[*c as usize])
                    .collect())
            }
            Expression::FunctionArgument(i) => Ok(self.frame().args[*i as usize].clone()),
            Expression::GlobalVariable(g) => self.global(*g),
            Expression::LocalVariable(l) => {
                let v = self.frame().locals[l.index()];
                Ok(LVal::Ptr(Place {
                    root: Root::Var(v),
                    off: 0,
                    terms: Default::default(),
                    dyn_bytes: None,
                    valid: None,
                }))
            }
            Expression::Load { pointer } => {
                let place = self.place(*pointer)?;
                let ty = self.pointee(*pointer)?;
                val(self.load(&place, &ty)?)
            }
            Expression::AccessIndex { base, index } => self.access(*base, None, *index),
            Expression::Access { base, index } => {
                let idx = self.scalar(*index)?;
                match self.b.const_of(idx) {
                    Some(k) => {
                        let k = match self.ty(*index) {
                            TypeInner::Scalar(s) if s.kind == naga::ScalarKind::Sint => {
                                (k as i32).max(0) as u32
                            }
                            _ => k,
                        };
                        self.access(*base, None, k)
                    }
                    None => self.access(*base, Some((idx, *index)), 0),
                }
            }
            Expression::Unary { op, expr } => {
                let v = self.value(*expr)?;
                let kind =
                    elem_kind(self.ty(*expr)).ok_or_else(|| internal("unary on a composite"))?;
                let f = match (op, kind) {
                    (UnaryOperator::Negate, ScalarKind::Float) => UnOp::FNeg,
                    (UnaryOperator::Negate, _) => UnOp::INeg,
                    (UnaryOperator::LogicalNot | UnaryOperator::BitwiseNot, _) => UnOp::Not,
                };
                val(v.iter().map(|r| self.b.un(f, *r)).collect())
            }
            Expression::Binary { op, left, right } => val(self.binary(*op, *left, *right)?),
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                let c = self.value(*condition)?;
                let a = self.value(*accept)?;
                let r = self.value(*reject)?;
                val((0..a.len())
                    .map(|i| self.b.tri(TriOp::Select, c[i.min(c.len() - 1)], a[i], r[i]))
                    .collect())
            }
            Expression::Derivative { axis, ctrl, expr } => {
                if self.stage != naga::ShaderStage::Fragment {
                    return Err(unsupported("derivatives outside a fragment shader"));
                }
                let v = self.value(*expr)?;
                // `dpdx` without a qualifier is fine, as llvmpipe's ddx
                let fine = *ctrl != DerivativeControl::Coarse;
                let mut out = Regs::new();
                for r in v {
                    let d = match axis {
                        DerivativeAxis::X => self.b.deriv(Axis::X, fine, r),
                        DerivativeAxis::Y => self.b.deriv(Axis::Y, fine, r),
                        DerivativeAxis::Width => {
                            let dx = self.b.deriv(Axis::X, fine, r);
                            let dy = self.b.deriv(Axis::Y, fine, r);
                            let ax = self.b.un(UnOp::FAbs, dx);
                            let ay = self.b.un(UnOp::FAbs, dy);
                            self.b.bin(BinOp::FAdd, ax, ay)
                        }
                    };
                    out.push(d);
                }
                val(out)
            }
            Expression::Relational { fun, argument } => {
                let v = self.value(*argument)?;
                val(match fun {
                    RelationalFunction::All => {
                        let mut acc = v[0];
                        for r in &v[1..] {
                            acc = self.b.bin(BinOp::And, acc, *r);
                        }
                        [acc].into_iter().collect()
                    }
                    RelationalFunction::Any => {
                        let mut acc = v[0];
                        for r in &v[1..] {
                            acc = self.b.bin(BinOp::Or, acc, *r);
                        }
                        [acc].into_iter().collect()
                    }
                    RelationalFunction::IsNan => {
                        v.iter().map(|r| self.b.un(UnOp::FIsNan, *r)).collect()
                    }
                    RelationalFunction::IsInf => {
                        v.iter().map(|r| self.b.un(UnOp::FIsInf, *r)).collect()
                    }
                })
            }
            Expression::Math {
                fun,
                arg,
                arg1,
                arg2,
                arg3,
            } => val(self.math(*fun, *arg, *arg1, *arg2, *arg3)?),
            Expression::As {
                expr,
                kind,
                convert,
            } => val(self.convert(*expr, *kind, *convert)?),
            Expression::CallResult(_) => Err(internal("call result used before its call")),
            Expression::ImageSample { .. }
            | Expression::ImageLoad { .. }
            | Expression::ImageQuery { .. } => self.texture_expr(h),
            Expression::AtomicResult { .. } => {
                Err(internal("atomic result used before its atomic"))
            }
            Expression::WorkGroupUniformLoadResult { .. } => Err(internal(
                "workgroupUniformLoad result used before its statement",
            )),
            Expression::ArrayLength(p) => val(self.array_length(*p)?),
            Expression::RayQueryVertexPositions { .. }
            | Expression::RayQueryProceedResult
            | Expression::RayQueryGetIntersection { .. } => Err(unsupported("ray queries")),
            Expression::SubgroupBallotResult | Expression::SubgroupOperationResult { .. } => {
                Err(unsupported("subgroup operations"))
            }
            Expression::CooperativeLoad { .. } | Expression::CooperativeMultiplyAdd { .. } => {
                Err(unsupported("cooperative matrices"))
            }
        }
    }

    /// The place or resource of global `g`; errors point at its
    /// declaration.
    pub(super) fn global(&mut self, g: Handle<naga::GlobalVariable>) -> Result<LVal, ShaderError> {
        self.global_inner(g).map_err(|e| {
            let span = self.module.global_variables.get_span(g);
            self.locate(e, span)
        })
    }

    fn global_inner(&mut self, g: Handle<naga::GlobalVariable>) -> Result<LVal, ShaderError> {
        let module = self.module;
        let gv = &module.global_variables[g];
        let rb = gv.binding.as_ref();
        match gv.space {
            naga::AddressSpace::Private => {
                let v = self.global_var(g)?;
                Ok(LVal::Ptr(Place {
                    root: Root::Var(v),
                    off: 0,
                    terms: Default::default(),
                    dyn_bytes: None,
                    valid: None,
                }))
            }
            naga::AddressSpace::Uniform => {
                let rb = rb.ok_or_else(|| internal("uniform without a binding"))?;
                if rb.group == super::memory::GROUP_INPUT {
                    return self.input_global(rb.binding);
                }
                if rb.group != 0 {
                    return Err(unsupported(format!(
                        "uniform buffer in @group({}) (constant buffers are @group(0))",
                        rb.group
                    )));
                }
                if rb.binding >= 32 {
                    return Err(unsupported("constant buffer slots above 31"));
                }
                Ok(LVal::Ptr(Place {
                    root: Root::Uniform(rb.binding),
                    off: 0,
                    terms: Default::default(),
                    dyn_bytes: None,
                    valid: None,
                }))
            }
            naga::AddressSpace::Handle => {
                let rb = rb.ok_or_else(|| internal("resource without a binding"))?;
                match &module.types[gv.ty].inner {
                    TypeInner::Image {
                        dim,
                        arrayed,
                        class: class @ naga::ImageClass::Storage { .. },
                    } => self.storage_image_global(rb, *dim, *arrayed, *class),
                    TypeInner::Image {
                        dim,
                        arrayed,
                        class,
                    } => {
                        if rb.group != 1 {
                            return Err(unsupported(format!(
                                "texture in @group({}) (sampler views are @group(1))",
                                rb.group
                            )));
                        }
                        if rb.binding >= 128 {
                            return Err(unsupported("sampler view slots above 127"));
                        }
                        Ok(LVal::Image(ImageBind {
                            view: rb.binding,
                            dim: *dim,
                            arrayed: *arrayed,
                            class: *class,
                        }))
                    }
                    TypeInner::Sampler { .. } => {
                        if rb.group != 2 {
                            return Err(unsupported(format!(
                                "sampler in @group({}) (samplers are @group(2))",
                                rb.group
                            )));
                        }
                        if rb.binding >= 32 {
                            return Err(unsupported("sampler slots above 31"));
                        }
                        Ok(LVal::Sampler(SamplerBind { slot: rb.binding }))
                    }
                    TypeInner::BindingArray { .. } => Err(unsupported("binding arrays")),
                    TypeInner::AccelerationStructure { .. } => {
                        Err(unsupported("acceleration structures"))
                    }
                    other => Err(unsupported(format!(
                        "resources of type {}",
                        type_name(other)
                    ))),
                }
            }
            naga::AddressSpace::Storage { .. } | naga::AddressSpace::WorkGroup => {
                self.mem_global(g)
            }
            naga::AddressSpace::Immediate => Err(unsupported("immediate data (push constants)")),
            naga::AddressSpace::Function => Err(internal("function-space global")),
            _ => Err(unsupported(format!(
                "the {} address space",
                snake(&format!("{:?}", gv.space))
            ))),
        }
    }

    /// `base[index]` / `base.member`: a place for pointers, registers for
    /// values.  `dynamic` is the index register and its expression.
    fn access(
        &mut self,
        base: Handle<Expression>,
        dynamic: Option<(Reg, Handle<Expression>)>,
        index: u32,
    ) -> Result<LVal, ShaderError> {
        let module = self.module;
        match self.expr(base)? {
            LVal::Ptr(place) if matches!(place.root, Root::Mem(_)) => {
                let bt = self.pointee(base)?;
                self.mem_access(place, &bt, dynamic.map(|d| d.0), index)
            }
            LVal::Ptr(mut place) => {
                let bt = self.pointee(base)?;
                let uniform = matches!(place.root, Root::Uniform(_));
                // (element count, stride in flat components, stride in bytes)
                let (count, stride, bstride) = match &bt {
                    TypeInner::Struct { members, .. } => {
                        let i = index as usize;
                        let m = members.get(i).ok_or_else(|| internal("member index"))?;
                        if uniform {
                            place.off += m.offset;
                        } else {
                            place.off += member_offset(module, members, i)? as u32;
                        }
                        return Ok(LVal::Ptr(place));
                    }
                    TypeInner::Array {
                        base: eb,
                        size,
                        stride,
                    } => (
                        array_len(*size)? as u32,
                        flat_len(module, inner(module, *eb))? as u32,
                        *stride,
                    ),
                    TypeInner::Matrix {
                        columns,
                        rows,
                        scalar,
                    } => (
                        vsize(*columns) as u32,
                        vsize(*rows) as u32,
                        column_stride(*rows, *scalar),
                    ),
                    TypeInner::Vector { size, scalar } => {
                        (vsize(*size) as u32, 1, elem_bytes(*scalar))
                    }
                    other => return Err(unsupported(format!("indexing a {}", type_name(other)))),
                };
                match dynamic {
                    None => {
                        let i = index.min(count - 1);
                        place.off += i * if uniform { bstride } else { stride };
                    }
                    Some((idx, _)) => {
                        let last = self.b.ku(count - 1);
                        let clamped = self.b.bin(BinOp::UMin, idx, last);
                        if uniform {
                            let s = self.b.ku(bstride);
                            let bytes = self.b.bin(BinOp::IMul, clamped, s);
                            place.dyn_bytes = Some(match place.dyn_bytes {
                                Some(d) => self.b.bin(BinOp::IAdd, d, bytes),
                                None => bytes,
                            });
                        } else {
                            place.terms.push(DynTerm {
                                index: clamped,
                                count,
                                stride,
                            });
                        }
                    }
                }
                Ok(LVal::Ptr(place))
            }
            LVal::Val(regs) => {
                let bt = self.ty(base);
                let (count, stride) = match bt {
                    TypeInner::Struct { members, .. } => {
                        let i = index as usize;
                        let m = members.get(i).ok_or_else(|| internal("member index"))?;
                        let off = member_offset(module, members, i)?;
                        let n = flat_len(module, inner(module, m.ty))?;
                        return Ok(LVal::Val(regs[off..off + n].iter().copied().collect()));
                    }
                    TypeInner::Array { base: eb, size, .. } => {
                        (array_len(*size)?, flat_len(module, inner(module, *eb))?)
                    }
                    TypeInner::Matrix { columns, rows, .. } => (vsize(*columns), vsize(*rows)),
                    TypeInner::Vector { size, .. } => (vsize(*size), 1),
                    other => return Err(unsupported(format!("indexing a {}", type_name(other)))),
                };
                match dynamic {
                    None => {
                        let i = (index as usize).min(count - 1);
                        Ok(LVal::Val(
                            regs[i * stride..(i + 1) * stride].iter().copied().collect(),
                        ))
                    }
                    Some((idx, _)) => {
                        let mut out = Regs::new();
                        for c in 0..stride {
                            let srcs: Vec<Reg> = (0..count).map(|k| regs[k * stride + c]).collect();
                            out.push(self.b.extract(idx, srcs));
                        }
                        Ok(LVal::Val(out))
                    }
                }
            }
            _ => Err(internal("indexing a texture or sampler")),
        }
    }

    fn binary(
        &mut self,
        op: BinaryOperator,
        left: Handle<Expression>,
        right: Handle<Expression>,
    ) -> Result<Regs, ShaderError> {
        let lt = self.ty(left);
        let rt = self.ty(right);
        let a = self.value(left)?;
        let c = self.value(right)?;
        // linear algebra
        if op == BinaryOperator::Multiply {
            match (lt, rt) {
                (TypeInner::Matrix { columns, rows, .. }, TypeInner::Vector { .. }) => {
                    let (nc, nr) = (vsize(*columns), vsize(*rows));
                    return Ok((0..nr)
                        .map(|i| {
                            let col: Vec<Reg> = (0..nc).map(|k| a[k * nr + i]).collect();
                            self.dot(&col, &c[..nc], ScalarKind::Float)
                        })
                        .collect());
                }
                (TypeInner::Vector { .. }, TypeInner::Matrix { columns, rows, .. }) => {
                    let (nc, nr) = (vsize(*columns), vsize(*rows));
                    return Ok((0..nc)
                        .map(|k| self.dot(&a[..nr], &c[k * nr..(k + 1) * nr], ScalarKind::Float))
                        .collect());
                }
                (
                    TypeInner::Matrix { columns, rows, .. },
                    TypeInner::Matrix {
                        columns: k_cols, ..
                    },
                ) => {
                    let (nc, nr, nk) = (vsize(*columns), vsize(*rows), vsize(*k_cols));
                    let mut out = Regs::new();
                    for k in 0..nk {
                        for i in 0..nr {
                            let row: Vec<Reg> = (0..nc).map(|j| a[j * nr + i]).collect();
                            out.push(self.dot(&row, &c[k * nc..(k + 1) * nc], ScalarKind::Float));
                        }
                    }
                    return Ok(out);
                }
                _ => {}
            }
        }
        let kind = elem_kind(lt).ok_or_else(|| internal("binary op on a composite"))?;
        use ScalarKind as K;
        let f = match (op, kind) {
            (BinaryOperator::Add, K::Float) => BinOp::FAdd,
            (BinaryOperator::Add, _) => BinOp::IAdd,
            (BinaryOperator::Subtract, K::Float) => BinOp::FSub,
            (BinaryOperator::Subtract, _) => BinOp::ISub,
            (BinaryOperator::Multiply, K::Float) => BinOp::FMul,
            (BinaryOperator::Multiply, _) => BinOp::IMul,
            (BinaryOperator::Divide, K::Float) => BinOp::FDiv,
            (BinaryOperator::Divide, K::Sint) => BinOp::SDiv,
            (BinaryOperator::Divide, _) => BinOp::UDiv,
            (BinaryOperator::Modulo, K::Float) => BinOp::FRem,
            (BinaryOperator::Modulo, K::Sint) => BinOp::SRem,
            (BinaryOperator::Modulo, _) => BinOp::URem,
            (BinaryOperator::Equal, K::Float) => BinOp::FEq,
            (BinaryOperator::Equal, _) => BinOp::IEq,
            (BinaryOperator::NotEqual, K::Float) => BinOp::FNe,
            (BinaryOperator::NotEqual, _) => BinOp::INe,
            (BinaryOperator::Less, K::Float) => BinOp::FLt,
            (BinaryOperator::Less, K::Sint) => BinOp::SLt,
            (BinaryOperator::Less, _) => BinOp::ULt,
            (BinaryOperator::LessEqual, K::Float) => BinOp::FLe,
            (BinaryOperator::LessEqual, K::Sint) => BinOp::SLe,
            (BinaryOperator::LessEqual, _) => BinOp::ULe,
            (BinaryOperator::Greater, K::Float) => BinOp::FGt,
            (BinaryOperator::Greater, K::Sint) => BinOp::SGt,
            (BinaryOperator::Greater, _) => BinOp::UGt,
            (BinaryOperator::GreaterEqual, K::Float) => BinOp::FGe,
            (BinaryOperator::GreaterEqual, K::Sint) => BinOp::SGe,
            (BinaryOperator::GreaterEqual, _) => BinOp::UGe,
            (BinaryOperator::And | BinaryOperator::LogicalAnd, _) => BinOp::And,
            (BinaryOperator::InclusiveOr | BinaryOperator::LogicalOr, _) => BinOp::Or,
            (BinaryOperator::ExclusiveOr, _) => BinOp::Xor,
            (BinaryOperator::ShiftLeft, _) => BinOp::Shl,
            (BinaryOperator::ShiftRight, K::Sint) => BinOp::ShrS,
            (BinaryOperator::ShiftRight, _) => BinOp::ShrU,
        };
        let n = a.len().max(c.len());
        Ok((0..n)
            .map(|i| self.b.bin(f, a[i.min(a.len() - 1)], c[i.min(c.len() - 1)]))
            .collect())
    }

    /// `dot(a, b)` as a multiply-add chain.
    fn dot(&mut self, a: &[Reg], b: &[Reg], kind: ScalarKind) -> Reg {
        if kind == ScalarKind::Float {
            let mut acc = self.b.bin(BinOp::FMul, a[0], b[0]);
            for i in 1..a.len() {
                acc = self.b.tri(TriOp::FFma, a[i], b[i], acc);
            }
            acc
        } else {
            let mut acc = self.b.bin(BinOp::IMul, a[0], b[0]);
            for i in 1..a.len() {
                let p = self.b.bin(BinOp::IMul, a[i], b[i]);
                acc = self.b.bin(BinOp::IAdd, acc, p);
            }
            acc
        }
    }

    fn convert(
        &mut self,
        expr: Handle<Expression>,
        kind: naga::ScalarKind,
        convert: Option<u8>,
    ) -> Result<Regs, ShaderError> {
        let from = match *self.ty(expr) {
            // an unsupported source width is named as such, not as an
            // internal error
            TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } => scalar_kind(s)?,
            ref ty => elem_kind(ty).ok_or_else(|| internal("conversion of a composite"))?,
        };
        let v = self.value(expr)?;
        let Some(width) = convert else {
            // bitcast: same bits.  naga keeps the component width, so a
            // bitcast of f16 to an integer type is to i16/u16 (WGSL's
            // `bitcast<u32>(vec2<f16>)` becomes `vec2<u16>`)
            if let TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } = *self.ty(expr)
                && s.width != 4
                && kind != s.kind
            {
                return Err(unsupported(scalar_feature(kind, s.width)));
            }
            return Ok(v);
        };
        let to = match (kind, width) {
            // to f16: converted as to f32, then rounded to a half by
            // `expr` (i32/u32 -> f32 is exact below 2^24, and every
            // integer from 65520 up overflows the half range anyway, so
            // the double rounding is the single one)
            (naga::ScalarKind::Float, 4 | 2) => ScalarKind::Float,
            (naga::ScalarKind::Sint, 4) => ScalarKind::Sint,
            (naga::ScalarKind::Uint, 4) => ScalarKind::Uint,
            (naga::ScalarKind::Bool, _) => ScalarKind::Bool,
            (k, w) => return Err(unsupported(scalar_feature(k, w))),
        };
        use ScalarKind as K;
        let mut out = Regs::new();
        for r in v {
            let x = match (from, to) {
                (a, b) if a == b => r,
                (K::Sint, K::Uint) | (K::Uint, K::Sint) => r,
                (K::Float, K::Sint) => self.b.un(UnOp::F2S, r),
                (K::Float, K::Uint) => self.b.un(UnOp::F2U, r),
                (K::Sint, K::Float) => self.b.un(UnOp::S2F, r),
                (K::Uint, K::Float) => self.b.un(UnOp::U2F, r),
                (K::Bool, K::Float) => {
                    let one = self.b.kf(1.0);
                    self.b.bin(BinOp::And, r, one)
                }
                (K::Bool, _) => {
                    let one = self.b.ku(1);
                    self.b.bin(BinOp::And, r, one)
                }
                (K::Float, K::Bool) => {
                    let z = self.b.kf(0.0);
                    self.b.bin(BinOp::FNe, r, z)
                }
                (_, K::Bool) => {
                    let z = self.b.zero();
                    self.b.bin(BinOp::INe, r, z)
                }
                _ => unreachable!("all scalar kind pairs are covered"),
            };
            out.push(x);
        }
        Ok(out)
    }

    fn math(
        &mut self,
        fun: MathFunction,
        arg: Handle<Expression>,
        arg1: Option<Handle<Expression>>,
        arg2: Option<Handle<Expression>>,
        arg3: Option<Handle<Expression>>,
    ) -> Result<Regs, ShaderError> {
        let t0 = self.ty(arg);
        let kind = elem_kind(t0).unwrap_or(ScalarKind::Float);
        let a = self.value(arg)?;
        let mut opt = |h: Option<Handle<Expression>>| -> Result<Regs, ShaderError> {
            match h {
                Some(h) => self.value(h),
                None => Err(internal("missing math argument")),
            }
        };
        let b_ = if arg1.is_some() {
            opt(arg1)?
        } else {
            Regs::new()
        };
        let c_ = if arg2.is_some() {
            opt(arg2)?
        } else {
            Regs::new()
        };
        let d_ = if arg3.is_some() {
            opt(arg3)?
        } else {
            Regs::new()
        };
        let n = a.len();
        let at = |v: &Regs, i: usize| v[i.min(v.len() - 1)];
        use MathFunction as M;
        use ScalarKind as K;
        let map1 = |s: &mut Self, f: UnOp| -> Regs { a.iter().map(|r| s.b.un(f, *r)).collect() };
        let map2 = |s: &mut Self, f: BinOp| -> Regs {
            (0..n).map(|i| s.b.bin(f, a[i], at(&b_, i))).collect()
        };
        let map3 = |s: &mut Self, f: TriOp| -> Regs {
            (0..n)
                .map(|i| s.b.tri(f, a[i], at(&b_, i), at(&c_, i)))
                .collect()
        };
        Ok(match fun {
            M::Abs => match kind {
                K::Float => map1(self, UnOp::FAbs),
                K::Sint => map1(self, UnOp::SAbs),
                _ => a.clone(),
            },
            M::Min => map2(
                self,
                match kind {
                    K::Float => BinOp::FMin,
                    K::Sint => BinOp::SMin,
                    _ => BinOp::UMin,
                },
            ),
            M::Max => map2(
                self,
                match kind {
                    K::Float => BinOp::FMax,
                    K::Sint => BinOp::SMax,
                    _ => BinOp::UMax,
                },
            ),
            M::Clamp => map3(
                self,
                match kind {
                    K::Float => TriOp::FClamp,
                    K::Sint => TriOp::SClamp,
                    _ => TriOp::UClamp,
                },
            ),
            M::Saturate => map1(self, UnOp::FSaturate),
            M::Cos => map1(self, UnOp::FCos),
            M::Cosh => map1(self, UnOp::FCosh),
            M::Sin => map1(self, UnOp::FSin),
            M::Sinh => map1(self, UnOp::FSinh),
            M::Tan => map1(self, UnOp::FTan),
            M::Tanh => map1(self, UnOp::FTanh),
            M::Acos => map1(self, UnOp::FAcos),
            M::Asin => map1(self, UnOp::FAsin),
            M::Atan => map1(self, UnOp::FAtan),
            M::Atan2 => map2(self, BinOp::FAtan2),
            M::Asinh => map1(self, UnOp::FAsinh),
            M::Acosh => map1(self, UnOp::FAcosh),
            M::Atanh => map1(self, UnOp::FAtanh),
            M::Radians => {
                let k = self.b.kf(std::f32::consts::PI / 180.0);
                a.iter().map(|r| self.b.bin(BinOp::FMul, *r, k)).collect()
            }
            M::Degrees => {
                let k = self.b.kf(180.0 / std::f32::consts::PI);
                a.iter().map(|r| self.b.bin(BinOp::FMul, *r, k)).collect()
            }
            M::Ceil => map1(self, UnOp::FCeil),
            M::Floor => map1(self, UnOp::FFloor),
            M::Round => map1(self, UnOp::FRound),
            M::Fract => map1(self, UnOp::FFract),
            M::Trunc => map1(self, UnOp::FTrunc),
            M::Modf => {
                // struct { fract, whole }: fract has the sign of x
                let whole: Regs = a.iter().map(|r| self.b.un(UnOp::FTrunc, *r)).collect();
                let mut out: Regs = (0..n)
                    .map(|i| self.b.bin(BinOp::FSub, a[i], whole[i]))
                    .collect();
                out.extend(whole);
                out
            }
            M::Frexp => {
                let mut out: Regs = a.iter().map(|r| self.b.un(UnOp::FFrexpMant, *r)).collect();
                let e: Regs = a.iter().map(|r| self.b.un(UnOp::FFrexpExp, *r)).collect();
                out.extend(e);
                out
            }
            M::Ldexp => map2(self, BinOp::FLdexp),
            M::Exp => map1(self, UnOp::FExp),
            M::Exp2 => map1(self, UnOp::FExp2),
            M::Log => map1(self, UnOp::FLog),
            M::Log2 => map1(self, UnOp::FLog2),
            M::Pow => map2(self, BinOp::FPow),
            M::Dot => [self.dot(&a, &b_, kind)].into_iter().collect(),
            M::Dot4I8Packed | M::Dot4U8Packed => {
                let (f, k) = if fun == M::Dot4I8Packed {
                    (UnpackFn::Unpack4xI8, K::Sint)
                } else {
                    (UnpackFn::Unpack4xU8, K::Uint)
                };
                let x = self.b.unpack(f, a[0]);
                let y = self.b.unpack(f, b_[0]);
                [self.dot(&x, &y, k)].into_iter().collect()
            }
            M::Outer => {
                let mut out = Regs::new();
                for j in 0..b_.len() {
                    for i in 0..n {
                        out.push(self.b.bin(BinOp::FMul, a[i], b_[j]));
                    }
                }
                out
            }
            M::Cross => {
                let c = |s: &mut Self, i: usize, j: usize| {
                    let p = s.b.bin(BinOp::FMul, a[i], b_[j]);
                    let q = s.b.bin(BinOp::FMul, a[j], b_[i]);
                    s.b.bin(BinOp::FSub, p, q)
                };
                [c(self, 1, 2), c(self, 2, 0), c(self, 0, 1)]
                    .into_iter()
                    .collect()
            }
            M::Distance => {
                let d: Regs = (0..n)
                    .map(|i| self.b.bin(BinOp::FSub, a[i], b_[i]))
                    .collect();
                [self.length(&d)].into_iter().collect()
            }
            M::Length => [self.length(&a)].into_iter().collect(),
            M::Normalize => {
                let dd = self.dot(&a, &a, K::Float);
                let inv = self.b.un(UnOp::FInvSqrt, dd);
                a.iter().map(|r| self.b.bin(BinOp::FMul, *r, inv)).collect()
            }
            M::FaceForward => {
                // faceForward(n, i, nref) = dot(nref, i) < 0 ? n : -n
                let d = self.dot(&c_, &b_, K::Float);
                let z = self.b.kf(0.0);
                let neg = self.b.bin(BinOp::FLt, d, z);
                a.iter()
                    .map(|r| {
                        let m = self.b.un(UnOp::FNeg, *r);
                        self.b.tri(TriOp::Select, neg, *r, m)
                    })
                    .collect()
            }
            M::Reflect => {
                // i - 2 * dot(n, i) * n
                let d = self.dot(&b_, &a, K::Float);
                let two = self.b.kf(2.0);
                let d2 = self.b.bin(BinOp::FMul, d, two);
                (0..n)
                    .map(|i| {
                        let p = self.b.bin(BinOp::FMul, d2, b_[i]);
                        self.b.bin(BinOp::FSub, a[i], p)
                    })
                    .collect()
            }
            M::Refract => {
                // k = 1 - eta^2 (1 - dot(n,i)^2); k < 0 ? 0 : eta i - (eta dot + sqrt k) n
                let eta = c_[0];
                let d = self.dot(&b_, &a, K::Float);
                let one = self.b.kf(1.0);
                let dd = self.b.bin(BinOp::FMul, d, d);
                let t = self.b.bin(BinOp::FSub, one, dd);
                let e2 = self.b.bin(BinOp::FMul, eta, eta);
                let e2t = self.b.bin(BinOp::FMul, e2, t);
                let k = self.b.bin(BinOp::FSub, one, e2t);
                let z = self.b.kf(0.0);
                let tir = self.b.bin(BinOp::FLt, k, z);
                let sk = self.b.un(UnOp::FSqrt, k);
                let ed = self.b.bin(BinOp::FMul, eta, d);
                let s = self.b.bin(BinOp::FAdd, ed, sk);
                (0..n)
                    .map(|i| {
                        let x = self.b.bin(BinOp::FMul, eta, a[i]);
                        let y = self.b.bin(BinOp::FMul, s, b_[i]);
                        let r = self.b.bin(BinOp::FSub, x, y);
                        self.b.tri(TriOp::Select, tir, z, r)
                    })
                    .collect()
            }
            M::Sign => match kind {
                K::Float => map1(self, UnOp::FSign),
                _ => map1(self, UnOp::SSign),
            },
            M::Fma => map3(self, TriOp::FFma),
            M::Mix => map3(self, TriOp::FMix),
            M::Step => map2(self, BinOp::FStep),
            M::SmoothStep => {
                // smoothstep(low, high, x): edges may be scalars (GLSL)
                let n = c_.len();
                (0..n)
                    .map(|i| self.b.tri(TriOp::FSmoothStep, at(&a, i), at(&b_, i), c_[i]))
                    .collect()
            }
            M::Sqrt => map1(self, UnOp::FSqrt),
            M::InverseSqrt => map1(self, UnOp::FInvSqrt),
            M::Transpose => {
                let TypeInner::Matrix { columns, rows, .. } = t0 else {
                    return Err(internal("transpose of a non-matrix"));
                };
                let (nc, nr) = (vsize(*columns), vsize(*rows));
                let mut out = Regs::new();
                for i in 0..nr {
                    for k in 0..nc {
                        out.push(a[k * nr + i]);
                    }
                }
                out
            }
            M::Determinant => {
                let TypeInner::Matrix { columns, .. } = t0 else {
                    return Err(internal("determinant of a non-matrix"));
                };
                let m = vsize(*columns);
                let rows: Vec<usize> = (0..m).collect();
                let cols: Vec<usize> = (0..m).collect();
                [self.det(&a, m, &rows, &cols)].into_iter().collect()
            }
            M::Inverse => {
                let TypeInner::Matrix { columns, .. } = t0 else {
                    return Err(internal("inverse of a non-matrix"));
                };
                let m = vsize(*columns);
                let all: Vec<usize> = (0..m).collect();
                let det = self.det(&a, m, &all, &all);
                let one = self.b.kf(1.0);
                let inv_det = self.b.bin(BinOp::FDiv, one, det);
                // inverse[c][r] = cofactor(r, c) / det (adjugate = transposed cofactors)
                let mut out = Regs::new();
                for c in 0..m {
                    for r in 0..m {
                        let rows: Vec<usize> = (0..m).filter(|&i| i != c).collect();
                        let cols: Vec<usize> = (0..m).filter(|&k| k != r).collect();
                        let minor = self.det(&a, m, &rows, &cols);
                        let signed = if (r + c) % 2 == 1 {
                            self.b.un(UnOp::FNeg, minor)
                        } else {
                            minor
                        };
                        out.push(self.b.bin(BinOp::FMul, signed, inv_det));
                    }
                }
                out
            }
            M::QuantizeToF16 => map1(self, UnOp::FQuantizeF16),
            M::CountTrailingZeros => map1(self, UnOp::CountTrailingZeros),
            M::CountLeadingZeros => map1(self, UnOp::CountLeadingZeros),
            M::CountOneBits => map1(self, UnOp::CountOneBits),
            M::ReverseBits => map1(self, UnOp::ReverseBits),
            M::ExtractBits => {
                let f = if kind == K::Sint {
                    TriOp::SExtractBits
                } else {
                    TriOp::UExtractBits
                };
                (0..n).map(|i| self.b.tri(f, a[i], b_[0], c_[0])).collect()
            }
            M::InsertBits => (0..n)
                .map(|i| self.b.insert_bits(a[i], b_[i], c_[0], d_[0]))
                .collect(),
            M::FirstTrailingBit => map1(self, UnOp::FirstTrailingBit),
            M::FirstLeadingBit => map1(
                self,
                if kind == K::Sint {
                    UnOp::SFirstLeadingBit
                } else {
                    UnOp::UFirstLeadingBit
                },
            ),
            M::Pack4x8snorm
            | M::Pack4x8unorm
            | M::Pack2x16snorm
            | M::Pack2x16unorm
            | M::Pack2x16float
            | M::Pack4xI8
            | M::Pack4xU8
            | M::Pack4xI8Clamp
            | M::Pack4xU8Clamp => {
                let f = match fun {
                    M::Pack4x8snorm => PackFn::Pack4x8Snorm,
                    M::Pack4x8unorm => PackFn::Pack4x8Unorm,
                    M::Pack2x16snorm => PackFn::Pack2x16Snorm,
                    M::Pack2x16unorm => PackFn::Pack2x16Unorm,
                    M::Pack2x16float => PackFn::Pack2x16Float,
                    M::Pack4xI8 => PackFn::Pack4xI8,
                    M::Pack4xU8 => PackFn::Pack4xU8,
                    M::Pack4xI8Clamp => PackFn::Pack4xI8Clamp,
                    _ => PackFn::Pack4xU8Clamp,
                };
                let z = self.b.zero();
                let ops: [Reg; 4] = std::array::from_fn(|i| a.get(i).copied().unwrap_or(z));
                [self.b.pack(f, ops)].into_iter().collect()
            }
            M::Unpack4x8snorm
            | M::Unpack4x8unorm
            | M::Unpack2x16snorm
            | M::Unpack2x16unorm
            | M::Unpack2x16float
            | M::Unpack4xI8
            | M::Unpack4xU8 => {
                let f = match fun {
                    M::Unpack4x8snorm => UnpackFn::Unpack4x8Snorm,
                    M::Unpack4x8unorm => UnpackFn::Unpack4x8Unorm,
                    M::Unpack2x16snorm => UnpackFn::Unpack2x16Snorm,
                    M::Unpack2x16unorm => UnpackFn::Unpack2x16Unorm,
                    M::Unpack2x16float => UnpackFn::Unpack2x16Float,
                    M::Unpack4xI8 => UnpackFn::Unpack4xI8,
                    _ => UnpackFn::Unpack4xU8,
                };
                let r = self.b.unpack(f, a[0]);
                r[..f.arity()].iter().copied().collect()
            }
        })
    }

    fn length(&mut self, v: &[Reg]) -> Reg {
        if v.len() == 1 {
            return self.b.un(UnOp::FAbs, v[0]);
        }
        let d = self.dot(v, v, ScalarKind::Float);
        self.b.un(UnOp::FSqrt, d)
    }

    /// Determinant of the sub-matrix of column-major `m` (size `size`) made
    /// of `rows` x `cols`, by cofactor expansion along the first column.
    fn det(&mut self, m: &[Reg], size: usize, rows: &[usize], cols: &[usize]) -> Reg {
        let at = |r: usize, c: usize| m[c * size + r];
        if rows.len() == 1 {
            return at(rows[0], cols[0]);
        }
        if rows.len() == 2 {
            let p = self
                .b
                .bin(BinOp::FMul, at(rows[0], cols[0]), at(rows[1], cols[1]));
            let q = self
                .b
                .bin(BinOp::FMul, at(rows[0], cols[1]), at(rows[1], cols[0]));
            return self.b.bin(BinOp::FSub, p, q);
        }
        let mut acc: Option<Reg> = None;
        for (k, &r) in rows.iter().enumerate() {
            let sub_rows: Vec<usize> = rows.iter().copied().filter(|&x| x != r).collect();
            let minor = self.det(m, size, &sub_rows, &cols[1..]);
            let term = self.b.bin(BinOp::FMul, at(r, cols[0]), minor);
            acc = Some(match acc {
                None => term,
                Some(a) if k % 2 == 1 => self.b.bin(BinOp::FSub, a, term),
                Some(a) => self.b.bin(BinOp::FAdd, a, term),
            });
        }
        acc.expect("non-empty matrix")
    }

    /// Texture built-ins: `textureSample*`, `textureGather*`, `textureLoad`
    /// and the queries.
    fn texture_expr(&mut self, h: Handle<Expression>) -> Result<LVal, ShaderError> {
        let func = self.frame().func;
        match &func.expressions[h] {
            Expression::ImageSample {
                image,
                sampler,
                gather,
                coordinate,
                array_index,
                offset,
                level,
                depth_ref,
                clamp_to_edge,
            } => {
                let img = self.image(*image)?;
                let LVal::Sampler(smp) = self.expr(*sampler)? else {
                    return Err(internal("sampler operand is not a sampler"));
                };
                let coord = self.value(*coordinate)?;
                let layer = match array_index {
                    Some(a) => Some(self.scalar(*a)?),
                    None => None,
                };
                let offset = match offset {
                    Some(o) => self.const_offset(*o)?,
                    None => [0; 3],
                };
                let depth_ref = match depth_ref {
                    Some(d) => Some(self.scalar(*d)?),
                    None => None,
                };
                let (func, lod, grad) = match level {
                    naga::SampleLevel::Auto => (TexFn::SampleAuto, None, None),
                    naga::SampleLevel::Zero => (TexFn::SampleLevel, Some(self.b.kf(0.0)), None),
                    naga::SampleLevel::Exact(l) => {
                        (TexFn::SampleLevel, Some(self.scalar(*l)?), None)
                    }
                    naga::SampleLevel::Bias(b) => (TexFn::SampleBias, Some(self.scalar(*b)?), None),
                    naga::SampleLevel::Gradient { x, y } => {
                        let gx = self.value(*x)?;
                        let gy = self.value(*y)?;
                        let z = self.b.kf(0.0);
                        let pad = |v: &Regs| -> [Reg; 3] {
                            std::array::from_fn(|i| v.get(i).copied().unwrap_or(z))
                        };
                        (TexFn::SampleGrad, None, Some([pad(&gx), pad(&gy)]))
                    }
                };
                if matches!(func, TexFn::SampleAuto | TexFn::SampleBias)
                    && self.stage != naga::ShaderStage::Fragment
                {
                    return Err(unsupported(
                        "implicit-LOD sampling outside a fragment shader",
                    ));
                }
                let (func, gather_comp) = match gather {
                    Some(c) => (TexFn::Gather, *c as u8),
                    None => (func, 0),
                };
                let kind = tex_kind(img.class)?;
                let z = self.b.kf(0.0);
                let op = TexOp {
                    func,
                    dim: tex_dim(img.dim),
                    arrayed: img.arrayed,
                    kind,
                    view: img.view,
                    sampler: smp.slot,
                    dst: [crate::ir::EXEC; 4],
                    coord: std::array::from_fn(|i| coord.get(i).copied().unwrap_or(z)),
                    layer,
                    lod,
                    grad,
                    depth_ref,
                    offset,
                    gather: gather_comp,
                    sample: None,
                    clamp_to_edge: *clamp_to_edge,
                    live: TexOp::ALL_RESULTS,
                };
                let n = op.result_count();
                let d = self.b.texture(op);
                Ok(LVal::Val(d[..n].iter().copied().collect()))
            }
            Expression::ImageLoad {
                image,
                coordinate,
                array_index,
                sample,
                level,
            } => {
                let img = self.image(*image)?;
                if matches!(img.class, naga::ImageClass::Storage { .. }) {
                    return self.image_load(img, *coordinate, *array_index);
                }
                let coord = self.value(*coordinate)?;
                let layer = match array_index {
                    Some(a) => Some(self.scalar(*a)?),
                    None => None,
                };
                let sample = match sample {
                    Some(s) => Some(self.scalar(*s)?),
                    None => None,
                };
                let lod = match level {
                    Some(l) => Some(self.scalar(*l)?),
                    None => None,
                };
                let kind = tex_kind(img.class)?;
                let z = self.b.zero();
                let op = TexOp {
                    func: TexFn::Load,
                    dim: tex_dim(img.dim),
                    arrayed: img.arrayed,
                    kind,
                    view: img.view,
                    sampler: 0,
                    dst: [crate::ir::EXEC; 4],
                    coord: std::array::from_fn(|i| coord.get(i).copied().unwrap_or(z)),
                    layer,
                    lod,
                    grad: None,
                    depth_ref: None,
                    offset: [0; 3],
                    gather: 0,
                    sample,
                    clamp_to_edge: false,
                    live: TexOp::ALL_RESULTS,
                };
                let n = op.result_count();
                let d = self.b.texture(op);
                Ok(LVal::Val(d[..n].iter().copied().collect()))
            }
            Expression::ImageQuery { image, query } => {
                let img = self.image(*image)?;
                if matches!(img.class, naga::ImageClass::Storage { .. }) {
                    return self.image_query(img, query);
                }
                let (func, level) = match query {
                    naga::ImageQuery::Size { level } => (
                        TexQueryFn::Size,
                        match level {
                            Some(l) => Some(self.scalar(*l)?),
                            None => None,
                        },
                    ),
                    naga::ImageQuery::NumLevels => (TexQueryFn::NumLevels, None),
                    naga::ImageQuery::NumLayers => (TexQueryFn::NumLayers, None),
                    naga::ImageQuery::NumSamples => (TexQueryFn::NumSamples, None),
                };
                let q = TexQuery {
                    func,
                    dim: tex_dim(img.dim),
                    arrayed: img.arrayed,
                    view: img.view,
                    level,
                    dst: [crate::ir::EXEC; 3],
                };
                let n = q.result_count();
                let d = self.b.texture_query(q);
                Ok(LVal::Val(d[..n].iter().copied().collect()))
            }
            _ => Err(internal("not a texture expression")),
        }
    }

    fn image(&mut self, h: Handle<Expression>) -> Result<ImageBind, ShaderError> {
        match self.expr(h)? {
            LVal::Image(i) => {
                if matches!(i.class, naga::ImageClass::External) {
                    return Err(unsupported("external textures"));
                }
                Ok(i)
            }
            _ => Err(internal("texture operand is not a texture")),
        }
    }

    /// A constant texel offset (`vec2<i32>` ...).
    fn const_offset(&mut self, h: Handle<Expression>) -> Result<[i32; 3], ShaderError> {
        let v = self.value(h)?;
        let mut out = [0; 3];
        for (i, r) in v.iter().enumerate().take(3) {
            out[i] = self
                .b
                .const_of(*r)
                .ok_or_else(|| unsupported("non-constant texel offsets"))?
                as i32;
        }
        Ok(out)
    }
}
