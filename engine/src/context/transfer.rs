//! Transfers and copies: `transfer_map` / `transfer_unmap` /
//! `transfer_flush_region`, `buffer_subdata` / `texture_subdata`
//! (`transfer_inline_write`), `resource_copy_region`, `clear_buffer`
//! (context.rst "Transfers", "Blitting", "Clearing").
//!
//! # The shape of a transfer
//! A [`Transfer`] owns a *staging copy* of the mapped box, tightly packed:
//! rows of `width * bytes_per_pixel` bytes ([`Transfer::stride`]), slices of
//! `stride * height` bytes ([`Transfer::layer_stride`]).  The host reads and
//! writes it through [`Transfer::data`] / [`Transfer::data_mut`] with no
//! lock held, so mapping can never deadlock against rendering or another
//! context, and the borrow checker keeps the bytes valid for exactly the
//! life of the transfer.  Copying costs one memcpy of the box each way,
//! which is what a GPU driver's staging upload costs too; a CPU renderer
//! could map directly, but only by exposing raw pointers into storage that
//! worker threads may be writing.
//!
//! # PIPE_TRANSFER flags
//! * `READ`: the box is copied into the staging buffer at map time (after
//!   executing recorded work, unless `UNSYNCHRONIZED`).
//! * `WRITE`: the staging buffer is written back at unmap, or only the
//!   ranges given to `transfer_flush_region` with `FLUSH_EXPLICIT`.
//! * `DISCARD_RANGE` / `DISCARD_WHOLE_RESOURCE`: the old contents are not
//!   read (the staging buffer starts zeroed); not allowed with `READ`.
//! * `UNSYNCHRONIZED`: recorded work is not executed first (the host
//!   promises it does not touch the box); not allowed with `READ`.
//! * `DONTBLOCK`: ferropipe never blocks beyond executing recorded work,
//!   which it does before returning, so the map always succeeds.
//! * `FLUSH_EXPLICIT`: with `WRITE`, only flushed ranges are written back;
//!   not allowed with `READ`.
//! * `PERSISTENT`: the resource may be used by draws while mapped (it must
//!   have `PIPE_RESOURCE_FLAG_MAP_PERSISTENT`); host writes become visible
//!   at `transfer_flush_region` or unmap, and
//!   [`Context::transfer_refresh`] re-reads the box after rendering.
//! * `COHERENT`: not implemented (`Error::Unsupported`).
//! * `MAP_DIRECTLY`: refused (`Error::Unsupported`): there is no direct map.
//!
//! # Box rules (context.rst "Transfers")
//! Boxes are in pixels at the given level; for buffers `x`/`width` are
//! bytes.  1D: `y = 0, height = 1`.  1D/2D arrays: `z`/`depth` are layers.
//! Cubes: `z`/`depth` are faces (`z + depth <= 6`).  Cube arrays: `z` counts
//! `layer * 6 + face`.  3D: `z`/`depth` are slices of the level.  Every box
//! must lie inside its level with positive sizes; anything else is
//! [`ResourceError::BoxOutOfBounds`] naming the axis, with the numbers.

use ferropipe_components::enums::{ResourceFlags, TextureTarget, TransferFlags};
use ferropipe_components::resource::{PipeResource, ResourceRef};
use ferropipe_components::state::PipeBox;

use super::Context;
use crate::error::{Error, ResourceError, Result};
use crate::screen::Resource;

/// A validated region of one level of a resource, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    /// Byte offset of the box's first pixel in the storage.
    pub offset: usize,
    /// Bytes of one row of the box.
    pub row_bytes: usize,
    pub rows: usize,
    pub slices: usize,
    /// Storage strides.
    pub row_stride: usize,
    pub slice_stride: usize,
    /// Bytes per pixel (1 for buffers).
    pub bpp: usize,
}

impl Region {
    /// Byte offset of row `y`, slice `z` of the box in the storage.
    #[inline]
    pub fn row_offset(&self, y: usize, z: usize) -> usize {
        self.offset + z * self.slice_stride + y * self.row_stride
    }

    /// Total bytes of the box, tightly packed.
    pub fn packed_len(&self) -> usize {
        self.row_bytes * self.rows * self.slices
    }
}

/// Validates `b` against level `level` of `res` (the box rules in the
/// module docs) and resolves it to bytes.
pub(crate) fn resolve_box(
    call: &'static str,
    res: &PipeResource,
    level: u32,
    b: &PipeBox,
) -> Result<Region> {
    if res.layout.samples > 1 {
        return Err(Error::unsupported(call, "multisampled resources"));
    }
    resolve_plane_box(call, res, level, b)
}

/// [`resolve_box`] for sample plane 0 of any resource, multisampled ones
/// included (plane `s` starts `LevelLayout::sample_stride * s` bytes on).
pub(crate) fn resolve_plane_box(
    call: &'static str,
    res: &PipeResource,
    level: u32,
    b: &PipeBox,
) -> Result<Region> {
    let t = &res.templ;
    if level > t.last_level {
        return Err(ResourceError::LevelOutOfRange {
            call,
            field: "level",
            level,
            last_level: t.last_level,
        }
        .into());
    }
    let l = &res.layout.levels[level as usize];
    let (w, h, d) = (l.width, l.height, l.depth);
    let check = |field: &'static str, pos: i32, size: i32, extent: u32| -> Result<()> {
        if pos < 0 || size <= 0 || pos as u64 + size as u64 > u64::from(extent) {
            return Err(ResourceError::BoxOutOfBounds {
                call,
                field,
                pos: pos.into(),
                size: size.into(),
                extent,
                level,
            }
            .into());
        }
        Ok(())
    };
    check("box.x/width", b.x, b.width, w)?;
    check("box.y/height", b.y, b.height, h)?;
    check("box.z/depth", b.z, b.depth, d)?;
    let bpp = if t.target == TextureTarget::Buffer {
        1
    } else {
        res.layout.bpp as usize
    };
    Ok(Region {
        offset: l.offset
            + b.z as usize * l.slice_stride
            + b.y as usize * l.row_stride
            + b.x as usize * bpp,
        row_bytes: b.width as usize * bpp,
        rows: b.height as usize,
        slices: b.depth as usize,
        row_stride: l.row_stride,
        slice_stride: l.slice_stride,
        bpp,
    })
}

