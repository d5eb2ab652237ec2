//! Sampler views and surfaces: how a resource is seen by shaders and by the
//! framebuffer (context.rst "Sampler Views", "Surfaces").

use crate::enums::{Swizzle, TextureTarget};
use crate::format::Format;

/// `struct pipe_sampler_view` minus the resource reference (the ECS entity
/// holds that in a separate component).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerViewDesc {
    /// The view's target; defaults to the resource's.
    pub target: TextureTarget,
    /// May differ from the resource's format only by a compatible cast.
    pub format: Format,
    pub first_level: u32,
    pub last_level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
    /// For buffer views: first element and element count.
    pub buffer_offset: u32,
    pub buffer_size: u32,
    pub swizzle: [Swizzle; 4],
}

/// `struct pipe_surface` minus the resource reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceDesc {
    pub format: Format,
    pub level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
    /// Width and height of the surface's level.
    pub width: u32,
    pub height: u32,
}
