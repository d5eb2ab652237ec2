//! Resource templates, memory layout and backing storage (`struct pipe_resource`).
//!
//! Layout is linear and tightly packed: level after level, and inside a level
//! sample plane after sample plane, slice (layer or 3D depth) after slice, row
//! after row.  Tight rows make transfers, outputs and host-owned memory
//! trivial; a 64x64 tile of a 1920-wide RGBA8 surface is still only 64 rows of
//! 256 contiguous bytes, which caches well.

use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::enums::{BindFlags, ResourceFlags, TextureTarget, Usage};
use crate::format::Format;

/// `struct pipe_resource` as a template for `resource_create`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceTemplate {
    /// Buffer, 1D/2D/3D texture, cube, rectangle or an array of them.
    pub target: TextureTarget,
    /// The texel format (`R8_UNORM` for buffers).
    pub format: Format,
    /// Width of level 0 in pixels, or the size of a buffer in bytes.
    pub width0: u32,
    /// Height of level 0 (1 for buffers and 1D).
    pub height0: u32,
    /// Depth of level 0 (3D textures; 1 otherwise).
    pub depth0: u32,
    /// Layers for arrays; 6 for cubes; 6 * n for cube arrays; 1 otherwise.
    pub array_size: u32,
    /// The last mip level (0: one level).
    pub last_level: u32,
    /// 0 and 1 both mean single-sampled.
    pub nr_samples: u32,
    /// 0 means "same as nr_samples".
    pub nr_storage_samples: u32,
    /// The usage hint (`PIPE_USAGE_*`); it changes no behaviour here, all memory is host memory.
    pub usage: Usage,
    /// What the resource may be bound as; views and bindings are checked against it.
    pub bind: BindFlags,
    /// `PIPE_RESOURCE_FLAG_*` bits.
    pub flags: ResourceFlags,
}

impl Default for ResourceTemplate {
    fn default() -> Self {
        ResourceTemplate {
            target: TextureTarget::Texture2D,
            format: Format::R8G8B8A8_UNORM,
            width0: 1,
            height0: 1,
            depth0: 1,
            array_size: 1,
            last_level: 0,
            nr_samples: 0,
            nr_storage_samples: 0,
            usage: Usage::Default,
            bind: BindFlags::empty(),
            flags: ResourceFlags::empty(),
        }
    }
}

impl ResourceTemplate {
    /// A buffer of `size` bytes.
    pub fn buffer(size: u32, bind: BindFlags) -> Self {
        ResourceTemplate {
            target: TextureTarget::Buffer,
            format: Format::R8_UNORM,
            width0: size,
            bind,
            ..Default::default()
        }
    }

    /// A single-level 2D texture.
    pub fn texture_2d(format: Format, width: u32, height: u32, bind: BindFlags) -> Self {
        ResourceTemplate {
            format,
            width0: width,
            height0: height,
            bind,
            ..Default::default()
        }
    }

    /// Samples stored per pixel (at least 1).
    pub fn samples(&self) -> u32 {
        self.nr_samples.max(1)
    }

    /// Storage samples per pixel (at least 1, at most `samples()`).
    pub fn storage_samples(&self) -> u32 {
        if self.nr_storage_samples == 0 {
            self.samples()
        } else {
            self.nr_storage_samples.min(self.samples())
        }
    }
}

/// The shape and place of one mip level inside a resource's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelLayout {
    /// Byte offset of the level's first sample plane.
    pub offset: usize,
    /// Width of the level in pixels.
    pub width: u32,
    /// Height of the level in pixels.
    pub height: u32,
    /// Slices: 3D depth at this level, or array layers / cube faces.
    pub depth: u32,
    /// Bytes from one row to the next.
    pub row_stride: usize,
    /// Bytes from one slice (layer or 3D slice) to the next.
    pub slice_stride: usize,
    /// Bytes from one sample plane to the next (MSAA); equals the level's
    /// single-sample size.
    pub sample_stride: usize,
}

impl LevelLayout {
    /// Byte offset of pixel (x, y) in slice z of sample plane s.
    #[inline]
    pub fn pixel_offset(&self, x: u32, y: u32, z: u32, s: u32, bpp: u32) -> usize {
        self.offset
            + s as usize * self.sample_stride
            + z as usize * self.slice_stride
            + y as usize * self.row_stride
            + x as usize * bpp as usize
    }
}

/// Where every level of a resource lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceLayout {
    /// One entry per mip level, level 0 first.
    pub levels: Vec<LevelLayout>,
    /// Total bytes of storage.
    pub size: usize,
    /// Bytes per pixel.
    pub bpp: u32,
    /// Stored samples per pixel.
    pub samples: u32,
}