/// Runs `f` on `src`'s bytes (read-locked) and `dst`'s (write-locked), two
/// different resources, taking the locks in resource-id order like the
/// pipeline's `LockSet`, so contexts copying in opposite directions can
/// never deadlock.
pub(crate) fn lock_pair<R>(
    src: &PipeResource,
    dst: &PipeResource,
    f: impl FnOnce(&[u8], &mut [u8]) -> R,
) -> R {
    debug_assert!(!std::ptr::eq(src, dst));
    if src.id < dst.id {
        let r = src.storage.read();
        let mut w = dst.storage.write();
        f(&r, &mut w)
    } else {
        let mut w = dst.storage.write();
        let r = src.storage.read();
        f(&r, &mut w)
    }
}

/// Reads box `b` of `level` of `res` as it is now (work recorded but not
/// yet executed is not in it), tightly packed: what capture and scene
/// outputs read without a context.  Multisampled resources are refused as
/// in `transfer_map`.
pub fn read_box(res: &PipeResource, level: u32, b: &PipeBox) -> Result<Vec<u8>> {
    let region = resolve_box("read_box", res, level, b)?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(region.packed_len())
        .map_err(|_| Error::OutOfMemory {
            call: "read_box",
            bytes: region.packed_len() as u64,
        })?;
    bytes.resize(region.packed_len(), 0);
    read_region(&res.storage.read(), &region, &mut bytes);
    Ok(bytes)
}

/// Copies a region out of storage into tightly packed bytes.
pub(crate) fn read_region(storage: &[u8], r: &Region, out: &mut [u8]) {
    let mut at = 0;
    for z in 0..r.slices {
        for y in 0..r.rows {
            let src = r.row_offset(y, z);
            out[at..at + r.row_bytes].copy_from_slice(&storage[src..src + r.row_bytes]);
            at += r.row_bytes;
        }
    }
}

/// Writes packed rows (`stride` bytes apart, slices `layer_stride` apart)
/// into a region of storage.
pub(crate) fn write_region(
    storage: &mut [u8],
    r: &Region,
    data: &[u8],
    stride: usize,
    layer_stride: usize,
) {
    for z in 0..r.slices {
        for y in 0..r.rows {
            let dst = r.row_offset(y, z);
            let src = z * layer_stride + y * stride;
            storage[dst..dst + r.row_bytes].copy_from_slice(&data[src..src + r.row_bytes]);
        }
    }
}

/// A mapped box of a resource (`struct pipe_transfer` plus its mapping);
/// see the module docs.  Give it back with [`Context::transfer_unmap`];
/// dropping it unmapped discards its writes.
#[derive(Debug)]
pub struct Transfer {
    resource: ResourceRef,
    level: u32,
    usage: TransferFlags,
    pbox: PipeBox,
    region: Region,
    data: Vec<u8>,
    /// Context that mapped it (transfers are per context).
    context: u64,
}

/// The mapped bytes of a transfer and their layout (for hosts that want
/// both at once).
#[derive(Debug)]
pub struct TransferMapping<'a> {
    /// The mapped bytes of the box.
    pub data: &'a mut [u8],
    /// Bytes between rows of `data`.
    pub stride: usize,
    /// Bytes between layers (or 3D slices) of `data`.
    pub layer_stride: usize,
}

impl Transfer {
    /// The staging bytes: row `y` of slice `z` starts at
    /// `z * layer_stride() + y * stride()`.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The staging bytes, writable (written back at unmap for `WRITE`
    /// transfers).
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// The bytes with their strides.
    pub fn mapping(&mut self) -> TransferMapping<'_> {
        TransferMapping {
            stride: self.stride(),
            layer_stride: self.layer_stride(),
            data: &mut self.data,
        }
    }

    /// Bytes from one row to the next.
    pub fn stride(&self) -> usize {
        self.region.row_bytes
    }

    /// Bytes from one layer / slice to the next.
    pub fn layer_stride(&self) -> usize {
        self.region.row_bytes * self.region.rows
    }

    /// The mapped box.
    pub fn pipe_box(&self) -> &PipeBox {
        &self.pbox
    }

    /// The mapped level.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// The map flags.
    pub fn usage(&self) -> TransferFlags {
        self.usage
    }

    fn write_back(&self, sub: Option<&PipeBox>) {
        let mut storage = self.resource.storage.write();
        match sub {
            None => write_region(
                &mut storage,
                &self.region,
                &self.data,
                self.stride(),
                self.layer_stride(),
            ),
            Some(b) => {
                let r = &self.region;
                let sub = Region {
                    offset: r.offset
                        + b.z as usize * r.slice_stride
                        + b.y as usize * r.row_stride
                        + b.x as usize * r.bpp,
                    row_bytes: b.width as usize * r.bpp,
                    rows: b.height as usize,
                    slices: b.depth as usize,
                    ..*r
                };
                let start = b.z as usize * self.layer_stride()
                    + b.y as usize * self.stride()
                    + b.x as usize * r.bpp;
                write_region(
                    &mut storage,
                    &sub,
                    &self.data[start..],
                    self.stride(),
                    self.layer_stride(),
                );
            }
        }
    }
}

