//! Equivalent of draw's `draw_pipe_clip.c` + `draw_cliptest_tmp.h` + the
//! viewport part of `draw_pt_post_vs.c`: clip codes per vertex, trivial
//! accept/reject per primitive, homogeneous clipping, the viewport
//! transform, and the linkage of VS outputs into window-space vertices for
//! setup.
//!
//! Planes (all "inside" when the distance is >= 0):
//! * for triangles, x and y against a **guard band** of [`GUARD_BAND`]
//!   pixels, not the viewport: triangles larger than the viewport are
//!   rasterized as they are (setup's fixed point covers the band) and
//!   scissored to the viewport's pixels (`DerivedState::tri_regions`),
//!   which covers exactly what clipping to `|x|, |y| <= w` would; only
//!   triangles reaching past the band are clipped.  Points and lines are
//!   clipped to the view volume itself, as llvmpipe's draw module does (a
//!   wide line or point may overhang the viewport);
//! * near (`z >= -w`, or `z >= 0` with `clip_halfz`) and far (`z <= w`),
//!   each only when `depth_clip_near` / `depth_clip_far` is set;
//! * `w >= W_MIN`, so nothing divides by zero whatever the depth-clip state;
//! * the enabled user clip planes, or the shader's clip distances.
//!
//! Vertices with a non-finite position drop every primitive using them:
//! NaN and Inf can neither hang nor crash later stages.
//!
//! Culling by facing and zero area happens in setup on the fixed-point area,
//! as in llvmpipe, so clipped fans and unclipped triangles cull alike.

pub use crate::clip_plan::{ClipPlan, ClipPlane};
use ferropipe_components::batch::{ClippedPrim, ClippedPrims, GUARD_BAND, PrimKind, VertexBatch};
use ferropipe_components::shader::{Interpolation, LANES, Lanes, ULanes};
use ferropipe_components::simd::X86V3;
use ferropipe_components::state::ViewportState;
use multiversion::multiversion;

use crate::derived::DerivedState;
use crate::fetch::Segment;
use bevy_ecs::prelude::*;

use crate::job::{FrontJob, PipelineCounters, PipelineExecutor, SceneExecution, for_each_job_with};
use crate::sets::PipelineSet;

/// Smallest `w` a clipped vertex may have.
pub(crate) const W_MIN: f32 = 1e-6;

const BIT_INVALID: u32 = 1 << 31;
/// Frustum plane count: guard band x-, x+, y-, y+ (0-3), near, far, w (4-6),
/// view volume x-, x+, y-, y+ (7-10).
const FRUSTUM_PLANES: usize = 11;
/// Guard-band planes: what triangles are clipped against.
const GUARD_BAND_BITS: u32 = 0b1111;
/// View-volume x/y planes: what points and lines are clipped against
/// (llvmpipe clips those exactly, and wide ones overhang the viewport).
const VIEW_XY_BITS: u32 = 0b1111 << 7;

/// Per-segment counters for queries.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClipCounters {
    /// Primitives that entered the clipper.
    pub c_invocations: u64,
    /// Primitives that left it (fan triangles of clipped polygons counted
    /// one by one).
    pub c_primitives: u64,
}

/// Reusable scratch for one worker.
#[derive(Default)]
pub struct ClipScratch {
    masks: Vec<u32>,
    /// Clip-space records: `[x, y, z, w, dist..., attr...]`.
    rec_a: Vec<f32>,
    rec_b: Vec<f32>,
    tmp: Vec<f32>,
    /// Per polygon vertex of `rec_a` / `rec_b`: whether the edge leaving it
    /// is a polygon edge (drawn by unfilled modes).
    edges_a: Vec<bool>,
    edges_b: Vec<bool>,
}

/// Everything about the planes of one state block, precomputed.
struct Planes {
    gbx: f32,
    gby: f32,
    halfz: bool,
    near: bool,
    far: bool,
    n_user: usize,
}

impl Planes {
    /// Signed distance of a clip-space record to plane `k`.
    #[inline]
    fn dist(&self, k: usize, r: &[f32]) -> f32 {
        let (x, y, z, w) = (r[0], r[1], r[2], r[3]);
        match k {
            0 => x + self.gbx * w,
            1 => self.gbx * w - x,
            2 => y + self.gby * w,
            3 => self.gby * w - y,
            4 => {
                if self.halfz {
                    z
                } else {
                    z + w
                }
            }
            5 => w - z,
            6 => w - W_MIN,
            7 => x + w,
            8 => w - x,
            9 => y + w,
            10 => w - y,
            _ => r[4 + (k - FRUSTUM_PLANES)],
        }
    }

