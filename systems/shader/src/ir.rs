//! The lane program: ferropipe's own compact shader representation.
//!
//! This is **the boundary between the front end and the back end**.  The
//! front end (`front.rs`, `lower/`) turns naga IR into a [`LaneProgram`]
//! once, at CSO creation; the back end (`exec/`, today an interpreter)
//! runs it.  A JIT (cranelift) would consume exactly this type and nothing
//! of naga, so it can replace the interpreter without touching the front end.
//!
//! # Model
//! * Every value is a **scalar register**: vectors, matrices, structs and
//!   arrays are flattened by the lowering.  A register holds one 32-bit
//!   value per lane; integers and booleans are bit-cast into the same
//!   `f32x8` registers (booleans are all-ones / all-zeros masks).
//! * Two register files:
//!   - **varying** registers (`Reg::v`): one [`Lanes`] per group of 8 lanes,
//!     i.e. `groups` SIMD registers per register;
//!   - **uniform** registers (`Reg::u`): one (already broadcast) [`Lanes`],
//!     the same for every lane of the call.  Uniform registers
//!     `0..consts.len()` are compile-time constants; the others are computed
//!     by the [`LaneProgram::prologue`] once per `run` call (constant-buffer
//!     loads with uniform addresses and the arithmetic on them).
//! * The body is a flat list of [`Op`]s with **structured control flow
//!   lowered to jumps and an execution mask** (`EXEC`, varying register 0):
//!   divergent `if`/`switch`/loops narrow `EXEC` with [`Op::SetExec`];
//!   writes that must respect divergence use [`Op::MovMasked`] /
//!   masked [`Op::Insert`]; everything else computes all lanes (values in
//!   inactive lanes are never observed).  Jumps only skip code when no lane
//!   of the whole chunk is active, so a back end may treat them as uniform
//!   branches.
//! * Every op processes all `groups` registers of its operands before the
//!   next op is decoded, which amortises dispatch over `groups * 8` lanes.
//! * Ops are *group local*: the result for group `g` depends only on group
//!   `g` of the operands (derivatives work inside one 4x2 group), and every
//!   op reads all its operands for a group before writing its results, so
//!   the register allocator may give a result the register of an operand
//!   that dies at the op.
//! * Memory ops of compute programs ([`Op::MemLoad`], [`Op::MemStore`],
//!   [`Op::MemAtomic`], the image ops) are the exception to group
//!   locality: a store by group 3 is seen by a load of group 0 in any
//!   later op.  Loads read every lane's operands before writing; stores and
//!   atomics take effect lane by lane, group 0 lane 0 first.

use std::fmt;

use ferropipe_components::shader::{Lanes, ShaderInfo};

/// A register operand: a varying register, or a uniform one (bit 31).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u32);

impl Reg {
    const UNIFORM: u32 = 1 << 31;

    /// Varying register `i`.
    pub const fn v(i: u32) -> Reg {
        Reg(i)
    }
    /// Uniform register `i`.
    pub const fn u(i: u32) -> Reg {
        Reg(i | Self::UNIFORM)
    }
    /// Whether this is a uniform register.
    #[inline(always)]
    pub const fn is_uniform(self) -> bool {
        self.0 & Self::UNIFORM != 0
    }
    /// Index inside its register file.
    #[inline(always)]
    pub const fn index(self) -> usize {
        (self.0 & !Self::UNIFORM) as usize
    }
}

impl fmt::Debug for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_uniform() {
            write!(f, "u{}", self.index())
        } else {
            write!(f, "v{}", self.index())
        }
    }
}

/// The execution mask register (varying register 0).
pub const EXEC: Reg = Reg::v(0);

/// `(base, mask)` of a register operand in a register file with `nu`
/// uniform registers and `groups` groups per varying register: the value for
/// group `g` is `file[base + (g & mask)]`.  The register file's layout
/// (`exec.rs`, "Register file"): the interpreter and its memory and
/// texture ops address registers through it, so it stands with [`Reg`].
#[inline(always)]
pub fn loc(r: Reg, nu: usize, groups: usize) -> (usize, usize) {
    if r.is_uniform() {
        (r.index(), 0)
    } else {
        (nu + r.index() * groups, usize::MAX)
    }
}

/// Declares a fieldless op enum and its `ALL` list from one list of
/// variants, so code that must cover every op (the JIT's per-op tests)
/// cannot miss one added later.
macro_rules! listed_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
        }
    };
}

