//! glTF accessors as Gallium vertex and index data.
//!
//! An accessor whose data sits plainly in a buffer view is drawn straight
//! from that view: the view's bytes become one ferropipe buffer and the
//! accessor becomes a vertex element whose format says how to decode it
//! (`R16G16_UNORM` for normalized `UNSIGNED_SHORT` texcoords, ...), so the
//! fetch stage does the conversion as a GPU would.  Only what Gallium
//! cannot express is converted here, to `f32` (or `u32` indices):
//! sparse accessors, accessors without a buffer view (all zeros), and the
//! three-component 8/16-bit *unnormalized* layouts that have no
//! `PIPE_FORMAT` (`R8G8B8_USCALED` and friends are not in ferropipe's
//! format table).

use gltf::accessor::{DataType, Dimensions};

use crate::error::{Error, Result};
use ferropipe::Format;

/// Components per element.
pub(crate) fn components(d: Dimensions) -> usize {
    match d {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 => 4,
        Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    }
}

/// The Gallium vertex format that decodes `n` components of `ty` as the
/// glTF specification defines (section 3.11, "normalized" integers map to
/// [0, 1] or [-1, 1]; unnormalized integers convert to float by value).
pub(crate) fn vertex_format(n: usize, ty: DataType, normalized: bool) -> Option<Format> {
    use DataType::*;
    use Format as F;
    Some(match (ty, normalized, n) {
        (F32, _, 1) => F::R32_FLOAT,
        (F32, _, 2) => F::R32G32_FLOAT,
        (F32, _, 3) => F::R32G32B32_FLOAT,
        (F32, _, 4) => F::R32G32B32A32_FLOAT,
        (U8, true, 1) => F::R8_UNORM,
        (U8, true, 2) => F::R8G8_UNORM,
        (U8, true, 3) => F::R8G8B8_UNORM,
        (U8, true, 4) => F::R8G8B8A8_UNORM,
        (I8, true, 1) => F::R8_SNORM,
        (I8, true, 2) => F::R8G8_SNORM,
        (I8, true, 3) => F::R8G8B8_SNORM,
        (I8, true, 4) => F::R8G8B8A8_SNORM,
        (U16, true, 1) => F::R16_UNORM,
        (U16, true, 2) => F::R16G16_UNORM,
        (U16, true, 3) => F::R16G16B16_UNORM,
        (U16, true, 4) => F::R16G16B16A16_UNORM,
        (I16, true, 1) => F::R16_SNORM,
        (I16, true, 2) => F::R16G16_SNORM,
        (I16, true, 3) => F::R16G16B16_SNORM,
        (I16, true, 4) => F::R16G16B16A16_SNORM,
        (U8, false, 1) => F::R8_USCALED,
        (U8, false, 2) => F::R8G8_USCALED,
        (U8, false, 4) => F::R8G8B8A8_USCALED,
        (I8, false, 1) => F::R8_SSCALED,
        (I8, false, 2) => F::R8G8_SSCALED,
        (I8, false, 4) => F::R8G8B8A8_SSCALED,
        (U16, false, 1) => F::R16_USCALED,
        (U16, false, 2) => F::R16G16_USCALED,
        (U16, false, 4) => F::R16G16B16A16_USCALED,
        (I16, false, 1) => F::R16_SSCALED,
        (I16, false, 2) => F::R16G16_SSCALED,
        (I16, false, 4) => F::R16G16B16A16_SSCALED,
        (U32, false, 1) => F::R32_USCALED,
        (U32, false, 2) => F::R32G32_USCALED,
        (U32, false, 3) => F::R32G32B32_USCALED,
        (U32, false, 4) => F::R32G32B32A32_USCALED,
        _ => return None,
    })
}