    fn count(&self) -> usize {
        FRUSTUM_PLANES + self.n_user
    }
}

/// Clips the primitives of one shaded segment and appends window-space
/// vertices and primitives to `out`.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn clip_segment(
    seg: &Segment,
    ds: &DerivedState,
    command: u32,
    state: u32,
    out: &mut ClippedPrims,
    scratch: &mut ClipScratch,
    counters: &mut ClipCounters,
) {
    let Some(pos_slot) = ds.shade.pos_slot else {
        // No position output: nothing can be rasterized.
        return;
    };
    let batch = &seg.batch;
    let stride = ds.stride;
    out.stride = stride;
    let plan = &*ds.clip;
    let vp = plan.viewport;
    // Guard band in NDC: keep |window x| <= GUARD_BAND.
    let gbx = ((GUARD_BAND - vp.translate[0].abs()) / vp.scale[0].abs().max(1e-30)).max(1.0);
    let gby = ((GUARD_BAND - vp.translate[1].abs()) / vp.scale[1].abs().max(1e-30)).max(1.0);
    let planes = Planes {
        gbx,
        gby,
        halfz: plan.halfz,
        near: ds.clip.near,
        far: ds.clip.far,
        n_user: ds.clip.planes.len(),
    };
    // 1. Clip codes and window-space vertices (AoS) for every vertex.
    let n = batch.count;
    let base = (out.verts.len() / stride.max(1)) as u32;
    out.verts.reserve(n * stride);
    scratch.masks.clear();
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    emit_vertices(
        v3,
        &seg.batch,
        ds,
        pos_slot,
        &planes,
        &vp,
        out,
        &mut scratch.masks,
    );

    // 2. Primitives.
    let point_size_default = plan.point_size;
    for p in &seg.prims {
        counters.c_invocations += 1;
        let nv = seg.kind.vertices();
        let idx = [p.v[0] as usize, p.v[1] as usize, p.v[2] as usize];
        // Triangles clip to the guard band (setup scissors them to the
        // viewport); points and lines to the view volume.  With
        // `point_tri_clip` (D3D) a point is clipped as the rectangle it
        // becomes: its centre may leave the view volume in x/y while the
        // part of its square inside the viewport still draws.
        let as_rectangle =
            seg.kind == PrimKind::Triangle || (seg.kind == PrimKind::Point && plan.point_tri_clip);
        let planes_of_kind = if as_rectangle {
            !VIEW_XY_BITS
        } else {
            !GUARD_BAND_BITS
        };
        let (mut or, mut and) = (0u32, u32::MAX);
        for &i in &idx[..nv] {
            or |= scratch.masks[i] & planes_of_kind;
            and &= scratch.masks[i] & planes_of_kind;
        }
        if or & BIT_INVALID != 0 || and != 0 {
            continue;
        }
        let provoking = p.provoking as u32 + base;
        let point_size = match (seg.kind, ds.shade.psize_slot) {
            (PrimKind::Point, Some(s)) if plan.point_size_per_vertex => batch.output(s, 0, idx[0]),
            _ => point_size_default,
        };
        let mut prim = ClippedPrim {
            v: [
                base + idx[0] as u32,
                base + idx[1] as u32,
                base + idx[2] as u32,
            ],
            provoking,
            kind: seg.kind,
            edge_flags: p.edge_flags,
            command,
            state,
            viewport: 0,
            point_size,
        };
        if or == 0 {
            counters.c_primitives += 1;
            out.prims.push(prim);
            continue;
        }
        match seg.kind {
            // A point is either inside (or == 0 above) or dropped.
            PrimKind::Point => {}
            PrimKind::Line => {
                if clip_line(
                    seg, ds, pos_slot, &planes, or, idx, &vp, out, scratch, &mut prim,
                ) {
                    counters.c_primitives += 1;
                    out.prims.push(prim);
                }
            }
            PrimKind::Triangle => {
                counters.c_primitives +=
                    clip_triangle(seg, ds, pos_slot, &planes, or, idx, &vp, out, scratch, prim);
            }
        }
    }
}

