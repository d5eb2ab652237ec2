//! Lowering shader memory (llvmpipe's counterpart: the `load_ssbo`,
//! `store_ssbo`, `*_shared`, `ssbo_atomic` and image paths of
//! `lp_bld_nir_soa.c`, for the shaders `lp_state_cs.c`, `lp_state_fs.c`
//! and draw build): storage buffers and storage images (every stage), and,
//! in compute only, workgroup variables, barriers, global bindings and the
//! launch's INPUT memory.
//!
//! # Places in memory
//! A pointer into storage or workgroup memory is a [`Place`] rooted at
//! [`Root::Mem`]: `off` is a static byte offset, `dyn_bytes` the sum of
//! dynamic `index * stride` terms, and `valid` the lanes whose every index
//! was inside its array (fixed size, or the runtime size `arrayLength`
//! returns).  The address register is `valid ? dyn_bytes : u32::MAX`; the
//! executor adds `off` in 64 bits, so a lane with a bad index can never wrap
//! around into the buffer: it reads 0 and its stores are dropped (robust
//! buffer access, `memory.rs`).  Every valid term is below the size of its
//! array, so valid sums stay below the 2 GiB buffer limit and never
//! overflow.
//!
//! # Barriers
//! A compute call runs one whole workgroup as one chunk and every op
//! completes for all invocations before the next op starts (`exec.rs`), so
//! whatever an invocation wrote before `workgroupBarrier()` is visible to
//! every invocation after it with no memory work at all.  WGSL requires
//! barriers in uniform control flow, where all invocations reach them at
//! the same op; naga 30 records but does not check that rule, so a barrier
//! is an [`Op::Barrier`] that checks it dynamically (every live invocation
//! in `EXEC`, or none) and the launch fails with a typed error when a
//! workgroup breaks it.  `storageBarrier`, `textureBarrier` and
//! `workgroupUniformLoad` follow the same ordering.

use naga::{AddressSpace, ArraySize, Expression, Handle, ShaderStage, TypeInner};

use super::types::*;
use super::{ImageBind, LVal, Lowerer, Place, Regs, Root};
use crate::ShaderError;
use crate::ir::{
    AtomicFn, AtomicOp, BinOp, EXEC, ImageOp, MemSpace, Op, PackFn, Reg, TexDim, TexKind,
    TexQueryFn, TriOp, UnOp, UnpackFn,
};

/// Shader buffer slots a shader of any stage may use (`@group(3)`).
pub const MAX_SHADER_BUFFERS: u32 = 32;
/// Shader image slots a shader of any stage may use (`@group(4)`).
pub const MAX_SHADER_IMAGES: u32 = 32;
/// Bytes of `var<workgroup>` memory per workgroup: 32 KiB, the GL and
/// Vulkan minimum for shared memory, and what keeps one workgroup's memory
/// inside a 48 KiB L1 data cache next to its registers.
pub const MAX_SHARED_BYTES: u32 = 32 * 1024;
/// The constant-buffer index under which the launch's INPUT memory
/// (`@group(5) @binding(0) var<uniform>`) is read: one past the 32 slots
/// uniform bindings can name.
pub const INPUT_CONST_BUFFER: u32 = 32;
/// The bind group of each compute resource kind.
pub const GROUP_SHADER_BUFFERS: u32 = 3;
pub const GROUP_SHADER_IMAGES: u32 = 4;
pub const GROUP_INPUT: u32 = 5;
/// Global bindings (`set_global_binding`): `@group(6) @binding(i)` is
/// global slot `i`, a whole `PIPE_BIND_GLOBAL` buffer.
pub const GROUP_GLOBAL: u32 = 6;
/// Global binding slots a compute shader may use (`@group(6)`): 16, so a
/// slot fits the 4 bits `set_global_binding` handles give it.
pub const MAX_GLOBAL_BINDINGS: u32 = 16;

fn internal(what: &str) -> ShaderError {
    ShaderError::validation(format!("malformed module: {what}"))
}

