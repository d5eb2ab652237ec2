//! Equivalent of llvmpipe's `lp_bld_depth.c` (depth, stencil, depth bounds),
//! `lp_bld_alpha.c` and `lp_bld_blend.c` / `lp_bld_blend_aos.c` (blending,
//! logic ops, colour masks) and the store half of `lp_state_fs.c`: the only
//! stage that writes render targets.
//!
//! Everything works on one 4x2 fragment group (8 lanes, see `shader.rs`)
//! at a time, with an 8-bit live-lane mask.  Order per group, as GL
//! specifies: alpha test, stencil test, depth (+ bounds) test and writes,
//! occlusion count, then per colour buffer blend or logic op, colour mask and
//! store.  Raster calls `depth_stencil_test` itself when the state allows
//! early depth; the function is the same.
//!
//! Render targets are accessed through raw pointers ([`Targets`]): the back
//! end holds the resources' write locks for the whole pass and every tile
//! job touches only its own 64x64 pixels, so the writes never alias.

use ferropipe_components::batch::ClearValue;
use ferropipe_components::draw::FramebufferState;
use ferropipe_components::enums::{BlendFactor, BlendFunc, ClearFlags, Func, LogicOp, StencilOp};
use ferropipe_components::format::{ChannelType, Format, FormatDesc, FormatKind};
use ferropipe_components::pack;
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, LANES, Lanes, Semantic, ShaderInfo, ULanes,
};
use ferropipe_components::simd::X86V3;
use ferropipe_components::state::{
    BlendColor, BlendState, DepthStencilAlphaState, MAX_COLOR_BUFS, RasterizerState, RtBlendState,
    StencilRef, StencilState,
};
use ferropipe_components::view::Surface;
use multiversion::multiversion;

mod packed;
mod srgb;
mod unorm8;

pub use packed::PackedUnorm;

// ---------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------

/// How a colour buffer's pixels are read and written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColorFormat {
    /// Four 8-bit unorm channels in some byte order (RGBA8, BGRA8, ... and
    /// their sRGB variants): the fast path.  `byte[c]` is the byte holding
    /// RGBA channel `c`, or 255 if absent (X channels read 1).
    Unorm8x4 {
        /// Per RGBA channel, the byte holding it (255: absent).
        byte: [u8; 4],
        /// sRGB-encoded colour channels.
        srgb: bool,
    },
    /// Anything else the format table describes.
    Generic(&'static FormatDesc),
}

impl ColorFormat {
    /// The handling of `format`, or `None` if it cannot be a render target.
    pub(crate) fn classify(format: Format) -> Option<ColorFormat> {
        let d = format.desc();
        if d.kind != FormatKind::Color {
            return None;
        }
        match d.channel_type {
            ChannelType::Uscaled | ChannelType::Sscaled | ChannelType::Void => return None,
            _ => {}
        }
        if d.block_bytes == 4
            && !d.packed
            && d.channel_type == ChannelType::Unorm
            && d.channel_bits == [8, 8, 8, 8]
        {
            let mut byte = [255u8; 4];
            for (c, &s) in d.swizzle.iter().enumerate() {
                if s < 4 {
                    byte[c] = s;
                }
            }
            return Some(ColorFormat::Unorm8x4 { byte, srgb: d.srgb });
        }
        Some(ColorFormat::Generic(d))
    }

    /// The format table entry of a target in this class.
    pub fn desc(&self, format: Format) -> &'static FormatDesc {
        match self {
            ColorFormat::Generic(d) => d,
            _ => format.desc(),
        }
    }
}

/// How a depth/stencil buffer stores its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepthFormat {
    /// `Z16_UNORM`.
    Z16,
    /// `Z32_UNORM`.
    Z32Unorm,
    /// `Z32_FLOAT`.
    Z32Float,
    /// 32-bit word: depth bits `shift .. shift + 24`, stencil (if any) in
    /// the other byte.
    Z24 {
        /// Bit position of the depth bits (0 or 8).
        shift: u32,
        /// The other byte holds stencil (`X` otherwise).
        stencil: bool,
    },
    /// `Z32_FLOAT_S8X24_UINT`: a float depth word, then a word whose low byte is stencil.
    Z32FloatS8,
    /// `S8_UINT`: stencil only.
    S8,
}

impl DepthFormat {
    pub(crate) fn classify(format: Format) -> Option<DepthFormat> {
        Some(match format {
            Format::Z16_UNORM => DepthFormat::Z16,
            Format::Z32_UNORM => DepthFormat::Z32Unorm,
            Format::Z32_FLOAT => DepthFormat::Z32Float,
            Format::Z24_UNORM_S8_UINT => DepthFormat::Z24 {
                shift: 0,
                stencil: true,
            },
            Format::Z24X8_UNORM => DepthFormat::Z24 {
                shift: 0,
                stencil: false,
            },
            Format::S8_UINT_Z24_UNORM => DepthFormat::Z24 {
                shift: 8,
                stencil: true,
            },
            Format::X8Z24_UNORM => DepthFormat::Z24 {
                shift: 8,
                stencil: false,
            },
            Format::Z32_FLOAT_S8X24_UINT => DepthFormat::Z32FloatS8,
            Format::S8_UINT => DepthFormat::S8,
            _ => return None,
        })
    }

    /// Whether the format stores depth.
    pub fn has_depth(self) -> bool {
        self != DepthFormat::S8
    }

    /// Whether the format stores stencil.
    pub fn has_stencil(self) -> bool {
        matches!(
            self,
            DepthFormat::Z24 { stencil: true, .. } | DepthFormat::Z32FloatS8 | DepthFormat::S8
        )
    }

    /// Bits of a unorm depth value (0 for float).
    fn unorm_bits(self) -> u32 {
        match self {
            DepthFormat::Z16 => 16,
            DepthFormat::Z24 { .. } => 24,
            DepthFormat::Z32Unorm => 32,
            _ => 0,
        }
    }
}

// ---------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------

/// One bound colour or depth buffer as raw memory.
#[derive(Clone, Copy, Debug)]
pub struct TargetMemory {
    /// Start of the resource's storage (locked for writing while the scene runs).
    pub ptr: *mut u8,
    /// Bytes of storage behind `ptr`.
    pub len: usize,
    /// Byte offset of pixel (0, 0) of the surface's level and layer.
    pub base: usize,
    /// Bytes between rows.
    pub row_stride: usize,
    /// Bytes per pixel.
    pub bpp: usize,
    /// Surface size: pixels outside are never touched.
    pub width: u32,
    /// Surface height in pixels.
    pub height: u32,
    /// Stored samples per pixel and the distance between sample planes
    /// (the resource layout keeps each sample as a plane of the level).
    pub samples: u32,
    /// Bytes between sample planes.
    pub sample_stride: usize,
}

/// Where the 4x2 groups of a surface of 4-byte pixels are
/// ([`TargetMemory::rows32`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupRows32 {
    base: usize,
    stride: usize,
    /// The largest group column and row wholly inside the surface and its
    /// storage.
    max_x: u32,
    max_y: u32,
}

impl GroupRows32 {
    /// The byte offsets of the two rows of the 4x2 group at `(gx, gy)`,
    /// or `None` for a group not wholly inside the surface and its storage
    /// (those take the per-pixel paths).
    #[inline(always)]
    pub(crate) fn at(&self, gx: i32, gy: i32) -> Option<(usize, usize)> {
        // A negative coordinate is above `max_x` / `max_y` as u32.
        if gx as u32 > self.max_x || gy as u32 > self.max_y {
            return None;
        }
        let r0 = self.base + gy as usize * self.stride + gx as usize * 4;
        Some((r0, r0 + self.stride))
    }
}

impl TargetMemory {
    /// Byte offset of pixel (x, y), or `None` outside the surface.
    #[inline]
    fn offset(&self, x: i32, y: i32) -> Option<usize> {
        if x < 0 || y < 0 || x as u32 >= self.width || y as u32 >= self.height {
            return None;
        }
        let o = self.base + y as usize * self.row_stride + x as usize * self.bpp;
        (o + self.bpp <= self.len).then_some(o)
    }

