//! Resource locking for a pass, and the shader-resource views built on it
//! (the role of llvmpipe's `lp_setup_update_state` resource binding and
//! `llvmpipe_resource_map` during a scene).
//!
//! A system locks every resource it reads or writes for the duration of its
//! run, in one pass ordered by resource id (so two contexts sharing
//! resources can never deadlock), reads and writes in the same order.  A
//! resource that is both written (render target) and read (sampled) in the
//! same pass is locked for writing and sampled from a snapshot taken at
//! lock time, so shared slices never alias the bytes tile jobs write.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use ferropipe_components::batch::{ShaderBufferBinding, ShaderImageBinding, StageResources};
use ferropipe_components::resource::{PipeResource, ResourceRef, StorageRead, StorageWrite};
use ferropipe_components::shader::{BoundTexture, ShaderResources, StorageImage, WordBuffer};
use ferropipe_components::state::SamplerState;

enum Held<'a> {
    Read(StorageRead<'a>),
    Write {
        _guard: StorageWrite<'a>,
        ptr: *mut u8,
        len: usize,
        /// Bytes as they were when locked, for readers in the same pass.
        snapshot: Option<Vec<u8>>,
    },
}

/// The locks one system holds.
pub struct LockSet<'a> {
    /// Sorted by resource pointer for lookup.
    held: Vec<(*const PipeResource, Held<'a>)>,
}

// SAFETY: shared access only hands out slices of read-locked (or snapshot)
// bytes and raw target pointers; writing through those pointers is governed
// by `merge::Targets`' contract (disjoint tiles under the held write lock).
unsafe impl Sync for LockSet<'_> {}