/// Checks a compute resource's bind group and slot.
fn check_slot(
    rb: &naga::ResourceBinding,
    group: u32,
    slots: u32,
    what: &str,
) -> Result<(), ShaderError> {
    if rb.group != group {
        return Err(unsupported(format!(
            "{what} in @group({}) ({what}s are @group({group}))",
            rb.group
        )));
    }
    if rb.binding >= slots {
        return Err(unsupported(format!("{what} slots above {}", slots - 1)));
    }
    Ok(())
}

fn image_dim(d: naga::ImageDimension) -> Result<TexDim, ShaderError> {
    Ok(match d {
        naga::ImageDimension::D1 => TexDim::D1,
        naga::ImageDimension::D2 => TexDim::D2,
        naga::ImageDimension::D3 => TexDim::D3,
        naga::ImageDimension::Cube => return Err(unsupported("cube storage textures")),
    })
}

/// Texel kind of a storage image.
fn storage_kind(class: naga::ImageClass) -> Result<TexKind, ShaderError> {
    match class {
        naga::ImageClass::Storage { format, .. } => Ok(match naga::Scalar::from(format).kind {
            naga::ScalarKind::Sint => TexKind::Sint,
            naga::ScalarKind::Uint => TexKind::Uint,
            _ => TexKind::Float,
        }),
        _ => Err(internal("not a storage texture")),
    }
}

impl<'m> Lowerer<'m> {
    fn need_compute(&self, what: &str) -> Result<(), ShaderError> {
        if self.stage == ShaderStage::Compute {
            Ok(())
        } else {
            Err(unsupported(format!(
                "{what} outside compute shaders (vertex and fragment shaders have shader buffers and images, but no workgroup memory, global bindings or barriers)"
            )))
        }
    }

    /// A `var<storage>` or `var<workgroup>` global.
    pub(super) fn mem_global(
        &mut self,
        g: Handle<naga::GlobalVariable>,
    ) -> Result<LVal, ShaderError> {
        let gv = &self.module.global_variables[g];
        let space = match gv.space {
            AddressSpace::Storage { .. } => {
                // shader buffers are every stage's (set_shader_buffers of
                // VERTEX / FRAGMENT / COMPUTE); global bindings compute's
                let rb = gv
                    .binding
                    .as_ref()
                    .ok_or_else(|| internal("storage buffer without a binding"))?;
                if rb.group == GROUP_GLOBAL {
                    self.need_compute("global bindings (@group(6))")?;
                    check_slot(rb, GROUP_GLOBAL, MAX_GLOBAL_BINDINGS, "global binding")?;
                    self.compute.globals_used |= 1 << rb.binding;
                    MemSpace::Global(rb.binding)
                } else {
                    check_slot(
                        rb,
                        GROUP_SHADER_BUFFERS,
                        MAX_SHADER_BUFFERS,
                        "shader buffer",
                    )?;
                    self.compute.buffers_used |= 1 << rb.binding;
                    MemSpace::Buffer(rb.binding)
                }
            }
            AddressSpace::WorkGroup => {
                self.need_compute("workgroup variables")?;
                MemSpace::Workgroup
            }
            _ => return Err(internal("not a memory global")),
        };
        let off = match space {
            MemSpace::Workgroup => self.shared_offset(g)?,
            MemSpace::Buffer(_) | MemSpace::Global(_) => 0,
        };
        Ok(LVal::Ptr(Place {
            root: Root::Mem(space),
            off,
            terms: Default::default(),
            dyn_bytes: None,
            valid: None,
        }))
    }

    /// Byte offset of a workgroup variable, allocated on first use (16-byte
    /// aligned: the largest alignment a WGSL type has).
    fn shared_offset(&mut self, g: Handle<naga::GlobalVariable>) -> Result<u32, ShaderError> {
        if let Some(o) = self.shared.get(&g) {
            return Ok(*o);
        }
        let ty = &self.module.types[self.module.global_variables[g].ty].inner;
        let size = ty
            .try_size(self.module.to_ctx())
            .ok_or_else(|| unsupported("workgroup variables larger than 4 GiB"))?;
        let off = self.compute.shared_bytes.next_multiple_of(16);
        let end = u64::from(off) + u64::from(size);
        if end > u64::from(MAX_SHARED_BYTES) {
            return Err(unsupported(format!(
                "{end} bytes of workgroup memory (at most {MAX_SHARED_BYTES})"
            )));
        }
        self.compute.shared_bytes = end as u32;
        self.shared.insert(g, off);
        Ok(off)
    }