impl ResourceLayout {
    /// Computes the tightly packed layout of `templ`, or `None` if its size
    /// overflows `usize` (the façade turns that into an error).
    pub fn new(templ: &ResourceTemplate) -> Option<Self> {
        let bpp = templ.format.desc().block_bytes;
        let samples = templ.storage_samples();
        let mut levels = Vec::with_capacity(templ.last_level as usize + 1);
        let mut offset = 0usize;
        for l in 0..=templ.last_level {
            let (width, height, depth) = level_extent(templ, l);
            let row_stride = if templ.target == TextureTarget::Buffer {
                templ.width0 as usize
            } else {
                (width as usize).checked_mul(bpp as usize)?
            };
            let slice_stride = row_stride.checked_mul(height as usize)?;
            let sample_stride = slice_stride.checked_mul(depth as usize)?;
            levels.push(LevelLayout {
                offset,
                width,
                height,
                depth,
                row_stride,
                slice_stride,
                sample_stride,
            });
            offset = offset.checked_add(sample_stride.checked_mul(samples as usize)?)?;
        }
        Some(ResourceLayout {
            levels,
            size: offset,
            bpp,
            samples,
        })
    }
}

/// Extent (width, height, slices) of mip level `level` of `templ`.
pub fn level_extent(templ: &ResourceTemplate, level: u32) -> (u32, u32, u32) {
    let minify = |v: u32| (v >> level.min(31)).max(1);
    match templ.target {
        TextureTarget::Buffer => (templ.width0, 1, 1),
        TextureTarget::Texture1D => (minify(templ.width0), 1, 1),
        TextureTarget::Texture1DArray => (minify(templ.width0), 1, templ.array_size.max(1)),
        TextureTarget::Texture2D | TextureTarget::TextureRect => {
            (minify(templ.width0), minify(templ.height0), 1)
        }
        TextureTarget::Texture2DArray
        | TextureTarget::TextureCube
        | TextureTarget::TextureCubeArray => (
            minify(templ.width0),
            minify(templ.height0),
            templ.array_size.max(1),
        ),
        TextureTarget::Texture3D => (
            minify(templ.width0),
            minify(templ.height0),
            minify(templ.depth0),
        ),
    }
}

/// 64-byte aligned storage unit, so every resource starts on a cache line and
/// SIMD loads of the first rows never straddle one.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheLine([u8; 64]);

enum Backing {
    /// Memory ferropipe allocated (zeroed on creation).
    Owned(#[allow(dead_code)] Box<[UnsafeCell<CacheLine>]>),
    /// Memory the host owns (`resource_from_user_memory`).
    User,
}

/// The bytes behind a resource.
///
/// Access goes through [`ResourceStorage::read`] / [`ResourceStorage::write`],
/// which take an internal reader/writer lock, so contexts of one screen may
/// use shared resources from different threads (screen.rst "Thread safety")
/// without data races.  The pipeline holds a write guard on its render
/// targets for the duration of a scene and hands disjoint tiles to worker
/// threads (see `ferropipe-systems`' tile writer).
pub struct ResourceStorage {
    ptr: NonNull<u8>,
    len: usize,
    lock: RwLock<()>,
    backing: Backing,
}

// SAFETY: the bytes are only reached through `read`/`write`, whose guards hold
// the RwLock (shared for reads, exclusive for writes), so no two threads ever
// hold a `&mut [u8]` and another reference to the same storage at once.
unsafe impl Send for ResourceStorage {}
// SAFETY: as above; `&ResourceStorage` only hands out lock-guarded access.
unsafe impl Sync for ResourceStorage {}

impl ResourceStorage {
    /// Allocates `len` zeroed bytes, or `None` if the allocation is refused
    /// (never aborts on a size the allocator cannot satisfy).
    pub fn new_zeroed(len: usize) -> Option<Self> {
        let lines = len.div_ceil(64).max(1);
        let mut v: Vec<UnsafeCell<CacheLine>> = Vec::new();
        v.try_reserve_exact(lines).ok()?;
        v.resize_with(lines, || UnsafeCell::new(CacheLine([0; 64])));
        let boxed = v.into_boxed_slice();
        // UnsafeCell<CacheLine> has the same layout as CacheLine, so the
        // boxed slice is `lines * 64` contiguous bytes.
        let ptr = NonNull::new(boxed.as_ptr() as *mut u8)?;
        Some(ResourceStorage {
            ptr,
            len,
            lock: RwLock::new(()),
            backing: Backing::Owned(boxed),
        })
    }

