//! Sampler views and surfaces: how a resource is seen by shaders and by the
//! framebuffer (context.rst "Sampler Views", "Surfaces").
//!
//! A view is immutable once created and holds a counted reference to its
//! resource, so a bound or recorded view keeps the storage alive after the
//! host destroys the resource (Gallium's reference counting).

use std::sync::Arc;

use crate::enums::{Swizzle, TextureTarget};
use crate::format::Format;
use crate::resource::{ResourceRef, ResourceTemplate, level_extent};

/// `struct pipe_sampler_view` minus the resource reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerViewDesc {
    /// The view's target; defaults to the resource's.
    pub target: TextureTarget,
    /// May differ from the resource's format only by a compatible cast.
    pub format: Format,
    /// First mip level sampled (the view's level 0).
    pub first_level: u32,
    /// Last mip level sampled, inclusive.
    pub last_level: u32,
    /// First array layer (cube arrays: faces).
    pub first_layer: u32,
    /// Last array layer, inclusive.
    pub last_layer: u32,
    /// For buffer views: first element and element count.
    pub buffer_offset: u32,
    /// Buffer views: the element count (0 for textures).
    pub buffer_size: u32,
    /// The component each of RGBA reads (or 0 / 1).
    pub swizzle: [Swizzle; 4],
}

impl SamplerViewDesc {
    /// The view of a whole resource as it is: its target, format, every
    /// level and layer, identity swizzle (FORMAT.md's defaults).
    pub fn of_resource(t: &ResourceTemplate) -> Self {
        let layers = match t.target {
            TextureTarget::Texture3D | TextureTarget::Buffer => 1,
            _ => t.array_size.max(1),
        };
        SamplerViewDesc {
            target: t.target,
            format: t.format,
            first_level: 0,
            last_level: t.last_level,
            first_layer: 0,
            last_layer: layers - 1,
            buffer_offset: 0,
            buffer_size: if t.target == TextureTarget::Buffer {
                t.width0
            } else {
                0
            },
            swizzle: [Swizzle::X, Swizzle::Y, Swizzle::Z, Swizzle::W],
        }
    }
}

/// A created sampler view: its description and the resource it reads.
#[derive(Clone, Debug)]
pub struct SamplerView {
    /// What the view sees.
    pub desc: SamplerViewDesc,
    /// The viewed resource (kept alive by this reference).
    pub resource: ResourceRef,
}

/// A counted reference to a sampler view (what bindings and draws hold).
pub type SamplerViewRef = Arc<SamplerView>;

/// What `create_surface` takes (`struct pipe_surface` template).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceTemplate {
    /// Must be the resource's format or a compatible cast of it.
    pub format: Format,
    /// The mip level rendered to.
    pub level: u32,
    /// Layers (array layers, cube faces `layer * 6 + face`, or 3D slices).
    pub first_layer: u32,
    /// Last layer, inclusive (more than one: a layered surface).
    pub last_layer: u32,
}

impl SurfaceTemplate {
    /// Level 0, layer 0 of a resource in `format`.
    pub fn new(format: Format) -> Self {
        SurfaceTemplate {
            format,
            level: 0,
            first_layer: 0,
            last_layer: 0,
        }
    }
}

/// `struct pipe_surface` minus the resource reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SurfaceDesc {
    /// The surface's format.
    pub format: Format,
    /// The mip level rendered to.
    pub level: u32,
    /// First layer.
    pub first_layer: u32,
    /// Last layer, inclusive.
    pub last_layer: u32,
    /// Width and height of the surface's level.
    pub width: u32,
    /// Height of the level in pixels.
    pub height: u32,
}

impl SurfaceDesc {
    /// The description of `templ` on a resource created from `res`.
    pub fn new(res: &ResourceTemplate, templ: &SurfaceTemplate) -> Self {
        let (width, height, _) = level_extent(res, templ.level);
        SurfaceDesc {
            format: templ.format,
            level: templ.level,
            first_layer: templ.first_layer,
            last_layer: templ.last_layer,
            width,
            height,
        }
    }

    /// Number of layers the surface covers.
    pub fn layers(&self) -> u32 {
        self.last_layer - self.first_layer + 1
    }
}

/// A created surface: its description and the resource it renders to.
#[derive(Clone, Debug)]
pub struct Surface {
    /// What the surface covers.
    pub desc: SurfaceDesc,
    /// The resource rendered to (kept alive by this reference).
    pub resource: ResourceRef,
}

/// A counted reference to a surface.
pub type SurfaceRef = Arc<Surface>;