impl<'a> LockSet<'a> {
    /// Locks `items` (`(resource, write)`), in resource-id order.
    pub fn acquire(items: impl IntoIterator<Item = (&'a ResourceRef, bool)>) -> Self {
        let mut list: Vec<(&'a ResourceRef, bool, bool)> = Vec::new();
        for (r, w) in items {
            list.push((r, w, !w));
        }
        list.sort_by_key(|(r, _, _)| (r.id, Arc::as_ptr(r) as usize));
        // Merge duplicates: write wins, remember whether it is also read.
        let mut merged: Vec<(&'a ResourceRef, bool, bool)> = Vec::with_capacity(list.len());
        for (r, w, rd) in list {
            if let Some(last) = merged.last_mut()
                && Arc::ptr_eq(last.0, r)
            {
                last.1 |= w;
                last.2 |= rd;
                continue;
            }
            merged.push((r, w, rd));
        }
        let mut held = Vec::with_capacity(merged.len());
        for (r, write, read) in merged {
            let h = if write {
                let mut g = r.storage.write();
                let ptr = g.as_mut_ptr();
                let len = g.len();
                let snapshot = read.then(|| g.to_vec());
                Held::Write {
                    _guard: g,
                    ptr,
                    len,
                    snapshot,
                }
            } else {
                Held::Read(r.storage.read())
            };
            held.push((Arc::as_ptr(r), h));
        }
        held.sort_by_key(|(p, _)| *p as usize);
        LockSet { held }
    }

    fn find(&self, r: &PipeResource) -> Option<&Held<'a>> {
        let key = r as *const PipeResource as usize;
        self.held
            .binary_search_by_key(&key, |(p, _)| *p as usize)
            .ok()
            .map(|i| &self.held[i].1)
    }

    /// The bytes of a resource locked for reading (or its snapshot).
    pub fn bytes(&self, r: &PipeResource) -> &[u8] {
        match self.find(r) {
            Some(Held::Read(g)) => g,
            Some(Held::Write {
                snapshot: Some(s), ..
            }) => s,
            _ => &[],
        }
    }

    /// The memory of a resource locked for writing.
    pub fn target(&self, r: &PipeResource) -> Option<(*mut u8, usize)> {
        match self.find(r) {
            Some(Held::Write { ptr, len, .. }) => Some((*ptr, *len)),
            _ => None,
        }
    }
}

/// Resources a stage reads, for [`LockSet::acquire`]: constant buffers and
/// sampled resources (read), shader buffers and images (written: the
/// shader sees them as atomic words, which needs the exclusive lock).
pub(crate) fn stage_resource_refs(
    s: &StageResources,
) -> impl Iterator<Item = (&ResourceRef, bool)> {
    s.constant_buffers
        .iter()
        .filter_map(|c| c.buffer.as_ref())
        .chain(s.sampler_views.iter().flatten().map(|v| &v.resource))
        .map(|r| (r, false))
        .chain(s.storage_refs().map(|r| (r, true)))
}

/// One stage's resources resolved to byte slices (and words).
pub(crate) struct PreparedStage<'a> {
    constants: Vec<&'a [u8]>,
    textures: Vec<Option<BoundTexture<'a>>>,
    samplers: Vec<Option<&'a SamplerState>>,
    buffers: Vec<Option<WordBuffer<'a>>>,
    images: Vec<Option<StorageImage<'a>>>,
}

impl<'a> PreparedStage<'a> {
    pub fn new(s: &'a StageResources, locks: &'a LockSet<'a>) -> Self {
        // Only up to the last bound slot of each kind (consumers index with
        // `get`; a slot past the end reads as unbound): the full slot arrays
        // (128 sampler views) cost ~6 KB of allocation per state block, a
        // page-fault storm on scenes with thousands of blocks (many_draws).
        let used = |n: Option<usize>| n.map_or(0, |i| i + 1);
        let n_sv = used(s.sampler_views.iter().rposition(Option::is_some));
        let n_s = used(s.samplers.iter().rposition(Option::is_some));
        let n_b = used(s.shader_buffers.iter().rposition(Option::is_some));
        let n_i = used(s.shader_images.iter().rposition(Option::is_some));
        let mut constants = Vec::new();
        resolve_constants(s, locks, &mut constants);
        let textures = s.sampler_views[..n_sv]
            .iter()
            .map(|v| {
                v.as_ref().map(|v| BoundTexture {
                    view: &v.desc,
                    layout: &v.resource.layout,
                    resource_format: v.resource.templ.format,
                    data: locks.bytes(&v.resource),
                })
            })
            .collect();
        let samplers = s.samplers[..n_s].iter().map(|s| s.as_deref()).collect();
        let buffers = s.shader_buffers[..n_b]
            .iter()
            .map(|b| word_buffer(locks, b.as_ref()?))
            .collect();
        let images = s.shader_images[..n_i]
            .iter()
            .map(|i| view_storage_image(locks, i.as_ref()?))
            .collect();
        PreparedStage {
            constants,
            textures,
            samplers,
            buffers,
            images,
        }
    }

    /// Re-resolves the constant buffers only, for a stage whose other
    /// bindings are the very same `Arc`s as the ones prepared (a constant
    /// buffer per draw, many_draws: scanning 128 sampler views per draw
    /// was half of the shade stage).
    pub(crate) fn rebind_constants(&mut self, s: &'a StageResources, locks: &'a LockSet<'a>) {
        resolve_constants(s, locks, &mut self.constants);
    }

    pub fn resources(&self) -> ShaderResources<'_> {
        ShaderResources {
            constants: &self.constants,
            textures: &self.textures,
            samplers: &self.samplers,
            buffers: &self.buffers,
            images: &self.images,
        }
    }
}