/// Loads the records of vertices `idx` into consecutive `rec_len` chunks of
/// `buf` (resized to fit).
fn load_records(
    seg: &Segment,
    ds: &DerivedState,
    pos_slot: usize,
    idx: &[usize],
    rec_len: usize,
    buf: &mut Vec<f32>,
) {
    buf.clear();
    buf.resize(idx.len() * rec_len, 0.0);
    for (k, &i) in idx.iter().enumerate() {
        load_record(
            &seg.batch,
            ds,
            pos_slot,
            i,
            &mut buf[k * rec_len..(k + 1) * rec_len],
        );
    }
}

/// Clip codes and window-space AoS vertices of every vertex of `b`, eight
/// at a time from the shader's SoA outputs.
///
/// The same operations in the same order as [`load_record`] +
/// [`Planes::dist`] + [`emit_vertex`] per vertex (`x + gbx * w`, `x *
/// (1 / w) * scale + translate`, user planes summed left to right), so the
/// bits agree; building a record per vertex and testing planes in a loop
/// was ~13 % of tiny_tris_1m.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn emit_vertices(
    v3: Option<X86V3>,
    b: &VertexBatch,
    ds: &DerivedState,
    pos_slot: usize,
    planes: &Planes,
    vp: &ViewportState,
    out: &mut ClippedPrims,
    masks: &mut Vec<u32>,
) {
    let n = b.count;
    let groups = b.groups;
    let row = |slot: usize, c: usize, g: usize| b.outputs[(slot * 4 + c) * groups + g];
    let zero = Lanes::ZERO;
    let stride = out.stride;
    // Records and masks are appended, not resized and overwritten: a
    // `resize` and an `extend_from_slice` of a group's run-time length
    // were a `memset` and a `memcpy` call per 8 vertices, with the group's
    // six live vectors spilled and reloaded around each (~110 of the ~400
    // instructions a group in tiny_tris_1m, callgrind 2026-12-06).  Each
    // group appends its 8 masks (one fixed-size copy; the padding is cut
    // after the loop) and, for records of at most 16 floats (the
    // transposed path: strides are 4 + 4k, so every float is written),
    // each vertex's record in fixed-size pieces with nothing zeroed first.
    let n_groups = groups.min(n.div_ceil(LANES));
    let emitted = n.min(n_groups * LANES);
    let m0 = masks.len();
    masks.reserve(n_groups * LANES);
    for g in 0..n_groups {
        let (x, y, z, w) = (
            row(pos_slot, 0, g),
            row(pos_slot, 1, g),
            row(pos_slot, 2, g),
            row(pos_slot, 3, g),
        );
        // Bit k of lane l: plane k rejects vertex l (d < 0 or NaN).
        let mut m = ULanes::ZERO;
        let mut set = |d: Lanes, bit: u32| {
            let out: ULanes = bytemuck::cast(!d.simd_ge(zero));
            m |= out & ULanes::splat(1 << bit);
        };
        let (gbx, gby) = (Lanes::splat(planes.gbx), Lanes::splat(planes.gby));
        set(x + gbx * w, 0);
        set(gbx * w - x, 1);
        set(y + gby * w, 2);
        set(gby * w - y, 3);
        if planes.near {
            set(if planes.halfz { z } else { z + w }, 4);
        }
        if planes.far {
            set(w - z, 5);
        }
        set(w - Lanes::splat(W_MIN), 6);
        set(x + w, 7);
        set(w - x, 8);
        set(y + w, 9);
        set(w - y, 10);
        for (k, plane) in ds.clip.planes.iter().enumerate() {
            let d = match *plane {
                ClipPlane::User(u) => {
                    Lanes::splat(u[0]) * x
                        + Lanes::splat(u[1]) * y
                        + Lanes::splat(u[2]) * z
                        + Lanes::splat(u[3]) * w
                }
                ClipPlane::Distance { slot, comp } => row(slot, comp, g),
            };
            set(d, (FRUSTUM_PLANES + k) as u32);
        }
        let finite = |v: Lanes| v.is_finite();
        let valid: ULanes = bytemuck::cast(finite(x) & finite(y) & finite(z) & finite(w));
        m |= !valid & ULanes::splat(BIT_INVALID);
        let inv_w = Lanes::ONE / w;
        let wx = x * inv_w * Lanes::splat(vp.scale[0]) + Lanes::splat(vp.translate[0]);
        let wy = y * inv_w * Lanes::splat(vp.scale[1]) + Lanes::splat(vp.translate[1]);
        let wz = z * inv_w * Lanes::splat(vp.scale[2]) + Lanes::splat(vp.translate[2]);
        let live = (n - g * LANES).min(LANES);
        masks.extend_from_slice(&m.to_array());
        // The record's columns as lanes (window position, 1/w, attributes,
        // the smooth-primitive varying, zero padding), transposed 8 columns
        // at a time into the 8 vertices' records: a scalar store per vertex
        // and component cost ~45 instructions per vertex of tiny_tris_1m.
        let mut cols = [Lanes::ZERO; 2 * LANES];
        if stride <= cols.len() && stride.is_multiple_of(4) {
            cols[..4].copy_from_slice(&[wx, wy, wz, inv_w]);
            for (a, &slot) in ds.link.attrs.iter().enumerate() {
                for c in 0..4 {
                    cols[4 + 4 * a + c] = row(slot, c, g);
                }
            }
            if let Some(aa) = ds.link.aa {
                // The smooth-primitive varying, as in `emit_vertex`.
                let o = 4 + 4 * aa.attr;
                for (c, &v) in crate::aa_state::AA_NEUTRAL.iter().enumerate() {
                    cols[o + c] = Lanes::splat(v);
                }
            }
            let lo = transpose8(v3, std::array::from_fn(|j| cols[j]));
            let verts = &mut out.verts;
            // Fixed-size copies (a variable length is a memcpy call): a
            // whole group of 8-float records as one 256-byte append (one
            // capacity test instead of eight), else record by record.
            if stride == LANES && live == LANES {
                verts.extend_from_slice(&bytemuck::cast::<_, [f32; LANES * LANES]>(lo));
            } else if stride <= LANES {
                for r in &lo[..live] {
                    let r = r.to_array();
                    if stride == LANES {
                        verts.extend_from_slice(&r);
                    } else {
                        verts.extend_from_slice(&r[..4]);
                    }
                }
            } else {
                let hi = transpose8(v3, std::array::from_fn(|j| cols[LANES + j]));
                for (r, h) in lo[..live].iter().zip(&hi[..live]) {
                    verts.extend_from_slice(&r.to_array());
                    let h = h.to_array();
                    if stride == 2 * LANES {
                        verts.extend_from_slice(&h);
                    } else {
                        verts.extend_from_slice(&h[..4]);
                    }
                }
            }
            continue;
        }
        let at = out.verts.len();
        out.verts.resize(at + live * stride, 0.0);
        let verts = &mut out.verts[at..at + live * stride];
        let (wx, wy, wz, iw) = (
            wx.to_array(),
            wy.to_array(),
            wz.to_array(),
            inv_w.to_array(),
        );
        for l in 0..live {
            let v = &mut verts[l * stride..(l + 1) * stride];
            v[0] = wx[l];
            v[1] = wy[l];
            v[2] = wz[l];
            v[3] = iw[l];
        }
        for (a, &slot) in ds.link.attrs.iter().enumerate() {
            for c in 0..4 {
                let vals = row(slot, c, g).to_array();
                for l in 0..live {
                    verts[l * stride + 4 + 4 * a + c] = vals[l];
                }
            }
        }
        if let Some(aa) = ds.link.aa {
            let o = 4 + 4 * aa.attr;
            for l in 0..live {
                verts[l * stride + o..l * stride + o + 4]
                    .copy_from_slice(&crate::aa_state::AA_NEUTRAL);
            }
        }
    }
    masks.truncate(m0 + emitted);
}