/// The float format with `n` components (the CPU path's output).
pub(crate) fn float_format(n: usize) -> Format {
    match n {
        1 => Format::R32_FLOAT,
        2 => Format::R32G32_FLOAT,
        3 => Format::R32G32B32_FLOAT,
        _ => Format::R32G32B32A32_FLOAT,
    }
}

fn type_size(ty: DataType) -> usize {
    match ty {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

/// Component `i` of `bytes` as `ty`, normalized or not (glTF 3.11).
fn component(bytes: &[u8], ty: DataType, normalized: bool) -> f32 {
    match ty {
        DataType::I8 => {
            let v = bytes[0] as i8 as f32;
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        DataType::U8 => {
            let v = bytes[0] as f32;
            if normalized { v / 255.0 } else { v }
        }
        DataType::I16 => {
            let v = i16::from_le_bytes([bytes[0], bytes[1]]) as f32;
            if normalized {
                (v / 32767.0).max(-1.0)
            } else {
                v
            }
        }
        DataType::U16 => {
            let v = u16::from_le_bytes([bytes[0], bytes[1]]) as f32;
            if normalized { v / 65535.0 } else { v }
        }
        DataType::U32 => {
            let v = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32;
            if normalized { v / 4_294_967_295.0 } else { v }
        }
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
    }
}

/// Where an accessor's elements are: `(bytes of its view from the
/// accessor's offset on, stride)`, checked to hold `count` elements.
pub(crate) fn view_bytes<'b>(
    acc: &gltf::Accessor<'_>,
    buffers: &'b [gltf::buffer::Data],
) -> Result<Option<(&'b [u8], usize)>> {
    let Some(view) = acc.view() else {
        return Ok(None);
    };
    let elem = acc.size();
    let stride = view.stride().unwrap_or(elem).max(elem);
    let data = buffers
        .get(view.buffer().index())
        .map(|d| d.0.as_slice())
        .unwrap_or(&[]);
    let start = view.offset();
    let end = start.checked_add(view.length());
    let Some(view_data) = end.and_then(|e| data.get(start..e)) else {
        return Err(Error::Invalid(format!(
            "bufferView {} ({} bytes at {start}) lies outside buffer {} ({} bytes)",
            view.index(),
            view.length(),
            view.buffer().index(),
            data.len()
        )));
    };
    let need = match acc.count() {
        0 => 0,
        c => acc.offset() + stride * (c - 1) + elem,
    };
    if need > view_data.len() {
        return Err(Error::Invalid(format!(
            "accessor {} needs {need} bytes of bufferView {} ({} bytes)",
            acc.index(),
            view.index(),
            view_data.len()
        )));
    }
    Ok(Some((
        &view_data[acc.offset().min(view_data.len())..],
        stride,
    )))
}

/// The accessor's elements as `count * n` floats, sparse substitution
/// applied (glTF 3.6.2.3).
pub(crate) fn read_f32(
    acc: &gltf::Accessor<'_>,
    buffers: &[gltf::buffer::Data],
) -> Result<Vec<f32>> {
    let n = components(acc.dimensions());
    let ty = acc.data_type();
    let ts = type_size(ty);
    let count = acc.count();
    let mut out = vec![0.0f32; count * n];
    let norm = acc.normalized();
    if let Some((bytes, stride)) = view_bytes(acc, buffers)? {
        for (i, dst) in out.chunks_exact_mut(n).enumerate() {
            let e = &bytes[i * stride..];
            for (c, d) in dst.iter_mut().enumerate() {
                *d = component(&e[c * ts..], ty, norm);
            }
        }
    }
    if let Some(sparse) = acc.sparse() {
        let indices = sparse_indices(&sparse, buffers)?;
        let vview = sparse.values().view();
        let vdata = slice_of(&vview, sparse.values().offset(), buffers)?;
        let esize = n * ts;
        if vdata.len() < indices.len() * esize {
            return Err(Error::Invalid(format!(
                "accessor {}: sparse values shorter than {} elements",
                acc.index(),
                indices.len()
            )));
        }
        for (k, &i) in indices.iter().enumerate() {
            let i = i as usize;
            if i >= count {
                return Err(Error::Invalid(format!(
                    "accessor {}: sparse index {i} past its {count} elements",
                    acc.index()
                )));
            }
            for c in 0..n {
                out[i * n + c] = component(&vdata[k * esize + c * ts..], ty, norm);
            }
        }
    }
    Ok(out)
}

fn slice_of<'b>(
    view: &gltf::buffer::View<'_>,
    offset: usize,
    buffers: &'b [gltf::buffer::Data],
) -> Result<&'b [u8]> {
    let data = buffers
        .get(view.buffer().index())
        .map(|d| d.0.as_slice())
        .unwrap_or(&[]);
    let start = view.offset() + offset;
    let end = view.offset() + view.length();
    data.get(start..end).ok_or_else(|| {
        Error::Invalid(format!(
            "bufferView {} lies outside buffer {}",
            view.index(),
            view.buffer().index()
        ))
    })
}

