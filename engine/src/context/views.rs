//! Sampler views and surfaces (context.rst "Sampler Views", "Surfaces").
//!
//! Both are entities holding an `Arc` of an immutable view that references
//! its resource, so a view keeps the resource's storage alive after the
//! host destroys the resource, and a recorded draw keeps the view alive
//! after `sampler_view_destroy` / `surface_destroy`.

use std::sync::Arc;

use ferropipe_components::cso::{SamplerViewComponent, SurfaceComponent};
use ferropipe_components::enums::{BindFlags, TextureTarget};
use ferropipe_components::format::{Format, FormatKind};
use ferropipe_components::resource::{ResourceTemplate, level_extent};
use ferropipe_components::view::{
    SamplerView, SamplerViewDesc, Surface, SurfaceDesc, SurfaceTemplate,
};

use super::{Context, SamplerViewHandle, SurfaceHandle};
use crate::error::{Error, ResourceError, Result};
use crate::screen::Resource;

/// Whether a view in format `view` may cast a resource in format `res`
/// (context.rst: "formats that have matching component order and sizes").
///
/// Colour formats are compatible when their blocks have the same size, the
/// same channel widths in the same storage order and the same packing, and
/// name the colour channels in the same order; the channel *type* (unorm,
/// snorm, sRGB, float, integer) may differ, as in GL's texture-view
/// classes.  Depth/stencil formats cast only between layouts that keep the
/// depth bits in place (`Z24_UNORM_S8_UINT` ↔ `Z24X8_UNORM`, `S8_UINT_Z24`
/// ↔ `X8Z24`).
pub fn formats_compatible(res: Format, view: Format) -> bool {
    if res == view {
        return true;
    }
    let (a, b) = (res.desc(), view.desc());
    if a.kind == FormatKind::Color && b.kind == FormatKind::Color {
        return a.block_bytes == b.block_bytes
            && a.channel_bits == b.channel_bits
            && a.packed == b.packed
            && a.swizzle[..3] == b.swizzle[..3]
            && !matches!(res, Format::R11G11B10_FLOAT | Format::R9G9B9E5_FLOAT)
            && !matches!(view, Format::R11G11B10_FLOAT | Format::R9G9B9E5_FLOAT);
    }
    use Format::*;
    matches!(
        (res, view),
        (Z24_UNORM_S8_UINT, Z24X8_UNORM)
            | (Z24X8_UNORM, Z24_UNORM_S8_UINT)
            | (S8_UINT_Z24_UNORM, X8Z24_UNORM)
            | (X8Z24_UNORM, S8_UINT_Z24_UNORM)
    )
}

/// Whether a sampler view of `view` target may look at a resource of `res`
/// target (GL's texture-view target rules).
fn targets_compatible(res: TextureTarget, view: TextureTarget) -> bool {
    use TextureTarget::*;
    res == view
        || matches!(
            (res, view),
            (Texture1D, Texture1DArray)
                | (Texture1DArray, Texture1D)
                | (Texture2D, Texture2DArray)
                | (Texture2DArray, Texture2D)
                | (Texture2DArray, TextureCube)
                | (Texture2DArray, TextureCubeArray)
                | (TextureCube, Texture2D)
                | (TextureCube, Texture2DArray)
                | (TextureCube, TextureCubeArray)
                | (TextureCubeArray, Texture2D)
                | (TextureCubeArray, Texture2DArray)
                | (TextureCubeArray, TextureCube)
        )
}

/// Layers (slices) of `t` at `level`: array layers / cube faces, or the 3D
/// depth of the level.
pub(crate) fn layers_at(t: &ResourceTemplate, level: u32) -> u32 {
    level_extent(t, level).2
}

