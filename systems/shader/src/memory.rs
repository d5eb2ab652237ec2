//! Shader memory for the interpreter (llvmpipe's counterpart: the SSBO,
//! shared-memory and image paths of `lp_bld_nir_soa.c`, with the resources
//! `lp_state_cs.c` and `lp_state_fs.c` bind): shader buffers (Gallium's
//! GLOBAL memory) and storage images of every stage, workgroup memory
//! (LOCAL) and the builtins of compute.
//!
//! # Words, not bytes
//! Every location a WGSL shader can name in storage or workgroup memory is
//! a 32-bit word at a 4-byte aligned offset (naga's layouts align every
//! scalar to 4), so memory is a slice of [`AtomicU32`].  Workgroups of one
//! launch run on several threads and may touch the same words (atomics, or
//! racy kernels); relaxed atomic loads and stores compile to plain `mov`s on
//! x86-64 and make every such overlap defined behaviour in Rust, whatever
//! the kernel does.
//!
//! # Robust access
//! Addresses are `u32` byte offsets computed by the lowering; an index past
//! a fixed-size or runtime-sized array makes the address `u32::MAX`.  The
//! executor adds the static offset in `u64` and checks the word against the
//! bound range, so an out-of-range or misaligned load reads 0 and an
//! out-of-range store or atomic does nothing (its result is 0).
//!
//! # Order
//! Stores and atomics run lane by lane, group 0 lane 0 first, over the
//! lanes in `EXEC` (and, in fragment shaders, the live ones): inside one
//! workgroup, or one vertex or fragment shader call, the outcome of
//! conflicting writes and the values atomics return never depend on timing.

// Lane loops index several per-lane arrays with one counter.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use ferropipe_components::pack;
use ferropipe_components::shader::Lanes;
use wide::u32x8;

use crate::ir::{
    AtomicFn, AtomicOp, ComputeValue, EXEC, ImageOp, MemSpace, Reg, TexDim, TexKind, TexQueryFn,
    loc,
};
use crate::lanemath::{as_u, from_u};

/// The binding views live in `components` (the pipeline's
/// `ShaderResources` carries them to vertex and fragment shaders).
pub use ferropipe_components::shader::{StorageImage, WordBuffer};

/// The memory a call sees besides the graphics resources: a compute
/// workgroup's (with its ids), or a vertex or fragment shader call's
/// shader buffers and images ([`ComputeCall::graphics`]).
#[derive(Clone, Copy, Debug)]
pub struct ComputeCall<'a> {
    /// Shader buffer slots (`@group(3) @binding(i)`).
    pub buffers: &'a [Option<WordBuffer<'a>>],
    /// Global binding slots (`@group(6) @binding(i)`, `set_global_binding`).
    pub globals: &'a [Option<WordBuffer<'a>>],
    /// Shader image slots (`@group(4) @binding(i)`).
    pub images: &'a [Option<StorageImage<'a>>],
    /// This workgroup's `var<workgroup>` memory, zeroed before the call.
    pub shared: &'a [AtomicU32],
    /// `workgroup_id` (including the launch's `grid_base`).
    pub workgroup_id: [u32; 3],
    /// `num_workgroups`: the launch's grid size.
    pub num_workgroups: [u32; 3],
    /// `@workgroup_size` of the kernel.
    pub workgroup_size: [u32; 3],
    /// Invocations per dimension that run: `workgroup_size`, or fewer in
    /// the last workgroup along a dimension of a launch with
    /// `pipe_grid_info::last_block`.  Invocations with a local id at or
    /// past it never enter the shader (they are padding, like the lanes
    /// past the workgroup size), so they neither write nor take part in
    /// barriers.
    pub active: [u32; 3],
    /// Set when an invocation subset (neither all live invocations nor
    /// none) executed a barrier: WGSL forbids barriers in non-uniform
    /// control flow, naga 30 does not check it, so the launch reports it.
    pub diverged: &'a AtomicBool,
}