    /// The launch's INPUT memory: `@group(5) @binding(0) var<uniform>`.
    pub(super) fn input_global(&mut self, binding: u32) -> Result<LVal, ShaderError> {
        if self.stage != ShaderStage::Compute {
            return Err(unsupported(format!(
                "uniform buffer in @group({GROUP_INPUT}) outside compute shaders (constant buffers are @group(0))"
            )));
        }
        if binding != 0 {
            return Err(unsupported(format!(
                "@group({GROUP_INPUT}) @binding({binding}) (the launch's INPUT memory is @binding(0))"
            )));
        }
        self.compute.reads_input = true;
        Ok(LVal::Ptr(Place {
            root: Root::Uniform(INPUT_CONST_BUFFER),
            off: 0,
            terms: Default::default(),
            dyn_bytes: None,
            valid: None,
        }))
    }

    /// A `texture_storage_*` global.
    pub(super) fn storage_image_global(
        &mut self,
        rb: &naga::ResourceBinding,
        dim: naga::ImageDimension,
        arrayed: bool,
        class: naga::ImageClass,
    ) -> Result<LVal, ShaderError> {
        check_slot(rb, GROUP_SHADER_IMAGES, MAX_SHADER_IMAGES, "shader image")?;
        image_dim(dim)?;
        storage_kind(class)?;
        self.compute.images_used |= 1 << rb.binding;
        Ok(LVal::Image(ImageBind {
            view: rb.binding,
            dim,
            arrayed,
            class,
        }))
    }

    /// `base[index]` / `base.member` on a memory place; `dynamic` is the
    /// index register when not constant.
    pub(super) fn mem_access(
        &mut self,
        mut place: Place,
        bt: &TypeInner,
        dynamic: Option<Reg>,
        index: u32,
    ) -> Result<LVal, ShaderError> {
        let (count, stride) = match bt {
            TypeInner::Struct { members, .. } => {
                let m = members
                    .get(index as usize)
                    .ok_or_else(|| internal("member index"))?;
                // naga keeps every type below 4 GiB, so these sums fit;
                // saturation only guards against a malformed module
                place.off = place.off.saturating_add(m.offset);
                return Ok(LVal::Ptr(place));
            }
            TypeInner::Array { size, stride, .. } => (
                match size {
                    ArraySize::Constant(n) => Some(n.get()),
                    ArraySize::Dynamic => None,
                    ArraySize::Pending(_) => return Err(unsupported("override-sized arrays")),
                },
                *stride,
            ),
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => (Some(vsize(*columns) as u32), column_stride(*rows, *scalar)),
            TypeInner::Vector { size, scalar } => (Some(vsize(*size) as u32), elem_bytes(*scalar)),
            other => return Err(unsupported(format!("indexing a {}", type_name(other)))),
        };
        match (dynamic, count) {
            (None, Some(n)) if index < n => {
                place.off = place.off.saturating_add(index.saturating_mul(stride))
            }
            _ => {
                let idx = dynamic.unwrap_or_else(|| self.b.ku(index));
                let n = match count {
                    Some(n) => self.b.ku(n),
                    None => self.runtime_len(&place, stride)?,
                };
                let ok = self.b.bin(BinOp::ULt, idx, n);
                place.valid = Some(match place.valid {
                    Some(v) => self.b.bin(BinOp::And, v, ok),
                    None => ok,
                });
                let s = self.b.ku(stride);
                let bytes = self.b.bin(BinOp::IMul, idx, s);
                place.dyn_bytes = Some(match place.dyn_bytes {
                    Some(d) => self.b.bin(BinOp::IAdd, d, bytes),
                    None => bytes,
                });
            }
        }
        Ok(LVal::Ptr(place))
    }