    /// The bytes of pixel (x, y).
    ///
    /// # Safety
    /// The caller must be the only one accessing this pixel (tile jobs own
    /// disjoint pixels) while the memory's write lock is held.
    #[inline]
    unsafe fn pixel<'a>(self, x: i32, y: i32) -> Option<&'a mut [u8]> {
        let o = self.offset(x, y)?;
        // SAFETY: `offset` checked the range against `len`; exclusivity is
        // the caller's contract (disjoint tiles under a held write lock).
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(o), self.bpp) })
    }
}

impl TargetMemory {
    /// Where the 4x2 groups of this surface are, with the per-surface
    /// tests done once: the store and depth loops then pay two compares
    /// per group, where a per-group function made six tests and a bounds
    /// check (blend_overdraw's store loop was ~125 instructions per group,
    /// ~30 of them that test).  `None` for a surface without 4-byte
    /// pixels or smaller than a group.
    #[inline]
    pub(crate) fn rows32(&self) -> Option<GroupRows32> {
        if self.bpp != 4 || self.width < 4 {
            return None;
        }
        // The rows a group may touch: every row `y < rows` lies wholly in
        // the storage (`base + y * stride + 4 * width <= len`), so a group
        // inside `width x rows` reaches at most `r1 + 16 <= len` (the
        // unchecked group loads' contract).  A surface its storage covers
        // has `rows == height`; groups past `rows` go to the per-pixel
        // paths, which test each pixel.
        let row_bytes = 4 * self.width as usize;
        let rows = if self.row_stride == 0 {
            0
        } else {
            self.len
                .checked_sub(self.base.saturating_add(row_bytes))
                .map_or(0, |room| room / self.row_stride + 1)
        };
        let rows = rows.min(self.height as usize) as u32;
        Some(GroupRows32 {
            base: self.base,
            stride: self.row_stride,
            max_x: self.width - 4,
            max_y: rows.checked_sub(2)?,
        })
    }

    /// The 32-bit pixels of a 4x2 group, in lane order.
    ///
    /// Lanes (0, 1), (2, 3), (4, 5), (6, 7) are pixel pairs of row 0, row 1,
    /// row 0, row 1 (see `FRAG_LANE_X/Y`), so the shuffle is four 64-bit
    /// moves (little-endian pixel storage, as everywhere).
    ///
    /// # Safety
    /// `rows` comes from [`GroupRows32::at`], and the caller owns the
    /// group's pixels (tile jobs own disjoint pixels).
    #[inline]
    unsafe fn load_group32(&self, rows: (usize, usize)) -> [u32; LANES] {
        // SAFETY: both 16-byte rows lie inside the storage (GroupRows32::at).
        let (r0, r1) = unsafe {
            (
                std::ptr::read_unaligned(self.ptr.add(rows.0) as *const [u64; 2]),
                std::ptr::read_unaligned(self.ptr.add(rows.1) as *const [u64; 2]),
            )
        };
        bytemuck::cast([r0[0], r1[0], r0[1], r1[1]])
    }

    /// [`Self::load_group32`] at a SIMD level: two 16-byte loads and one
    /// `vpermq` with the token, where a baseline build moves four 64-bit
    /// halves through SSE registers.
    ///
    /// # Safety
    /// As [`Self::load_group32`].
    #[inline(always)]
    unsafe fn load_group32_at(&self, v3: Option<X86V3>, rows: (usize, usize)) -> ULanes {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = v3 {
            // SAFETY: both 16-byte rows lie inside the storage (GroupRows32::at).
            return unsafe {
                crate::lanes::v3_lanes::load_group32(t, self.ptr.add(rows.0), self.ptr.add(rows.1))
            };
        }
        let _ = v3;
        // SAFETY: the caller's contract.
        ULanes::new(unsafe { self.load_group32(rows) })
    }

    /// [`Self::store_group32`] at a SIMD level.
    ///
    /// # Safety
    /// As [`Self::load_group32`].
    #[inline(always)]
    unsafe fn store_group32_at(&self, v3: Option<X86V3>, rows: (usize, usize), px: ULanes) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = v3 {
            // SAFETY: both 16-byte rows lie inside the storage (GroupRows32::at)
            // and belong to this tile job.
            return unsafe {
                crate::lanes::v3_lanes::store_group32(
                    t,
                    self.ptr.add(rows.0),
                    self.ptr.add(rows.1),
                    px,
                )
            };
        }
        let _ = v3;
        // SAFETY: the caller's contract.
        unsafe { self.store_group32(rows, px.to_array()) }
    }

    /// Stores the 32-bit pixels of a 4x2 group given in lane order.
    ///
    /// # Safety
    /// As [`Self::load_group32`].
    #[inline]
    unsafe fn store_group32(&self, rows: (usize, usize), px: [u32; LANES]) {
        let q: [u64; 4] = bytemuck::cast(px);
        // SAFETY: both 16-byte rows lie inside the storage (GroupRows32::at)
        // and belong to this tile job.
        unsafe {
            std::ptr::write_unaligned(self.ptr.add(rows.0) as *mut [u64; 2], [q[0], q[2]]);
            std::ptr::write_unaligned(self.ptr.add(rows.1) as *mut [u64; 2], [q[1], q[3]]);
        }
    }
}

/// A colour buffer target.
#[derive(Clone, Copy, Debug)]
pub struct ColorTarget {
    /// Where its pixels are.
    pub mem: TargetMemory,
    /// Its format.
    pub format: Format,
    /// Its store path (RGBA8 family or generic).
    pub kind: ColorFormat,
    /// Bytes of the pixel that hold any channel (see `colormask_bytes`).
    pub full_mask: [u8; 16],
    /// llvmpipe's integer store for packed unorm formats (B5G6R5,
    /// R10G10B10A2, ...; `merge/packed.rs`), resolved once per target.
    pub packed: Option<PackedUnorm>,
}

impl ColorTarget {
    /// A target for `mem` in `format`; `None` for a format the merge stage cannot write.
    pub fn new(mem: TargetMemory, format: Format) -> Option<Self> {
        Some(ColorTarget {
            mem,
            format,
            kind: ColorFormat::classify(format)?,
            full_mask: colormask_bytes(format.desc(), 0xf),
            packed: PackedUnorm::classify(format.desc()),
        })
    }
}

/// The depth/stencil target.
#[derive(Clone, Copy, Debug)]
pub struct DepthTarget {
    /// Where its pixels are.
    pub mem: TargetMemory,
    /// How depth and stencil are stored.
    pub format: DepthFormat,
    /// The surface's format (clears go through `pack.rs`).
    pub pipe_format: Format,
    /// `mem.rows32()`, once per target rather than per group.
    rows32: Option<GroupRows32>,
}

/// The framebuffer of a scene as raw memory (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Targets {
    /// Colour buffers by slot (`None`: unbound).
    pub color: Vec<Option<ColorTarget>>,
    /// The depth/stencil buffer, if bound.
    pub depth: Option<DepthTarget>,
}

// SAFETY: the pointers reach render-target storage whose write locks the back
// end holds while `Targets` is shared; tile jobs write disjoint pixels.
unsafe impl Send for Targets {}
// SAFETY: as above.
unsafe impl Sync for Targets {}

impl TargetMemory {
    /// No memory at all: a target that only carries its format, for
    /// `ColorTarget::write_color` and the blend (which never touch memory)
    /// outside the tile pass.  Every pixel is outside it.
    pub(crate) const fn detached() -> TargetMemory {
        TargetMemory {
            ptr: std::ptr::null_mut(),
            len: 0,
            base: 0,
            row_stride: 0,
            bpp: 0,
            width: 0,
            height: 0,
            samples: 1,
            sample_stride: 0,
        }
    }

    /// Describes `surface` inside memory `ptr`/`len` (from its write guard).
    pub fn for_surface(surface: &Surface, ptr: *mut u8, len: usize) -> Option<TargetMemory> {
        let res = &surface.resource;
        let level = res.layout.levels.get(surface.desc.level as usize)?;
        let layer = surface.desc.first_layer.min(level.depth.saturating_sub(1));
        Some(TargetMemory {
            ptr,
            len,
            base: level.offset + layer as usize * level.slice_stride,
            row_stride: level.row_stride,
            bpp: res.layout.bpp as usize,
            width: level.width,
            height: level.height,
            samples: res.layout.samples.max(1),
            sample_stride: level.sample_stride,
        })
    }