impl<'a> ComputeCall<'a> {
    /// The memory of a vertex or fragment shader call: `buffers` and
    /// `images`, nothing else (no workgroup memory, globals or ids: the
    /// lowering refuses them outside compute).  `diverged` is never set.
    pub fn graphics(
        buffers: &'a [Option<WordBuffer<'a>>],
        images: &'a [Option<StorageImage<'a>>],
        diverged: &'a AtomicBool,
    ) -> Self {
        ComputeCall {
            buffers,
            globals: &[],
            images,
            shared: &[],
            workgroup_id: [0; 3],
            num_workgroups: [1; 3],
            workgroup_size: [1; 3],
            active: [1; 3],
            diverged,
        }
    }

    fn buffer(&self, space: MemSpace) -> Option<&WordBuffer<'a>> {
        let (slots, i) = match space {
            MemSpace::Buffer(i) => (self.buffers, i),
            MemSpace::Global(i) => (self.globals, i),
            MemSpace::Workgroup => return None,
        };
        slots.get(i as usize).and_then(|b| b.as_ref())
    }

    fn words(&self, space: MemSpace) -> &'a [AtomicU32] {
        match space {
            MemSpace::Workgroup => self.shared,
            _ => self.buffer(space).map_or(&[], |b| b.words),
        }
    }

    /// Local id of local invocation index `index`.
    fn local_id(&self, index: u32) -> [u32; 3] {
        let [sx, sy, _] = self.workgroup_size.map(|s| s.max(1));
        [index % sx, (index / sx) % sy, index / (sx * sy)]
    }

    /// Whether invocation `index` (below the workgroup size) runs: its
    /// local id is inside [`ComputeCall::active`].
    pub fn is_active(&self, index: u32) -> bool {
        let id = self.local_id(index);
        (0..3).all(|k| id[k] < self.active[k])
    }

    /// Whether some invocations of this workgroup do not run (a partial
    /// last block).
    pub fn is_partial(&self) -> bool {
        (0..3).any(|k| self.active[k] < self.workgroup_size[k])
    }
}

/// Word index of byte `addr + offset`, if aligned.
#[inline]
fn word_index(addr: u32, offset: u32) -> Option<usize> {
    let a = u64::from(addr) + u64::from(offset);
    (a & 3 == 0).then_some((a >> 2) as usize)
}

/// `Op::MemLoad`.
pub fn exec_load(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    (d, space, addr, offset): (Reg, MemSpace, Reg, u32),
    call: Option<&ComputeCall<'_>>,
) {
    let words = call.map_or(&[][..], |c| c.words(space));
    let (d0, dm) = loc(d, nu, groups);
    let (a0, am) = loc(addr, nu, groups);
    for g in 0..groups {
        let a = as_u(file[a0 + (g & am)]).to_array();
        let v = a.map(|x| {
            word_index(x, offset)
                .and_then(|i| words.get(i))
                .map_or(0, |w| w.load(Ordering::Relaxed))
        });
        file[d0 + (g & dm)] = from_u(u32x8::new(v));
    }
}

/// Calls `f(group, lane)` for every lane in `EXEC` (and, in a fragment
/// shader, in `live`: the chunk's live masks), in the fixed order.  Helper
/// lanes (run for derivatives only) and fragments that were discarded or
/// failed early depth are not live: they never write (GL 4.6 section
/// 15.1, "helper invocations ... side effects are not performed").
#[inline]
fn for_active(
    file: &[Lanes],
    nu: usize,
    groups: usize,
    live: Option<&[Lanes]>,
    mut f: impl FnMut(usize, usize),
) {
    let (e0, _) = loc(EXEC, nu, groups);
    for g in 0..groups {
        let mut bits = file[e0 + g].to_bitmask();
        if let Some(live) = live {
            bits &= live.get(g).map_or(0, |m| m.to_bitmask());
        }
        if bits == 0 {
            continue;
        }
        for l in 0..8 {
            if bits & (1 << l) != 0 {
                f(g, l)
            }
        }
    }
}

#[inline]
fn lane(file: &[Lanes], nu: usize, groups: usize, r: Reg, g: usize, l: usize) -> u32 {
    let (b, m) = loc(r, nu, groups);
    as_u(file[b + (g & m)]).to_array()[l]
}

