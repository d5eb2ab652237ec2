//! Argument checks that several binding calls share: `slot_range` (bind.rs,
//! cso.rs, compute.rs), `resolve_stage` (bind.rs, cso.rs, compute.rs) and
//! `check_storage_access` (draw.rs and compute.rs, once per draw and
//! launch).  They live below the files that call them, so those files
//! import one leaf instead of each other.

use ferropipe_components::enums::{ImageAccess, ShaderType};
use ferropipe_components::shader::ShaderInfo;
use ferropipe_systems::compute::{ShaderBufferBinding, ShaderImageBinding};

use crate::error::{BindError, Error, Result, StorageError};

/// Checks `start..start + count` lies inside `0..max`.
pub(crate) fn slot_range(
    call: &'static str,
    field: &'static str,
    start: u32,
    count: usize,
    max: usize,
) -> Result<()> {
    if (start as usize).saturating_add(count) > max {
        return Err(BindError::SlotOutOfRange {
            call,
            field,
            start,
            count,
            limit: max,
        }
        .into());
    }
    Ok(())
}

/// The slot arrays of a stage that has constant buffers, sampler views
/// and samplers: `Some(i)` is [`BoundState`](super::BoundState)'s stage
/// `i`, `None` the compute stage.
pub(crate) fn resolve_stage(call: &'static str, shader: ShaderType) -> Result<Option<usize>> {
    match super::stage_index(shader) {
        Some(i) => Ok(Some(i)),
        None if shader == ShaderType::Compute => Ok(None),
        None => Err(Error::unsupported(call, format!("{shader} stage"))),
    }
}

/// The shader of `stage` (described by `info`) writes only shader buffers
/// bound with their `writable_bitmask` bit, and loads from / stores to
/// only images whose view's `access` has `READ` / `WRITE` (Gallium's
/// contract: drivers may bind a slot without those bits read-only, so
/// the access is undefined there; here it is refused).  Run once per draw
/// and launch, after the used slots are known to be bound; 32 bit tests
/// per kind, nothing per fragment.
pub(crate) fn check_storage_access(
    call: &'static str,
    stage: &'static str,
    info: &ShaderInfo,
    buffers: &[Option<ShaderBufferBinding>],
    images: &[Option<ShaderImageBinding>],
) -> Result<()> {
    for slot in 0..32usize {
        let bit = 1u32 << slot;
        if info.shader_buffers_written & bit != 0
            && let Some(Some(b)) = buffers.get(slot)
            && !b.writable
        {
            return Err(StorageError::NotWritable {
                call,
                stage,
                slot: slot as u32,
            }
            .into());
        }
        let Some(Some(img)) = images.get(slot) else {
            continue;
        };
        for (used, need, what) in [
            (
                info.shader_images_read,
                ImageAccess::READ,
                "read (textureLoad)",
            ),
            (
                info.shader_images_written,
                ImageAccess::WRITE,
                "written (textureStore)",
            ),
        ] {
            if used & bit != 0 && !img.access.contains(need) {
                let flag = ImageAccess::NAMED
                    .iter()
                    .find(|(_, f)| *f == need)
                    .map_or("", |(n, _)| n);
                return Err(StorageError::ImageAccess {
                    call,
                    stage,
                    slot: slot as u32,
                    used: what,
                    lacks: flag,
                }
                .into());
            }
        }
    }
    Ok(())
}
