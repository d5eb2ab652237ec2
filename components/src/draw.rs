//! Draw parameters and resource bindings (`struct pipe_draw_info`,
//! `pipe_vertex_buffer`, `pipe_constant_buffer`, index buffer state).

use std::sync::Arc;

use crate::enums::PrimType;
use crate::resource::ResourceRef;

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