    /// Sample plane `s` as a single-sample target.
    pub fn plane(&self, s: u32) -> TargetMemory {
        TargetMemory {
            base: self.base + s as usize * self.sample_stride,
            samples: 1,
            ..*self
        }
    }
}

impl DepthTarget {
    /// The depth/stencil buffer at `mem`.
    pub fn new(mem: TargetMemory, format: DepthFormat, pipe_format: Format) -> Self {
        DepthTarget {
            mem,
            format,
            pipe_format,
            rows32: mem.rows32(),
        }
    }

    /// Sample plane `s` as a single-sample target.
    pub fn plane(&self, s: u32) -> DepthTarget {
        DepthTarget::new(self.mem.plane(s), self.format, self.pipe_format)
    }
}

impl Targets {
    /// Colour sample plane `s` of every colour buffer (depth left out: the
    /// tile pass tests each sample's depth against its own plane).
    pub(crate) fn color_plane(&self, s: u32) -> Targets {
        Targets {
            color: self
                .color
                .iter()
                .map(|t| {
                    t.as_ref().map(|t| ColorTarget {
                        mem: t.mem.plane(s),
                        ..*t
                    })
                })
                .collect(),
            depth: None,
        }
    }

    /// Samples per pixel of the colour buffers (1 when single-sampled).
    pub fn color_samples(&self) -> u32 {
        self.color
            .iter()
            .flatten()
            .map(|t| t.mem.samples)
            .max()
            .unwrap_or(1)
    }
}

// ---------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------

/// One face's stencil test, resolved.
#[derive(Clone, Copy, Debug, Default)]
pub struct StencilFace {
    /// Comparison of the masked reference against the masked stored value.
    pub func: Func,
    /// Applied when the stencil test fails.
    pub fail_op: StencilOp,
    /// Applied when stencil passes and depth fails.
    pub zfail_op: StencilOp,
    /// Applied when both pass.
    pub zpass_op: StencilOp,
    /// Mask of the comparison.
    pub valuemask: u8,
    /// Bits the operation may change.
    pub writemask: u8,
    /// The reference value (`set_stencil_ref`).
    pub reference: u8,
}

/// One colour buffer's merge.
#[derive(Clone, Copy, Debug)]
pub struct RtPlan {
    /// FS output slot feeding the buffer (none: writes nothing).
    pub slot: Option<usize>,
    /// Second source for dual-source blending.
    pub slot1: Option<usize>,
    /// Its blend state (`rt[0]` unless independent blending).
    pub blend: RtBlendState,
    /// Pure-integer format: no blending, values are bit patterns.
    pub integer: bool,
    /// The RGBA8-family store, resolved once per state block (resolving it
    /// per batch was 4 % of `blend_overdraw`); `None` for other formats.
    unorm8: Option<unorm8::Unorm8Plan>,
}

/// The merge state of one state block.
#[derive(Clone, Debug)]
pub struct MergePlan {
    /// Depth test function and write enable; `None` when the depth test is
    /// off (GL: no depth writes either) or there is no depth buffer.
    pub depth: Option<(Func, bool)>,
    /// `(min, max)` of the depth bounds test, when enabled with a depth buffer.
    pub depth_bounds: Option<(f32, f32)>,
    /// The stencil test runs (front face enabled and a stencil buffer bound).
    pub stencil_enabled: bool,
    /// `[front, back]`.
    pub stencil: [StencilFace; 2],
    /// The alpha test's function and reference, when enabled.
    pub alpha_test: Option<(Func, f32)>,
    /// One plan per colour buffer slot.
    pub rts: Vec<RtPlan>,
    /// The logic op replacing blending, when enabled.
    pub logicop: Option<LogicOp>,
    /// Clamp colours to `[0, 1]` before blending.
    pub clamp_fragment_color: bool,
    /// `set_blend_color`.
    pub blend_color: [f32; 4],
    /// Clamp depth to the viewport range (`depth_clamp`).
    pub depth_clamp: bool,
}

impl MergePlan {
    /// Resolves the depth, stencil, alpha, blend and store state for
    /// fragment shader `fs`: the depth/stencil/alpha and blend CSOs, the
    /// framebuffer's formats, the stencil reference and blend colour, and
    /// the rasterizer's `clamp_fragment_color` and `depth_clamp`.
    pub fn derive(
        dsa: &DepthStencilAlphaState,
        blend: &BlendState,
        fb: &FramebufferState,
        rast: &RasterizerState,
        stencil_ref: &StencilRef,
        blend_color: &BlendColor,
        fs: &ShaderInfo,
    ) -> MergePlan {
        let zs = fb
            .zsbuf
            .as_ref()
            .and_then(|s| DepthFormat::classify(s.desc.format));
        let has_depth = zs.is_some_and(|f| f.has_depth());
        let has_stencil = zs.is_some_and(|f| f.has_stencil());
        let depth =
            (dsa.depth_enabled && has_depth).then_some((dsa.depth_func, dsa.depth_writemask));
        let depth_bounds = (dsa.depth_bounds_test && has_depth)
            .then_some((dsa.depth_bounds_min, dsa.depth_bounds_max));
        let face = |s: &StencilState, r: u8| StencilFace {
            func: s.func,
            fail_op: s.fail_op,
            zfail_op: s.zfail_op,
            zpass_op: s.zpass_op,
            valuemask: s.valuemask,
            writemask: s.writemask,
            reference: r,
        };
        let refs = stencil_ref.ref_value;
        let front = face(&dsa.stencil[0], refs[0]);
        let back = if dsa.stencil[1].enabled {
            face(&dsa.stencil[1], refs[1])
        } else {
            front
        };
        let stencil_enabled = dsa.stencil[0].enabled && has_stencil;
        let alpha_test = dsa
            .alpha_enabled
            .then_some((dsa.alpha_func, dsa.alpha_ref_value));
        let mut rts = Vec::with_capacity(fb.cbufs.len());
        for (i, cb) in fb.cbufs.iter().enumerate().take(MAX_COLOR_BUFS) {
            let color_slot = |src: u8| {
                fs.outputs.iter().position(|o| {
                    o.location as usize == i
                        && o.blend_src == src
                        && !matches!(
                            o.semantic,
                            Semantic::Depth | Semantic::SampleMask | Semantic::Position
                        )
                })
            };
            let integer = cb
                .as_ref()
                .is_some_and(|s| s.desc.format.desc().is_integer());
            let rt_blend = *blend.rt_state(i);
            let unorm8 = match cb
                .as_ref()
                .and_then(|s| ColorFormat::classify(s.desc.format))
            {
                Some(ColorFormat::Unorm8x4 { byte, srgb: false }) if !blend.logicop_enable => {
                    Some(unorm8::Unorm8Plan::new(
                        &rt_blend,
                        byte,
                        rt_blend.colormask & 0xf,
                        rt_blend.blend_enable,
                    ))
                }
                _ => None,
            };
            rts.push(RtPlan {
                slot: color_slot(0),
                slot1: if i == 0 { color_slot(1) } else { None },
                blend: rt_blend,
                integer,
                unorm8,
            });
        }
        MergePlan {
            depth,
            depth_bounds,
            stencil_enabled,
            stencil: [front, back],
            alpha_test,
            rts,
            logicop: blend.logicop_enable.then_some(blend.logicop_func),
            clamp_fragment_color: rast.clamp_fragment_color,
            blend_color: blend_color.color,
            depth_clamp: rast.depth_clamp,
        }
    }

    /// Whether a covered pixel's colour ends up independent of what the
    /// buffers held before (no blending or logic op reading the
    /// destination, every channel of every bound buffer written).
    pub(crate) fn overwrites_color(&self) -> bool {
        self.logicop.is_none_or(|op| op == LogicOp::Copy)
            && self.rts.iter().all(|rt| {
                rt.slot.is_some() && !rt.blend.blend_enable && rt.blend.colormask & 0xf == 0xf
            })
    }
}