/// Transposes 8 lanes of 8: `out[l]` holds lane `l` of each input in
/// order (with the token, AVX2 unpacks and lane permutes; element moves
/// only).
#[inline(always)]
fn transpose8(v3: Option<X86V3>, v: [Lanes; LANES]) -> [Lanes; LANES] {
    #[cfg(target_arch = "x86_64")]
    if v3.is_some() {
        // SAFETY: an `X86V3` token exists only on a CPU with AVX2 and FMA.
        return unsafe { transpose8_avx(v) };
    }
    let _ = v3;
    let a = v.map(|x| x.to_array());
    std::array::from_fn(|l| Lanes::new(std::array::from_fn(|k| a[k][l])))
}

/// [`transpose8`]'s instructions.
///
/// # Safety
/// The CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn transpose8_avx(v: [Lanes; LANES]) -> [Lanes; LANES] {
    use core::arch::x86_64::{
        __m256, _mm256_permute2f128_ps, _mm256_shuffle_ps, _mm256_unpackhi_ps, _mm256_unpacklo_ps,
    };
    let r: [__m256; LANES] = v.map(bytemuck::cast);
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xee>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let u3 = _mm256_shuffle_ps::<0xee>(t1, t3);
    let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let u5 = _mm256_shuffle_ps::<0xee>(t4, t6);
    let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let u7 = _mm256_shuffle_ps::<0xee>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(u0, u4),
        _mm256_permute2f128_ps::<0x20>(u1, u5),
        _mm256_permute2f128_ps::<0x20>(u2, u6),
        _mm256_permute2f128_ps::<0x20>(u3, u7),
        _mm256_permute2f128_ps::<0x31>(u0, u4),
        _mm256_permute2f128_ps::<0x31>(u1, u5),
        _mm256_permute2f128_ps::<0x31>(u2, u6),
        _mm256_permute2f128_ps::<0x31>(u3, u7),
    ]
    .map(bytemuck::cast)
}