/// `Op::MemStore`.
pub fn exec_store(
    file: &[Lanes],
    nu: usize,
    groups: usize,
    (space, addr, offset, a): (MemSpace, Reg, u32, Reg),
    call: Option<&ComputeCall<'_>>,
    live: Option<&[Lanes]>,
) {
    let words = call.map_or(&[][..], |c| c.words(space));
    for_active(file, nu, groups, live, |g, l| {
        let at = lane(file, nu, groups, addr, g, l);
        if let Some(w) = word_index(at, offset).and_then(|i| words.get(i)) {
            w.store(lane(file, nu, groups, a, g, l), Ordering::Relaxed);
        }
    });
}

/// One atomic read-modify-write; returns the old value and whether it
/// exchanged.
fn rmw(w: &AtomicU32, f: AtomicFn, v: u32, cmp: u32) -> (u32, bool) {
    let o = Ordering::Relaxed;
    match f {
        AtomicFn::Add => (w.fetch_add(v, o), false),
        AtomicFn::Sub => (w.fetch_sub(v, o), false),
        AtomicFn::And => (w.fetch_and(v, o), false),
        AtomicFn::Or => (w.fetch_or(v, o), false),
        AtomicFn::Xor => (w.fetch_xor(v, o), false),
        AtomicFn::UMin => (w.fetch_min(v, o), false),
        AtomicFn::UMax => (w.fetch_max(v, o), false),
        AtomicFn::SMin => {
            let old = w.fetch_update(o, o, |x| Some((x as i32).min(v as i32) as u32));
            (old.unwrap_or_else(|x| x), false)
        }
        AtomicFn::SMax => {
            let old = w.fetch_update(o, o, |x| Some((x as i32).max(v as i32) as u32));
            (old.unwrap_or_else(|x| x), false)
        }
        AtomicFn::Exchange => (w.swap(v, o), false),
        AtomicFn::CompareExchange => match w.compare_exchange(cmp, v, o, o) {
            Ok(old) => (old, true),
            Err(old) => (old, false),
        },
        AtomicFn::FAdd | AtomicFn::FSub => {
            let v = f32::from_bits(v);
            let old = w.fetch_update(o, o, |x| {
                let x = f32::from_bits(x);
                Some(if f == AtomicFn::FAdd { x + v } else { x - v }.to_bits())
            });
            (old.unwrap_or_else(|x| x), false)
        }
    }
}

/// `Op::MemAtomic`.
pub fn exec_atomic(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    op: &AtomicOp,
    call: Option<&ComputeCall<'_>>,
    live: Option<&[Lanes]>,
) {
    let words = call.map_or(&[][..], |c| c.words(op.space));
    let mut old = vec![[0u32; 8]; groups];
    let mut ok = vec![0u8; groups];
    for_active(file, nu, groups, live, |g, l| {
        let at = lane(file, nu, groups, op.addr, g, l);
        let Some(w) = word_index(at, op.offset).and_then(|i| words.get(i)) else {
            return;
        };
        let v = lane(file, nu, groups, op.value, g, l);
        let cmp = if op.f == AtomicFn::CompareExchange {
            lane(file, nu, groups, op.compare, g, l)
        } else {
            0
        };
        let (o, x) = rmw(w, op.f, v, cmp);
        old[g][l] = o;
        ok[g] |= u8::from(x) << l;
    });
    let (d0, _) = loc(op.d, nu, groups);
    for g in 0..groups {
        file[d0 + g] = from_u(u32x8::new(old[g]));
    }
    if op.f == AtomicFn::CompareExchange {
        let (k0, _) = loc(op.d_ok, nu, groups);
        for g in 0..groups {
            let m: [u32; 8] = std::array::from_fn(|l| if ok[g] & (1 << l) != 0 { !0 } else { 0 });
            file[k0 + g] = from_u(u32x8::new(m));
        }
    }
}