listed_enum! {
/// One-operand lane operations.
pub enum UnOp {
    // f32
    FNeg,
    FAbs,
    FFloor,
    FCeil,
    FTrunc,
    /// Round to nearest, ties to even (WGSL `round`).
    FRound,
    /// `x - floor(x)`.
    FFract,
    FSqrt,
    FInvSqrt,
    FSin,
    FCos,
    FTan,
    FAsin,
    FAcos,
    FAtan,
    FSinh,
    FCosh,
    FTanh,
    FAsinh,
    FAcosh,
    FAtanh,
    FExp,
    FExp2,
    FLog,
    FLog2,
    /// -1, 0 or 1 (0 for ±0 and NaN).
    FSign,
    FSaturate,
    FIsNan,
    FIsInf,
    /// Mantissa of `frexp` (in [0.5, 1), sign of x).
    FFrexpMant,
    /// Exponent of `frexp` (i32).
    FFrexpExp,
    /// `quantizeToF16`.
    FQuantizeF16,
    // conversions
    /// f32 -> i32, truncating, saturating, NaN -> 0 (WGSL).
    F2S,
    /// f32 -> u32, truncating, saturating, NaN -> 0 (WGSL).
    F2U,
    S2F,
    U2F,
    // integers
    INeg,
    SAbs,
    SSign,
    /// Bitwise not (also logical not of masks).
    Not,
    CountOneBits,
    ReverseBits,
    SFirstLeadingBit,
    UFirstLeadingBit,
    FirstTrailingBit,
    CountLeadingZeros,
    CountTrailingZeros,
}
}

listed_enum! {
/// Two-operand lane operations.
pub enum BinOp {
    FAdd,
    FSub,
    FMul,
    FDiv,
    /// WGSL `%` on floats: `a - b * trunc(a / b)`.
    FRem,
    FMin,
    FMax,
    /// `exp2(b * log2(a))`.
    FPow,
    FAtan2,
    /// `step(edge=a, x=b)`: 1 if b >= a.
    FStep,
    /// `ldexp(f32 a, i32 b)`.
    FLdexp,
    FEq,
    FNe,
    FLt,
    FLe,
    FGt,
    FGe,
    IAdd,
    ISub,
    IMul,
    SDiv,
    SRem,
    UDiv,
    URem,
    IEq,
    INe,
    SLt,
    SLe,
    SGt,
    SGe,
    ULt,
    ULe,
    UGt,
    UGe,
    And,
    Or,
    Xor,
    /// `a & !b`.
    AndNot,
    /// Shift amounts are taken modulo 32 (WGSL).
    Shl,
    ShrS,
    ShrU,
    SMin,
    SMax,
    UMin,
    UMax,
}
}

listed_enum! {
/// Three-operand lane operations.
pub enum TriOp {
    /// `a * b + c`.
    FFma,
    /// `a + (b - a) * c`.
    FMix,
    /// `clamp(a, b, c)` = `min(max(a, b), c)`.
    FClamp,
    SClamp,
    UClamp,
    /// `smoothstep(a, b, c)`.
    FSmoothStep,
    /// `a ? b : c` (a is a mask).
    Select,
    /// `extractBits(i32 a, u32 offset=b, u32 count=c)`.
    SExtractBits,
    /// `extractBits(u32 a, offset=b, count=c)`.
    UExtractBits,
}
}

listed_enum! {
/// Packing functions (WGSL `pack4x8snorm` ...), 1 to 4 operands -> u32.
pub enum PackFn {
    Pack4x8Snorm,
    Pack4x8Unorm,
    Pack2x16Snorm,
    Pack2x16Unorm,
    Pack2x16Float,
    Pack4xI8,
    Pack4xU8,
    Pack4xI8Clamp,
    Pack4xU8Clamp,
}
}

listed_enum! {
/// Unpacking functions: u32 -> 2 or 4 values.
pub enum UnpackFn {
    Unpack4x8Snorm,
    Unpack4x8Unorm,
    Unpack2x16Snorm,
    Unpack2x16Unorm,
    Unpack2x16Float,
    Unpack4xI8,
    Unpack4xU8,
}
}

impl PackFn {
    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            PackFn::Pack2x16Snorm | PackFn::Pack2x16Unorm | PackFn::Pack2x16Float => 2,
            _ => 4,
        }
    }
}

impl UnpackFn {
    /// Number of results.
    pub fn arity(self) -> usize {
        match self {
            UnpackFn::Unpack2x16Snorm | UnpackFn::Unpack2x16Unorm | UnpackFn::Unpack2x16Float => 2,
            _ => 4,
        }
    }
}

/// Where an [`Op::LoadInput`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputSrc {
    /// Component `slot * 4 + component` of the stage's input slots.
    Slot(u32),
    /// Fragment: window position component (x, y, z, 1/w).
    FragCoord(u8),
    /// Vertex: `vertex_index` (u32 bits).
    VertexId,
    /// Vertex: `instance_index` (u32 bits).
    InstanceId,
    /// Compute: a workgroup builtin (u32 bits), see [`ComputeValue`].
    Compute(ComputeValue),
}