    /// Element count of the runtime-sized array at `place` (stride
    /// `stride`): `(max(bytes, off) - off) / stride`, uniform.
    fn runtime_len(&mut self, place: &Place, stride: u32) -> Result<Reg, ShaderError> {
        let (Root::Mem(space @ (MemSpace::Buffer(_) | MemSpace::Global(_))), None) =
            (place.root, place.dyn_bytes)
        else {
            return Err(unsupported(
                "runtime-sized arrays outside a storage buffer's top level",
            ));
        };
        let bytes = self.b.buffer_length(space);
        let off = self.b.ku(place.off);
        let top = self.b.bin(BinOp::UMax, bytes, off);
        let avail = self.b.bin(BinOp::ISub, top, off);
        let s = self.b.ku(stride.max(1));
        Ok(self.b.bin(BinOp::UDiv, avail, s))
    }

    /// `arrayLength(&runtime_array)`.
    pub(super) fn array_length(&mut self, ptr: Handle<Expression>) -> Result<Regs, ShaderError> {
        let place = self.place(ptr)?;
        let stride = match self.pointee(ptr)? {
            TypeInner::Array {
                size: ArraySize::Dynamic,
                stride,
                ..
            } => stride,
            _ => return Err(internal("arrayLength of a fixed-size array")),
        };
        Ok([self.runtime_len(&place, stride)?].into_iter().collect())
    }

    /// The address register of a memory place (see the module docs).
    fn mem_addr(&mut self, place: &Place) -> Reg {
        self.mem_addr_of(place.dyn_bytes, place.valid)
    }

    /// Loads a value of type `ty` from a memory place.
    pub(super) fn mem_load(
        &mut self,
        space: MemSpace,
        place: &Place,
        ty: &TypeInner,
    ) -> Result<Regs, ShaderError> {
        let mut layout = Vec::new();
        memory_layout(self.module, ty, place.off, &mut layout)?;
        let addr = self.mem_addr(place);
        let mut out = Regs::new();
        for leaf in layout {
            if !leaf.half {
                out.push(self.b.mem_load(space, addr, leaf.off));
                continue;
            }
            let (off, word, sel) = self.half_word(leaf.off, place.dyn_bytes);
            let addr = self.mem_addr_of(word, place.valid);
            let w = self.b.mem_load(space, addr, off);
            out.push(self.half_from_word(w, sel));
        }
        Ok(out)
    }

    /// Stores `vals` (flattened `ty`) to a memory place.
    ///
    /// An f16 is half of a 32-bit word, and the invocation next to this
    /// one may store the other half in the same op (`array<f16>`, one
    /// element per invocation), or another workgroup's thread at the same
    /// time: a load-modify-store of the word would lose one of the two
    /// stores, though WGSL makes them distinct memory locations.  So an
    /// f16 store is two atomic read-modify-writes of its word: `and` clears
    /// its 16 bits, `or` sets them.  Both touch only this half, so they
    /// commute with whatever the other half's stores do, in any order and
    /// on any thread; between them only a racing access to the same f16
    /// (a data race in WGSL, whose value is undefined anyway) can see the
    /// cleared half.
    pub(super) fn mem_store(
        &mut self,
        space: MemSpace,
        place: &Place,
        ty: &TypeInner,
        vals: &[Reg],
    ) -> Result<(), ShaderError> {
        let mut layout = Vec::new();
        memory_layout(self.module, ty, place.off, &mut layout)?;
        let addr = self.mem_addr(place);
        for (leaf, a) in layout.into_iter().zip(vals) {
            if !leaf.half {
                self.b.push(Op::MemStore {
                    space,
                    addr,
                    offset: leaf.off,
                    a: *a,
                });
                continue;
            }
            let (offset, word, sel) = self.half_word(leaf.off, place.dyn_bytes);
            let addr = self.mem_addr_of(word, place.valid);
            let (bits, keep) = self.half_into_word(*a, sel);
            for (f, value) in [(AtomicFn::And, keep), (AtomicFn::Or, bits)] {
                let d = self.b.new_v();
                self.b.push(Op::MemAtomic(Box::new(AtomicOp {
                    f,
                    space,
                    addr,
                    offset,
                    value,
                    compare: EXEC,
                    d,
                    d_ok: EXEC,
                })));
            }
        }
        Ok(())
    }