/// Builds the clip-space record of VS-output vertex `v`:
/// `[x, y, z, w, plane distances..., attributes...]`.
fn load_record(b: &VertexBatch, ds: &DerivedState, pos_slot: usize, v: usize, rec: &mut [f32]) {
    for c in 0..4 {
        rec[c] = b.output(pos_slot, c, v);
    }
    let mut k = 4;
    for plane in &ds.clip.planes {
        rec[k] = match *plane {
            ClipPlane::User(u) => u[0] * rec[0] + u[1] * rec[1] + u[2] * rec[2] + u[3] * rec[3],
            ClipPlane::Distance { slot, comp } => b.output(slot, comp, v),
        };
        k += 1;
    }
    for &slot in &ds.link.attrs {
        for c in 0..4 {
            rec[k] = b.output(slot, c, v);
            k += 1;
        }
    }
}

/// Appends the window-space AoS vertex of a clip record.
fn emit_vertex(rec: &[f32], ds: &DerivedState, vp: &ViewportState, out: &mut ClippedPrims) {
    let start = out.verts.len();
    let w = rec[3];
    let inv_w = 1.0 / w;
    out.verts
        .push(rec[0] * inv_w * vp.scale[0] + vp.translate[0]);
    out.verts
        .push(rec[1] * inv_w * vp.scale[1] + vp.translate[1]);
    out.verts
        .push(rec[2] * inv_w * vp.scale[2] + vp.translate[2]);
    out.verts.push(inv_w);
    let a0 = 4 + ds.clip.planes.len();
    out.verts
        .extend_from_slice(&rec[a0..a0 + 4 * ds.link.attrs.len()]);
    if ds.link.aa.is_some() {
        // The smooth-primitive varying (aa_stage.rs), set by setup for
        // smooth lines and points.
        out.verts.extend_from_slice(&crate::aa_state::AA_NEUTRAL);
    }
    // Padding to the scene's vertex layout (`DerivedState::stride`).
    out.verts.resize(start + ds.stride, 0.0);
}