/// The compute builtins ([`InputSrc::Compute`]).  Component `c` is 0..3
/// for x, y, z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComputeValue {
    /// `local_invocation_id` component.
    LocalId(u8),
    /// `local_invocation_index`.
    LocalIndex,
    /// `global_invocation_id` component.
    GlobalId(u8),
    /// `workgroup_id` component (uniform over a call).
    WorkgroupId(u8),
    /// `num_workgroups` component (uniform over a call).
    NumWorkgroups(u8),
}

/// The memory a [`Op::MemLoad`] / [`Op::MemStore`] / [`Op::MemAtomic`]
/// addresses: byte-addressed 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    /// Shader buffer slot `i` (`set_shader_buffers`, WGSL `var<storage>`
    /// in `@group(3)`): Gallium's GLOBAL memory as graphics APIs bind it.
    Buffer(u32),
    /// Global binding slot `i` (`set_global_binding`, WGSL `var<storage>`
    /// in `@group(6)`): Gallium's GLOBAL memory as pointer-based kernels
    /// bind it (a `PIPE_BIND_GLOBAL` buffer, whole).
    Global(u32),
    /// The workgroup's shared memory (WGSL `var<workgroup>`): LOCAL.
    Workgroup,
}

/// Read-modify-write functions of [`Op::MemAtomic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicFn {
    Add,
    Sub,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
    Exchange,
    /// `atomicCompareExchangeWeak`: stores `value` where the old value
    /// equals `compare`; also writes the "exchanged" mask.
    CompareExchange,
    /// `atomicAdd` on `atomic<f32>` (naga's `SHADER_FLOAT32_ATOMIC`,
    /// storage buffers only): the word's bits as an f32, added with
    /// round-to-nearest-even.
    FAdd,
    /// `atomicSub` on `atomic<f32>`.
    FSub,
}

/// An atomic read-modify-write of one word per active lane, executed lane
/// by lane in a fixed order (group 0 lane 0 first), so a call's results
/// never depend on timing.
#[derive(Clone, Debug, PartialEq)]
pub struct AtomicOp {
    pub f: AtomicFn,
    pub space: MemSpace,
    /// Byte address per lane (`u32::MAX`: out of range).
    pub addr: Reg,
    pub offset: u32,
    pub value: Reg,
    /// Compared value (`CompareExchange` only; `EXEC` otherwise, unread).
    pub compare: Reg,
    /// The old value.
    pub d: Reg,
    /// The exchanged mask (`CompareExchange` only; `EXEC` otherwise,
    /// unwritten).
    pub d_ok: Reg,
}

/// A storage-image texel access ([`Op::ImageLoad`] / [`Op::ImageStore`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ImageOp {
    /// Shader image slot (`set_shader_images`).
    pub image: u32,
    pub dim: TexDim,
    pub arrayed: bool,
    /// How texel values are typed (float, sint or uint; never depth).
    pub kind: TexKind,
    /// Integer texel coordinates (i32 bits); unused ones are `EXEC`.
    pub coord: [Reg; 3],
    pub layer: Option<Reg>,
    /// Loaded values (`ImageLoad`) or stored values (`ImageStore`).
    pub texel: [Reg; 4],
}

impl ImageOp {
    /// Coordinates used: 1, 2 or 3.
    pub fn coord_count(&self) -> usize {
        match self.dim {
            TexDim::D1 => 1,
            TexDim::D2 => 2,
            TexDim::D3 | TexDim::Cube => 3,
        }
    }
}

/// Screen-space derivative direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
}

/// What kind of texture access an [`Op::Texture`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexFn {
    /// Filtered sample; LOD from the quad's derivatives (`textureSample`).
    SampleAuto,
    /// Implicit LOD plus `lod` bias (`textureSampleBias`).
    SampleBias,
    /// Explicit LOD (`textureSampleLevel`, and level 0 for `...LevelZero`).
    SampleLevel,
    /// Explicit gradients (`textureSampleGrad`).
    SampleGrad,
    /// `textureGather` of component `gather`.
    Gather,
    /// Unfiltered texel fetch with integer coordinates (`textureLoad`).
    Load,
}

/// The shape of a texture binding as the shader declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexDim {
    D1,
    D2,
    D3,
    Cube,
}

/// Scalar kind of texture results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexKind {
    Float,
    Sint,
    Uint,
    /// Depth texture (`texture_depth_*`): one float result.
    Depth,
}