    /// The word holding the f16 at static byte offset `off` plus the
    /// dynamic byte offset `dyn_bytes`: the word's static offset, its
    /// dynamic offset (4-aligned) and where in it the half is.  A dynamic
    /// offset (an index into `array<f16>`, stride 2) may be 2 mod 4, so
    /// the half is chosen per lane; the sum `dyn + (off & 3)` stays below
    /// the 2 GiB limit the module docs give, so it cannot wrap.
    pub(super) fn half_word(
        &mut self,
        off: u32,
        dyn_bytes: Option<Reg>,
    ) -> (u32, Option<Reg>, HalfSel) {
        match dyn_bytes {
            None => (off & !3, None, HalfSel::Static((off & 2) * 8)),
            Some(d) => {
                let lo = self.b.ku(off & 3);
                let b = self.b.bin(BinOp::IAdd, d, lo);
                let m = self.b.ku(!3);
                let word = self.b.bin(BinOp::And, b, m);
                let two = self.b.ku(2);
                let h = self.b.bin(BinOp::And, b, two);
                let three = self.b.ku(3);
                let sh = self.b.bin(BinOp::Shl, h, three);
                (off & !3, Some(word), HalfSel::Dyn(sh))
            }
        }
    }

    /// The f16 in `word` (its bits shifted by `sel`) as an f32 (exact).
    pub(super) fn half_from_word(&mut self, word: Reg, sel: HalfSel) -> Reg {
        let bits = match sel {
            HalfSel::Static(0) => word,
            HalfSel::Static(s) => {
                let s = self.b.ku(s);
                self.b.bin(BinOp::ShrU, word, s)
            }
            HalfSel::Dyn(s) => self.b.bin(BinOp::ShrU, word, s),
        };
        self.b.unpack(UnpackFn::Unpack2x16Float, bits)[0]
    }

    /// An f16 value (an f32 register holding a half value) as its bits in
    /// place in a word, and the mask of the word's other half.
    fn half_into_word(&mut self, v: Reg, sel: HalfSel) -> (Reg, Reg) {
        let z = self.b.zero();
        // the value is a half already: the conversion is exact, and f16(0)
        // leaves the upper 16 bits zero
        let bits = self.b.pack(PackFn::Pack2x16Float, [v, z, z, z]);
        match sel {
            HalfSel::Static(s) => {
                let placed = if s == 0 {
                    bits
                } else {
                    let k = self.b.ku(s);
                    self.b.bin(BinOp::Shl, bits, k)
                };
                (placed, self.b.ku(!(0xffffu32 << s)))
            }
            HalfSel::Dyn(s) => {
                let placed = self.b.bin(BinOp::Shl, bits, s);
                let ones = self.b.ku(0xffff);
                let m = self.b.bin(BinOp::Shl, ones, s);
                (placed, self.b.un(UnOp::Not, m))
            }
        }
    }

    /// The address register of a word at dynamic offset `word` (or none)
    /// for the lanes in `valid` (see [`Self::mem_addr`]).
    fn mem_addr_of(&mut self, word: Option<Reg>, valid: Option<Reg>) -> Reg {
        let dynb = match word {
            Some(d) => d,
            None => self.b.zero(),
        };
        match valid {
            Some(v) => {
                let bad = self.b.ku(u32::MAX);
                self.b.tri(TriOp::Select, v, dynb, bad)
            }
            None => dynb,
        }
    }