impl Context {
    /// `transfer_map`: maps `pbox` of `level` of `resource` (see the module
    /// docs for the flags and box rules).
    pub fn transfer_map(
        &mut self,
        resource: &Resource,
        level: u32,
        usage: TransferFlags,
        pbox: &PipeBox,
    ) -> Result<Transfer> {
        self.alive("transfer_map")?;
        const CALL: &str = "transfer_map";
        let res = resource.shared();
        if !usage.intersects(TransferFlags::READ_WRITE) {
            return Err(ResourceError::NoReadWrite.into());
        }
        let read = usage.contains(TransferFlags::READ);
        let write_only = TransferFlags::DISCARD_RANGE
            | TransferFlags::DISCARD_WHOLE_RESOURCE
            | TransferFlags::UNSYNCHRONIZED
            | TransferFlags::FLUSH_EXPLICIT;
        if read && usage.intersects(write_only) {
            return Err(ResourceError::ReadWithWriteOnlyFlags {
                flags: usage & write_only,
            }
            .into());
        }
        if usage.contains(TransferFlags::DIRECTLY) {
            return Err(Error::unsupported(CALL, "PIPE_TRANSFER_MAP_DIRECTLY"));
        }
        if usage.contains(TransferFlags::COHERENT) {
            return Err(Error::unsupported(CALL, "coherent persistent maps"));
        }
        if usage.contains(TransferFlags::PERSISTENT)
            && !res.templ.flags.contains(ResourceFlags::MAP_PERSISTENT)
        {
            return Err(ResourceError::NotPersistentResource.into());
        }
        let region = resolve_box(CALL, res, level, pbox)?;
        if !usage.contains(TransferFlags::UNSYNCHRONIZED) {
            self.flush_recorded()?;
        }
        let mut data = Vec::new();
        data.try_reserve_exact(region.packed_len())
            .map_err(|_| Error::OutOfMemory {
                call: CALL,
                bytes: region.packed_len() as u64,
            })?;
        data.resize(region.packed_len(), 0);
        if read {
            read_region(&res.storage.read(), &region, &mut data);
        }
        Ok(Transfer {
            resource: res.clone(),
            level,
            usage,
            pbox: *pbox,
            region,
            data,
            context: self.id,
        })
    }

    /// `transfer_flush_region`: with `FLUSH_EXPLICIT` (or `PERSISTENT`),
    /// writes `rel` — a box relative to the mapped box — back to the
    /// resource now.  Otherwise a no-op: unmap writes everything.
    pub fn transfer_flush_region(&mut self, transfer: &mut Transfer, rel: &PipeBox) -> Result<()> {
        self.alive("transfer_flush_region")?;
        const CALL: &str = "transfer_flush_region";
        self.own(CALL, transfer)?;
        let b = &transfer.pbox;
        let inside = |pos: i32, size: i32, extent: i32| {
            pos >= 0 && size > 0 && pos as i64 + size as i64 <= extent as i64
        };
        if !(inside(rel.x, rel.width, b.width)
            && inside(rel.y, rel.height, b.height)
            && inside(rel.z, rel.depth, b.depth))
        {
            return Err(ResourceError::FlushRegionOutside {
                region: *rel,
                width: b.width,
                height: b.height,
                depth: b.depth,
            }
            .into());
        }
        let explicit = transfer
            .usage
            .intersects(TransferFlags::FLUSH_EXPLICIT | TransferFlags::PERSISTENT);
        if transfer.usage.contains(TransferFlags::WRITE) && explicit {
            if self.is_capturing() {
                self.record_transfer_write(transfer, Some(rel));
            }
            self.flush_recorded()?;
            transfer.write_back(Some(rel));
        }
        Ok(())
    }

    /// Re-reads a persistent transfer's box from the resource after
    /// executing recorded work: how a host sees what draws wrote while the
    /// box stays mapped (GL: a fence wait on a persistent map).
    pub fn transfer_refresh(&mut self, transfer: &mut Transfer) -> Result<()> {
        self.alive("transfer_refresh")?;
        const CALL: &str = "transfer_refresh";
        self.own(CALL, transfer)?;
        if !transfer.usage.contains(TransferFlags::PERSISTENT) {
            return Err(ResourceError::NotPersistentMap.into());
        }
        self.flush_recorded()?;
        read_region(
            &transfer.resource.storage.read(),
            &transfer.region,
            &mut transfer.data,
        );
        Ok(())
    }

    /// `transfer_unmap`: writes a `WRITE` transfer's staging bytes back
    /// (all of them, or nothing more with `FLUSH_EXPLICIT`) and releases it.
    pub fn transfer_unmap(&mut self, transfer: Transfer) -> Result<()> {
        self.alive("transfer_unmap")?;
        const CALL: &str = "transfer_unmap";
        self.own(CALL, &transfer)?;
        if transfer.usage.contains(TransferFlags::WRITE)
            && !transfer.usage.contains(TransferFlags::FLUSH_EXPLICIT)
        {
            if self.is_capturing() {
                self.record_transfer_write(&transfer, None);
            }
            self.flush_recorded()?;
            transfer.write_back(None);
        }
        Ok(())
    }

    /// Reports what a `WRITE` transfer writes back (all of it, or `sub`,
    /// relative to the mapped box) to the capture, as the upload it is.
    fn record_transfer_write(&mut self, t: &Transfer, sub: Option<&PipeBox>) {
        let b = &t.pbox;
        let (abs, start) = match sub {
            None => (*b, 0),
            Some(r) => (
                PipeBox::new_3d(b.x + r.x, b.y + r.y, b.z + r.z, r.width, r.height, r.depth),
                r.z as usize * t.layer_stride()
                    + r.y as usize * t.stride()
                    + r.x as usize * t.region.bpp,
            ),
        };
        let data = &t.data[start..];
        if t.resource.templ.target == TextureTarget::Buffer {
            let len = abs.width as usize * t.region.bpp;
            self.record(super::CapturedCall::BufferSubdata {
                resource: &t.resource,
                offset: abs.x as u32,
                data: &data[..len.min(data.len())],
            });
        } else {
            self.record(super::CapturedCall::TextureSubdata {
                resource: &t.resource,
                level: t.level,
                pbox: abs,
                data,
                stride: t.stride(),
                layer_stride: t.layer_stride(),
            });
        }
    }

    fn own(&self, call: &'static str, t: &Transfer) -> Result<()> {
        if t.context != self.id {
            return Err(Error::InvalidHandle {
                call,
                field: "transfer",
                kind: "Transfer",
            });
        }
        Ok(())
    }