impl Context {
    /// `create_sampler_view`: a view of `resource` for shaders.  The format
    /// must be a compatible cast, the level and layer ranges inside the
    /// resource, the target compatible (a cube view needs 6 layers, a cube
    /// array a multiple of 6), and the resource created with
    /// `PIPE_BIND_SAMPLER_VIEW`.  Buffer views (texture buffers) are not
    /// implemented.
    pub fn create_sampler_view(
        &mut self,
        resource: &Resource,
        desc: &SamplerViewDesc,
    ) -> Result<SamplerViewHandle> {
        self.alive("create_sampler_view")?;
        const CALL: &str = "create_sampler_view";
        let t = resource.template();
        if t.target == TextureTarget::Buffer || desc.target == TextureTarget::Buffer {
            return Err(Error::unsupported(CALL, "buffer sampler views"));
        }
        if !t.bind.contains(BindFlags::SAMPLER_VIEW) {
            return Err(ResourceError::MissingBind {
                call: CALL,
                field: "resource",
                bind: "PIPE_BIND_SAMPLER_VIEW",
            }
            .into());
        }
        if !formats_compatible(t.format, desc.format) {
            return Err(ResourceError::FormatIncompatible {
                call: CALL,
                field: "format",
                format: desc.format,
                resource_format: t.format,
            }
            .into());
        }
        if !targets_compatible(t.target, desc.target) {
            return Err(ResourceError::TargetIncompatible {
                view: desc.target,
                resource: t.target,
            }
            .into());
        }
        if desc.first_level > desc.last_level || desc.last_level > t.last_level {
            return Err(ResourceError::LevelRangeOutOfRange {
                first: desc.first_level,
                last: desc.last_level,
                last_level: t.last_level,
            }
            .into());
        }
        let layers = if t.target == TextureTarget::Texture3D {
            1
        } else {
            t.array_size
        };
        if desc.first_layer > desc.last_layer || desc.last_layer >= layers {
            return Err(ResourceError::LayersOutOfRange {
                call: CALL,
                first: desc.first_layer,
                last: desc.last_layer,
                layers,
            }
            .into());
        }
        if desc.target.is_cube() && t.width0 != t.height0 {
            return Err(ResourceError::CubeViewNotSquare {
                width: t.width0,
                height: t.height0,
            }
            .into());
        }
        let n = desc.last_layer - desc.first_layer + 1;
        let layers_ok = match desc.target {
            TextureTarget::TextureCube => n == 6,
            TextureTarget::TextureCubeArray => n.is_multiple_of(6),
            TextureTarget::Texture1D | TextureTarget::Texture2D | TextureTarget::TextureRect => {
                n == 1
            }
            _ => true,
        };
        if !layers_ok {
            return Err(ResourceError::ViewLayerCount {
                layers: n,
                target: desc.target,
            }
            .into());
        }
        let view = SamplerView {
            desc: *desc,
            resource: resource.shared().clone(),
        };
        Ok(self.spawn(SamplerViewComponent(Arc::new(view))))
    }

    /// `sampler_view_destroy`: releases the view (bindings and recorded
    /// draws keep theirs).
    pub fn sampler_view_destroy(&mut self, view: SamplerViewHandle) -> Result<()> {
        self.alive("sampler_view_destroy")?;
        self.despawn("sampler_view_destroy", view)
    }

    /// `create_surface`: a render-target (colour format, resource bound
    /// `PIPE_BIND_RENDER_TARGET`) or depth/stencil (`PIPE_BIND_DEPTH_STENCIL`)
    /// view of one level and a range of layers (3D slices for 3D textures).
    /// Surfaces of buffers are not implemented.
    pub fn create_surface(
        &mut self,
        resource: &Resource,
        templ: &SurfaceTemplate,
    ) -> Result<SurfaceHandle> {
        self.alive("create_surface")?;
        const CALL: &str = "create_surface";
        let t = resource.template();
        if t.target == TextureTarget::Buffer {
            return Err(Error::unsupported(CALL, "surfaces of buffers"));
        }
        if !formats_compatible(t.format, templ.format) {
            return Err(ResourceError::FormatIncompatible {
                call: CALL,
                field: "format",
                format: templ.format,
                resource_format: t.format,
            }
            .into());
        }
        let need = if templ.format.desc().kind == FormatKind::Color {
            BindFlags::RENDER_TARGET
        } else {
            BindFlags::DEPTH_STENCIL
        };
        if !t.bind.contains(need) {
            return Err(ResourceError::MissingBind {
                call: CALL,
                field: "resource",
                bind: BindFlags::NAMED
                    .iter()
                    .find(|(_, f)| *f == need)
                    .map_or("", |(n, _)| n),
            }
            .into());
        }
        if templ.level > t.last_level {
            return Err(ResourceError::LevelOutOfRange {
                call: CALL,
                field: "level",
                level: templ.level,
                last_level: t.last_level,
            }
            .into());
        }
        let layers = layers_at(t, templ.level);
        if templ.first_layer > templ.last_layer || templ.last_layer >= layers {
            return Err(ResourceError::LayersOutOfRange {
                call: CALL,
                first: templ.first_layer,
                last: templ.last_layer,
                layers,
            }
            .into());
        }
        let surface = Surface {
            desc: SurfaceDesc::new(t, templ),
            resource: resource.shared().clone(),
        };
        Ok(self.spawn(SurfaceComponent(Arc::new(surface))))
    }

    /// `surface_destroy`: releases the surface (a bound framebuffer and
    /// recorded draws keep theirs).
    pub fn surface_destroy(&mut self, surface: SurfaceHandle) -> Result<()> {
        self.alive("surface_destroy")?;
        self.despawn("surface_destroy", surface)
    }

    /// The surface behind a handle (for hosts and the replayer's outputs).
    pub fn surface(&self, surface: SurfaceHandle) -> Result<&Surface> {
        self.alive("surface")?;
        Ok(&self.get("surface", "surface", surface)?.0)
    }