    /// `atomicAdd` and friends (`atomicLoad` / `atomicStore` are plain
    /// loads and stores: every memory word is accessed atomically).
    pub(super) fn atomic_stmt(
        &mut self,
        pointer: Handle<Expression>,
        fun: &naga::AtomicFunction,
        value: Handle<Expression>,
        result: Option<Handle<Expression>>,
    ) -> Result<(), ShaderError> {
        let place = self.place(pointer)?;
        let Root::Mem(space) = place.root else {
            return Err(internal("atomic outside storage or workgroup memory"));
        };
        let scalar = match self.pointee(pointer)? {
            TypeInner::Atomic(s) => s,
            _ => return Err(internal("atomic on a non-atomic")),
        };
        let (signed, float) = match (scalar.kind, scalar.width) {
            (naga::ScalarKind::Sint, 4) => (true, false),
            (naga::ScalarKind::Uint, 4) => (false, false),
            // naga's SHADER_FLOAT32_ATOMIC: add, sub and exchange, in
            // storage buffers only (its validator refuses the rest)
            (naga::ScalarKind::Float, 4) => (false, true),
            _ => {
                return Err(unsupported(super::types::scalar_feature(
                    scalar.kind,
                    scalar.width,
                )));
            }
        };
        use naga::AtomicFunction as A;
        let (f, compare) = match fun {
            A::Add if float => (AtomicFn::FAdd, None),
            A::Subtract if float => (AtomicFn::FSub, None),
            A::Exchange { compare: None } => (AtomicFn::Exchange, None),
            _ if float => {
                return Err(unsupported(format!(
                    "atomic{} on atomic<f32>",
                    super::types::variant(&format!("{fun:?}"))
                )));
            }
            A::Add => (AtomicFn::Add, None),
            A::Subtract => (AtomicFn::Sub, None),
            A::And => (AtomicFn::And, None),
            A::ExclusiveOr => (AtomicFn::Xor, None),
            A::InclusiveOr => (AtomicFn::Or, None),
            A::Min if signed => (AtomicFn::SMin, None),
            A::Min => (AtomicFn::UMin, None),
            A::Max if signed => (AtomicFn::SMax, None),
            A::Max => (AtomicFn::UMax, None),
            A::Exchange { compare: Some(c) } => (AtomicFn::CompareExchange, Some(self.scalar(*c)?)),
        };
        let v = self.scalar(value)?;
        let addr = self.mem_addr(&place);
        let d = self.b.new_v();
        let d_ok = if compare.is_some() {
            self.b.new_v()
        } else {
            EXEC
        };
        self.b.push(Op::MemAtomic(Box::new(AtomicOp {
            f,
            space,
            addr,
            offset: place.off,
            value: v,
            compare: compare.unwrap_or(EXEC),
            d,
            d_ok,
        })));
        if let Some(r) = result {
            let regs: Regs = if compare.is_some() {
                [d, d_ok].into_iter().collect()
            } else {
                [d].into_iter().collect()
            };
            let fi = self.frames.len() - 1;
            self.frames[fi].exprs[r.index()] = Some(LVal::Val(regs));
        }
        Ok(())
    }

    /// `workgroupUniformLoad(p)`: a load between two barriers, which the
    /// lockstep execution provides (module docs).
    pub(super) fn workgroup_uniform_load(
        &mut self,
        pointer: Handle<Expression>,
        result: Handle<Expression>,
    ) -> Result<(), ShaderError> {
        let place = self.place(pointer)?;
        let ty = self.pointee(pointer)?;
        self.b.push(Op::Barrier);
        let vals = self.load(&place, &ty)?;
        self.b.push(Op::Barrier);
        let fi = self.frames.len() - 1;
        self.frames[fi].exprs[result.index()] = Some(LVal::Val(vals));
        Ok(())
    }

    /// `workgroupBarrier` / `storageBarrier` / `textureBarrier`: no memory
    /// work (module docs), only the uniformity check of [`Op::Barrier`];
    /// refused outside compute shaders.
    pub(super) fn barrier_stmt(&mut self) -> Result<(), ShaderError> {
        self.need_compute("barriers")?;
        self.b.push(Op::Barrier);
        Ok(())
    }

    /// A storage-image access without its texel registers (`EXEC`
    /// placeholders the caller replaces).
    fn image_op(
        &mut self,
        img: &ImageBind,
        coordinate: Handle<Expression>,
        array_index: Option<Handle<Expression>>,
    ) -> Result<ImageOp, ShaderError> {
        let c = self.value(coordinate)?;
        let layer = match array_index {
            Some(a) => Some(self.scalar(a)?),
            None => None,
        };
        Ok(ImageOp {
            image: img.view,
            dim: image_dim(img.dim)?,
            arrayed: img.arrayed,
            kind: storage_kind(img.class)?,
            coord: std::array::from_fn(|i| c.get(i).copied().unwrap_or(EXEC)),
            layer,
            texel: [EXEC; 4],
        })
    }