    /// `buffer_subdata` (`transfer_inline_write` of a buffer): writes `data`
    /// at byte `offset`.
    pub fn buffer_subdata(&mut self, resource: &Resource, offset: u32, data: &[u8]) -> Result<()> {
        self.alive("buffer_subdata")?;
        const CALL: &str = "buffer_subdata";
        let res = resource.shared();
        if res.templ.target != TextureTarget::Buffer {
            return Err(ResourceError::NotABuffer {
                call: CALL,
                field: "resource",
                target: res.templ.target,
            }
            .into());
        }
        if data.is_empty() {
            return Ok(());
        }
        let too_large = |field: &'static str, value: u64| ResourceError::TooLarge {
            call: CALL,
            field,
            value,
            limit: i32::MAX as u64,
        };
        let len = i32::try_from(data.len()).map_err(|_| too_large("data", data.len() as u64))?;
        let offset = i32::try_from(offset).map_err(|_| too_large("offset", offset.into()))?;
        let region = resolve_box(CALL, res, 0, &PipeBox::new_1d(offset, len))?;
        self.record(super::CapturedCall::BufferSubdata {
            resource: res,
            offset: offset as u32,
            data,
        });
        self.flush_recorded()?;
        write_region(
            &mut res.storage.write(),
            &region,
            data,
            data.len(),
            data.len(),
        );
        Ok(())
    }

    /// `texture_subdata` (`transfer_inline_write` of a texture): writes
    /// `pbox` of `level` from `data`, whose rows are `stride` bytes apart
    /// and slices `layer_stride` bytes apart (0 = tightly packed).
    pub fn texture_subdata(
        &mut self,
        resource: &Resource,
        level: u32,
        pbox: &PipeBox,
        data: &[u8],
        stride: usize,
        layer_stride: usize,
    ) -> Result<()> {
        self.alive("texture_subdata")?;
        const CALL: &str = "texture_subdata";
        let res = resource.shared();
        let region = resolve_box(CALL, res, level, pbox)?;
        let stride = if stride == 0 {
            region.row_bytes
        } else {
            stride
        };
        let layer_stride = if layer_stride == 0 {
            stride.saturating_mul(region.rows)
        } else {
            layer_stride
        };
        // Saturating: strides come from the host and may be anything.
        let slice_bytes = stride
            .saturating_mul(region.rows - 1)
            .saturating_add(region.row_bytes);
        if stride < region.row_bytes || layer_stride < slice_bytes {
            return Err(ResourceError::StrideTooSmall {
                stride,
                layer_stride,
                row_bytes: region.row_bytes,
                slice_bytes,
            }
            .into());
        }
        let need = layer_stride
            .saturating_mul(region.slices - 1)
            .saturating_add(slice_bytes);
        if data.len() < need {
            return Err(ResourceError::DataTooSmall {
                call: CALL,
                field: "data",
                len: data.len(),
                needed: need,
            }
            .into());
        }
        self.record(super::CapturedCall::TextureSubdata {
            resource: res,
            level,
            pbox: *pbox,
            data,
            stride,
            layer_stride,
        });
        self.flush_recorded()?;
        write_region(
            &mut res.storage.write(),
            &region,
            data,
            stride,
            layer_stride,
        );
        Ok(())
    }

    /// `resource_copy_region`: copies `src_box` of `src_level` of `src` to
    /// (`dstx`, `dsty`, `dstz`) of `dst_level` of `dst`, byte for byte.  The
    /// formats must have the same block size; buffers copy to buffers only;
    /// overlapping source and destination are an error (context.rst).
    #[allow(clippy::too_many_arguments)]
    pub fn resource_copy_region(
        &mut self,
        dst: &Resource,
        dst_level: u32,
        dstx: u32,
        dsty: u32,
        dstz: u32,
        src: &Resource,
        src_level: u32,
        src_box: &PipeBox,
    ) -> Result<()> {
        self.alive("resource_copy_region")?;
        const CALL: &str = "resource_copy_region";
        let (d, s) = (dst.shared(), src.shared());
        let (dt, st) = (&d.templ, &s.templ);
        let (d_buf, s_buf) = (
            dt.target == TextureTarget::Buffer,
            st.target == TextureTarget::Buffer,
        );
        if d_buf != s_buf {
            return Err(Error::unsupported(
                CALL,
                "copies between a buffer and a texture",
            ));
        }
        if !d_buf && dt.format.desc().block_bytes != st.format.desc().block_bytes {
            return Err(ResourceError::BlockSizeMismatch {
                dst: dt.format,
                src: st.format,
            }
            .into());
        }
        let samples = s.layout.samples.max(1);
        if samples != d.layout.samples.max(1) {
            return Err(ResourceError::SampleCountMismatch {
                call: CALL,
                field: "dst/src",
                dst: d.layout.samples.max(1),
                src: samples,
            }
            .into());
        }
        let src_region = resolve_plane_box(CALL, s, src_level, src_box)?;
        let to_i32 = |field: &'static str, v: u32| {
            i32::try_from(v).map_err(|_| ResourceError::TooLarge {
                call: CALL,
                field,
                value: v.into(),
                limit: i32::MAX as u64,
            })
        };
        let dst_box = PipeBox::new_3d(
            to_i32("dstx", dstx)?,
            to_i32("dsty", dsty)?,
            to_i32("dstz", dstz)?,
            src_box.width,
            src_box.height,
            src_box.depth,
        );
        let dst_region = resolve_plane_box(CALL, d, dst_level, &dst_box)?;
        let same = std::sync::Arc::ptr_eq(d, s);
        let span = |a: i32, b: i32, len: i32| a < b + len && b < a + len;
        if same
            && src_level == dst_level
            && span(src_box.x, dst_box.x, src_box.width)
            && span(src_box.y, dst_box.y, src_box.height)
            && span(src_box.z, dst_box.z, src_box.depth)
        {
            return Err(ResourceError::CopyOverlap.into());
        }
        self.record(super::CapturedCall::ResourceCopyRegion {
            dst: d,
            dst_level,
            dstx,
            dsty,
            dstz,
            src: s,
            src_level,
            src_box: *src_box,
        });
        self.flush_recorded()?;
        // Every sample plane (the same box in each).
        let plane = |r: Region, res: &PipeResource, level: u32, p: usize| Region {
            offset: r.offset + p * res.layout.levels[level as usize].sample_stride,
            ..r
        };
        let pairs: Vec<(Region, Region)> = (0..samples as usize)
            .map(|p| {
                (
                    plane(src_region, s, src_level, p),
                    plane(dst_region, d, dst_level, p),
                )
            })
            .collect();
        if same {
            let mut storage = d.storage.write();
            for (sr, dr) in pairs {
                for z in 0..sr.slices {
                    for y in 0..sr.rows {
                        let from = sr.row_offset(y, z);
                        storage.copy_within(from..from + sr.row_bytes, dr.row_offset(y, z));
                    }
                }
            }
        } else {
            lock_pair(s, d, |src, dst| {
                for (sr, dr) in pairs {
                    for z in 0..sr.slices {
                        for y in 0..sr.rows {
                            let (from, to) = (sr.row_offset(y, z), dr.row_offset(y, z));
                            dst[to..to + sr.row_bytes]
                                .copy_from_slice(&src[from..from + sr.row_bytes]);
                        }
                    }
                }
            });
        }
        Ok(())
    }

    /// `texture_barrier`: makes rendering to bound surfaces visible to
    /// sampling.  ferropipe executes recorded work here.
    pub fn texture_barrier(&mut self) -> Result<()> {
        self.alive("texture_barrier")?;
        self.record(super::CapturedCall::TextureBarrier);
        self.flush_recorded()
    }

    /// `memory_barrier`: orders memory accesses across the given kinds.
    /// ferropipe executes recorded work here; persistent maps publish their
    /// writes through `transfer_flush_region`.
    pub fn memory_barrier(
        &mut self,
        flags: ferropipe_components::enums::BarrierFlags,
    ) -> Result<()> {
        self.alive("memory_barrier")?;
        self.record(super::CapturedCall::MemoryBarrier(flags));
        self.flush_recorded()
    }

    /// `clear_buffer`: fills `size` bytes at `offset` with repetitions of
    /// `value` (`size` must be a multiple of its length).
    pub fn clear_buffer(
        &mut self,
        resource: &Resource,
        offset: u32,
        size: u32,
        value: &[u8],
    ) -> Result<()> {
        self.alive("clear_buffer")?;
        const CALL: &str = "clear_buffer";
        let res = resource.shared();
        if res.templ.target != TextureTarget::Buffer {
            return Err(ResourceError::NotABuffer {
                call: CALL,
                field: "resource",
                target: res.templ.target,
            }
            .into());
        }
        if value.is_empty() || value.len() > 16 {
            return Err(ResourceError::ClearValueSize { len: value.len() }.into());
        }
        if !(size as usize).is_multiple_of(value.len()) {
            return Err(ResourceError::Misaligned {
                call: CALL,
                field: "size",
                value: size.into(),
                align: value.len() as u32,
            }
            .into());
        }
        if u64::from(offset) + u64::from(size) > u64::from(res.templ.width0) {
            return Err(ResourceError::RangePastEnd {
                call: CALL,
                field: "offset/size",
                offset: offset.into(),
                size: size.into(),
                buffer_size: res.templ.width0.into(),
            }
            .into());
        }
        self.record(super::CapturedCall::ClearBuffer {
            resource: res,
            offset,
            size,
            value,
        });
        self.flush_recorded()?;
        let mut storage = res.storage.write();
        let dst = &mut storage[offset as usize..(offset + size) as usize];
        ferropipe_components::pack::fill_row(value, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Screen;
    use crate::test_util::{read_level, setup};
    use ferropipe_components::enums::BindFlags;
    use ferropipe_components::format::Format;
    use ferropipe_components::resource::ResourceTemplate;

    fn tex(s: &Screen, target: TextureTarget, w: u32, h: u32, d: u32, layers: u32) -> Resource {
        s.resource_create(&ResourceTemplate {
            target,
            format: Format::R8G8B8A8_UNORM,
            width0: w,
            height0: h,
            depth0: d,
            array_size: layers,
            last_level: u32::from(target != TextureTarget::TextureRect),
            bind: BindFlags::SAMPLER_VIEW,
            ..Default::default()
        })
        .unwrap()
    }

    /// Writes a distinct byte pattern into `b` through a WRITE transfer,
    /// reads the whole level back and checks the bytes landed exactly at
    /// the box (and nowhere else).
    fn round_trip(c: &mut Context, r: &Resource, level: u32, b: PipeBox) {
        let mut t = c
            .transfer_map(
                r,
                level,
                TransferFlags::WRITE | TransferFlags::DISCARD_RANGE,
                &b,
            )
            .unwrap();
        assert_eq!(t.data().len(), t.layer_stride() * b.depth as usize);
        for (i, v) in t.data_mut().iter_mut().enumerate() {
            *v = (i % 251) as u8 + 1;
        }
        c.transfer_unmap(t).unwrap();
        let l = r.layout().levels[level as usize];
        let whole = PipeBox::new_3d(0, 0, 0, l.width as i32, l.height as i32, l.depth as i32);
        let t = c
            .transfer_map(r, level, TransferFlags::READ, &whole)
            .unwrap();
        let bpp = 4usize;
        for z in 0..l.depth as i32 {
            for y in 0..l.height as i32 {
                for x in 0..l.width as i32 {
                    let at =
                        z as usize * t.layer_stride() + y as usize * t.stride() + x as usize * bpp;
                    let inside = x >= b.x
                        && x < b.x + b.width
                        && y >= b.y
                        && y < b.y + b.height
                        && z >= b.z
                        && z < b.z + b.depth;
                    let got = t.data()[at];
                    if inside {
                        let i = (z - b.z) as usize * (b.width * b.height) as usize * bpp
                            + (y - b.y) as usize * b.width as usize * bpp
                            + (x - b.x) as usize * bpp;
                        assert_eq!(got, (i % 251) as u8 + 1, "{x},{y},{z}");
                    } else {
                        assert_eq!(got, 0, "outside the box at {x},{y},{z}");
                    }
                }
            }
        }
        c.transfer_unmap(t).unwrap();
    }

    #[test]
    fn box_rules_for_every_target() {
        use TextureTarget::*;
        let (s, mut c) = setup();
        // (resource, level, a valid box, invalid boxes)
        let cases: Vec<(Resource, u32, PipeBox, Vec<PipeBox>)> = vec![
            (
                tex(&s, Texture1D, 16, 1, 1, 1),
                0,
                PipeBox::new_1d(3, 9),
                vec![
                    PipeBox::new_1d(8, 9),
                    PipeBox::new_2d(0, 1, 4, 1),
                    PipeBox::new_1d(-1, 2),
                    PipeBox::new_1d(0, 0),
                ],
            ),
            (
                tex(&s, Texture1DArray, 16, 1, 1, 5),
                1,
                PipeBox::new_3d(1, 0, 2, 6, 1, 3),
                vec![
                    PipeBox::new_3d(0, 0, 3, 8, 1, 3),
                    PipeBox::new_3d(0, 0, 0, 9, 1, 1),
                ],
            ),
            (
                tex(&s, Texture2D, 8, 6, 1, 1),
                0,
                PipeBox::new_2d(2, 1, 5, 4),
                vec![
                    PipeBox::new_2d(2, 3, 5, 4),
                    PipeBox::new_3d(0, 0, 1, 1, 1, 1),
                ],
            ),
            (
                tex(&s, TextureRect, 7, 5, 1, 1),
                0,
                PipeBox::new_2d(0, 0, 7, 5),
                vec![PipeBox::new_2d(0, 0, 8, 5)],
            ),
            (
                tex(&s, Texture2DArray, 8, 8, 1, 4),
                1,
                PipeBox::new_3d(1, 1, 1, 3, 2, 3),
                vec![
                    PipeBox::new_3d(0, 0, 2, 4, 4, 3),
                    PipeBox::new_3d(0, 0, 0, 5, 4, 1),
                ],
            ),
            (
                tex(&s, TextureCube, 8, 8, 1, 6),
                0,
                PipeBox::new_3d(0, 2, 4, 8, 3, 2),
                vec![PipeBox::new_3d(0, 0, 5, 8, 8, 2)],
            ),
            (
                tex(&s, TextureCubeArray, 4, 4, 1, 12),
                1,
                // layer 1 face 3 .. layer 1 face 5: z = 6 + 3.
                PipeBox::new_3d(0, 0, 9, 2, 2, 3),
                vec![PipeBox::new_3d(0, 0, 10, 2, 2, 3)],
            ),
            (
                tex(&s, Texture3D, 8, 4, 6, 1),
                1,
                PipeBox::new_3d(1, 0, 1, 3, 2, 2),
                vec![
                    PipeBox::new_3d(0, 0, 2, 4, 2, 2),
                    PipeBox::new_3d(0, 0, 0, 4, 3, 1),
                ],
            ),
        ];
        for (r, level, good, bad) in &cases {
            round_trip(&mut c, r, *level, *good);
            for b in bad {
                assert!(
                    matches!(
                        c.transfer_map(r, *level, TransferFlags::READ, b),
                        Err(Error::Resource(ResourceError::BoxOutOfBounds { level: l, .. }))
                            if l == *level
                    ),
                    "{} {b:?}",
                    r.template().target
                );
            }
            assert!(matches!(
                c.transfer_map(r, 3, TransferFlags::READ, good),
                Err(Error::Resource(ResourceError::LevelOutOfRange {
                    level: 3,
                    ..
                }))
            ));
        }
        // Buffers: bytes.
        let buf = s
            .resource_create(&ResourceTemplate::buffer(100, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let mut t = c
            .transfer_map(&buf, 0, TransferFlags::WRITE, &PipeBox::new_1d(90, 10))
            .unwrap();
        t.data_mut().fill(7);
        c.transfer_unmap(t).unwrap();
        assert_eq!(
            &buf.shared().storage.read()[89..],
            &[0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]
        );
        assert!(
            c.transfer_map(&buf, 0, TransferFlags::READ, &PipeBox::new_1d(91, 10))
                .is_err()
        );
    }

    #[test]
    fn copy_region_works_for_every_target() {
        use TextureTarget::*;
        let (s, mut c) = setup();
        // (target, w, h, d, layers, level, src box, dst x/y/z)
        let cases = [
            (Texture1D, 32, 1, 1, 1, 1, PipeBox::new_1d(3, 9), (5, 0, 0)),
            (
                Texture1DArray,
                16,
                1,
                1,
                5,
                1,
                PipeBox::new_3d(1, 0, 1, 6, 1, 3),
                (2, 0, 2),
            ),
            (
                Texture2D,
                16,
                12,
                1,
                1,
                1,
                PipeBox::new_2d(1, 2, 5, 3),
                (3, 1, 0),
            ),
            (
                TextureRect,
                9,
                7,
                1,
                1,
                0,
                PipeBox::new_2d(2, 1, 6, 5),
                (0, 2, 0),
            ),
            (
                Texture2DArray,
                8,
                8,
                1,
                4,
                1,
                PipeBox::new_3d(0, 1, 1, 3, 2, 2),
                (1, 0, 2),
            ),
            (
                TextureCube,
                8,
                8,
                1,
                6,
                0,
                PipeBox::new_3d(2, 2, 3, 4, 5, 3),
                (4, 0, 0),
            ),
            (
                TextureCubeArray,
                4,
                4,
                1,
                12,
                1,
                PipeBox::new_3d(0, 0, 5, 2, 1, 4),
                (0, 1, 7),
            ),
            (
                Texture3D,
                8,
                8,
                8,
                1,
                1,
                PipeBox::new_3d(1, 1, 1, 2, 3, 2),
                (2, 0, 2),
            ),
        ];
        for (target, w, h, d, layers, level, b, (dx, dy, dz)) in cases {
            let templ = ResourceTemplate {
                target,
                format: Format::R8G8B8A8_UNORM,
                width0: w,
                height0: h,
                depth0: d,
                array_size: layers,
                last_level: u32::from(target != TextureRect),
                bind: BindFlags::SAMPLER_VIEW,
                ..Default::default()
            };
            let src = s.resource_create(&templ).unwrap();
            // The destination views the same bytes as R32_UINT: copies are
            // byte copies between formats of one size.
            let dst = s
                .resource_create(&ResourceTemplate {
                    format: Format::R32_UINT,
                    ..templ
                })
                .unwrap();
            let l = src.layout().levels[level as usize];
            let whole = PipeBox::new_3d(0, 0, 0, l.width as i32, l.height as i32, l.depth as i32);
            let n = 4 * (l.width * l.height * l.depth) as usize;
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8 + 1).collect();
            c.texture_subdata(&src, level, &whole, &data, 0, 0).unwrap();
            c.resource_copy_region(&dst, level, dx, dy, dz, &src, level, &b)
                .unwrap();
            let out = read_level(&mut c, &dst, level);
            let at = |x: u32, y: u32, z: u32| 4 * ((z * l.height + y) * l.width + x) as usize;
            for z in 0..l.depth {
                for y in 0..l.height {
                    for x in 0..l.width {
                        let inside = (dx..dx + b.width as u32).contains(&x)
                            && (dy..dy + b.height as u32).contains(&y)
                            && (dz..dz + b.depth as u32).contains(&z);
                        let want: &[u8] = if inside {
                            let (sx, sy, sz) = (
                                x - dx + b.x as u32,
                                y - dy + b.y as u32,
                                z - dz + b.z as u32,
                            );
                            &data[at(sx, sy, sz)..][..4]
                        } else {
                            &[0; 4]
                        };
                        assert_eq!(&out[at(x, y, z)..][..4], want, "{target} at {x},{y},{z}");
                    }
                }
            }
            // The other level is untouched.
            let other = 1 - level.min(1);
            if other <= templ.last_level {
                assert!(read_level(&mut c, &dst, other).iter().all(|&v| v == 0));
            }
            // A box past the destination is refused.
            assert!(matches!(
                c.resource_copy_region(&dst, level, l.width, 0, 0, &src, level, &b),
                Err(Error::Resource(ResourceError::BoxOutOfBounds {
                    call: "resource_copy_region",
                    field: "box.x/width",
                    ..
                }))
            ));
        }
    }

    #[test]
    fn copy_region_copies_every_sample_plane() {
        use crate::test_util::msaa;
        let (_s, mut c) = setup();
        let planes: Vec<Vec<u8>> = (0..4u8).map(|p| vec![p + 1; 16]).collect();
        let src = msaa(Format::R8G8B8A8_UNORM, 2, 2, &planes);
        let dst = msaa(Format::R8G8B8A8_UNORM, 2, 2, &vec![vec![0; 16]; 4]);
        c.resource_copy_region(&dst, 0, 1, 0, 0, &src, 0, &PipeBox::new_2d(0, 1, 1, 1))
            .unwrap();
        let l = dst.layout().levels[0];
        let bytes = dst.shared().storage.read();
        for p in 0..4usize {
            let plane = &bytes[l.offset + p * l.sample_stride..][..16];
            let mut want = [0u8; 16];
            want[4..8].fill(p as u8 + 1);
            assert_eq!(plane, &want[..], "plane {p}");
        }
        drop(bytes);
        let two = msaa(Format::R8G8B8A8_UNORM, 2, 2, &vec![vec![0; 16]; 2]);
        assert!(matches!(
            c.resource_copy_region(&two, 0, 0, 0, 0, &src, 0, &PipeBox::new_2d(0, 0, 1, 1)),
            Err(Error::Resource(ResourceError::SampleCountMismatch {
                dst: 2,
                src: 4,
                ..
            }))
        ));
    }

    #[test]
    fn flags_behave() {
        let (s, mut c) = setup();
        let buf = s
            .resource_create(&ResourceTemplate::buffer(16, BindFlags::VERTEX_BUFFER))
            .unwrap();
        c.buffer_subdata(&buf, 0, &[1; 16]).unwrap();
        let whole = PipeBox::new_1d(0, 16);
        // READ with write-only flags is invalid.
        for f in [
            TransferFlags::DISCARD_RANGE,
            TransferFlags::UNSYNCHRONIZED,
            TransferFlags::FLUSH_EXPLICIT,
            TransferFlags::DISCARD_WHOLE_RESOURCE,
        ] {
            assert!(
                c.transfer_map(&buf, 0, TransferFlags::READ | f, &whole)
                    .is_err()
            );
        }
        assert!(
            c.transfer_map(&buf, 0, TransferFlags::empty(), &whole)
                .is_err()
        );
        // DISCARD starts from zeros; READ sees the contents.
        let t = c
            .transfer_map(
                &buf,
                0,
                TransferFlags::WRITE | TransferFlags::DISCARD_RANGE,
                &whole,
            )
            .unwrap();
        assert!(t.data().iter().all(|&b| b == 0));
        drop(t); // dropped without unmap: nothing written
        let t = c
            .transfer_map(&buf, 0, TransferFlags::READ_WRITE, &whole)
            .unwrap();
        assert!(t.data().iter().all(|&b| b == 1));
        c.transfer_unmap(t).unwrap();
        // FLUSH_EXPLICIT writes only flushed ranges.
        let mut t = c
            .transfer_map(
                &buf,
                0,
                TransferFlags::WRITE | TransferFlags::FLUSH_EXPLICIT,
                &PipeBox::new_1d(4, 8),
            )
            .unwrap();
        t.data_mut().fill(9);
        c.transfer_flush_region(&mut t, &PipeBox::new_1d(2, 3))
            .unwrap();
        assert!(
            c.transfer_flush_region(&mut t, &PipeBox::new_1d(6, 3))
                .is_err()
        );
        c.transfer_unmap(t).unwrap();
        assert_eq!(
            &buf.shared().storage.read()[..],
            &[1, 1, 1, 1, 1, 1, 9, 9, 9, 1, 1, 1, 1, 1, 1, 1]
        );
        // PERSISTENT needs the resource flag; COHERENT and DIRECTLY are
        // not implemented.
        assert!(matches!(
            c.transfer_map(
                &buf,
                0,
                TransferFlags::WRITE | TransferFlags::PERSISTENT,
                &whole
            ),
            Err(Error::Resource(ResourceError::NotPersistentResource))
        ));
        assert!(
            c.transfer_map(
                &buf,
                0,
                TransferFlags::WRITE | TransferFlags::COHERENT,
                &whole
            )
            .unwrap_err()
            .is_unsupported()
        );
        let pbuf = s
            .resource_create(&ResourceTemplate {
                flags: ResourceFlags::MAP_PERSISTENT,
                ..ResourceTemplate::buffer(8, BindFlags::VERTEX_BUFFER)
            })
            .unwrap();
        let mut t = c
            .transfer_map(
                &pbuf,
                0,
                TransferFlags::READ_WRITE | TransferFlags::PERSISTENT,
                &PipeBox::new_1d(0, 8),
            )
            .unwrap();
        t.data_mut()[0] = 5;
        c.transfer_flush_region(&mut t, &PipeBox::new_1d(0, 1))
            .unwrap();
        assert_eq!(pbuf.shared().storage.read()[0], 5);
        c.clear_buffer(&pbuf, 4, 4, &[3]).unwrap();
        c.transfer_refresh(&mut t).unwrap();
        assert_eq!(t.data(), &[5, 0, 0, 0, 3, 3, 3, 3]);
        // Transfers belong to their context.
        let mut other = s.context_create().unwrap();
        assert!(matches!(
            other.transfer_flush_region(&mut t, &PipeBox::new_1d(0, 1)),
            Err(Error::InvalidHandle { .. })
        ));
        c.transfer_unmap(t).unwrap();
    }

    #[test]
    fn subdata_copies_and_clear_buffer() {
        let (s, mut c) = setup();
        let a = tex(&s, TextureTarget::Texture2DArray, 4, 4, 1, 3);
        // texture_subdata with padded rows.
        let mut data = vec![0u8; 2 * 12 + 8];
        for (i, v) in data.iter_mut().enumerate() {
            *v = i as u8;
        }
        c.texture_subdata(&a, 0, &PipeBox::new_3d(1, 1, 2, 2, 2, 1), &data, 12, 0)
            .unwrap();
        let t = c
            .transfer_map(
                &a,
                0,
                TransferFlags::READ,
                &PipeBox::new_3d(1, 1, 2, 2, 2, 1),
            )
            .unwrap();
        assert_eq!(&t.data()[..8], &data[..8]);
        assert_eq!(&t.data()[8..], &data[12..20]);
        c.transfer_unmap(t).unwrap();
        assert!(
            c.texture_subdata(&a, 0, &PipeBox::new_2d(0, 0, 4, 4), &[0; 63], 0, 0)
                .is_err()
        );
        for (stride, layer_stride) in [(usize::MAX, 0), (16, usize::MAX)] {
            let b = PipeBox::new_3d(0, 0, 0, 4, 4, 2);
            assert!(
                c.texture_subdata(&a, 0, &b, &[0; 64], stride, layer_stride)
                    .is_err()
            );
        }
        // Copy layer 2 to layer 0 of the same resource, and to level 1.
        c.resource_copy_region(&a, 0, 0, 0, 0, &a, 0, &PipeBox::new_3d(0, 0, 2, 4, 4, 1))
            .unwrap();
        let read = |c: &mut Context, z: i32| {
            let t = c
                .transfer_map(
                    &a,
                    0,
                    TransferFlags::READ,
                    &PipeBox::new_3d(0, 0, z, 4, 4, 1),
                )
                .unwrap();
            t.data().to_vec()
        };
        assert_eq!(read(&mut c, 0), read(&mut c, 2));
        // Overlap in the same layer is refused; side by side is fine.
        assert!(
            c.resource_copy_region(&a, 0, 1, 0, 0, &a, 0, &PipeBox::new_3d(0, 0, 0, 2, 2, 1))
                .is_err()
        );
        c.resource_copy_region(&a, 0, 2, 0, 0, &a, 0, &PipeBox::new_3d(0, 0, 0, 2, 2, 1))
            .unwrap();
        // Between resources of compatible size; into a 3D slice.
        let v = tex(&s, TextureTarget::Texture3D, 4, 4, 4, 1);
        c.resource_copy_region(&v, 0, 0, 0, 3, &a, 0, &PipeBox::new_3d(0, 0, 2, 4, 4, 1))
            .unwrap();
        let t = c
            .transfer_map(
                &v,
                0,
                TransferFlags::READ,
                &PipeBox::new_3d(0, 0, 3, 4, 4, 1),
            )
            .unwrap();
        assert_eq!(t.data(), &read(&mut c, 2)[..]);
        c.transfer_unmap(t).unwrap();
        let small = s
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8_UNORM,
                4,
                4,
                BindFlags::SAMPLER_VIEW,
            ))
            .unwrap();
        assert!(
            c.resource_copy_region(&small, 0, 0, 0, 0, &a, 0, &PipeBox::new_2d(0, 0, 1, 1))
                .is_err()
        );
        // Buffers.
        let b = s
            .resource_create(&ResourceTemplate::buffer(12, BindFlags::VERTEX_BUFFER))
            .unwrap();
        c.clear_buffer(&b, 0, 12, &0x0403_0201u32.to_le_bytes())
            .unwrap();
        assert!(c.clear_buffer(&b, 0, 10, &[1, 2, 3, 4]).is_err());
        assert!(c.clear_buffer(&b, 8, 8, &[1]).is_err());
        let b2 = s
            .resource_create(&ResourceTemplate::buffer(12, BindFlags::VERTEX_BUFFER))
            .unwrap();
        c.resource_copy_region(&b2, 0, 2, 0, 0, &b, 0, &PipeBox::new_1d(4, 8))
            .unwrap();
        assert_eq!(
            &b2.shared().storage.read()[..],
            &[0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 0, 0]
        );
        assert!(
            c.resource_copy_region(&b2, 0, 0, 0, 0, &a, 0, &PipeBox::new_2d(0, 0, 1, 1))
                .unwrap_err()
                .is_unsupported()
        );
        assert!(c.buffer_subdata(&b2, 10, &[1, 2, 3]).is_err());
        assert!(c.buffer_subdata(&a, 0, &[1]).is_err());
    }
}
