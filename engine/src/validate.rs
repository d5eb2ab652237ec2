//! Validation of façade arguments: the one place input is checked.

use ferropipe_components::enums::TextureTarget;
use ferropipe_components::resource::ResourceTemplate;

use crate::caps;
use crate::error::{Error, Result};

/// Checks a resource template for internal consistency.
pub(crate) fn resource_template(call: &'static str, t: &ResourceTemplate) -> Result<()> {
    if t.width0 == 0 {
        return Err(Error::invalid(call, "width0", "must be at least 1"));
    }
    let (h, d, layers) = (t.height0, t.depth0, t.array_size);
    let must_be_1 = |field: &'static str, v: u32| {
        if v != 1 {
            Err(Error::invalid(
                call,
                field,
                format!("{v} for {}; must be 1", t.target),
            ))
        } else {
            Ok(())
        }
    };
    match t.target {
        TextureTarget::Buffer => {
            must_be_1("height0", h)?;
            must_be_1("depth0", d)?;
            must_be_1("array_size", layers)?;
            if t.last_level != 0 {
                return Err(Error::invalid(call, "last_level", "buffers have one level"));
            }
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
                return Err(Error::invalid(
                    call,
                    "array_size",
                    format!("{layers} for a cube; must be 6"),
                ));
            }
        }
        TextureTarget::TextureCubeArray => {
            must_be_1("depth0", d)?;
            if layers == 0 || layers % 6 != 0 {
                return Err(Error::invalid(
                    call,
                    "array_size",
                    format!("{layers}; a cube array needs a multiple of 6"),
                ));
            }
        }
    }
    if h == 0 || d == 0 || layers == 0 {
        return Err(Error::invalid(
            call,
            "height0/depth0/array_size",
            "must be at least 1",
        ));
    }
    if t.target.is_cube() && t.width0 != t.height0 {
        return Err(Error::invalid(call, "height0", "cube faces must be square"));
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
        return Err(Error::invalid(
            call,
            "last_level",
            format!(
                "{} but a {max_dim}-texel texture has only {levels_possible} levels",
                t.last_level
            ),
        ));
    }
    if t.target == TextureTarget::TextureRect && t.last_level != 0 {
        return Err(Error::invalid(
            call,
            "last_level",
            "RECT textures have one level",
        ));
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
            return Err(Error::invalid(
                call,
                field,
                format!("{v} exceeds the {max_extent} limit for {}", t.target),
            ));
        }
    }
    if layers > caps::MAX_TEXTURE_ARRAY_LAYERS {
        return Err(Error::invalid(
            call,
            "array_size",
            format!(
                "{layers} exceeds the {} layer limit",
                caps::MAX_TEXTURE_ARRAY_LAYERS
            ),
        ));
    }
    if t.nr_samples > 32 {
        return Err(Error::invalid(
            call,
            "nr_samples",
            format!("{}; at most 32", t.nr_samples),
        ));
    }
    Ok(())
}
