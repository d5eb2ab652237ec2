//! Validation of façade arguments: the one place input is checked.

use ferropipe_components::enums::TextureTarget;
use ferropipe_components::resource::ResourceTemplate;

use crate::caps;
use crate::error::{ResourceError, Result};

/// Checks a resource template for internal consistency.
pub(crate) fn resource_template(call: &'static str, t: &ResourceTemplate) -> Result<()> {
    if t.width0 == 0 {
        return Err(ResourceError::ZeroExtent {
            call,
            field: "width0",
        }
        .into());
    }
    let (h, d, layers) = (t.height0, t.depth0, t.array_size);
    // buffers and rectangle textures have exactly one level
    let single_level = || {
        if t.last_level != 0 {
            Err(ResourceError::TooManyLevels {
                call,
                last_level: t.last_level,
                levels: 1,
                target: t.target,
            })
        } else {
            Ok(())
        }
    };
    let must_be_1 = |field: &'static str, v: u32| {
        if v != 1 {
            Err(ResourceError::ExtentMustBeOne {
                call,
                field,
                value: v,
                target: t.target,
            })
        } else {
            Ok(())
        }
    };
    match t.target {
        TextureTarget::Buffer => {
            must_be_1("height0", h)?;
            must_be_1("depth0", d)?;
            must_be_1("array_size", layers)?;
            single_level()?;
        }
        TextureTarget::Texture1D => {
            must_be_1("height0", h)?;
            must_be_1("depth0", d)?;
            must_be_1("array_size", layers)?;
        }
        TextureTarget::Texture1DArray => {
            must_be_1("height0", h)?;
            must_be_1("depth0", d)?;
        }
        TextureTarget::Texture2D | TextureTarget::TextureRect => {
            must_be_1("depth0", d)?;
            must_be_1("array_size", layers)?;
        }
        TextureTarget::Texture2DArray => must_be_1("depth0", d)?,
        TextureTarget::Texture3D => must_be_1("array_size", layers)?,
        TextureTarget::TextureCube => {
            must_be_1("depth0", d)?;
            if layers != 6 {
                return Err(ResourceError::CubeLayers {
                    call,
                    array_size: layers,
                    target: t.target,
                }
                .into());
            }
        }
        TextureTarget::TextureCubeArray => {
            must_be_1("depth0", d)?;
            if layers == 0 || layers % 6 != 0 {
                return Err(ResourceError::CubeLayers {
                    call,
                    array_size: layers,
                    target: t.target,
                }
                .into());
            }
        }
    }
    for (field, v) in [("height0", h), ("depth0", d), ("array_size", layers)] {
        if v == 0 {
            return Err(ResourceError::ZeroExtent { call, field }.into());
        }
    }
    if t.target.is_cube() && t.width0 != t.height0 {
        return Err(ResourceError::CubeNotSquare {
            call,
            width: t.width0,
            height: t.height0,
        }
        .into());
    }
    let max_dim = t
        .width0
        .max(t.height0)
        .max(if t.target == TextureTarget::Texture3D {
            d
        } else {
            1
        });
    let levels_possible = 32 - max_dim.leading_zeros();
    if t.target != TextureTarget::Buffer && t.last_level >= levels_possible {
        return Err(ResourceError::TooManyLevels {
            call,
            last_level: t.last_level,
            levels: levels_possible,
            target: t.target,
        }
        .into());
    }
    if t.target == TextureTarget::TextureRect {
        single_level()?;
    }
    // Size limits (the caps' values, screen.rst PIPE_CAP_MAX_TEXTURE_*).
    let max_extent = match t.target {
        TextureTarget::Buffer => caps::MAX_BUFFER_SIZE,
        TextureTarget::Texture3D => 1 << (caps::MAX_TEXTURE_3D_LEVELS - 1),
        TextureTarget::TextureCube | TextureTarget::TextureCubeArray => {
            1 << (caps::MAX_TEXTURE_CUBE_LEVELS - 1)
        }
        _ => caps::MAX_TEXTURE_2D_SIZE,
    };
    for (field, v) in [("width0", t.width0), ("height0", h), ("depth0", d)] {
        if v > max_extent {
            return Err(ResourceError::ExtentTooLarge {
                call,
                field,
                value: v,
                limit: max_extent,
                target: t.target,
            }
            .into());
        }
    }
    if layers > caps::MAX_TEXTURE_ARRAY_LAYERS {
        return Err(ResourceError::TooManyLayers {
            call,
            array_size: layers,
            limit: caps::MAX_TEXTURE_ARRAY_LAYERS,
        }
        .into());
    }
    if t.nr_samples > 32 {
        return Err(ResourceError::TooManySamples {
            call,
            nr_samples: t.nr_samples,
            limit: 32,
        }
        .into());
    }
    Ok(())
}