fn sparse_indices(
    sparse: &gltf::accessor::sparse::Sparse<'_>,
    buffers: &[gltf::buffer::Data],
) -> Result<Vec<u32>> {
    use gltf::accessor::sparse::IndexType;
    let idx = sparse.indices();
    let bytes = slice_of(&idx.view(), idx.offset(), buffers)?;
    let size = match idx.index_type() {
        IndexType::U8 => 1,
        IndexType::U16 => 2,
        IndexType::U32 => 4,
    };
    let count = sparse.count();
    if bytes.len() < count * size {
        return Err(Error::Invalid(
            "sparse indices shorter than their count".into(),
        ));
    }
    Ok((0..count)
        .map(|i| {
            let b = &bytes[i * size..];
            match size {
                1 => b[0] as u32,
                2 => u16::from_le_bytes([b[0], b[1]]) as u32,
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            }
        })
        .collect())
}

/// Index accessor elements as `u32` (the CPU path for sparse or view-less
/// index accessors).
pub(crate) fn read_indices(
    acc: &gltf::Accessor<'_>,
    buffers: &[gltf::buffer::Data],
) -> Result<Vec<u32>> {
    // Index values are exact in f32 up to 2^24; past that the float path
    // would round, so read integers directly.
    if acc.sparse().is_none() {
        let mut out = vec![0u32; acc.count()];
        if let Some((bytes, stride)) = view_bytes(acc, buffers)? {
            let ts = type_size(acc.data_type());
            for (i, o) in out.iter_mut().enumerate() {
                let b = &bytes[i * stride..];
                *o = match ts {
                    1 => b[0] as u32,
                    2 => u16::from_le_bytes([b[0], b[1]]) as u32,
                    _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                };
            }
        }
        return Ok(out);
    }
    Ok(read_f32(acc, buffers)?.iter().map(|&v| v as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_components_follow_the_specification() {
        assert_eq!(component(&[255], DataType::U8, true), 1.0);
        assert_eq!(component(&[0x80], DataType::I8, true), -1.0);
        assert_eq!(component(&[0x81], DataType::I8, true), -1.0);
        assert_eq!(component(&[0xff, 0x7f], DataType::I16, true), 1.0);
        assert_eq!(component(&[0xff, 0xff], DataType::U16, false), 65535.0);
        assert_eq!(component(&[7, 0], DataType::I16, false), 7.0);
    }

    #[test]
    fn formats_exist_only_where_gallium_has_them() {
        assert_eq!(
            vertex_format(2, DataType::U16, true),
            Some(Format::R16G16_UNORM)
        );
        assert_eq!(
            vertex_format(4, DataType::U8, true),
            Some(Format::R8G8B8A8_UNORM)
        );
        assert_eq!(vertex_format(3, DataType::U16, false), None);
        assert_eq!(vertex_format(2, DataType::U32, true), None);
    }
}