/// Whether `format` is one the merge stage can write (used by the façade's
/// draw validation to reject the rest with a typed error).
pub fn render_target_supported(format: Format) -> bool {
    ColorFormat::classify(format).is_some()
}

/// Whether `format` is a depth/stencil format the merge stage handles.
pub fn depth_target_supported(format: Format) -> bool {
    DepthFormat::classify(format).is_some()
}

// ---------------------------------------------------------------------------
// Depth and stencil
// ---------------------------------------------------------------------------

#[inline]
fn stencil_op(op: StencilOp, s: u8, r: u8) -> u8 {
    match op {
        StencilOp::Keep => s,
        StencilOp::Zero => 0,
        StencilOp::Replace => r,
        StencilOp::Incr => s.saturating_add(1),
        StencilOp::Decr => s.saturating_sub(1),
        StencilOp::IncrWrap => s.wrapping_add(1),
        StencilOp::DecrWrap => s.wrapping_sub(1),
        StencilOp::Invert => !s,
    }
}

/// Converts a fragment depth to the buffer's representation for comparison
/// (unorm formats: round(z * (2^n - 1)) of z clamped to [0, 1]).
#[inline]
fn depth_to_unorm(z: f32, bits: u32) -> u32 {
    let max = ((1u64 << bits) - 1) as f64;
    let z = if z.is_nan() { 0.0 } else { z.clamp(0.0, 1.0) };
    (z as f64 * max).round_ties_even() as u32
}

/// Runs the stencil and depth (and bounds) tests of one group against the
/// depth target and applies their writes.  `z` holds the fragments' depth
/// (already clamped as the state requires).  Returns the surviving mask.
///
/// The float-depth fast path is inlined into the callers' per-group
/// loops; everything else goes to the out-of-line general test.  The
/// compiler does not hoist the fast path's state checks out of those
/// loops (the groups' stores may alias the state, as far as it knows):
/// raster's early-depth loop makes them once per entry itself
/// ([`z32f_rows`], [`depth_test_z32f_at`]; tiny_tris_1m -1.3 % of its
/// instructions).
#[inline]
pub(crate) fn depth_stencil_test(
    plan: &MergePlan,
    target: &DepthTarget,
    gx: i32,
    gy: i32,
    z: &Lanes,
    mask: u8,
    front: bool,
) -> u8 {
    match z32f_rows(plan, target) {
        Some(rows32) => depth_test_z32f_at(None, plan, target, &rows32, gx, gy, z, mask, front),
        None => depth_stencil_test_general(plan, target, gx, gy, z, mask, front),
    }
}

/// [`depth_stencil_test`]'s state checks for the Z32_FLOAT fast path,
/// made once for a run of groups: the target's group rows where the path
/// applies to `plan` and `target` (no stencil, no depth bounds), for
/// [`depth_test_z32f_at`].
#[inline]
pub(crate) fn z32f_rows(plan: &MergePlan, target: &DepthTarget) -> Option<GroupRows32> {
    if target.format == DepthFormat::Z32Float
        && !plan.stencil_enabled
        && plan.depth_bounds.is_none()
    {
        target.rows32
    } else {
        None
    }
}

/// [`depth_stencil_test`] where [`z32f_rows`] gave `rows32`: the same
/// test, without its per-group state checks (tiny_tris_1m: two groups a
/// triangle).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn depth_test_z32f_at(
    v3: Option<X86V3>,
    plan: &MergePlan,
    target: &DepthTarget,
    rows32: &GroupRows32,
    gx: i32,
    gy: i32,
    z: &Lanes,
    mask: u8,
    front: bool,
) -> u8 {
    match rows32.at(gx, gy) {
        Some(rows) => depth_test_z32f(v3, plan, target, rows, z, mask),
        None => depth_stencil_test_general(plan, target, gx, gy, z, mask, front),
    }
}

/// `depth_stencil_test` for every format and state, per lane.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
fn depth_stencil_test_general(
    plan: &MergePlan,
    target: &DepthTarget,
    gx: i32,
    gy: i32,
    z: &Lanes,
    mask: u8,
    front: bool,
) -> u8 {
    let fmt = target.format;
    let zs = z.as_array();
    let face = &plan.stencil[if front { 0 } else { 1 }];
    let mut out = 0u8;
    for l in 0..LANES {
        if mask & (1 << l) == 0 {
            continue;
        }
        let x = gx + FRAG_LANE_X[l] as i32;
        let y = gy + FRAG_LANE_Y[l] as i32;
        // SAFETY: tile jobs own disjoint pixels (module docs).
        let Some(px) = (unsafe { target.mem.pixel(x, y) }) else {
            continue;
        };
        let (stored_z, stored_s) = read_zs(fmt, px);
        let zf = zs[l];
        // Depth bounds compare the *stored* depth.
        if let Some((lo, hi)) = plan.depth_bounds {
            let dz = stored_depth_as_float(fmt, stored_z);
            if !(dz >= lo && dz <= hi) {
                continue;
            }
        }
        let mut new_s = stored_s;
        let mut pass = true;
        if plan.stencil_enabled {
            let r = face.reference & face.valuemask;
            let v = stored_s & face.valuemask;
            if !face.func.test(r, v) {
                new_s = stencil_op(face.fail_op, stored_s, face.reference);
                pass = false;
            }
        }
        let mut new_z = None;
        if pass {
            if let Some((func, write)) = plan.depth {
                let zpass = match fmt.unorm_bits() {
                    0 => func.test(zf, f32::from_bits(stored_z)),
                    bits => {
                        let zi = depth_to_unorm(zf, bits);
                        func.test(zi, stored_z)
                    }
                };
                if zpass {
                    if write {
                        new_z = Some(match fmt.unorm_bits() {
                            0 => zf.to_bits(),
                            bits => depth_to_unorm(zf, bits),
                        });
                    }
                    if plan.stencil_enabled {
                        new_s = stencil_op(face.zpass_op, stored_s, face.reference);
                    }
                } else {
                    pass = false;
                    if plan.stencil_enabled {
                        new_s = stencil_op(face.zfail_op, stored_s, face.reference);
                    }
                }
            } else if plan.stencil_enabled {
                new_s = stencil_op(face.zpass_op, stored_s, face.reference);
            }
        }
        let s_write = if plan.stencil_enabled {
            Some((stored_s & !face.writemask) | (new_s & face.writemask))
        } else {
            None
        };
        write_zs(fmt, px, new_z, s_write.filter(|&s| s != stored_s));
        if pass {
            out |= 1 << l;
        }
    }
    out
}

/// The SIMD depth test of a whole group on a Z32_FLOAT buffer without
/// stencil or bounds test (the common case: one compare, one blend).
#[inline]
fn depth_test_z32f(
    v3: Option<X86V3>,
    plan: &MergePlan,
    target: &DepthTarget,
    rows: (usize, usize),
    z: &Lanes,
    mask: u8,
) -> u8 {
    let Some((func, write)) = plan.depth else {
        return mask;
    };
    // SAFETY: rows from GroupRows32::at; tile jobs own disjoint pixels.
    let old: Lanes = bytemuck::cast(unsafe { target.mem.load_group32_at(v3, rows) });
    let z = *z;
    let pass = match func {
        Func::Never => Lanes::ZERO,
        Func::Less => z.simd_lt(old),
        Func::Equal => z.simd_eq(old),
        Func::Lequal => z.simd_le(old),
        Func::Greater => z.simd_gt(old),
        Func::Notequal => z.simd_ne(old),
        Func::Gequal => z.simd_ge(old),
        Func::Always => Lanes::from(f32::from_bits(u32::MAX)),
    };
    let pass = pass.to_bitmask() as u8 & mask;
    // Written back even when no lane passed (the old values, unchanged):
    // whether one passes is as random as the scene's depth order, and the
    // test mispredicted on ~1 in 8 groups of tiny_tris_1m.
    if write {
        let m = crate::lanes::mask_lanes(pass);
        let new = m.select(z, old);
        // SAFETY: as above.
        unsafe { target.mem.store_group32_at(v3, rows, bytemuck::cast(new)) };
    }
    pass
}

