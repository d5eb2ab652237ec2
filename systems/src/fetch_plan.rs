//! The fetch stage's plan (draw's `draw_pt_fetch_prepare`, llvmpipe's
//! vertex-fetch key in `draw_llvm_make_variant_key`): per vertex-shader
//! input, which vertex element feeds it and how its bytes decode.  Derived
//! from the vertex elements and the VS inputs, and from nothing else;
//! plans.rs caches it across draws and flushes.  A sibling of fetch.rs,
//! not a part of it, so that derived.rs can hold the plan without
//! importing the stage whose system reads derived.rs.

use ferropipe_components::format::{ChannelType, Format, FormatDesc};
use ferropipe_components::shader::ShaderInfo;
use ferropipe_components::state::VertexElement;

/// How one vertex element is decoded, chosen once per state block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decode {
    /// `n` consecutive f32 (the common case: a copy).
    F32(u8),
    /// `n` consecutive unorm8 channels in RGBA order.
    Unorm8(u8),
    /// `n` consecutive little-endian unorm16 channels in RGBA order
    /// (compressed positions and texture coordinates: `tiny_tris_1m`'s
    /// R16G16 positions spent 5 % of the scene building a format codec per
    /// vertex on the generic path).
    Unorm16(u8),
    /// Anything else, through the format description.
    Generic(&'static FormatDesc),
}

/// How a VS input slot is fetched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementFetch {
    /// The element (vertex buffer slot, offset, divisor), or `None` when no
    /// element feeds the slot (reads (0, 0, 0, 1)).
    pub buffer: Option<u32>,
    /// Byte offset of the element inside a vertex.
    pub src_offset: u32,
    /// 0: per vertex; d: advance every d instances.
    pub instance_divisor: u32,
    /// The element's format.
    pub format: Format,
    /// How its bytes become lanes (a fast path per common format, or the generic unpack).
    pub decode: Decode,
    /// Bytes read per element.
    pub bytes: u32,
}

/// What the fetch stage derives from the vertex elements and the vertex
/// shader's inputs (draw's `draw_pt_fetch_prepare`): per VS input slot,
/// which element feeds it and how its bytes decode.  Cached with the rest
/// of a block's plans (plans.rs).
#[derive(Clone, Debug, Default)]
pub struct FetchPlan {
    /// Per VS input slot, how it is fetched.
    pub elements: Vec<ElementFetch>,
}

impl FetchPlan {
    /// The plan of `velems` feeding a vertex shader with interface `vs`.
    pub fn derive(velems: &[VertexElement], vs: &ShaderInfo) -> Self {
        let elements = vs
            .inputs
            .iter()
            .map(|input| {
                let Some(el) = velems.get(input.location as usize) else {
                    return ElementFetch {
                        buffer: None,
                        src_offset: 0,
                        instance_divisor: 0,
                        format: Format::R32G32B32A32_FLOAT,
                        decode: Decode::F32(0),
                        bytes: 0,
                    };
                };
                let desc = el.src_format.desc();
                let decode = classify_decode(desc);
                ElementFetch {
                    buffer: Some(el.vertex_buffer_index),
                    src_offset: el.src_offset,
                    instance_divisor: el.instance_divisor,
                    format: el.src_format,
                    decode,
                    bytes: desc.block_bytes,
                }
            })
            .collect();
        FetchPlan { elements }
    }
}

pub(crate) fn classify_decode(d: &'static FormatDesc) -> Decode {
    let n = d.nr_channels() as u8;
    let identity = d.swizzle[..n as usize]
        .iter()
        .enumerate()
        .all(|(i, &s)| s as usize == i);
    if !d.packed
        && identity
        && d.channel_type == ChannelType::Float
        && d.channel_bits[..n as usize].iter().all(|&b| b == 32)
    {
        return Decode::F32(n);
    }
    if !d.packed
        && identity
        && d.channel_type == ChannelType::Unorm
        && !d.srgb
        && d.channel_bits[..n as usize].iter().all(|&b| b == 8)
    {
        return Decode::Unorm8(n);
    }
    if !d.packed
        && identity
        && d.channel_type == ChannelType::Unorm
        && !d.srgb
        && d.channel_bits[..n as usize].iter().all(|&b| b == 16)
    {
        return Decode::Unorm16(n);
    }
    Decode::Generic(d)
}