/// The stage's constant buffers as byte slices, up to the last bound slot
/// (consumers index with `get`; a slot past the end reads as unbound).
fn resolve_constants<'a>(s: &'a StageResources, locks: &'a LockSet<'a>, out: &mut Vec<&'a [u8]>) {
    let n_cb = s
        .constant_buffers
        .iter()
        .rposition(|c| c.user_buffer.is_some() || c.buffer.is_some())
        .map_or(0, |i| i + 1);
    out.clear();
    out.extend(s.constant_buffers[..n_cb].iter().map(|c| {
        if let Some(u) = &c.user_buffer {
            return &u[..];
        }
        let Some(buf) = &c.buffer else { return &[][..] };
        let bytes = locks.bytes(buf);
        let start = (c.buffer_offset as usize).min(bytes.len());
        let end = if c.buffer_size == 0 {
            bytes.len()
        } else {
            start
                .saturating_add(c.buffer_size as usize)
                .min(bytes.len())
        };
        &bytes[start..end]
    }));
}

/// Views `len` bytes at `ptr` as words.
///
/// # Safety
/// `ptr` must be 4-byte aligned and valid for reads and writes of `len`
/// bytes for `'a`, with no non-atomic access to them during `'a`.
unsafe fn view_atomic_words<'a>(ptr: *mut u8, len: usize) -> &'a [AtomicU32] {
    // SAFETY: the caller guarantees alignment, validity and exclusivity;
    // `AtomicU32` has the size and alignment of `u32`.
    unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU32>(), len / 4) }
}

/// The words of a resource locked for writing, or `None` when it is not
/// 4-byte aligned (host memory; the façade refuses such bindings).
fn view_locked_words<'a>(locks: &'a LockSet<'a>, r: &ResourceRef) -> Option<&'a [AtomicU32]> {
    let (ptr, len) = locks.target(r)?;
    if !(ptr as usize).is_multiple_of(4) {
        return None;
    }
    // SAFETY: `locks` holds the resource's write lock for `'a`, so nothing
    // else reads or writes these bytes meanwhile; from here on the
    // shaders (workgroups, vertex and fragment calls) touch them only
    // through atomics; alignment checked above.
    Some(unsafe { view_atomic_words(ptr, len) })
}

/// The storage-image view of a bound image.
pub(crate) fn view_storage_image<'a>(
    locks: &'a LockSet<'a>,
    i: &'a ShaderImageBinding,
) -> Option<StorageImage<'a>> {
    let words = view_locked_words(locks, &i.resource)?;
    let bpp = i.format.desc().block_bytes as usize;
    if let Some((offset, size)) = i.buffer_range {
        // a buffer image: one row of `size / bpp` texels at `offset`
        return Some(StorageImage {
            words,
            format: i.format,
            width: size / bpp.max(1) as u32,
            height: 1,
            depth: 1,
            offset: offset as usize,
            row_stride: size as usize,
            slice_stride: size as usize,
            bpp,
        });
    }
    let layout = &i.resource.layout;
    let level = layout.levels.get(i.level as usize)?;
    let is_3d = i.resource.templ.target == ferropipe_components::enums::TextureTarget::Texture3D;
    let (offset, depth) = if is_3d {
        (level.offset, level.depth)
    } else {
        let first = i.first_layer.min(level.depth.saturating_sub(1));
        let last = i.last_layer.min(level.depth.saturating_sub(1)).max(first);
        (
            level.offset + first as usize * level.slice_stride,
            last - first + 1,
        )
    };
    Some(StorageImage {
        words,
        format: i.format,
        width: level.width,
        height: level.height,
        depth,
        offset,
        row_stride: level.row_stride,
        slice_stride: level.slice_stride,
        bpp,
    })
}

/// The words a shader buffer binding views (its range of the locked
/// buffer), or `None` when the buffer is not locked for writing.
pub(crate) fn word_buffer<'a>(
    locks: &'a LockSet<'a>,
    b: &ShaderBufferBinding,
) -> Option<WordBuffer<'a>> {
    let words = view_locked_words(locks, &b.buffer)?;
    let first = (b.offset / 4) as usize;
    let end = (b.offset as usize + b.size as usize) / 4;
    let words = words.get(first.min(words.len())..end.min(words.len()))?;
    Some(WordBuffer {
        words,
        bytes: b.size,
    })
}