/// (depth bits or f32 bits, stencil) of a stored pixel.
#[inline]
fn read_zs(fmt: DepthFormat, px: &[u8]) -> (u32, u8) {
    let word = |o: usize| u32::from_le_bytes([px[o], px[o + 1], px[o + 2], px[o + 3]]);
    match fmt {
        DepthFormat::Z16 => (u16::from_le_bytes([px[0], px[1]]) as u32, 0),
        DepthFormat::Z32Unorm | DepthFormat::Z32Float => (word(0), 0),
        DepthFormat::Z24 { shift, stencil } => {
            let w = word(0);
            let z = (w >> shift) & 0xff_ffff;
            let s = if stencil {
                if shift == 0 { (w >> 24) as u8 } else { w as u8 }
            } else {
                0
            };
            (z, s)
        }
        DepthFormat::Z32FloatS8 => (word(0), px[4]),
        DepthFormat::S8 => (0, px[0]),
    }
}

#[inline]
fn write_zs(fmt: DepthFormat, px: &mut [u8], z: Option<u32>, s: Option<u8>) {
    if z.is_none() && s.is_none() {
        return;
    }
    match fmt {
        DepthFormat::Z16 => {
            if let Some(z) = z {
                px[..2].copy_from_slice(&(z as u16).to_le_bytes());
            }
        }
        DepthFormat::Z32Unorm | DepthFormat::Z32Float => {
            if let Some(z) = z {
                px[..4].copy_from_slice(&z.to_le_bytes());
            }
        }
        DepthFormat::Z24 { shift, stencil } => {
            let mut w = u32::from_le_bytes([px[0], px[1], px[2], px[3]]);
            if let Some(z) = z {
                w = (w & !(0xff_ffff << shift)) | ((z & 0xff_ffff) << shift);
            }
            if let (Some(s), true) = (s, stencil) {
                let sshift = if shift == 0 { 24 } else { 0 };
                w = (w & !(0xff << sshift)) | ((s as u32) << sshift);
            }
            px[..4].copy_from_slice(&w.to_le_bytes());
        }
        DepthFormat::Z32FloatS8 => {
            if let Some(z) = z {
                px[..4].copy_from_slice(&z.to_le_bytes());
            }
            if let Some(s) = s {
                px[4] = s;
            }
        }
        DepthFormat::S8 => {
            if let Some(s) = s {
                px[0] = s;
            }
        }
    }
}

fn stored_depth_as_float(fmt: DepthFormat, z: u32) -> f32 {
    match fmt.unorm_bits() {
        0 => f32::from_bits(z),
        bits => (z as f64 / ((1u64 << bits) - 1) as f64) as f32,
    }
}

/// Clears one tile's part of the depth/stencil target.
pub fn clear_depth_stencil(
    target: &DepthTarget,
    rect: (i32, i32, i32, i32),
    flags: ClearFlags,
    v: &ClearValue,
) {
    if target.mem.samples > 1 {
        for s in 0..target.mem.samples {
            clear_depth_stencil(&target.plane(s), rect, flags, v);
        }
        return;
    }
    let z = flags.contains(ClearFlags::DEPTH).then_some(v.depth as f32);
    let s = flags
        .contains(ClearFlags::STENCIL)
        .then_some(v.stencil as u8);
    if z.is_none() && s.is_none() {
        return;
    }
    // Clearing every component of the pixel: one packed pixel, filled.
    let whole = (z.is_some() || !target.format.has_depth())
        && (s.is_some() || !target.format.has_stencil());
    let mut pixel = [0u8; 8];
    let bpp = target.mem.bpp.min(8);
    if whole {
        pack::fill_zs_row(target.pipe_format, z, s, &mut pixel[..bpp]);
    }
    // SAFETY: the rows are this tile job's pixels (module docs).
    unsafe {
        target.mem.for_each_row(rect, |row| {
            if whole {
                fill_pixels(&pixel[..bpp], row);
            } else {
                pack::fill_zs_row(target.pipe_format, z, s, row);
            }
        })
    };
}

// ---------------------------------------------------------------------------
// Colour: pixel encode/decode
// ---------------------------------------------------------------------------

/// Bits of a pixel (little-endian bit string) holding RGBA channel `c` of
/// `d`: `(offset, length)`, length 0 when the format lacks the channel.
fn channel_bits(d: &FormatDesc, c: usize) -> (u32, u32) {
    let s = d.swizzle[c];
    if s > 3 {
        return (0, 0);
    }
    let off: u32 = d.channel_bits[..s as usize].iter().map(|&b| b as u32).sum();
    (off, d.channel_bits[s as usize] as u32)
}

/// Per-byte mask of the pixel bits the colour mask `colormask` (R=1, G=2,
/// B=4, A=8) lets a store change.
pub(crate) fn colormask_bytes(d: &FormatDesc, colormask: u8) -> [u8; 16] {
    let mut m = [0u8; 16];
    for c in 0..4 {
        if colormask & (1 << c) == 0 {
            continue;
        }
        let (off, len) = channel_bits(d, c);
        for bit in off..(off + len).min(128) {
            m[(bit / 8) as usize] |= 1 << (bit % 8);
        }
    }
    m
}

/// Reads a pixel as RGBA values (float bits, or integer bits for integer
/// formats); absent channels read 0 (alpha 1).
pub(crate) fn read_color(kind: ColorFormat, format: Format, px: &[u8]) -> [u32; 4] {
    match kind {
        ColorFormat::Unorm8x4 { byte, srgb } => {
            // llvmpipe's approximation, not the exact curve (merge/srgb.rs).
            let srgb_table = srgb::srgb8_to_linear();
            let mut out = [0u32; 4];
            for c in 0..4 {
                out[c] = if byte[c] == 255 {
                    if c == 3 { 1.0f32.to_bits() } else { 0 }
                } else {
                    let b = px[byte[c] as usize];
                    if srgb && c < 3 {
                        srgb_table[b as usize]
                    } else {
                        b as f32 * (1.0 / 255.0)
                    }
                    .to_bits()
                };
            }
            out
        }
        ColorFormat::Generic(d) => match d.channel_type {
            ChannelType::Uint => pack::unpack_rgba_u32(format, px),
            ChannelType::Sint => pack::unpack_rgba_i32(format, px).map(|v| v as u32),
            _ => pack::unpack_rgba_f32(format, px).map(f32::to_bits),
        },
    }
}

/// Unorm8 encoding of a float (`pack.rs` rules: clamp, round half to even).
#[inline]
fn unorm8(f: f32) -> u8 {
    let f = if f > 0.0 { f.min(1.0) } else { 0.0 };
    (f * 255.0).round_ties_even() as u8
}

/// Writes RGBA values (float bits, or integer bits for integer formats) to
/// a pixel, changing only the channels `colormask` selects.  With
/// `logicop`, the operation combines the encoded source and destination
/// bits (bitwise, so per channel), as llvmpipe does on packed values.
fn write_color(
    target: &ColorTarget,
    px: &mut [u8],
    v: [u32; 4],
    colormask: u8,
    logicop: Option<LogicOp>,
) {
    if let (ColorFormat::Unorm8x4 { byte, srgb }, None) = (target.kind, logicop) {
        for c in 0..4 {
            if colormask & (1 << c) == 0 || byte[c] == 255 {
                continue;
            }
            let f = f32::from_bits(v[c]);
            px[byte[c] as usize] = if srgb && c < 3 {
                // llvmpipe's approximation, not the exact curve.
                srgb::linear_to_srgb8(f)
            } else {
                unorm8(f)
            };
        }
        return;
    }
    let bpp = px.len().min(16);
    let mut tmp = [0u8; 16];
    let format = target.format;
    match format.desc().channel_type {
        ChannelType::Uint => pack::pack_rgba_u32(format, v, &mut tmp[..bpp]),
        ChannelType::Sint => pack::pack_rgba_i32(format, v.map(|x| x as i32), &mut tmp[..bpp]),
        _ => pack::pack_rgba_f32(format, v.map(f32::from_bits), &mut tmp[..bpp]),
    }
    if let Some(op) = logicop {
        for (t, d) in tmp[..bpp].iter_mut().zip(px.iter()) {
            *t = op.apply(*t as u32, *d as u32) as u8;
        }
    }
    let m = if colormask & 0xf == 0xf {
        &target.full_mask
    } else {
        &colormask_bytes(format.desc(), colormask)
    };
    for i in 0..bpp {
        px[i] = (tmp[i] & m[i]) | (px[i] & !m[i]);
    }
}