/// A texture access; boxed inside [`Op::Texture`] to keep ops small.
#[derive(Clone, Debug, PartialEq)]
pub struct TexOp {
    pub func: TexFn,
    pub dim: TexDim,
    pub arrayed: bool,
    pub kind: TexKind,
    /// Sampler view slot (`@group(1) @binding(view)`).
    pub view: u32,
    /// Sampler state slot (`@group(2) @binding(sampler)`); unused for loads.
    pub sampler: u32,
    /// Results: 4 components (1 used for depth without gather).
    pub dst: [Reg; 4],
    /// Coordinates (`dim` components; cube: 3), f32 or i32 for loads.
    pub coord: [Reg; 3],
    /// Array layer (f32 for samples, i32 for loads).
    pub layer: Option<Reg>,
    /// LOD (SampleLevel, f32; Load: i32 level), or bias (SampleBias).
    pub lod: Option<Reg>,
    /// Gradients for SampleGrad: d/dx, d/dy (per coordinate).
    pub grad: Option<[[Reg; 3]; 2]>,
    /// Depth reference for comparison sampling.
    pub depth_ref: Option<Reg>,
    /// Constant texel offset.
    pub offset: [i32; 3],
    /// Component gathered (Gather).
    pub gather: u8,
    /// Multisample index (Load of multisampled textures).
    pub sample: Option<Reg>,
    /// Clamp coordinates to half a texel inside the edge (external textures).
    pub clamp_to_edge: bool,
    /// Bit `k`: the program reads `dst[k]`; the executors write only these
    /// (and a sampler converts only those channels).  The lowering sets
    /// every result ([`TexOp::ALL_RESULTS`]); [`crate::opt`] clears the
    /// ones nothing reads.  postprocess's 16 samples read 3 or 1 of their
    /// 4 results: a dead result was a conversion and a store per group.
    pub live: u8,
}

/// Texture queries (`textureDimensions` ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexQueryFn {
    /// Size of `level` (or level 0): up to 3 results.
    Size,
    NumLevels,
    NumLayers,
    NumSamples,
}

/// A texture query; results are u32.
#[derive(Clone, Debug, PartialEq)]
pub struct TexQuery {
    pub func: TexQueryFn,
    pub dim: TexDim,
    pub arrayed: bool,
    pub view: u32,
    pub level: Option<Reg>,
    pub dst: [Reg; 3],
}

