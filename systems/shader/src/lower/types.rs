//! Flattening naga types into scalar registers, and the uniform-buffer byte
//! layout of each scalar.

use ferropipe_components::shader::ScalarKind;
use naga::{ArraySize, Handle, Module, Scalar, Type, TypeInner, VectorSize};

use crate::ShaderError;

pub fn unsupported(construct: impl Into<String>) -> ShaderError {
    ShaderError::unsupported(construct)
}

/// The one name of each scalar width ferropipe does not execute, used by
/// every error about it (types, literals, conversions, atomics): the
/// registers are 32-bit lanes.  f16 runs (in f32 lanes, rounded after
/// every operation: docs/shaders.md "f16"); its name remains for what
/// still refuses it.
pub fn scalar_feature(kind: naga::ScalarKind, width: u8) -> &'static str {
    match (kind, width) {
        (naga::ScalarKind::Float, 2) => "f16 (`enable f16;`)",
        (naga::ScalarKind::Float, 8) => "f64",
        (naga::ScalarKind::Sint | naga::ScalarKind::Uint, 8) => "64-bit integers (i64, u64)",
        (naga::ScalarKind::Sint | naga::ScalarKind::Uint, 2) => "16-bit integers (i16, u16)",
        (naga::ScalarKind::Sint | naga::ScalarKind::Uint, 1) => "8-bit integers",
        (naga::ScalarKind::AbstractInt | naga::ScalarKind::AbstractFloat, _) => {
            "abstract numeric types at run time"
        }
        _ => "scalars of this width",
    }
}

/// Our scalar kind for a naga scalar (32-bit, and f16, which lives in f32
/// lanes).
pub fn scalar_kind(s: Scalar) -> Result<ScalarKind, ShaderError> {
    match (s.kind, s.width) {
        (naga::ScalarKind::Float, 4 | 2) => Ok(ScalarKind::Float),
        (naga::ScalarKind::Sint, 4) => Ok(ScalarKind::Sint),
        (naga::ScalarKind::Uint, 4) => Ok(ScalarKind::Uint),
        (naga::ScalarKind::Bool, _) => Ok(ScalarKind::Bool),
        (k, w) => Err(unsupported(scalar_feature(k, w))),
    }
}

/// A builtin in WGSL spelling (`subgroup_invocation_id`), for messages.
pub fn builtin_name(b: naga::BuiltIn) -> String {
    use naga::common::wgsl::TryToWgsl;
    match b.try_to_wgsl() {
        Some(s) => s.to_string(),
        // builtins WGSL has no name for (GLSL-only ones): the GLSL name
        None => match b {
            naga::BuiltIn::PointSize => "gl_PointSize".into(),
            naga::BuiltIn::CullDistance => "gl_CullDistance".into(),
            naga::BuiltIn::PointCoord => "gl_PointCoord".into(),
            naga::BuiltIn::BaseInstance => "gl_BaseInstance".into(),
            naga::BuiltIn::BaseVertex => "gl_BaseVertex".into(),
            naga::BuiltIn::WorkGroupSize => "gl_WorkGroupSize".into(),
            other => snake(&format!("{other:?}")),
        },
    }
}

/// The variant name of a `Debug` string: `Exchange { compare: None }` →
/// `Exchange` (to build WGSL names like `atomicExchange`).
pub fn variant(debug: &str) -> &str {
    debug.split([' ', '{', '(']).next().unwrap_or(debug)
}

/// `SubgroupInvocationId { .. }` → `subgroup_invocation_id`.
pub fn snake(debug: &str) -> String {
    let name = debug.split([' ', '{', '(']).next().unwrap_or(debug);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn vsize(s: VectorSize) -> usize {
    s as usize
}

/// Number of array elements (fixed-size arrays only).
pub fn array_len(size: ArraySize) -> Result<usize, ShaderError> {
    match size {
        ArraySize::Constant(n) => Ok(n.get() as usize),
        ArraySize::Pending(_) => Err(unsupported("override-sized arrays")),
        ArraySize::Dynamic => Err(unsupported("runtime-sized arrays")),
    }
}

/// Largest value (in scalars) the lowering keeps in registers.
pub const MAX_FLAT: usize = 4096;

/// Number of scalars of a type.
pub fn flat_len(module: &Module, ty: &TypeInner) -> Result<usize, ShaderError> {
    Ok(match *ty {
        TypeInner::Scalar(_) | TypeInner::Atomic(_) => 1,
        TypeInner::Vector { size, .. } => vsize(size),
        TypeInner::Matrix { columns, rows, .. } => vsize(columns) * vsize(rows),
        TypeInner::Array { base, size, .. } => {
            array_len(size)? * flat_len(module, &module.types[base].inner)?
        }
        TypeInner::Struct { ref members, .. } => {
            let mut n = 0;
            for m in members {
                n += flat_len(module, &module.types[m.ty].inner)?;
            }
            n
        }
        ref other => return Err(unsupported(format!("values of type {}", type_name(other)))),
    })
}

/// Flat offset of struct member `index`.
pub fn member_offset(
    module: &Module,
    members: &[naga::StructMember],
    index: usize,
) -> Result<usize, ShaderError> {
    let mut n = 0;
    for m in &members[..index] {
        n += flat_len(module, &module.types[m.ty].inner)?;
    }
    Ok(n)
}

/// Whether a scalar, vector or matrix type has f16 components.
pub fn is_f16(ty: &TypeInner) -> bool {
    matches!(
        *ty,
        TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } | TypeInner::Matrix { scalar: s, .. }
            if s == Scalar::F16
    )
}

/// One scalar of a buffer layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Byte offset.
    pub off: u32,
    pub kind: ScalarKind,
    /// An f16: the 2 bytes at `off` (2-aligned), not a 4-byte word.
    pub half: bool,
}