/// Interpolates record `out = a + t * (b - a)`; `Linear` attributes use the
/// window-space parameter so they stay linear on screen.
fn lerp_record(a: &[f32], b: &[f32], t: f32, ds: &DerivedState, out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = a[i] + t * (b[i] - a[i]);
    }
    let a0 = 4 + ds.clip.planes.len();
    let (wa, wb) = (a[3], b[3]);
    let denom = wa + t * (wb - wa);
    let s = if denom > 0.0 && wa > 0.0 && wb > 0.0 {
        t * wb / denom
    } else {
        t
    };
    for (k, interp) in ds.link.attr_interp.iter().enumerate() {
        if *interp == Interpolation::Linear {
            for c in 0..4 {
                let i = a0 + 4 * k + c;
                out[i] = a[i] + s * (b[i] - a[i]);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn clip_line(
    seg: &Segment,
    ds: &DerivedState,
    pos_slot: usize,
    planes: &Planes,
    mask: u32,
    idx: [usize; 3],
    vp: &ViewportState,
    out: &mut ClippedPrims,
    scratch: &mut ClipScratch,
    prim: &mut ClippedPrim,
) -> bool {
    let rec_len = 4 + planes.n_user + 4 * ds.link.attrs.len();
    load_records(seg, ds, pos_slot, &idx[..1], rec_len, &mut scratch.rec_a);
    load_records(seg, ds, pos_slot, &idx[1..2], rec_len, &mut scratch.rec_b);
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for k in 0..planes.count() {
        if mask & (1 << k) == 0 {
            continue;
        }
        let da = planes.dist(k, &scratch.rec_a);
        let db = planes.dist(k, &scratch.rec_b);
        if da < 0.0 && db < 0.0 {
            return false;
        }
        if da < 0.0 {
            t0 = t0.max(da / (da - db));
        } else if db < 0.0 {
            t1 = t1.min(da / (da - db));
        }
    }
    if t0.is_nan() || t1.is_nan() || t0 >= t1 {
        return false;
    }
    let stride = ds.stride;
    scratch.tmp.resize(rec_len, 0.0);
    let mut new_index = |t: f32, orig: u32, scratch: &mut ClipScratch| -> u32 {
        if t == 0.0 && orig == 0 {
            return prim.v[0];
        }
        if t == 1.0 && orig == 1 {
            return prim.v[1];
        }
        let (a, b, tmp) = (&scratch.rec_a, &scratch.rec_b, &mut scratch.tmp);
        lerp_record(a, b, t, ds, tmp);
        let i = (out.verts.len() / stride) as u32;
        emit_vertex(tmp, ds, vp, out);
        i
    };
    let v0 = new_index(t0, 0, scratch);
    let v1 = new_index(t1, 1, scratch);
    prim.v = [v0, v1, 0];
    true
}

/// Clips a triangle against the planes in `mask`; emits its fan.  Returns
/// the number of triangles emitted.
#[allow(clippy::too_many_arguments)]
fn clip_triangle(
    seg: &Segment,
    ds: &DerivedState,
    pos_slot: usize,
    planes: &Planes,
    mask: u32,
    idx: [usize; 3],
    vp: &ViewportState,
    out: &mut ClippedPrims,
    scratch: &mut ClipScratch,
    prim: ClippedPrim,
) -> u64 {
    let rec_len = 4 + planes.n_user + 4 * ds.link.attrs.len();
    // Polygon as a list of records in rec_a; each plane clips into rec_b.
    let ClipScratch {
        rec_a,
        rec_b,
        tmp,
        edges_a,
        edges_b,
        ..
    } = scratch;
    load_records(seg, ds, pos_slot, &idx, rec_len, rec_a);
    edges_a.clear();
    edges_a.extend((0..3).map(|i| prim.edge_flags & (1 << i) != 0));
    let mut n = 3usize;
    tmp.resize(rec_len, 0.0);
    for k in 0..planes.count() {
        if mask & (1 << k) == 0 {
            continue;
        }
        // Edges along a user clip plane are drawn, edges along the view
        // volume's planes are not (draw_pipe_clip.c, "NVIDIA's behaviour").
        let user_plane = k >= FRUSTUM_PLANES;
        rec_b.clear();
        edges_b.clear();
        let mut m = 0usize;
        for i in 0..n {
            let j = (i + 1) % n;
            let a = &rec_a[i * rec_len..(i + 1) * rec_len];
            let b = &rec_a[j * rec_len..(j + 1) * rec_len];
            let da = planes.dist(k, a);
            let db = planes.dist(k, b);
            if da >= 0.0 {
                rec_b.extend_from_slice(a);
                edges_b.push(edges_a[i]);
                m += 1;
            }
            if (da >= 0.0) != (db >= 0.0) {
                // Interpolate from the inside vertex for stable results.
                let (p, q, dp, dq) = if da >= 0.0 {
                    (a, b, da, db)
                } else {
                    (b, a, db, da)
                };
                let t = dp / (dp - dq);
                lerp_record(p, q, t, ds, tmp);
                rec_b.extend_from_slice(tmp);
                // Leaving: the new vertex starts an edge along the plane;
                // entering: it starts the rest of edge a→b.
                edges_b.push(if da >= 0.0 { user_plane } else { edges_a[i] });
                m += 1;
            }
        }
        std::mem::swap(rec_a, rec_b);
        std::mem::swap(edges_a, edges_b);
        n = m;
        if n < 3 {
            return 0;
        }
    }
    let stride = ds.stride;
    let first = (out.verts.len() / stride) as u32;
    for i in 0..n {
        emit_vertex(&rec_a[i * rec_len..(i + 1) * rec_len], ds, vp, out);
    }
    for i in 1..n - 1 {
        // Fan triangle (0, i, i+1): its first edge is a polygon edge only
        // for the first triangle, its last only for the last.
        let mut flags = (edges_a[i] as u8) << 1;
        if i == 1 {
            flags |= edges_a[0] as u8;
        }
        if i == n - 2 {
            flags |= (edges_a[n - 1] as u8) << 2;
        }
        out.prims.push(ClippedPrim {
            v: [first, first + i as u32, first + i as u32 + 1],
            edge_flags: flags,
            ..prim
        });
    }
    (n - 2) as u64
}

// ---------------------------------------------------------------------------
// The system
// ---------------------------------------------------------------------------

/// The `Clip` system: clips, culls trivially, applies the viewport, links
/// attributes, in parallel over the wave's jobs.
pub(crate) fn clip_primitives(
    pool: Res<PipelineExecutor>,
    mut exec: ResMut<SceneExecution>,
    counters: Res<PipelineCounters>,
    mut scratch: Local<Vec<ClipScratch>>,
) {
    ferropipe_profiling::scope!("clip_primitives");
    let _time = counters.0.time_stage(PipelineSet::Clip.stage());
    let exec = &mut *exec;
    let states = &exec.states;
    let work = |job: &mut FrontJob, clip_scratch: &mut ClipScratch| {
        ferropipe_profiling::scope!("clip_job");
        let FrontJob {
            segments,
            used,
            clipped,
            ..
        } = job;
        let mut counts: Vec<(u32, ClipCounters)> = Vec::new();
        for seg in &segments[..*used] {
            let ds = &states[seg.part.state as usize];
            let mut c = ClipCounters::default();
            clip_segment(
                seg,
                ds,
                seg.part.command,
                seg.part.state,
                clipped,
                clip_scratch,
                &mut c,
            );
            counts.push((seg.part.command, c));
        }
        for (cmd, c) in counts {
            job.count(cmd, |d| {
                d.c_invocations += c.c_invocations;
                d.c_primitives += c.c_primitives;
            });
        }
    };
    for_each_job_with(&pool.0, &mut exec.wave, &mut scratch, &work);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ferropipe_components::enums::*;
    use ferropipe_components::shader::*;
    use ferropipe_components::state::{ClipState, RasterizerState};

    use super::*;
    use crate::tests::Setup;

    /// A fragment shader reading `n` generic inputs (perspective), for
    /// records of 4 + 4n floats.
    struct InputsFs(ShaderInfo);

    impl FragmentShader for InputsFs {
        fn info(&self) -> &ShaderInfo {
            &self.0
        }
        fn run(&self, _: &ShaderResources<'_>, _: &mut FragmentIo<'_>) {}
    }

    fn inputs_fs(n: u8) -> Arc<InputsFs> {
        let mut info = ShaderInfo {
            stage: ShaderType::Fragment,
            ..Default::default()
        };
        for i in 0..n {
            let mut slot = IoSlot::new(Semantic::Generic(i), i as u32);
            slot.interpolation = Interpolation::Perspective;
            info.inputs.push(slot);
        }
        info.outputs.push(IoSlot::new(Semantic::Color(0), 0));
        Arc::new(InputsFs(info))
    }

    /// The SIMD vertex pass gives exactly the per-vertex path's clip codes
    /// and window-space vertices: random positions (negative, tiny and
    /// non-finite w included), two user clip planes, near/far on and off,
    /// records of 4, 8, 12 and 16 floats (0 to 3 linked inputs) and of 20
    /// (the path that is not transposed), whole and partial groups.
    #[test]
    fn simd_vertex_pass_matches_per_vertex_records() {
        let mut next = crate::tests::xorshift32(0x1234_5678);
        for round in 0..40 {
            let mut setup = Setup::new(64, 32, None);
            let inputs = (round % 5) as u8;
            let generics: Vec<Semantic> = (0..inputs).map(Semantic::Generic).collect();
            let pipeline = Arc::make_mut(&mut setup.block.pipeline);
            pipeline.vs = crate::tests::PassVs::new(&generics);
            pipeline.fs = inputs_fs(inputs);
            let mut ucp = [[0f32; 4]; 8];
            ucp[0] = [1.0, -0.5, 0.25, 0.1];
            ucp[1] = [-0.3, 0.7, 0.0, 0.9];
            setup.block.clip = ClipState { ucp };
            setup.block.rasterizer = Arc::new(RasterizerState {
                clip_plane_enable: 0b11,
                depth_clip_near: round % 2 == 0,
                depth_clip_far: round % 3 == 0,
                clip_halfz: round % 4 == 0,
                ..Default::default()
            });
            let ds = DerivedState::new(Arc::new(setup.block));
            assert_eq!(ds.stride, 4 + 4 * inputs as usize);
            let pos_slot = ds.shade.pos_slot.unwrap();
            let count = 1 + next() as usize % 20;
            let groups = count.div_ceil(LANES);
            let slots = ds.shade.vs_info.outputs.len();
            let outputs = (0..slots * 4 * groups)
                .map(|_| {
                    Lanes::new(std::array::from_fn(|_| match next() % 16 {
                        0 => f32::NAN,
                        1 => f32::INFINITY,
                        2 => 1e-8,
                        3 => 0.0,
                        _ => (next() as i32) as f32 / i32::MAX as f32 * 3.0,
                    }))
                })
                .collect();
            let b = VertexBatch {
                groups,
                count,
                inputs: Vec::new(),
                vertex_id: Vec::new(),
                instance_id: Vec::new(),
                outputs,
            };
            let vp = crate::lanes::window_viewport(&ds.block.viewports[0], true);
            let planes = Planes {
                gbx: 3.0,
                gby: 5.0,
                halfz: ds.block.rasterizer.clip_halfz,
                near: ds.clip.near,
                far: ds.clip.far,
                n_user: ds.clip.planes.len(),
            };
            assert_eq!(planes.n_user, 2);
            let mut fast = ClippedPrims {
                stride: ds.stride,
                ..Default::default()
            };
            let mut fast_masks = Vec::new();
            emit_vertices(
                X86V3::detect(),
                &b,
                &ds,
                pos_slot,
                &planes,
                &vp,
                &mut fast,
                &mut fast_masks,
            );

            let mut slow = ClippedPrims {
                stride: ds.stride,
                ..Default::default()
            };
            let rec_len = 4 + planes.n_user + 4 * ds.link.attrs.len();
            let mut rec = vec![0f32; rec_len];
            for v in 0..count {
                load_record(&b, &ds, pos_slot, v, &mut rec);
                let mut m = 0u32;
                if !rec[..4].iter().all(|f| f.is_finite()) {
                    m |= BIT_INVALID;
                }
                for k in 0..planes.count() {
                    let d = planes.dist(k, &rec);
                    let enabled = match k {
                        4 => planes.near,
                        5 => planes.far,
                        _ => true,
                    };
                    if enabled && (d.is_nan() || d < 0.0) {
                        m |= 1 << k;
                    }
                }
                assert_eq!(fast_masks[v], m, "vertex {v} record {rec:?}");
                emit_vertex(&rec, &ds, &vp, &mut slow);
            }
            assert_eq!(
                fast.verts.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                slow.verts.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn transpose8_moves_lane_l_of_input_k_to_lane_k_of_output_l() {
        let v: [Lanes; LANES] =
            std::array::from_fn(|k| Lanes::new(std::array::from_fn(|l| (10 * k + l) as f32)));
        for v3 in [None, X86V3::detect()] {
            let t = transpose8(v3, v);
            for (l, row) in t.iter().enumerate() {
                let want: [f32; LANES] = std::array::from_fn(|k| (10 * k + l) as f32);
                assert_eq!(row.to_array(), want, "output {l} ({v3:?})");
            }
        }
    }
}