/// Clears one tile's part of a colour buffer.
pub fn clear_color(target: &ColorTarget, rect: (i32, i32, i32, i32), value: &ClearValue) {
    let mut pixel = [0u8; 16];
    let bpp = target.mem.bpp.min(16);
    pack::pack_color_union(
        target.format,
        ferropipe_components::state::ColorUnion(value.color.map(f32::to_bits)),
        &mut pixel[..bpp],
    );
    for s in 0..target.mem.samples {
        // SAFETY: the rows are this tile job's pixels (module docs).
        unsafe {
            target
                .mem
                .plane(s)
                .for_each_row(rect, |row| fill_pixels(&pixel[..bpp], row))
        };
    }
}

/// Fills `row` with copies of `pixel`: 4-byte pixels as 32-bit words (a
/// clear of a 64-pixel row is a few vector stores), others via `pack.rs`.
#[inline]
fn fill_pixels(pixel: &[u8], row: &mut [u8]) {
    if let ([a, b, c, d], Ok(words)) = (pixel, bytemuck::try_cast_slice_mut::<u8, u32>(row)) {
        words.fill(u32::from_ne_bytes([*a, *b, *c, *d]));
    } else {
        pack::fill_row(pixel, row);
    }
}

impl TargetMemory {
    /// Calls `f` with the bytes of each row of `rect` (clipped to the
    /// surface).
    ///
    /// # Safety
    /// The caller owns the rectangle's pixels (tile jobs own disjoint
    /// pixels) while the memory's write lock is held.
    unsafe fn for_each_row(&self, rect: (i32, i32, i32, i32), mut f: impl FnMut(&mut [u8])) {
        for (first, len) in self.rows(rect) {
            // SAFETY: the row's bytes are inside the storage (`rows`
            // checked both ends) and owned by the caller.
            let row = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(first), len) };
            f(row);
        }
    }

    /// `(byte offset, byte length)` of each row of `rect` clipped to the
    /// surface, both ends checked against the storage.
    fn rows(&self, rect: (i32, i32, i32, i32)) -> impl Iterator<Item = (usize, usize)> + '_ {
        let x0 = rect.0.max(0);
        let x1 = rect.2.min(self.width as i32);
        let ys = if x0 < x1 {
            rect.1.max(0)..rect.3.min(self.height as i32)
        } else {
            0..0
        };
        ys.filter_map(move |y| {
            let (first, _) = (self.offset(x0, y)?, self.offset(x1 - 1, y)?);
            Some((first, (x1 - x0) as usize * self.bpp))
        })
    }

    /// Prefetches the cache lines of `rect`'s pixels (clipped to the
    /// surface) in every sample plane: the tile pass's
    /// `prefetch_tile_targets`, which says why.
    pub(crate) fn prefetch_rect(&self, rect: (i32, i32, i32, i32)) {
        if self.ptr.is_null() {
            return;
        }
        for s in 0..self.samples {
            let plane = self.plane(s);
            for (first, len) in plane.rows(rect) {
                // from the cache line holding the row's first pixel
                let lead = plane.ptr.wrapping_add(first) as usize % 64;
                let line = plane.ptr.wrapping_add(first).wrapping_sub(lead);
                for k in 0..(len + lead).div_ceil(64) {
                    crate::lanes::prefetch(line.wrapping_add(64 * k));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Blending
// ---------------------------------------------------------------------------

/// RGBA of 8 lanes.
pub(crate) type Quad = [Lanes; 4];

#[inline]
fn factor(f: BlendFactor, c: usize, src: &Quad, src1: &Quad, dst: &Quad, cc: &Quad) -> Lanes {
    let one = Lanes::ONE;
    match f {
        BlendFactor::One => one,
        BlendFactor::Zero => Lanes::ZERO,
        BlendFactor::SrcColor => src[c],
        BlendFactor::SrcAlpha => src[3],
        BlendFactor::DstColor => dst[c],
        BlendFactor::DstAlpha => dst[3],
        BlendFactor::SrcAlphaSaturate => {
            if c == 3 {
                one
            } else {
                src[3].min(one - dst[3])
            }
        }
        BlendFactor::ConstColor => cc[c],
        BlendFactor::ConstAlpha => cc[3],
        BlendFactor::Src1Color => src1[c],
        BlendFactor::Src1Alpha => src1[3],
        BlendFactor::InvSrcColor => one - src[c],
        BlendFactor::InvSrcAlpha => one - src[3],
        BlendFactor::InvDstAlpha => one - dst[3],
        BlendFactor::InvDstColor => one - dst[c],
        BlendFactor::InvConstColor => one - cc[c],
        BlendFactor::InvConstAlpha => one - cc[3],
        BlendFactor::InvSrc1Color => one - src1[c],
        BlendFactor::InvSrc1Alpha => one - src1[3],
    }
}

#[inline]
fn blend_func(f: BlendFunc, s: Lanes, sf: Lanes, d: Lanes, df: Lanes) -> Lanes {
    match f {
        BlendFunc::Add => s * sf + d * df,
        BlendFunc::Subtract => s * sf - d * df,
        BlendFunc::ReverseSubtract => d * df - s * sf,
        BlendFunc::Min => s.min(d),
        BlendFunc::Max => s.max(d),
    }
}

/// Blends `src` over `dst` per `rt` (all four channels; the colour mask is
/// applied at the store).
pub fn blend(rt: &RtBlendState, src: &Quad, src1: &Quad, dst: &Quad, cc: &Quad) -> Quad {
    let mut out = *dst;
    for (c, o) in out.iter_mut().enumerate() {
        let (func, sf, df) = if c < 3 {
            (rt.rgb_func, rt.rgb_src_factor, rt.rgb_dst_factor)
        } else {
            (rt.alpha_func, rt.alpha_src_factor, rt.alpha_dst_factor)
        };
        let s = factor(sf, c, src, src1, dst, cc);
        let d = factor(df, c, src, src1, dst, cc);
        *o = blend_func(func, src[c], s, dst[c], d);
    }
    out
}

/// Per-colour-buffer data for merging one fragment group.
pub(crate) struct GroupColors<'a> {
    /// FS outputs, value-major (`[slot][comp][group]`).
    pub outputs: &'a [Lanes],
    /// Groups in the FS call.
    pub groups: usize,
    /// This group's index.
    pub g: usize,
}

impl GroupColors<'_> {
    #[inline]
    fn quad(&self, slot: usize) -> Quad {
        let at = |c: usize| self.outputs[(slot * 4 + c) * self.groups + self.g];
        [at(0), at(1), at(2), at(3)]
    }
}

/// Colour clamp to [0, 1] (`clamp_fragment_color`, unorm targets); NaN
/// becomes 0 (`vmaxps(x, 0)` returns its second operand for NaN).
#[inline]
fn clamp01(q: &mut Quad) {
    for l in q.iter_mut() {
        *l = l.fast_max(Lanes::ZERO).fast_min(Lanes::ONE);
    }
}

/// Applies the alpha test to a group; returns the surviving mask.
pub(crate) fn alpha_test(plan: &MergePlan, colors: &GroupColors<'_>, mask: u8) -> u8 {
    let Some((func, reference)) = plan.alpha_test else {
        return mask;
    };
    let Some(slot) = plan.rts.first().and_then(|rt| rt.slot) else {
        return mask;
    };
    let mut a = colors.quad(slot)[3];
    if plan.clamp_fragment_color {
        a = a.fast_max(Lanes::ZERO).fast_min(Lanes::ONE);
    }
    let a = a.as_array();
    let mut out = 0;
    for (l, &av) in a.iter().enumerate() {
        if mask & (1 << l) != 0 && func.test(av, reference) {
            out |= 1 << l;
        }
    }
    out
}

/// One shaded group as the store sees it.
#[derive(Clone, Copy, Debug)]
pub struct StoreGroup {
    /// Column of the group's top-left pixel.
    pub x: i32,
    /// Row of the group's top-left pixel.
    pub y: i32,
    /// Samples that passed every test.
    pub mask: u8,
}

/// Where a batch's stores read the colours they blend and write: the
/// fragment shader's output rows ([`OutputRows`]), or values the stores
/// compute per group themselves (`fragment::Folded`, a copy shader's
/// interpolated inputs: the fused variant, with no rows in between).
/// Monomorphised into the store loops, so the unorm8 kernels run on either
/// source with the source's code inlined.
pub trait ColorSource {
    /// One output slot's colours.
    type Slot<'s>: SlotColors
    where
        Self: 's;
    /// The colours of output `slot`.
    fn slot(&self, slot: usize) -> Self::Slot<'_>;
}

/// One output slot's colours per group (see [`ColorSource`]).
pub trait SlotColors: Copy {
    /// The colour of group `g` (of the batch's `groups`), unclamped, at
    /// SIMD level `v3`.
    fn color(&self, v3: Option<X86V3>, g: usize) -> Quad;

    /// Whether group `b`'s colour is group `a`'s, known without computing
    /// either (`false` where unknown): the stores then reuse what they
    /// derived from `a`'s.
    fn same_color(&self, a: usize, b: usize) -> bool;

    /// Whether groups `0..n` have colours.  The store loops assert it
    /// once, so that the inlined [`SlotColors::color`] reads need no
    /// bounds check per group (without it, blend_overdraw's store took
    /// ~10 more instructions a group).
    fn holds(&self, n: usize) -> bool;
}

/// The fragment shader's output buffer (`[slot][comp][group]`, `groups`
/// groups) as a [`ColorSource`].
#[derive(Clone, Copy)]
pub struct OutputRows<'a> {
    /// The rows.
    pub outputs: &'a [Lanes],
    /// Groups per row.
    pub groups: usize,
}

/// One slot's four rows of [`OutputRows`], each exactly `groups` long, so
/// that indexing them by a group's position in the store loops needs no
/// bounds check (LLVM sees the lengths).
#[derive(Clone, Copy)]
pub struct SlotRows<'a>([&'a [Lanes]; 4]);