/// Byte offset and kind of every scalar of `ty` in the uniform address
/// space layout (struct member offsets and array strides as naga computed
/// them; matrix columns aligned like vectors of `rows`: 8 bytes for 2 rows,
/// 16 for 3 and 4 — WGSL's rule, std140 for every type but `matCx2` — and
/// half that for f16 matrices).
pub fn uniform_layout(
    module: &Module,
    ty: &TypeInner,
    base: u32,
    out: &mut Vec<Leaf>,
) -> Result<(), ShaderError> {
    buffer_layout(module, ty, base, false, out)
}

/// [`uniform_layout`] for any host-shareable or workgroup type: atomics are
/// one word, and `bools` allows booleans (workgroup memory stores their
/// mask).  f16 components are 2 bytes apart (WGSL: f16 has size and
/// alignment 2, `vec2<f16>` 4, `vec3<f16>` and `vec4<f16>` 8).
pub fn buffer_layout(
    module: &Module,
    ty: &TypeInner,
    base: u32,
    bools: bool,
    out: &mut Vec<Leaf>,
) -> Result<(), ShaderError> {
    let leaf = |off: u32, s: Scalar, kind: ScalarKind| Leaf {
        off,
        kind,
        half: s == Scalar::F16,
    };
    match *ty {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => {
            let k = scalar_kind(s)?;
            if k == ScalarKind::Bool && !bools {
                return Err(unsupported("bool in a uniform buffer"));
            }
            out.push(leaf(base, s, k));
        }
        TypeInner::Vector { size, scalar } => {
            let k = scalar_kind(scalar)?;
            for i in 0..vsize(size) as u32 {
                out.push(leaf(base + elem_bytes(scalar) * i, scalar, k));
            }
        }
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            let k = scalar_kind(scalar)?;
            let stride = column_stride(rows, scalar);
            for c in 0..vsize(columns) as u32 {
                for r in 0..vsize(rows) as u32 {
                    out.push(leaf(base + c * stride + elem_bytes(scalar) * r, scalar, k));
                }
            }
        }
        TypeInner::Array {
            base: elem,
            size,
            stride,
        } => {
            let n = array_len(size)?;
            if n > MAX_FLAT {
                return Err(unsupported(format!(
                    "buffer values of more than {MAX_FLAT} scalars"
                )));
            }
            for i in 0..n as u32 {
                buffer_layout(
                    module,
                    &module.types[elem].inner,
                    base + i * stride,
                    bools,
                    out,
                )?;
            }
        }
        TypeInner::Struct { ref members, .. } => {
            for m in members {
                buffer_layout(
                    module,
                    &module.types[m.ty].inner,
                    base + m.offset,
                    bools,
                    out,
                )?;
            }
        }
        ref other => {
            return Err(unsupported(format!(
                "buffer values of type {}",
                type_name(other)
            )));
        }
    }
    if out.len() > MAX_FLAT {
        return Err(unsupported(format!(
            "buffer values of more than {MAX_FLAT} scalars"
        )));
    }
    Ok(())
}

/// Byte distance between matrix columns (every address space): the
/// alignment of the column vector, 2 or 4 components of `scalar`.
pub fn column_stride(rows: VectorSize, scalar: Scalar) -> u32 {
    let w = elem_bytes(scalar);
    if rows == VectorSize::Bi { 2 * w } else { 4 * w }
}

/// Bytes of one scalar in memory: 2 for f16, 4 for the rest (booleans are
/// stored as their 4-byte mask).
pub fn elem_bytes(scalar: Scalar) -> u32 {
    if scalar == Scalar::F16 { 2 } else { 4 }
}

/// Short name of a type for error messages.
pub fn type_name(ty: &TypeInner) -> String {
    match ty {
        TypeInner::Scalar(s) => format!("{:?}{}", s.kind, s.width * 8),
        TypeInner::Vector { size, scalar } => {
            format!("vec{}<{:?}{}>", *size as u8, scalar.kind, scalar.width * 8)
        }
        TypeInner::Matrix { columns, rows, .. } => format!("mat{}x{}", *columns as u8, *rows as u8),
        TypeInner::Atomic(_) => "atomic".into(),
        TypeInner::Pointer { .. } | TypeInner::ValuePointer { .. } => "pointer".into(),
        TypeInner::Array { .. } => "array".into(),
        TypeInner::Struct { .. } => "struct".into(),
        TypeInner::Image { .. } => "texture".into(),
        TypeInner::Sampler { .. } => "sampler".into(),
        TypeInner::AccelerationStructure { .. } => "acceleration structure".into(),
        TypeInner::RayQuery { .. } => "ray query".into(),
        TypeInner::BindingArray { .. } => "binding array".into(),
        TypeInner::CooperativeMatrix { .. } => "cooperative matrix".into(),
    }
}

/// The scalar kind of a scalar or vector type (None for other types).
pub fn elem_kind(ty: &TypeInner) -> Option<ScalarKind> {
    match *ty {
        TypeInner::Scalar(s)
        | TypeInner::Vector { scalar: s, .. }
        | TypeInner::Matrix { scalar: s, .. } => scalar_kind(s).ok(),
        TypeInner::ValuePointer { scalar, .. } => scalar_kind(scalar).ok(),
        _ => None,
    }
}

/// Number of components of a scalar (1) or vector type.
pub fn components(ty: &TypeInner) -> usize {
    match *ty {
        TypeInner::Vector { size, .. } => vsize(size),
        TypeInner::Matrix { columns, rows, .. } => vsize(columns) * vsize(rows),
        _ => 1,
    }
}

/// The type behind a handle.
pub fn inner(module: &Module, ty: Handle<Type>) -> &TypeInner {
    &module.types[ty].inner
}