/// One lane-program instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// 32 bits of `space` at byte `addr + offset` per lane (0 out of
    /// range or misaligned: robust buffer access).
    MemLoad {
        d: Reg,
        space: MemSpace,
        addr: Reg,
        offset: u32,
    },
    /// Stores `a` at byte `addr + offset` for the lanes in `EXEC`, lane by
    /// lane in a fixed order; out-of-range stores are dropped.
    MemStore {
        space: MemSpace,
        addr: Reg,
        offset: u32,
        a: Reg,
    },
    MemAtomic(Box<AtomicOp>),
    /// Bytes of the buffer `space` names as bound (0 when unbound;
    /// uniform; never `Workgroup`).
    BufferLength {
        d: Reg,
        space: MemSpace,
    },
    /// `textureLoad` of a storage image (0 out of range).
    ImageLoad(Box<ImageOp>),
    /// `textureStore` for the lanes in `EXEC` (dropped out of range).
    ImageStore(Box<ImageOp>),
    /// `workgroupBarrier` / `storageBarrier` / `textureBarrier`: no memory
    /// work (a workgroup runs in lockstep), only WGSL's uniformity rule,
    /// which naga 30 does not check: `EXEC` must hold every live
    /// invocation of the workgroup or none; otherwise the call reports a
    /// divergent barrier ([`crate::memory::ComputeCall::diverged`]).
    Barrier,
    /// `textureDimensions` / `textureNumLayers` of a storage image
    /// (uniform; `func` is `Size` or `NumLayers`).
    ImageQuery {
        image: u32,
        func: TexQueryFn,
        dim: TexDim,
        arrayed: bool,
        dst: [Reg; 3],
    },
    /// `d = a`.
    Mov {
        d: Reg,
        a: Reg,
    },
    /// `d = EXEC ? a : d` per lane.
    MovMasked {
        d: Reg,
        a: Reg,
    },
    Un {
        f: UnOp,
        d: Reg,
        a: Reg,
    },
    Bin {
        f: BinOp,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Tri {
        f: TriOp,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// `insertBits(e, newbits, offset, count)`.
    InsertBits {
        d: Reg,
        e: Reg,
        n: Reg,
        off: Reg,
        cnt: Reg,
    },
    Pack {
        f: PackFn,
        d: Reg,
        a: [Reg; 4],
    },
    Unpack {
        f: UnpackFn,
        d: [Reg; 4],
        a: Reg,
    },
    /// Screen-space derivative inside each 2x2 quad.
    Deriv {
        axis: Axis,
        fine: bool,
        d: Reg,
        a: Reg,
    },
    /// `d = srcs[clamp(index)]` per lane (index: i32 or u32 bits, clamped
    /// to the list).
    Extract {
        d: Reg,
        index: Reg,
        srcs: Box<[Reg]>,
    },
    /// `dsts[k] = (index == k [&& EXEC]) ? value : srcs[k]` for every k;
    /// `index` clamped to the list.  `dsts` and `srcs` may be the same.
    Insert {
        dsts: Box<[Reg]>,
        srcs: Box<[Reg]>,
        index: Reg,
        value: Reg,
        masked: bool,
    },
    LoadInput {
        d: Reg,
        src: InputSrc,
    },
    /// Output component `slot * 4 + component` = `a` (all lanes).
    StoreOutput {
        slot: u32,
        a: Reg,
    },
    /// 32 bits of constant buffer `cb` at byte `offset` (0 past the end).
    LoadConst {
        d: Reg,
        cb: u32,
        offset: u32,
    },
    /// 32 bits of constant buffer `cb` at byte `offset + index` per lane
    /// (index: u32 byte offset; 0 past the end).
    LoadConstDyn {
        d: Reg,
        cb: u32,
        offset: u32,
        index: Reg,
    },
    Texture(Box<TexOp>),
    TextureQuery(Box<TexQuery>),
    /// `EXEC = a` (a mask).
    SetExec {
        a: Reg,
    },
    /// Continue at op `target`.
    Jump {
        target: u32,
    },
    /// Jump if no lane of the chunk is in `EXEC`.
    JumpIfNone {
        target: u32,
    },
    /// Jump if some lane of the chunk is in `EXEC` (loop back edges).
    JumpIfAny {
        target: u32,
    },
    /// `discard`: live lanes in `EXEC` become dead (helpers).  With
    /// `exit`, they also leave `EXEC` (allowed when nothing reads them for
    /// derivatives).
    Kill {
        exit: bool,
    },
}

impl Op {
    /// Calls `f` with every register the op reads.
    pub fn for_each_use(&self, mut f: impl FnMut(Reg)) {
        match self {
            Op::MemLoad { addr, .. } => f(*addr),
            Op::MemStore { addr, a, .. } => {
                f(*addr);
                f(*a);
                f(EXEC)
            }
            Op::MemAtomic(m) => {
                f(m.addr);
                f(m.value);
                if m.f == AtomicFn::CompareExchange {
                    f(m.compare)
                }
                f(EXEC)
            }
            Op::BufferLength { .. } | Op::ImageQuery { .. } => {}
            Op::Barrier => f(EXEC),
            Op::ImageLoad(i) | Op::ImageStore(i) => {
                for r in &i.coord[..i.coord_count()] {
                    f(*r)
                }
                if let Some(l) = i.layer {
                    f(l)
                }
                if matches!(self, Op::ImageStore(_)) {
                    for r in &i.texel {
                        f(*r)
                    }
                    f(EXEC)
                }
            }
            Op::Mov { a, .. } | Op::Un { a, .. } | Op::Deriv { a, .. } => f(*a),
            Op::MovMasked { d, a } => {
                f(*a);
                f(*d);
                f(EXEC);
            }
            Op::Bin { a, b, .. } => {
                f(*a);
                f(*b)
            }
            Op::Tri { a, b, c, .. } => {
                f(*a);
                f(*b);
                f(*c)
            }
            Op::InsertBits { e, n, off, cnt, .. } => {
                f(*e);
                f(*n);
                f(*off);
                f(*cnt)
            }
            Op::Pack { f: pf, a, .. } => {
                for r in &a[..pf.arity()] {
                    f(*r)
                }
            }
            Op::Unpack { a, .. } => f(*a),
            Op::Extract { index, srcs, .. } => {
                f(*index);
                for r in srcs.iter() {
                    f(*r)
                }
            }
            Op::Insert {
                srcs,
                index,
                value,
                masked,
                ..
            } => {
                f(*index);
                f(*value);
                for r in srcs.iter() {
                    f(*r)
                }
                if *masked {
                    f(EXEC)
                }
            }
            Op::LoadInput { .. } | Op::LoadConst { .. } => {}
            Op::StoreOutput { a, .. } => f(*a),
            Op::LoadConstDyn { index, .. } => f(*index),
            Op::Texture(t) => {
                let n = t.coord_count();
                for r in &t.coord[..n] {
                    f(*r)
                }
                for r in [t.layer, t.lod, t.depth_ref, t.sample]
                    .into_iter()
                    .flatten()
                {
                    f(r)
                }
                if let Some(g) = &t.grad {
                    for axis in g {
                        for r in &axis[..n] {
                            f(*r)
                        }
                    }
                }
            }
            Op::TextureQuery(q) => {
                if let Some(l) = q.level {
                    f(l)
                }
            }
            Op::SetExec { a } => f(*a),
            Op::Jump { .. } => {}
            Op::JumpIfNone { .. } | Op::JumpIfAny { .. } | Op::Kill { .. } => f(EXEC),
        }
    }

    /// Calls `f` with every register the op writes.
    pub fn for_each_def(&self, mut f: impl FnMut(Reg)) {
        match self {
            Op::MemLoad { d, .. } | Op::BufferLength { d, .. } => f(*d),
            Op::MemAtomic(m) => {
                f(m.d);
                if m.f == AtomicFn::CompareExchange {
                    f(m.d_ok)
                }
            }
            Op::ImageLoad(i) => {
                for r in &i.texel {
                    f(*r)
                }
            }
            Op::ImageQuery { func, dim, dst, .. } => {
                for r in &dst[..image_query_count(*func, *dim)] {
                    f(*r)
                }
            }
            Op::MemStore { .. } | Op::ImageStore(_) | Op::Barrier => {}
            Op::Mov { d, .. }
            | Op::MovMasked { d, .. }
            | Op::Un { d, .. }
            | Op::Bin { d, .. }
            | Op::Tri { d, .. }
            | Op::InsertBits { d, .. }
            | Op::Pack { d, .. }
            | Op::Deriv { d, .. }
            | Op::Extract { d, .. }
            | Op::LoadInput { d, .. }
            | Op::LoadConst { d, .. }
            | Op::LoadConstDyn { d, .. } => f(*d),
            Op::Unpack { f: uf, d, .. } => {
                for r in &d[..uf.arity()] {
                    f(*r)
                }
            }
            Op::Insert { dsts, .. } => {
                for r in dsts.iter() {
                    f(*r)
                }
            }
            Op::Texture(t) => {
                for r in &t.dst[..t.result_count()] {
                    f(*r)
                }
            }
            Op::TextureQuery(q) => {
                for r in &q.dst[..q.result_count()] {
                    f(*r)
                }
            }
            Op::SetExec { .. } => f(EXEC),
            Op::StoreOutput { .. }
            | Op::Jump { .. }
            | Op::JumpIfNone { .. }
            | Op::JumpIfAny { .. }
            | Op::Kill { .. } => {}
        }
    }

    /// Rewrites every register operand (uses and defs) through `f`.
    pub fn map_regs(&mut self, mut f: impl FnMut(Reg) -> Reg) {
        match self {
            Op::MemLoad { d, addr, .. } => {
                *d = f(*d);
                *addr = f(*addr);
            }
            Op::MemStore { addr, a, .. } => {
                *addr = f(*addr);
                *a = f(*a);
            }
            Op::MemAtomic(m) => {
                for r in [
                    &mut m.addr,
                    &mut m.value,
                    &mut m.compare,
                    &mut m.d,
                    &mut m.d_ok,
                ] {
                    *r = f(*r);
                }
            }
            Op::BufferLength { d, .. } => *d = f(*d),
            Op::ImageLoad(i) | Op::ImageStore(i) => {
                for r in i.coord.iter_mut().chain(i.texel.iter_mut()) {
                    *r = f(*r);
                }
                if let Some(l) = &mut i.layer {
                    *l = f(*l);
                }
            }
            Op::ImageQuery { dst, .. } => {
                for r in dst.iter_mut() {
                    *r = f(*r);
                }
            }
            Op::Barrier => {}
            Op::Mov { d, a }
            | Op::MovMasked { d, a }
            | Op::Un { d, a, .. }
            | Op::Deriv { d, a, .. } => {
                *d = f(*d);
                *a = f(*a);
            }
            Op::Bin { d, a, b, .. } => {
                *d = f(*d);
                *a = f(*a);
                *b = f(*b);
            }
            Op::Tri { d, a, b, c, .. } => {
                *d = f(*d);
                *a = f(*a);
                *b = f(*b);
                *c = f(*c);
            }
            Op::InsertBits { d, e, n, off, cnt } => {
                for r in [d, e, n, off, cnt] {
                    *r = f(*r);
                }
            }
            Op::Pack { d, a, .. } => {
                *d = f(*d);
                for r in a.iter_mut() {
                    *r = f(*r);
                }
            }
            Op::Unpack { d, a, .. } => {
                for r in d.iter_mut() {
                    *r = f(*r);
                }
                *a = f(*a);
            }
            Op::Extract { d, index, srcs } => {
                *d = f(*d);
                *index = f(*index);
                for r in srcs.iter_mut() {
                    *r = f(*r);
                }
            }
            Op::Insert {
                dsts,
                srcs,
                index,
                value,
                ..
            } => {
                for r in dsts.iter_mut().chain(srcs.iter_mut()) {
                    *r = f(*r);
                }
                *index = f(*index);
                *value = f(*value);
            }
            Op::LoadInput { d, .. } | Op::LoadConst { d, .. } => *d = f(*d),
            Op::LoadConstDyn { d, index, .. } => {
                *d = f(*d);
                *index = f(*index);
            }
            Op::StoreOutput { a, .. } | Op::SetExec { a } => *a = f(*a),
            Op::Texture(t) => {
                for r in t.dst.iter_mut().chain(t.coord.iter_mut()) {
                    *r = f(*r);
                }
                for r in [&mut t.layer, &mut t.lod, &mut t.depth_ref, &mut t.sample]
                    .into_iter()
                    .flatten()
                {
                    *r = f(*r);
                }
                if let Some(g) = &mut t.grad {
                    for r in g.iter_mut().flatten() {
                        *r = f(*r);
                    }
                }
            }
            Op::TextureQuery(q) => {
                for r in q.dst.iter_mut() {
                    *r = f(*r);
                }
                if let Some(l) = &mut q.level {
                    *l = f(*l);
                }
            }
            Op::Jump { .. } | Op::JumpIfNone { .. } | Op::JumpIfAny { .. } | Op::Kill { .. } => {}
        }
    }

    /// Whether the op has an effect besides writing its registers (so dead
    /// code elimination must keep it).
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            Op::StoreOutput { .. }
                | Op::MemStore { .. }
                | Op::MemAtomic(_)
                | Op::ImageStore(_)
                | Op::Barrier
                | Op::SetExec { .. }
                | Op::Jump { .. }
                | Op::JumpIfNone { .. }
                | Op::JumpIfAny { .. }
                | Op::Kill { .. }
        )
    }

    /// Whether the op writes its destination(s) only partially (reads the
    /// old value of a destination): masked moves and masked inserts.
    pub fn is_partial_write(&self) -> bool {
        matches!(self, Op::MovMasked { .. } | Op::Insert { masked: true, .. })
    }

    /// Jump target, if this is a jump.
    pub fn target(&self) -> Option<u32> {
        match self {
            Op::Jump { target } | Op::JumpIfNone { target } | Op::JumpIfAny { target } => {
                Some(*target)
            }
            _ => None,
        }
    }

    /// Mutable jump target, if this is a jump.
    pub fn target_mut(&mut self) -> Option<&mut u32> {
        match self {
            Op::Jump { target } | Op::JumpIfNone { target } | Op::JumpIfAny { target } => {
                Some(target)
            }
            _ => None,
        }
    }
}