/// `Op::BufferLength`.
pub fn exec_buffer_length(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    (d, space): (Reg, MemSpace),
    call: Option<&ComputeCall<'_>>,
) {
    let bytes = call.and_then(|c| c.buffer(space)).map_or(0, |b| b.bytes);
    let (d0, dm) = loc(d, nu, groups);
    for g in 0..groups {
        file[d0 + (g & dm)] = from_u(u32x8::splat(bytes));
    }
}

/// Texel access on a [`StorageImage`] (an extension trait: the type lives
/// in `components`).
trait Texels {
    fn texel_word(&self, x: u32, y: u32, z: u32) -> Option<usize>;
    fn load(&self, w: usize, kind: TexKind) -> [u32; 4];
    fn store(&self, w: usize, kind: TexKind, texel: [u32; 4]);
}

impl Texels for StorageImage<'_> {
    /// First word of texel (x, y, z), if inside the image.
    fn texel_word(&self, x: u32, y: u32, z: u32) -> Option<usize> {
        if x >= self.width || y >= self.height || z >= self.depth {
            return None;
        }
        let byte = self.offset
            + z as usize * self.slice_stride
            + y as usize * self.row_stride
            + x as usize * self.bpp;
        if !byte.is_multiple_of(4) || !self.bpp.is_multiple_of(4) || self.bpp > 16 {
            return None;
        }
        let w = byte / 4;
        (w + self.bpp / 4 <= self.words.len()).then_some(w)
    }

    fn load(&self, w: usize, kind: TexKind) -> [u32; 4] {
        let mut bytes = [0u8; 16];
        for k in 0..self.bpp / 4 {
            let v = self.words[w + k].load(Ordering::Relaxed);
            bytes[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        let px = &bytes[..self.bpp];
        match kind {
            TexKind::Uint => pack::unpack_rgba_u32(self.format, px),
            TexKind::Sint => pack::unpack_rgba_i32(self.format, px).map(|v| v as u32),
            TexKind::Float | TexKind::Depth => {
                pack::unpack_rgba_f32(self.format, px).map(f32::to_bits)
            }
        }
    }

    fn store(&self, w: usize, kind: TexKind, texel: [u32; 4]) {
        let mut bytes = [0u8; 16];
        let px = &mut bytes[..self.bpp];
        match kind {
            TexKind::Uint => pack::pack_rgba_u32(self.format, texel, px),
            TexKind::Sint => pack::pack_rgba_i32(self.format, texel.map(|v| v as i32), px),
            TexKind::Float | TexKind::Depth => {
                pack::pack_rgba_f32(self.format, texel.map(f32::from_bits), px)
            }
        }
        for k in 0..self.bpp / 4 {
            let v = u32::from_le_bytes([
                bytes[4 * k],
                bytes[4 * k + 1],
                bytes[4 * k + 2],
                bytes[4 * k + 3],
            ]);
            self.words[w + k].store(v, Ordering::Relaxed);
        }
    }
}

/// Texel coordinates (x, y, z-or-layer) of lane `l` of group `g`.
fn image_coords(
    file: &[Lanes],
    nu: usize,
    groups: usize,
    op: &ImageOp,
    g: usize,
    l: usize,
) -> [u32; 3] {
    let n = op.coord_count();
    let mut c = [0u32; 3];
    for (k, r) in op.coord[..n].iter().enumerate() {
        c[k] = lane(file, nu, groups, *r, g, l);
    }
    if let Some(layer) = op.layer {
        c[n.min(2)] = lane(file, nu, groups, layer, g, l);
    }
    // negative i32 coordinates are huge u32s: outside the image
    c
}

/// `Op::ImageLoad`: 0 outside the image or when unbound.
pub fn exec_image_load(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    op: &ImageOp,
    call: Option<&ComputeCall<'_>>,
) {
    let img = call
        .and_then(|c| c.images.get(op.image as usize))
        .and_then(|i| i.as_ref());
    let mut out = vec![[[0u32; 8]; 4]; groups];
    if let Some(img) = img {
        for (g, o) in out.iter_mut().enumerate() {
            for l in 0..8 {
                let [x, y, z] = image_coords(file, nu, groups, op, g, l);
                if let Some(w) = img.texel_word(x, y, z) {
                    let t = img.load(w, op.kind);
                    for k in 0..4 {
                        o[k][l] = t[k];
                    }
                }
            }
        }
    }
    for k in 0..4 {
        let (d0, _) = loc(op.texel[k], nu, groups);
        for g in 0..groups {
            file[d0 + g] = from_u(u32x8::new(out[g][k]));
        }
    }
}

/// `Op::ImageStore`: lanes in `EXEC`, dropped outside the image.
pub fn exec_image_store(
    file: &[Lanes],
    nu: usize,
    groups: usize,
    op: &ImageOp,
    call: Option<&ComputeCall<'_>>,
    live: Option<&[Lanes]>,
) {
    let Some(img) = call
        .and_then(|c| c.images.get(op.image as usize))
        .and_then(|i| i.as_ref())
    else {
        return;
    };
    for_active(file, nu, groups, live, |g, l| {
        let [x, y, z] = image_coords(file, nu, groups, op, g, l);
        if let Some(w) = img.texel_word(x, y, z) {
            let t = op.texel.map(|r| lane(file, nu, groups, r, g, l));
            img.store(w, op.kind, t);
        }
    });
}

/// `Op::ImageQuery`: size or layer count (0 when unbound).
pub fn exec_image_query(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    (image, func, dim, dst): (u32, TexQueryFn, TexDim, &[Reg; 3]),
    call: Option<&ComputeCall<'_>>,
) {
    let img = call
        .and_then(|c| c.images.get(image as usize))
        .and_then(|i| i.as_ref());
    let (w, h, d) = img.map_or((0, 0, 0), |i| (i.width, i.height, i.depth));
    let vals: [u32; 3] = match func {
        TexQueryFn::Size => match dim {
            TexDim::D1 => [w, 0, 0],
            TexDim::D2 | TexDim::Cube => [w, h, 0],
            TexDim::D3 => [w, h, d],
        },
        TexQueryFn::NumLayers => [d, 0, 0],
        TexQueryFn::NumLevels | TexQueryFn::NumSamples => [u32::from(img.is_some()), 0, 0],
    };
    let n = crate::ir::image_query_count(func, dim);
    for k in 0..n {
        let (d0, dm) = loc(dst[k], nu, groups);
        for g in 0..groups {
            file[d0 + (g & dm)] = from_u(u32x8::splat(vals[k]));
        }
    }
}

/// The lanes of group `g` (invocations `8g..8g + 8`) that run: below
/// `count` and, in a partial last block, inside [`ComputeCall::active`].
pub fn active_lanes(count: usize, g: usize, call: Option<&ComputeCall<'_>>) -> u32 {
    let live = count.saturating_sub(8 * g).min(8);
    let mut bits = (1u32 << live) - 1;
    if let Some(c) = call.filter(|c| c.is_partial()) {
        for l in 0..live {
            if !c.is_active((8 * g + l) as u32) {
                bits &= !(1 << l);
            }
        }
    }
    bits
}

/// `Op::Barrier`: the invocations in `EXEC` must be all that run in the
/// workgroup ([`active_lanes`]; a call is one chunk, so group `g` holds
/// invocations `8g..8g + 8`) or none.
pub fn exec_barrier(
    file: &[Lanes],
    nu: usize,
    groups: usize,
    count: usize,
    call: Option<&ComputeCall<'_>>,
) {
    let (e0, _) = loc(EXEC, nu, groups);
    let mut none = true;
    let mut all = true;
    for g in 0..groups {
        let bits = file[e0 + g].to_bitmask();
        none &= bits == 0;
        all &= bits == active_lanes(count, g, call);
    }
    if !(none || all)
        && let Some(c) = call
    {
        c.diverged.store(true, Ordering::Relaxed);
    }
}

/// A compute builtin for `groups` groups starting at absolute group `g0`
/// (local invocation index `8 * group + lane`).
pub fn exec_compute_input(
    file: &mut [Lanes],
    nu: usize,
    groups: usize,
    g0: usize,
    (d, v): (Reg, ComputeValue),
    call: Option<&ComputeCall<'_>>,
) {
    let (d0, dm) = loc(d, nu, groups);
    let Some(c) = call else {
        for g in 0..groups {
            file[d0 + (g & dm)] = from_u(u32x8::ZERO);
        }
        return;
    };
    let local = |i: u32| c.local_id(i);
    for g in 0..groups {
        let vals: [u32; 8] = std::array::from_fn(|l| {
            let idx = ((g0 + g) * 8 + l) as u32;
            match v {
                ComputeValue::LocalIndex => idx,
                ComputeValue::LocalId(k) => local(idx)[k as usize % 3],
                ComputeValue::GlobalId(k) => {
                    let k = k as usize % 3;
                    c.workgroup_id[k]
                        .wrapping_mul(c.workgroup_size[k])
                        .wrapping_add(local(idx)[k])
                }
                ComputeValue::WorkgroupId(k) => c.workgroup_id[k as usize % 3],
                ComputeValue::NumWorkgroups(k) => c.num_workgroups[k as usize % 3],
            }
        });
        file[d0 + (g & dm)] = from_u(u32x8::new(vals));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_index_rejects_misaligned_and_adds_without_overflow() {
        assert_eq!(word_index(8, 4), Some(3));
        assert_eq!(word_index(2, 0), None);
        // u32::MAX (the lowering's "out of range") plus an offset stays
        // far past any buffer instead of wrapping to a small address
        assert_eq!(word_index(u32::MAX, 1), Some((1usize << 32) >> 2));
    }

    #[test]
    fn signed_atomics_compare_as_i32() {
        let w = AtomicU32::new((-5i32) as u32);
        assert_eq!(rmw(&w, AtomicFn::SMin, 3, 0).0, (-5i32) as u32);
        assert_eq!(w.load(Ordering::Relaxed), (-5i32) as u32);
        rmw(&w, AtomicFn::UMin, 3, 0);
        assert_eq!(w.load(Ordering::Relaxed), 3);
        assert_eq!(rmw(&w, AtomicFn::CompareExchange, 9, 4), (3, false));
        assert_eq!(rmw(&w, AtomicFn::CompareExchange, 9, 3), (3, true));
        assert_eq!(w.load(Ordering::Relaxed), 9);
    }

    #[test]
    fn float_atomics_add_the_bits_as_f32() {
        let w = AtomicU32::new(1.5f32.to_bits());
        let (old, _) = rmw(&w, AtomicFn::FAdd, 0.25f32.to_bits(), 0);
        assert_eq!(f32::from_bits(old), 1.5);
        assert_eq!(f32::from_bits(w.load(Ordering::Relaxed)), 1.75);
        rmw(&w, AtomicFn::FSub, 2.0f32.to_bits(), 0);
        assert_eq!(f32::from_bits(w.load(Ordering::Relaxed)), -0.25);
        // an integer add of the same bits would give something else
        assert_ne!(
            w.load(Ordering::Relaxed),
            (-0.25f32).to_bits().wrapping_add(1)
        );
    }

    #[test]
    fn partial_blocks_leave_lanes_out() {
        let diverged = AtomicBool::new(false);
        let call = ComputeCall {
            buffers: &[],
            globals: &[],
            images: &[],
            shared: &[],
            workgroup_id: [0; 3],
            num_workgroups: [1; 3],
            workgroup_size: [4, 3, 1],
            active: [3, 2, 1],
            diverged: &diverged,
        };
        assert!(call.is_partial());
        // local ids (x, y) of invocations 0..8: x < 3 and y < 2 run
        assert_eq!(active_lanes(12, 0, Some(&call)), 0b0111_0111);
        assert_eq!(active_lanes(12, 1, Some(&call)), 0);
        let full = ComputeCall {
            active: [4, 3, 1],
            ..call
        };
        assert!(!full.is_partial());
        assert_eq!(active_lanes(12, 1, Some(&full)), 0b1111);
    }
}