    /// The sampler view behind a handle.
    pub fn sampler_view(&self, view: SamplerViewHandle) -> Result<&SamplerView> {
        self.alive("sampler_view")?;
        Ok(&self.get("sampler_view", "view", view)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Screen, ScreenConfig};

    #[test]
    fn view_rules() {
        let s = Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let mut c = s.context_create().unwrap();
        let arr = s
            .resource_create(&ResourceTemplate {
                target: TextureTarget::Texture2DArray,
                format: Format::R8G8B8A8_UNORM,
                width0: 8,
                height0: 8,
                array_size: 12,
                last_level: 2,
                bind: BindFlags::SAMPLER_VIEW | BindFlags::RENDER_TARGET,
                ..Default::default()
            })
            .unwrap();
        let full = SamplerViewDesc::of_resource(arr.template());
        assert_eq!(full.last_layer, 11);
        c.create_sampler_view(&arr, &full).unwrap();
        let cube = SamplerViewDesc {
            target: TextureTarget::TextureCube,
            first_layer: 6,
            last_layer: 11,
            format: Format::R8G8B8A8_SRGB,
            ..full
        };
        let h = c.create_sampler_view(&arr, &cube).unwrap();
        assert_eq!(c.sampler_view(h).unwrap().desc.first_layer, 6);
        let bad = [
            SamplerViewDesc {
                last_layer: 10,
                ..cube
            },
            SamplerViewDesc {
                format: Format::B8G8R8A8_UNORM,
                ..full
            },
            SamplerViewDesc {
                last_level: 3,
                ..full
            },
            SamplerViewDesc {
                target: TextureTarget::Texture3D,
                ..full
            },
            SamplerViewDesc {
                last_layer: 12,
                ..full
            },
        ]
        .map(|d| c.create_sampler_view(&arr, &d).unwrap_err());
        let expected = [
            ResourceError::ViewLayerCount {
                layers: 5,
                target: TextureTarget::TextureCube,
            },
            ResourceError::FormatIncompatible {
                call: "create_sampler_view",
                field: "format",
                format: Format::B8G8R8A8_UNORM,
                resource_format: Format::R8G8B8A8_UNORM,
            },
            ResourceError::LevelRangeOutOfRange {
                first: 0,
                last: 3,
                last_level: 2,
            },
            ResourceError::TargetIncompatible {
                view: TextureTarget::Texture3D,
                resource: TextureTarget::Texture2DArray,
            },
            ResourceError::LayersOutOfRange {
                call: "create_sampler_view",
                first: 0,
                last: 12,
                layers: 12,
            },
        ];
        for (e, want) in bad.into_iter().zip(expected) {
            assert_eq!(e, Error::Resource(want));
        }
        // Surfaces: level/layer ranges, level sizes.
        let surf = c
            .create_surface(
                &arr,
                &SurfaceTemplate {
                    format: Format::R8G8B8A8_UINT,
                    level: 2,
                    first_layer: 3,
                    last_layer: 11,
                },
            )
            .unwrap();
        let d = c.surface(surf).unwrap().desc;
        assert_eq!((d.width, d.height, d.layers()), (2, 2, 9));
        assert!(
            c.create_surface(
                &arr,
                &SurfaceTemplate {
                    level: 3,
                    ..SurfaceTemplate::new(Format::R8G8B8A8_UNORM)
                }
            )
            .is_err()
        );
        assert!(
            c.create_surface(&arr, &SurfaceTemplate::new(Format::Z24X8_UNORM))
                .is_err()
        );
        c.surface_destroy(surf).unwrap();
        assert!(c.surface(surf).is_err());
        // 3D surfaces address slices of the level.
        let vol = s
            .resource_create(&ResourceTemplate {
                target: TextureTarget::Texture3D,
                width0: 8,
                height0: 8,
                depth0: 8,
                last_level: 1,
                bind: BindFlags::RENDER_TARGET,
                ..Default::default()
            })
            .unwrap();
        let ok = SurfaceTemplate {
            level: 1,
            first_layer: 3,
            last_layer: 3,
            ..SurfaceTemplate::new(Format::R8G8B8A8_UNORM)
        };
        c.create_surface(&vol, &ok).unwrap();
        assert!(
            c.create_surface(
                &vol,
                &SurfaceTemplate {
                    first_layer: 4,
                    last_layer: 4,
                    ..ok
                }
            )
            .is_err()
        );
        assert!(formats_compatible(
            Format::Z24_UNORM_S8_UINT,
            Format::Z24X8_UNORM
        ));
        assert!(!formats_compatible(
            Format::Z24_UNORM_S8_UINT,
            Format::Z32_FLOAT
        ));
    }
}