impl TexOp {
    /// A plain 2D `SampleAuto` of view and sampler `view` at coordinate
    /// registers `s`, `t`, all four results live in `v(first_dst)` on
    /// (the tests' lookup).
    #[cfg(test)]
    pub(crate) fn sample_2d(view: u32, s: Reg, t: Reg, first_dst: u32) -> TexOp {
        TexOp {
            func: TexFn::SampleAuto,
            dim: TexDim::D2,
            arrayed: false,
            kind: TexKind::Float,
            view,
            sampler: view,
            dst: std::array::from_fn(|k| Reg::v(first_dst + k as u32)),
            coord: [s, t, Reg::u(0)],
            layer: None,
            lod: None,
            grad: None,
            depth_ref: None,
            offset: [0; 3],
            gather: 0,
            sample: None,
            clamp_to_edge: false,
            live: 0xf,
        }
    }

    /// Coordinates used: 1, 2 or 3.
    pub fn coord_count(&self) -> usize {
        match self.dim {
            TexDim::D1 => 1,
            TexDim::D2 => 2,
            TexDim::D3 | TexDim::Cube => 3,
        }
    }

    /// Results written: 1 for non-gather depth accesses, else 4.
    /// [`TexOp::live`] before optimisation: every result.
    pub const ALL_RESULTS: u8 = 0b1111;

