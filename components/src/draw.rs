//! Draw parameters and resource bindings (`struct pipe_draw_info`,
//! `pipe_vertex_buffer`, `pipe_constant_buffer`, index buffer state).

use std::sync::Arc;

use crate::enums::PrimType;
use crate::resource::ResourceRef;
use crate::view::SurfaceRef;

/// `struct pipe_draw_info` plus the start/count of `pipe_draw_start_count_bias`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawInfo {
    pub mode: PrimType,
    pub start: u32,
    pub count: u32,
    pub indexed: bool,
    /// Added to every index after lookup (and after the restart compare).
    pub index_bias: i32,
    /// Hints; an overestimate renders the same, an underestimate must not crash.
    pub min_index: u32,
    pub max_index: u32,
    pub start_instance: u32,
    pub instance_count: u32,
    pub primitive_restart: bool,
    pub restart_index: u32,
}

impl Default for DrawInfo {
    fn default() -> Self {
        DrawInfo {
            mode: PrimType::Triangles,
            start: 0,
            count: 0,
            indexed: false,
            index_bias: 0,
            min_index: 0,
            max_index: 0xffff_ffff,
            start_instance: 0,
            instance_count: 1,
            primitive_restart: false,
            restart_index: 0,
        }
    }
}

/// `struct pipe_vertex_buffer`.
#[derive(Clone, Debug, Default)]
pub struct VertexBufferBinding {
    pub buffer: Option<ResourceRef>,
    /// Bytes between vertices; 0 makes every vertex read the same element.
    pub stride: u32,
    pub buffer_offset: u32,
}

/// Index buffer state (`set_index_buffer`).
#[derive(Clone, Debug, Default)]
pub struct IndexBufferBinding {
    pub buffer: Option<ResourceRef>,
    /// 1, 2 or 4 bytes.
    pub index_size: u32,
    pub offset: u32,
}

/// `struct pipe_constant_buffer`: a buffer range or user constants.
#[derive(Clone, Debug, Default)]
pub struct ConstantBufferBinding {
    pub buffer: Option<ResourceRef>,
    pub buffer_offset: u32,
    pub buffer_size: u32,
    /// User constants, copied at `set_constant_buffer` time.
    pub user_buffer: Option<Arc<[u8]>>,
}

/// `struct pipe_framebuffer_state`: what draws and `clear` render to.
///
/// Attachments may be larger than `width` x `height` (and of different
/// sizes, `PIPE_CAP_MIXED_FRAMEBUFFER_SIZES`): rendering covers
/// `width` x `height` clipped to each attachment's own size.  Layered
/// attachments cover `first_layer..=last_layer`.
#[derive(Clone, Debug, Default)]
pub struct FramebufferState {
    pub width: u32,
    pub height: u32,
    /// Layers of a framebuffer without attachments (0 = 1).
    pub layers: u32,
    /// Samples of a framebuffer without attachments (0 = 1).
    pub samples: u32,
    /// Colour buffers `0..nr_cbufs` (at most `MAX_COLOR_BUFS`); `None`
    /// slots are unbound.
    pub cbufs: Vec<Option<SurfaceRef>>,
    pub zsbuf: Option<SurfaceRef>,
}

impl FramebufferState {
    /// Whether two states name the same surfaces and size (the test for
    /// "the framebuffer changed", which flushes recorded work).
    pub fn same_as(&self, other: &FramebufferState) -> bool {
        fn same(a: &Option<SurfaceRef>, b: &Option<SurfaceRef>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        self.width == other.width
            && self.height == other.height
            && self.layers == other.layers
            && self.samples == other.samples
            && self.cbufs.len() == other.cbufs.len()
            && self.cbufs.iter().zip(&other.cbufs).all(|(a, b)| same(a, b))
            && same(&self.zsbuf, &other.zsbuf)
    }

    /// The colour buffer in slot `i`, if bound.
    pub fn cbuf(&self, i: usize) -> Option<&SurfaceRef> {
        self.cbufs.get(i).and_then(|s| s.as_ref())
    }
}