    /// Wraps host-owned memory as a resource's storage.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long as
    /// this storage (and therefore the resource, its views, surfaces and any
    /// pending work) lives, and the host must not access it concurrently with
    /// ferropipe except through fences it has waited on.
    pub unsafe fn from_user_memory(ptr: NonNull<u8>, len: usize) -> Self {
        ResourceStorage {
            ptr,
            len,
            lock: RwLock::new(()),
            backing: Backing::User,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the storage holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the memory is host-owned.
    pub fn is_user_memory(&self) -> bool {
        matches!(self.backing, Backing::User)
    }

    /// Shared access to the bytes.
    pub fn read(&self) -> StorageRead<'_> {
        let guard = self.lock.read().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the shared lock excludes writers; ptr/len describe memory
        // owned by `self` (or guaranteed live by the host, see
        // `from_user_memory`).
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) };
        StorageRead {
            _guard: guard,
            bytes,
        }
    }

    /// Exclusive access to the bytes.
    pub fn write(&self) -> StorageWrite<'_> {
        let guard = self.lock.write().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the exclusive lock excludes every other reader and writer.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) };
        StorageWrite {
            _guard: guard,
            bytes,
        }
    }

    /// Whether two storages are the same memory (feedback-loop detection).
    pub fn same_as(&self, other: &ResourceStorage) -> bool {
        self.ptr == other.ptr
    }
}

impl std::fmt::Debug for ResourceStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceStorage")
            .field("len", &self.len)
            .field("user", &self.is_user_memory())
            .finish()
    }
}

/// Shared access to a resource's bytes; derefs to `[u8]`.
pub struct StorageRead<'a> {
    _guard: RwLockReadGuard<'a, ()>,
    bytes: &'a [u8],
}

impl std::ops::Deref for StorageRead<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes
    }
}

/// Exclusive access to a resource's bytes; derefs to `[u8]`.
pub struct StorageWrite<'a> {
    _guard: RwLockWriteGuard<'a, ()>,
    bytes: &'a mut [u8],
}

impl std::ops::Deref for StorageWrite<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes
    }
}

impl std::ops::DerefMut for StorageWrite<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mip_chain_layout_is_tight() {
        let t = ResourceTemplate {
            target: TextureTarget::Texture2DArray,
            format: Format::R8G8B8A8_UNORM,
            width0: 8,
            height0: 4,
            array_size: 3,
            last_level: 3,
            ..Default::default()
        };
        let l = ResourceLayout::new(&t).unwrap();
        let sizes: Vec<_> = l
            .levels
            .iter()
            .map(|v| (v.width, v.height, v.depth))
            .collect();
        assert_eq!(sizes, vec![(8, 4, 3), (4, 2, 3), (2, 1, 3), (1, 1, 3)]);
        assert_eq!(l.levels[1].offset, 8 * 4 * 4 * 3);
        assert_eq!(l.size, (32 + 8 + 2 + 1) * 4 * 3);
    }

    #[test]
    fn storage_is_zeroed_and_aligned() {
        let s = ResourceStorage::new_zeroed(100).unwrap();
        assert_eq!(s.len(), 100);
        assert!(s.read().iter().all(|&b| b == 0));
        assert_eq!(s.read().as_ptr() as usize % 64, 0);
        s.write()[99] = 7;
        assert_eq!(s.read()[99], 7);
    }

    #[test]
    fn huge_layout_overflow_is_none() {
        let t = ResourceTemplate {
            target: TextureTarget::Texture3D,
            format: Format::R32G32B32A32_FLOAT,
            width0: u32::MAX,
            height0: u32::MAX,
            depth0: u32::MAX,
            ..Default::default()
        };
        assert!(ResourceLayout::new(&t).is_none());
    }
}

/// A created resource: its template, layout and bytes.
///
/// Shared as [`ResourceRef`] by the screen's resource entity, the host's
/// handles, sampler views, surfaces, bindings and recorded draws: Gallium's
/// reference counting is `Arc`'s.  The storage is freed when the last
/// reference goes.
#[derive(Debug)]
pub struct PipeResource {
    /// Unique within the process; names the resource in errors and logs.
    pub id: u64,
    /// The template it was created from.
    pub templ: ResourceTemplate,
    /// Where each level lives in `storage`.
    pub layout: ResourceLayout,
    /// The bytes.
    pub storage: ResourceStorage,
}

/// A counted reference to a resource.
pub type ResourceRef = std::sync::Arc<PipeResource>;