    /// Whether the program reads result `k` ([`TexOp::live`]).
    #[inline]
    pub fn is_live(&self, k: usize) -> bool {
        self.live & (1 << k) != 0
    }

    pub fn result_count(&self) -> usize {
        if self.kind == TexKind::Depth && self.func != TexFn::Gather {
            1
        } else {
            4
        }
    }
}

/// Results of a storage-image query: the size's components, or 1.
pub fn image_query_count(func: TexQueryFn, dim: TexDim) -> usize {
    match func {
        TexQueryFn::Size => match dim {
            TexDim::D1 => 1,
            TexDim::D2 | TexDim::Cube => 2,
            TexDim::D3 => 3,
        },
        _ => 1,
    }
}

impl TexQuery {
    /// Results written.
    pub fn result_count(&self) -> usize {
        match self.func {
            TexQueryFn::Size => match self.dim {
                TexDim::D1 => 1,
                TexDim::D2 | TexDim::Cube => 2,
                TexDim::D3 => 3,
            },
            _ => 1,
        }
    }
}

/// What an output component is, as far as the compiler can tell.
pub use ferropipe_components::shader::OutputValue;

/// A compiled shader: the unit a back end executes.
#[derive(Clone, Debug)]
pub struct LaneProgram {
    /// Unique per compiled program (scratch caches key on it).
    pub id: u64,
    /// The interface (slots, semantics, resource use, pass-through info).
    pub info: ShaderInfo,
    /// Initial values of uniform registers `0..consts.len()`.
    pub consts: Vec<Lanes>,
    /// Uniform registers in all (constants first).
    pub num_uniform: u32,
    /// Varying registers in all (register 0 is `EXEC`).
    pub num_varying: u32,
    /// Ops over uniform registers only, run once per call before the body
    /// (no jumps).
    pub prologue: Vec<Op>,
    /// The per-lane program.
    pub body: Vec<Op>,
    /// Whether a `discard` may remove lanes from `EXEC` (no derivative
    /// needs them) and lanes that are not live may start outside `EXEC`.
    pub dead_lanes_idle: bool,
    /// Compute shaders: the workgroup shape and memory (`None` for the
    /// graphics stages).
    pub compute: Option<ComputeInfo>,
}