    /// `textureStore`.
    pub(super) fn image_store(
        &mut self,
        image: Handle<Expression>,
        coordinate: Handle<Expression>,
        array_index: Option<Handle<Expression>>,
        value: Handle<Expression>,
    ) -> Result<(), ShaderError> {
        let LVal::Image(img) = self.expr(image)? else {
            return Err(internal("textureStore on a non-texture"));
        };
        let mut op = self.image_op(&img, coordinate, array_index)?;
        let v = self.value(value)?;
        let z = self.b.zero();
        op.texel = std::array::from_fn(|i| v.get(i).copied().unwrap_or(z));
        self.b.push(Op::ImageStore(Box::new(op)));
        Ok(())
    }

    /// `textureLoad` of a storage image.
    pub(super) fn image_load(
        &mut self,
        img: ImageBind,
        coordinate: Handle<Expression>,
        array_index: Option<Handle<Expression>>,
    ) -> Result<LVal, ShaderError> {
        let mut op = self.image_op(&img, coordinate, array_index)?;
        op.texel = std::array::from_fn(|_| self.b.new_v());
        let texel = op.texel;
        self.b.push(Op::ImageLoad(Box::new(op)));
        Ok(LVal::Val(texel.into_iter().collect()))
    }

    /// `textureDimensions` / `textureNumLayers` of a storage image.
    pub(super) fn image_query(
        &mut self,
        img: ImageBind,
        query: &naga::ImageQuery,
    ) -> Result<LVal, ShaderError> {
        let func = match query {
            naga::ImageQuery::Size { level: None } => TexQueryFn::Size,
            naga::ImageQuery::NumLayers => TexQueryFn::NumLayers,
            other => {
                return Err(unsupported(format!(
                    "texture{} of a storage texture",
                    super::types::variant(&format!("{other:?}"))
                )));
            }
        };
        let dim = image_dim(img.dim)?;
        let d = self.b.image_query(img.view, func, dim, img.arrayed);
        let n = crate::ir::image_query_count(func, dim);
        Ok(LVal::Val(d[..n].iter().copied().collect()))
    }
}

/// Which half of a word an f16 is: a static shift (0 or 16), or a shift
/// register per lane.
#[derive(Clone, Copy, Debug)]
pub enum HalfSel {
    Static(u32),
    Dyn(Reg),
}

/// Every scalar of `ty` in storage or workgroup memory (naga's member
/// offsets and strides; atomics are one word; booleans, which only
/// workgroup memory may hold, are stored as their mask; f16 are 2 bytes).
pub fn memory_layout(
    module: &naga::Module,
    ty: &TypeInner,
    base: u32,
    out: &mut Vec<Leaf>,
) -> Result<(), ShaderError> {
    buffer_layout(module, ty, base, true, out)
}

#[cfg(test)]
mod tests {
    use crate::ir::{MemSpace, Op};
    use crate::{Language, compile_compute};

    fn body(src: &str) -> (Vec<Op>, Vec<Op>) {
        let cs = compile_compute(Language::Wgsl, src, "main").unwrap_or_else(|e| panic!("{e}"));
        (cs.program().prologue.clone(), cs.program().body.clone())
    }