impl ColorSource for OutputRows<'_> {
    type Slot<'s>
        = SlotRows<'s>
    where
        Self: 's;

    #[inline(always)]
    fn slot(&self, slot: usize) -> SlotRows<'_> {
        let n = self.groups;
        let (o0, rest) = self.outputs[slot * 4 * n..(slot * 4 + 4) * n].split_at(n);
        let (o1, rest) = rest.split_at(n);
        let (o2, o3) = rest.split_at(n);
        SlotRows([o0, o1, o2, o3])
    }
}

impl SlotColors for SlotRows<'_> {
    #[inline(always)]
    fn color(&self, _: Option<X86V3>, g: usize) -> Quad {
        let [o0, o1, o2, o3] = self.0;
        [o0[g], o1[g], o2[g], o3[g]]
    }

    #[inline(always)]
    fn same_color(&self, _: usize, _: usize) -> bool {
        false
    }

    #[inline(always)]
    fn holds(&self, n: usize) -> bool {
        let [o0, o1, o2, o3] = self.0;
        o0.len() >= n && o1.len() >= n && o2.len() >= n && o3.len() >= n
    }
}

/// Blends and stores a batch of shaded groups into every colour buffer.
/// `outputs` is the fragment shader's output buffer (`[slot][comp][group]`,
/// `groups.len()` groups).  Per-buffer decisions (format path, blend,
/// clamping) are made once per batch, not per group.
pub fn store_batch(plan: &MergePlan, targets: &Targets, groups: &[StoreGroup], outputs: &[Lanes]) {
    let rows = OutputRows {
        outputs,
        groups: groups.len(),
    };
    store_batch_from(plan, targets, groups, &rows);
}

/// [`store_batch`] with the colours from `src`: the fused variant's
/// entry, whose source interpolates instead of reading rows.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn store_batch_from<S: ColorSource>(
    plan: &MergePlan,
    targets: &Targets,
    groups: &[StoreGroup],
    src: &S,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    for (i, rt) in plan.rts.iter().enumerate() {
        let Some(slot) = rt.slot else { continue };
        let Some(Some(target)) = targets.color.get(i) else {
            continue;
        };
        let colormask = rt.blend.colormask & 0xf;
        if colormask == 0 {
            continue;
        }
        let clamp = !rt.integer && (plan.clamp_fragment_color || target_is_unorm(target));
        let blending = rt.blend.blend_enable && !rt.integer && plan.logicop.is_none();
        let mut cc = plan.blend_color.map(Lanes::splat);
        if clamp {
            clamp01(&mut cc);
        }
        let colors = src.slot(slot);
        let colors1 = rt.slot1.map(|s| src.slot(s));
        let quad = |c: &S::Slot<'_>, g: usize| -> Quad {
            let mut q = c.color(v3, g);
            if clamp {
                clamp01(&mut q);
            }
            q
        };
        // The plan was made for the framebuffer's format; the target is a
        // surface (or sample plane) of that framebuffer.
        let unorm8 = match target.kind {
            ColorFormat::Unorm8x4 { srgb: false, .. } => rt.unorm8.as_ref(),
            _ => None,
        };
        let generic = |g: usize, grp: &StoreGroup| {
            let src = quad(&colors, g);
            let src1 = colors1.as_ref().map_or([Lanes::ZERO; 4], |c| quad(c, g));
            let args = GroupStore {
                gx: grp.x,
                gy: grp.y,
                mask: grp.mask,
                colormask,
                blending,
                clamp,
                logicop: plan.logicop,
            };
            store_group_generic(&rt.blend, target, &args, &src, &src1, &cc);
        };
        if let Some(u8plan) = unorm8 {
            let batch = unorm8::Unorm8Batch {
                target,
                rt: &rt.blend,
                groups,
                colors: &colors,
                colors1: colors1.as_ref(),
                cc,
            };
            let mut leftover = Vec::new();
            unorm8::store_batch_unorm8(u8plan, &batch, &mut leftover);
            for g in leftover {
                generic(g, &groups[g]);
            }
            continue;
        }
        for (g, grp) in groups.iter().enumerate() {
            if grp.mask != 0 {
                generic(g, grp);
            }
        }
    }
}

/// How a generic (per-pixel) group store goes.
struct GroupStore {
    gx: i32,
    gy: i32,
    mask: u8,
    colormask: u8,
    blending: bool,
    clamp: bool,
    logicop: Option<LogicOp>,
}

/// Any format, any pixel position: per-pixel reads and writes through the
/// format's pack/unpack, blending in f32 lanes.
fn store_group_generic(
    blend_state: &RtBlendState,
    target: &ColorTarget,
    g: &GroupStore,
    src: &Quad,
    src1: &Quad,
    cc: &Quad,
) {
    if let Some(p) = &target.packed {
        let b = g
            .blending
            .then(|| unorm8::BlendBytes::with_width(blend_state, p.width()));
        let at = (g.gx, g.gy, g.mask);
        packed::store_group(
            p,
            target,
            at,
            g.colormask,
            b.as_ref(),
            g.logicop,
            src,
            src1,
            cc,
        );
        return;
    }
    let mut dst_q = [[0f32; LANES]; 4];
    let mut pixels: [Option<&mut [u8]>; LANES] = Default::default();
    for (l, p) in pixels.iter_mut().enumerate() {
        if g.mask & (1 << l) == 0 {
            continue;
        }
        let x = g.gx + FRAG_LANE_X[l] as i32;
        let y = g.gy + FRAG_LANE_Y[l] as i32;
        // SAFETY: tile jobs own disjoint pixels (module docs).
        *p = unsafe { target.mem.pixel(x, y) };
        if g.blending
            && let Some(px) = p.as_deref()
        {
            let d = read_color(target.kind, target.format, px);
            for c in 0..4 {
                dst_q[c][l] = f32::from_bits(d[c]);
            }
        }
    }
    let result: [[f32; LANES]; 4] = if g.blending {
        blend_values(blend_state, target, g.clamp, src, src1, dst_q, cc)
    } else {
        src.map(|l| l.to_array())
    };
    for (l, p) in pixels.iter_mut().enumerate() {
        if let Some(px) = p {
            let v = std::array::from_fn(|c| result[c][l].to_bits());
            write_color(target, px, v, g.colormask, g.logicop);
        }
    }
}