/// What a compute program needs from its launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComputeInfo {
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// Bytes of `var<workgroup>` memory (each variable at its naga
    /// alignment, zeroed per workgroup as WGSL requires).
    pub shared_bytes: u32,
    /// Shader buffer slots the program reads or writes (bit per slot).
    pub buffers_used: u32,
    /// Global binding slots (`@group(6)`) the program reads or writes.
    pub globals_used: u32,
    /// Shader image slots the program reads or writes (bit per slot).
    pub images_used: u32,
    /// Whether it reads the launch's INPUT memory (`@group(5) @binding(0)`).
    pub reads_input: bool,
}

impl ComputeInfo {
    /// Invocations per workgroup.
    pub fn invocations(&self) -> u64 {
        self.workgroup_size.iter().map(|&s| u64::from(s)).product()
    }
}

impl LaneProgram {
    /// Checks the structural invariants the executor relies on: every
    /// register index is inside its file, prologue ops touch uniform
    /// registers only, jump targets are inside the body, constants are not
    /// written.  Run once at creation; the executor may then index without
    /// re-checking.
    pub fn verify(&self) -> Result<(), String> {
        let nu = self.num_uniform as usize;
        let nv = self.num_varying as usize;
        if self.consts.len() > nu {
            return Err("more constants than uniform registers".into());
        }
        let nconst = self.consts.len();
        let mut err = None;
        let check = |r: Reg, err: &mut Option<String>| {
            let ok = if r.is_uniform() {
                r.index() < nu
            } else {
                r.index() < nv
            };
            if !ok && err.is_none() {
                *err = Some(format!("register {r:?} out of range"));
            }
        };
        for op in &self.prologue {
            op.for_each_use(|r| {
                check(r, &mut err);
                if !r.is_uniform() && err.is_none() {
                    err = Some(format!("prologue op {op:?} reads a varying register"));
                }
            });
            op.for_each_def(|r| {
                check(r, &mut err);
                if (!r.is_uniform() || r.index() < nconst) && err.is_none() {
                    err = Some(format!("prologue op {op:?} writes {r:?}"));
                }
            });
            if op.target().is_some() || op.has_side_effects() {
                return Err(format!("prologue op {op:?} has control flow"));
            }
        }
        for op in &self.body {
            op.for_each_use(|r| check(r, &mut err));
            op.for_each_def(|r| {
                check(r, &mut err);
                if r.is_uniform() && err.is_none() {
                    err = Some(format!("body op {op:?} writes uniform {r:?}"));
                }
            });
            if let Some(t) = op.target()
                && t as usize > self.body.len()
            {
                return Err(format!("jump target {t} out of range"));
            }
            if let Op::Unpack { f, .. } = op
                && f.arity() > 4
            {
                return Err("bad unpack".into());
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl fmt::Display for LaneProgram {
    /// A disassembly, one op per line (for debugging and documentation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "; {} varying, {} uniform registers ({} constants)",
            self.num_varying,
            self.num_uniform,
            self.consts.len()
        )?;
        for (i, c) in self.consts.iter().enumerate() {
            let bits = c.to_array()[0].to_bits();
            writeln!(f, "const u{i} = {bits:#010x} ({})", f32::from_bits(bits))?;
        }
        for op in &self.prologue {
            writeln!(f, "prologue: {op:?}")?;
        }
        for (i, op) in self.body.iter().enumerate() {
            writeln!(f, "{i:4}: {op:?}")?;
        }
        Ok(())
    }
}