    #[test]
    fn memory_loads_stay_in_the_body_and_barriers_cost_nothing() {
        // a load at a uniform address must not be hoisted to the prologue
        // (or merged with the second load): the store between them changes
        // the word
        let (prologue, body) = body(
            "@group(3) @binding(2) var<storage, read_write> b: array<u32, 4>;
             @compute @workgroup_size(8) fn main() {
                 let x = b[1];
                 workgroupBarrier();
                 storageBarrier();
                 textureBarrier();
                 b[1] = x + 1u;
                 b[2] = b[1];
             }",
        );
        assert!(!prologue.iter().any(|op| matches!(op, Op::MemLoad { .. })));
        let loads = body
            .iter()
            .filter(|op| {
                matches!(
                    op,
                    Op::MemLoad {
                        space: MemSpace::Buffer(2),
                        offset: 4,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(loads, 2, "{body:?}");
        // loads, adds, stores and one check per barrier
        let barriers = body.iter().filter(|op| matches!(op, Op::Barrier)).count();
        assert_eq!(barriers, 3);
        assert!(body.len() <= 9, "{body:?}");
    }

    #[test]
    fn workgroup_variables_get_aligned_offsets() {
        let cs = compile_compute(
            Language::Wgsl,
            "var<workgroup> a: u32;
             var<workgroup> b: array<vec4<f32>, 2>;
             @group(3) @binding(0) var<storage, read_write> o: array<f32>;
             @compute @workgroup_size(1) fn main() { a = 1u; b[1].y = 2.0; o[0] = b[1].y + f32(a); }",
            "main",
        )
        .unwrap();
        // a at 0 (4 bytes), b at 16 (32 bytes)
        assert_eq!(cs.info().shared_bytes, 48);
        assert_eq!(cs.info().buffers_used, 1);
        let stores: Vec<u32> = cs
            .program()
            .body
            .iter()
            .filter_map(|op| match op {
                Op::MemStore {
                    space: MemSpace::Workgroup,
                    offset,
                    ..
                } => Some(*offset),
                _ => None,
            })
            .collect();
        assert_eq!(stores, vec![0, 16 + 16 + 4]);
    }

    #[test]
    fn runtime_array_indices_are_checked_against_the_bound_size() {
        let (prologue, body) = body(
            "@group(3) @binding(0) var<storage, read_write> b: array<u32>;
             @compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) { b[i] = 1u; }",
        );
        // the element count comes from the binding, once per call
        assert!(prologue.iter().any(|op| matches!(
            op,
            Op::BufferLength {
                space: MemSpace::Buffer(0),
                ..
            }
        )));
        // the address is selected against u32::MAX for bad lanes
        assert!(body.iter().any(|op| matches!(
            op,
            Op::Tri {
                f: crate::ir::TriOp::Select,
                ..
            }
        )));
    }
}

#[cfg(test)]
mod uniformity {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    use ferropipe_components::shader::ShaderResources;

    use crate::memory::ComputeCall;
    use crate::{Language, compile_compute};

    /// Runs one workgroup of `src` and says whether a barrier diverged.
    fn diverges(src: &str) -> bool {
        let cs = compile_compute(Language::Wgsl, src, "main").unwrap();
        let shared: Vec<AtomicU32> = (0..cs.shared_words()).map(|_| AtomicU32::new(0)).collect();
        let diverged = AtomicBool::new(false);
        let call = ComputeCall {
            buffers: &[],
            globals: &[],
            images: &[],
            shared: &shared,
            workgroup_id: [0; 3],
            num_workgroups: [1; 3],
            workgroup_size: cs.info().workgroup_size,
            active: cs.info().workgroup_size,
            diverged: &diverged,
        };
        cs.run_workgroup(&ShaderResources::default(), &call)
            .unwrap();
        diverged.load(Ordering::Relaxed)
    }

    #[test]
    fn barriers_in_divergent_control_flow_are_detected() {
        // naga 30 accepts these; WGSL's uniformity rule forbids them
        assert!(diverges(
            "@compute @workgroup_size(12) fn main(@builtin(local_invocation_index) i: u32) {
                 if (i < 4u) { workgroupBarrier(); }
             }"
        ));
        assert!(diverges(
            "@compute @workgroup_size(12) fn main(@builtin(local_invocation_index) i: u32) {
                 if (i == 5u) { return; }
                 storageBarrier();
             }"
        ));
        // uniform ones are fine: loops with a uniform trip count (the
        // last, empty pass included), branches all or none take, and the
        // padding lanes of a 12-invocation workgroup
        assert!(!diverges(
            "var<workgroup> s: array<u32, 12>;
             @compute @workgroup_size(12) fn main(@builtin(local_invocation_index) i: u32,
                                                  @builtin(workgroup_id) w: vec3<u32>) {
                 for (var k = 8u; k > 0u; k = k >> 1u) {
                     if (i < k) { s[i] = s[i] + s[i + k]; }
                     workgroupBarrier();
                 }
                 if (w.x == 0u) { workgroupBarrier(); }
                 if (w.x == 1u) { workgroupBarrier(); }
                 let x = workgroupUniformLoad(&s[0]);
             }"
        ));
    }
}