/// The blended values of a group: `src` (already clamped when `clamp`)
/// over the destination values `dst_q` (as [`read_color`] reads them),
/// in llvmpipe's byte arithmetic for RGBA8-family targets.
fn blend_values(
    blend_state: &RtBlendState,
    target: &ColorTarget,
    clamp: bool,
    src: &Quad,
    src1: &Quad,
    dst_q: [[f32; LANES]; 4],
    cc: &Quad,
) -> [[f32; LANES]; 4] {
    let mut dst = dst_q.map(Lanes::new);
    if clamp {
        clamp01(&mut dst);
    }
    if let ColorFormat::Unorm8x4 { srgb: false, .. } = target.kind {
        // llvmpipe's byte arithmetic, as the batch store: the
        // destination reads k / 255 exactly, so it converts back to
        // its bytes, and the result bytes k / 255 encode to k again.
        let b = unorm8::BlendBytes::new(blend_state);
        let dst = dst.map(unorm8::unit_to_byte);
        let k = 1.0 / 255.0;
        unorm8::blend_bytes(&b, src, src1, &dst, cc)
            .map(|v| (Lanes::from_i32x8(v) * Lanes::splat(k)).to_array())
    } else {
        blend(blend_state, src, src1, &dst, cc).map(|l| l.to_array())
    }
}

/// The tile store's per-pixel blend and write ([`store_batch`]'s generic
/// path) for a row of pixels outside the tile pass: the blitter's
/// `alpha_blend` (`engine/src/context/blit.rs`, u_blitter draws its quad
/// with a blend state).  `src[i]` is blended over pixel `i` of `row` (in
/// `format`) by `rt` with a zero blend colour — clamped to `[0, 1]` for
/// unorm formats, RGBA8-family formats in llvmpipe's byte arithmetic —
/// and written with `rt.colormask`.  Packed unorm formats take the
/// generic `pack.rs` write here, not the tile store's integer one.
/// Returns `false`, writing nothing, for integer formats (which do not
/// blend) and formats the merge stage cannot write.
pub fn blend_store_row(
    rt: &RtBlendState,
    format: Format,
    src: &[[f32; 4]],
    row: &mut [u8],
) -> bool {
    let mem = TargetMemory::detached();
    // The target is only a format here: `write_color` does not touch `mem`.
    let Some(target) = ColorTarget::new(mem, format) else {
        return false;
    };
    if format.desc().is_integer() {
        return false;
    }
    let clamp = target_is_unorm(&target);
    let blending = rt.blend_enable;
    let bpp = format.desc().block_bytes as usize;
    let zero = [Lanes::ZERO; 4];
    for (src, pixels) in src.chunks(LANES).zip(row.chunks_mut(bpp * LANES)) {
        let mut s = [[0f32; LANES]; 4];
        let mut d = [[0f32; LANES]; 4];
        for (l, (v, px)) in src.iter().zip(pixels.chunks_exact(bpp)).enumerate() {
            let dv = if blending {
                read_color(target.kind, format, px)
            } else {
                [0; 4]
            };
            for c in 0..4 {
                s[c][l] = v[c];
                d[c][l] = f32::from_bits(dv[c]);
            }
        }
        let mut sq = s.map(Lanes::new);
        if clamp {
            clamp01(&mut sq);
        }
        let result = if blending {
            blend_values(rt, &target, clamp, &sq, &zero, d, &zero)
        } else {
            sq.map(|l| l.to_array())
        };
        for (l, px) in pixels.chunks_exact_mut(bpp).enumerate().take(src.len()) {
            let v = std::array::from_fn(|c| result[c][l].to_bits());
            write_color(&target, px, v, rt.colormask, None);
        }
    }
    true
}

fn target_is_unorm(t: &ColorTarget) -> bool {
    match t.kind {
        ColorFormat::Unorm8x4 { .. } => true,
        ColorFormat::Generic(d) => d.channel_type == ChannelType::Unorm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group is addressed only when all 8 of its pixels lie inside the
    /// surface *and* its storage: a short allocation (or a 3-byte-per-row
    /// shortfall) sends the last rows' groups to the per-pixel paths.
    #[test]
    fn group_rows_stay_inside_the_surface_and_its_storage() {
        let surface = |len: usize, base: usize| TargetMemory {
            ptr: std::ptr::null_mut(),
            len,
            base,
            row_stride: 40,
            bpp: 4,
            width: 8,
            height: 6,
            samples: 1,
            sample_stride: 0,
        };
        // Storage for all 6 rows (the last row needs 32 bytes).
        let r = surface(8 + 5 * 40 + 32, 8).rows32().unwrap();
        assert_eq!(r.at(4, 4), Some((8 + 4 * 40 + 16, 8 + 5 * 40 + 16)));
        assert_eq!(r.at(0, 0), Some((8, 48)));
        for (x, y) in [(5, 0), (-1, 0), (0, -2), (0, 5), (i32::MIN, 0)] {
            assert_eq!(r.at(x, y), None, "({x}, {y})");
        }
        // One byte short of the last row: groups touching row 5 are out.
        let r = surface(8 + 5 * 40 + 31, 8).rows32().unwrap();
        assert_eq!(r.at(0, 4), None);
        assert!(r.at(4, 3).is_some());
        // Every access `at` allows ends inside the storage.
        let m = surface(8 + 3 * 40 + 20, 8);
        let r = m.rows32().unwrap();
        for y in -2..8 {
            for x in -2..10 {
                if let Some((_, r1)) = r.at(x, y) {
                    assert!(r1 + 16 <= m.len, "({x}, {y})");
                }
            }
        }
        // Narrower than a group, shorter than a group, or 2-byte pixels.
        let s = surface(1000, 0);
        for m in [
            TargetMemory { width: 3, ..s },
            TargetMemory { height: 1, ..s },
            TargetMemory { bpp: 2, ..s },
        ] {
            assert!(m.rows32().is_none(), "{m:?}");
        }
    }

    #[test]
    fn stencil_ops_saturate_and_wrap() {
        assert_eq!(stencil_op(StencilOp::Incr, 255, 0), 255);
        assert_eq!(stencil_op(StencilOp::IncrWrap, 255, 0), 0);
        assert_eq!(stencil_op(StencilOp::Decr, 0, 0), 0);
        assert_eq!(stencil_op(StencilOp::DecrWrap, 0, 0), 255);
        assert_eq!(stencil_op(StencilOp::Invert, 0x0f, 0), 0xf0);
        assert_eq!(stencil_op(StencilOp::Replace, 3, 9), 9);
    }

    #[test]
    fn generic_color_round_trip() {
        let mem = TargetMemory::detached();
        for f in [
            Format::B5G6R5_UNORM,
            Format::R16G16B16A16_FLOAT,
            Format::R10G10B10A2_UNORM,
        ] {
            let t = ColorTarget::new(mem, f).unwrap();
            let mut px = [0u8; 16];
            let bpp = f.desc().block_bytes as usize;
            let v = [1.0f32, 0.0, 1.0, 1.0].map(f32::to_bits);
            write_color(&t, &mut px[..bpp], v, 0xf, None);
            assert_eq!(read_color(t.kind, f, &px[..bpp]), v, "{f}");
            // The colour mask keeps the other channels' bits exactly.
            let zero = [0.0f32; 4].map(f32::to_bits);
            write_color(&t, &mut px[..bpp], zero, 0b0010, None);
            assert_eq!(read_color(t.kind, f, &px[..bpp]), v, "{f} mask G");
            write_color(&t, &mut px[..bpp], zero, 0b0001, None);
            assert_eq!(f32::from_bits(read_color(t.kind, f, &px[..bpp])[0]), 0.0);
        }
        let t = ColorTarget::new(mem, Format::B8G8R8A8_UNORM).unwrap();
        let mut px = [0u8; 4];
        write_color(
            &t,
            &mut px,
            [1.0f32, 0.5, 0.0, 1.0].map(f32::to_bits),
            0xf,
            None,
        );
        assert_eq!(px, [0, 128, 255, 255]);
    }
}
