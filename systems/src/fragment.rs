//! Equivalent of llvmpipe's `lp_bld_interp.c` and the shading loop of
//! `lp_state_fs.c` (`generate_fs_loop`): plane-equation interpolation of the
//! fragment shader's inputs over 4x2 lane groups, and the fragment shader
//! call.
//!
//! Raster collects covered groups of consecutive primitives that share a
//! state block into a [`FragBatch`] (up to [`MAX_BATCH_GROUPS`] groups, i.e.
//! 2048 pixels): one shader call per batch amortises an interpreter's
//! dispatch over many small triangles, which is what makes 4-pixel
//! triangles affordable.  Helper lanes (outside the primitive) are
//! interpolated and shaded like live ones, so derivatives across a 2x2
//! quad are exact; only the mask decides what merge writes.

use ferropipe_components::batch::{BinnedJob, MS_SAMPLES, Plane, SetupPrim};
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, Interpolation, Lanes, ShaderResources,
};
use ferropipe_components::simd::X86V3;
use multiversion::multiversion;

use crate::derived::DerivedState;
pub use crate::lanes::MAX_BATCH_GROUPS;
use crate::lanes::{fill_lanes_with_at, grow_lanes, mask_lanes_at, mul_at, plane_at};
use crate::link::{FsInputSource, FsRowSource};
use crate::merge::{ColorSource, Quad, SlotColors};

/// One covered 4x2 group awaiting shading.
#[derive(Clone, Copy, Debug, Default)]
pub struct FragGroup {
    /// Pixel coordinates of the group's top-left pixel.
    pub x: i32,
    /// Row of the group's top pixel.
    pub y: i32,
    /// Live lanes (bit l = lane l, see `FRAG_LANE_X/Y`).
    pub mask: u8,
    /// Index into [`FragBatch::prims`].
    pub prim: u16,
}

/// A primitive referenced by a batch: job and index of its set-up record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPrimRef {
    /// Index of the binned job (`SceneExecution::binned`).
    pub job: u32,
    /// Index of the set-up primitive in that job.
    pub prim: u32,
}

/// Covered groups of one state block, and the SoA buffers they are shaded
/// in.  Holds indices, not references, so tile jobs can reuse batches.
#[derive(Default)]
pub struct FragBatch {
    /// State block of every group (`None`: empty batch).
    pub state: Option<u32>,
    /// The covered 4x2 groups, at most [`MAX_BATCH_GROUPS`].
    pub groups: Vec<FragGroup>,
    /// The primitives the groups reference.
    pub prims: Vec<BatchPrimRef>,
    /// `[input slot][component][group]`.
    pub inputs: Vec<Lanes>,
    /// `[component][group]`: x, y, z, 1/w.
    pub frag_coord: Vec<Lanes>,
    /// `[group]`: the lanes still live after the fragment shader (a kill
    /// clears them), as all-ones or zero lanes.
    pub masks: Vec<Lanes>,
    /// `[output slot][component][group]`: what the fragment shader wrote.
    pub outputs: Vec<Lanes>,
    /// Scratch for the merge stage's per-group results.
    pub stores: Vec<crate::merge::StoreGroup>,
    /// Per group, `w` (the perspective divisor), when an input needs it.
    pub w: Vec<Lanes>,
    /// Per group, scratch: its lanes' offsets `(dx, dy)` from its
    /// primitive's reference pixel (plus the sample offset), computed once
    /// per batch and read by every interpolated component.
    pub offsets: Vec<[Lanes; 2]>,
    /// Per group, on a multisampled framebuffer: the lanes each sample
    /// covers (`mask` is their union).
    pub sample_masks: Vec<[u8; MS_SAMPLES]>,
    /// Sample shading: where in the pixel inputs are interpolated and
    /// `frag_coord` points, relative to the pixel's centre, in pixels.
    pub sample_offset: (f32, f32),
    /// Running totals over every batch shaded with this value (not reset
    /// by [`FragBatch::clear`]; the tile job takes them, see
    /// `raster::TileTotals`).
    pub counts: FragCounts,
    /// Scratch of the fused variant ([`fold_batch`]).
    pub folded: FoldedScratch,
}

/// What [`shade_batch`] counts: popcounts of the groups' masks, per group,
/// never per pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragCounts {
    /// Live lanes sent to the fragment shader.
    pub shaded: u64,
    /// Of those, lanes the shader killed (`discard`).
    pub killed: u64,
}

impl FragBatch {
    /// Empties the batch for the next state block (keeping allocations).
    pub fn clear(&mut self) {
        self.state = None;
        self.groups.clear();
        self.prims.clear();
        self.sample_masks.clear();
    }

    /// Whether the batch holds [`MAX_BATCH_GROUPS`] groups (256, 2048 pixels) and must be shaded.
    pub fn is_full(&self) -> bool {
        self.groups.len() >= MAX_BATCH_GROUPS
    }

    /// Adds a primitive (consecutive groups of one primitive share it).
    pub fn push_prim(&mut self, p: BatchPrimRef) -> u16 {
        if self.prims.last() == Some(&p) {
            return (self.prims.len() - 1) as u16;
        }
        self.prims.push(p);
        (self.prims.len() - 1) as u16
    }

    /// The set-up record and planes of batch primitive `i`.
    #[inline]
    pub fn prim<'j>(&self, jobs: &'j [BinnedJob], i: u16) -> (&'j SetupPrim, &'j [Plane]) {
        prim_of(&self.prims, jobs, i)
    }
}

/// The set-up record and planes of batch primitive `i` of `prims`.
#[inline]
fn prim_of<'j>(
    prims: &[BatchPrimRef],
    jobs: &'j [BinnedJob],
    i: u16,
) -> (&'j SetupPrim, &'j [Plane]) {
    let r = prims[i as usize];
    let job = &jobs[r.job as usize];
    let p = &job.prims.prims[r.prim as usize];
    (p, &job.prims.planes[p.planes as usize..])
}

/// Lane x offsets as floats.
#[inline]
fn lane_x() -> Lanes {
    Lanes::new(FRAG_LANE_X.map(|v| v as f32))
}

#[inline]
fn lane_y() -> Lanes {
    Lanes::new(FRAG_LANE_Y.map(|v| v as f32))
}

/// Evaluates `plane` over a group whose lane offsets from the plane's
/// reference pixel are `dx`, `dy`.
#[inline]
pub(crate) fn eval_plane(p: &Plane, dx: Lanes, dy: Lanes) -> Lanes {
    plane_at(None, p, dx, dy)
}

/// Offsets (dx, dy) of a group's lanes from its primitive's reference pixel.
#[inline]
pub(crate) fn group_offsets(g: &FragGroup, p: &SetupPrim) -> (Lanes, Lanes) {
    (
        Lanes::splat((g.x - p.ref_x) as f32) + lane_x(),
        Lanes::splat((g.y - p.ref_y) as f32) + lane_y(),
    )
}

/// The depth of a group's lanes as the depth test sees it: interpolated
/// (polygon offset is already in the plane), then clamped as
/// [`clamp_depth`] says.
#[inline]
pub(crate) fn group_depth(
    ds: &DerivedState,
    g: &FragGroup,
    p: &SetupPrim,
    planes: &[Plane],
) -> Lanes {
    let (dx, dy) = group_offsets(g, p);
    clamp_depth(ds, p.viewport, eval_plane(&planes[0], dx, dy))
}

/// [`group_depth`] at sample `s` of a multisampled framebuffer: the plane
/// evaluated at the sample position (`DerivedState::ms_offsets`; the pixel
/// centre without multisample rasterization).
pub(crate) fn sample_depth(
    ds: &DerivedState,
    g: &FragGroup,
    p: &SetupPrim,
    planes: &[Plane],
    s: usize,
) -> Lanes {
    let (dx, dy) = group_offsets(g, p);
    let (ox, oy) = ds.tiles.ms_offsets.map_or((0, 0), |o| o[s]);
    let k = 1.0 / 256.0;
    let (dx, dy) = (
        dx + Lanes::splat(ox as f32 * k),
        dy + Lanes::splat(oy as f32 * k),
    );
    clamp_depth(ds, p.viewport, eval_plane(&planes[0], dx, dy))
}

/// Fragment depth as llvmpipe's `lp_build_depth_clamp` restricts it before
/// the depth test: to [0, 1] for every depth format (Gallium has no
/// `unclamped_fragment_depth_values`, so float buffers are restricted
/// too: polygon offset can push z out of range), then to the viewport's
/// depth range with `depth_clamp`.
#[inline]
pub(crate) fn clamp_depth(ds: &DerivedState, viewport: u8, z: Lanes) -> Lanes {
    // On x86 `fast_max` / `fast_min` (`maxps` / `minps`) with a bound that
    // is not NaN are `max` and `min` bit for bit (a NaN `z` gives 0, as
    // `max` does), without the bound's NaN test that `max` adds (two
    // compares and blends on every early-depth group).  Elsewhere
    // `fast_max` may propagate a NaN `z` (NEON's `vmaxq`).
    #[cfg(target_arch = "x86_64")]
    let z = z.fast_max(Lanes::ZERO).fast_min(Lanes::ONE);
    #[cfg(not(target_arch = "x86_64"))]
    let z = z.max(Lanes::ZERO).min(Lanes::ONE);
    if ds.merge.depth_clamp {
        let (lo, hi) = ds.tiles.depth_range[viewport as usize];
        z.max(Lanes::splat(lo)).min(Lanes::splat(hi))
    } else {
        z
    }
}

/// How a run of one primitive's groups fills an [`FsRow`]: decided once
/// per run and row, so the row loops of [`shade_batch`] and its
/// one-group path compute the same values with the same operations.
enum RowFill<'p> {
    /// The same value in every lane: a flat or constant plane (times the
    /// run's constant `w` for a perspective one), the facing, or zero.
    Splat(Lanes),
    /// The plane at each group's offsets.
    Linear(&'p Plane),
    /// The plane at each group's offsets, times the group's `w`.
    Perspective(&'p Plane),
    /// Component `c` of the window position.
    FragCoord(usize),
}

/// Whether some fragment shader input is interpolated with perspective,
/// so a batch needs each group's `w`.
#[inline]
fn reads_perspective(ds: &DerivedState) -> bool {
    ds.link.fs_inputs.iter().any(|s| {
        matches!(
            s,
            FsInputSource::Attr {
                interp: Interpolation::Perspective,
                ..
            }
        )
    })
}

/// [`RowFill`] of a row from `src` and the run's primitive's `planes`;
/// `w0` is the run's `w` where it is constant (`const_w`).
#[inline(always)]
fn row_fill(
    src: FsRowSource,
    planes: &[Plane],
    const_w: bool,
    w0: Lanes,
    front_facing: bool,
) -> RowFill<'_> {
    let flat_plane = |p: &Plane| p.dadx == 0.0 && p.dady == 0.0;
    match src {
        FsRowSource::Attr { plane, interp } => {
            let p = &planes[plane as usize];
            match interp {
                Interpolation::Flat => RowFill::Splat(Lanes::splat(p.a0)),
                Interpolation::Linear if flat_plane(p) => RowFill::Splat(Lanes::splat(p.a0)),
                Interpolation::Perspective if const_w && flat_plane(p) => {
                    RowFill::Splat(Lanes::splat(p.a0) * w0)
                }
                Interpolation::Linear => RowFill::Linear(p),
                Interpolation::Perspective => RowFill::Perspective(p),
            }
        }
        FsRowSource::PointCoord { plane } => RowFill::Linear(&planes[plane as usize]),
        FsRowSource::FragCoord { c } => RowFill::FragCoord(c as usize),
        FsRowSource::FrontFacing => RowFill::Splat(Lanes::splat(f32::from_bits(if front_facing {
            u32::MAX
        } else {
            0
        }))),
        FsRowSource::Zero => RowFill::Splat(Lanes::ZERO),
    }
}

/// Interpolates the batch's inputs and runs the fragment shader; afterwards
/// each group's mask has the shader's discards applied.
#[multiversion(
    targets("x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt+f16c+movbe"),
    attrs(allow(dead_code))
)]
pub fn shade_batch(
    batch: &mut FragBatch,
    ds: &DerivedState,
    jobs: &[BinnedJob],
    resources: &ShaderResources<'_>,
) {
    // SAFETY: the expression is true only in the x86-64-v3 clone (run
    // where the CPU has those features) or in a build that requires them.
    let v3 = unsafe {
        X86V3::in_clone(multiversion::target::target_cfg_f!(all(
            target_feature = "avx2",
            target_feature = "fma"
        )))
    };
    let n = batch.groups.len();
    if n == 0 {
        return;
    }
    // The rows are `[..][group]` with `n` as the stride; the buffers keep
    // their longest length (`grow_lanes`), and only these prefixes are
    // live.
    let n_in = ds.link.fs_inputs.len();
    let (in_len, fc_len) = (n_in * 4 * n, 4 * n);
    let out_len = ds.link.fs_info.outputs.len() * 4 * n;
    grow_lanes(&mut batch.inputs, in_len);
    grow_lanes(&mut batch.frag_coord, fc_len);
    grow_lanes(&mut batch.masks, n);
    grow_lanes(&mut batch.outputs, out_len);
    if !ds.link.fs_writes_all_outputs {
        batch.outputs[..out_len].fill(Lanes::ZERO);
    }

    let needs_fc = ds.link.fs_info.frag_coord_mask != 0
        || ds.link.fs_inputs.contains(&FsInputSource::FragCoord);
    let needs_w = reads_perspective(ds);
    grow_lanes(&mut batch.w, n);
    let so = batch.sample_offset;
    if batch.offsets.len() < n {
        batch.offsets.resize(n, [Lanes::ZERO; 2]);
    }
    // A shader that only copies inputs to outputs is folded into the
    // interpolation: each copied input is written straight into its
    // output row and the shader does not run (blend_overdraw: one 2 KiB
    // `memcpy` per colour row and batch, ~30 of ~250 instructions per
    // group).
    let copy_to = ds.link.fs_copy_to.as_deref();
    let rows = &ds.link.fs_rows[..];
    let FragBatch {
        groups,
        prims,
        inputs,
        frag_coord,
        masks,
        w,
        offsets: offsets_buf,
        outputs,
        ..
    } = batch;
    let lx = lane_x() + Lanes::splat(0.5);
    let ly = lane_y() + Lanes::splat(0.5);
    let mut shaded = 0u32;
    if copy_to.is_some() {
        // No shader runs, so nothing reads the lane masks.
        shaded = groups.iter().map(|g| g.mask.count_ones()).sum();
    } else {
        for (g, grp) in groups.iter().enumerate() {
            masks[g] = mask_lanes_at(v3, grp.mask);
            shaded += grp.mask.count_ones();
        }
    }
    batch.counts.shaded += shaded as u64;
    // Runs of groups from one primitive share its planes: load and splat
    // them once per run, then two FMAs per group and component, writing
    // each value-major row contiguously.
    let mut start = 0;
    while start < n {
        let pi = groups[start].prim;
        let mut end = start + 1;
        while end < n && groups[end].prim == pi {
            end += 1;
        }
        let (prim, planes) = prim_of(prims, jobs, pi);
        let run = &groups[start..end];
        let (sx, sy) = (Lanes::splat(so.0), Lanes::splat(so.1));
        let offsets = |g: &FragGroup| {
            let (dx, dy) = group_offsets(g, prim);
            (dx + sx, dy + sy)
        };
        let flat_plane = |p: &Plane| p.dadx == 0.0 && p.dady == 0.0;
        let const_w = needs_w && flat_plane(&planes[1]);
        if end == start + 1 && !needs_fc {
            // A one-group run (tiny_tris_1m: about half the runs): each
            // row's value straight from the group's offsets, without the
            // offsets and w rows and the per-row loops below, whose set-up
            // cost more than the one value each computes (shade_batch
            // -12 % of its instructions there; doing the same for runs of
            // up to four groups, recomputing w and the flat tests per
            // group, gave back a third of it).  The same operations as
            // below on the same operands: the same bits.
            let (dx, dy) = offsets(&run[0]);
            let wv = if !needs_w {
                Lanes::ZERO
            } else if const_w {
                Lanes::splat(1.0 / planes[1].a0)
            } else {
                Lanes::ONE / plane_at(v3, &planes[1], dx, dy)
            };
            for r in rows {
                let v = match row_fill(r.src, planes, const_w, wv, prim.front_facing) {
                    RowFill::Splat(v) => v,
                    RowFill::Linear(p) => plane_at(v3, p, dx, dy),
                    RowFill::Perspective(p) => mul_at(v3, plane_at(v3, p, dx, dy), wv),
                    // (`FragCoord` rows exist only with `needs_fc`.)
                    RowFill::FragCoord(_) => Lanes::ZERO,
                };
                let buf = if r.to_output {
                    &mut *outputs
                } else {
                    &mut *inputs
                };
                buf[r.row as usize * n + start] = v;
            }
            start = end;
            continue;
        }
        // The run's offsets, once, where something below evaluates a plane:
        // the attribute loops read them per component instead of converting
        // the group position again each time (pbr_barrels: 12 interpolated
        // components).  Not for a run whose inputs are all constant
        // (blend_overdraw's quads: computing them anyway made it 8 %
        // slower), and in the batch's scratch, not a stack array
        // (initialising 64 entries per run was a 4 KiB memset per
        // primitive on small triangles).
        let evaluates = needs_fc
            || (needs_w && !const_w)
            || rows.iter().any(|r| match r.src {
                FsRowSource::Attr { plane, interp } => match interp {
                    Interpolation::Flat => false,
                    Interpolation::Linear => !flat_plane(&planes[plane as usize]),
                    Interpolation::Perspective => !(const_w && flat_plane(&planes[plane as usize])),
                },
                FsRowSource::PointCoord { .. } => true,
                _ => false,
            });
        if evaluates {
            for (o, g) in offsets_buf[start..end].iter_mut().zip(run) {
                let (dx, dy) = offsets(g);
                *o = [dx, dy];
            }
        }
        let dxy = &offsets_buf[start..end];
        // A primitive whose vertices share w (2D, orthographic, and every
        // quad drawn flat to the screen) has a constant 1/w plane: w is
        // one division per run instead of one per group, and a perspective
        // attribute that is also constant is filled, not evaluated.  Both
        // give the same bits as the general loops (the gradient terms are
        // exact zeros).  A run whose inputs are all constant reads only
        // that one value, `w_run`, and its row is not filled at all
        // (blend_overdraw: one of five rows written per group).
        let mut w_run = Lanes::ZERO;
        if const_w && !needs_fc {
            w_run = Lanes::splat(1.0 / planes[1].a0);
            if evaluates {
                fill_lanes_with_at(v3, &mut w[start..end], w_run);
            }
        } else if needs_w || needs_fc {
            let p = &planes[1];
            for (k, &[dx, dy]) in dxy.iter().enumerate() {
                let inv_w = plane_at(v3, p, dx, dy);
                if needs_fc {
                    frag_coord[3 * n + start + k] = inv_w;
                }
                if needs_w {
                    w[start + k] = Lanes::ONE / inv_w;
                }
            }
        }
        if needs_fc {
            for (k, (g, &[dx, dy])) in run.iter().zip(dxy).enumerate() {
                frag_coord[start + k] = Lanes::splat(g.x as f32) + lx + sx;
                frag_coord[n + start + k] = Lanes::splat(g.y as f32) + ly + sy;
                frag_coord[2 * n + start + k] =
                    clamp_depth(ds, prim.viewport, plane_at(v3, &planes[0], dx, dy));
            }
        }
        // (`w[start]` when frag_coord made the row: `1 / (a0 + 0 dx + 0 dy)`,
        // which differs from `1 / a0` for `a0 = -0`)
        let w0 = if needs_fc { w[start] } else { w_run };
        for r in rows {
            let buf = if r.to_output {
                &mut *outputs
            } else {
                &mut *inputs
            };
            let at = r.row as usize * n;
            let row = &mut buf[at + start..at + end];
            match row_fill(r.src, planes, const_w, w0, prim.front_facing) {
                RowFill::Splat(v) => fill_lanes_with_at(v3, row, v),
                RowFill::Linear(p) => {
                    for (v, &[dx, dy]) in row.iter_mut().zip(dxy) {
                        *v = plane_at(v3, p, dx, dy);
                    }
                }
                RowFill::Perspective(p) => {
                    for ((v, &[dx, dy]), wv) in row.iter_mut().zip(dxy).zip(&w[start..end]) {
                        *v = mul_at(v3, plane_at(v3, p, dx, dy), *wv);
                    }
                }
                RowFill::FragCoord(c) => {
                    row.copy_from_slice(&frag_coord[c * n + start..c * n + end]);
                }
            }
        }
        start = end;
    }

    // (A folded copy shader's outputs are already in place.)
    if copy_to.is_none() {
        let FragBatch {
            inputs,
            frag_coord,
            masks,
            outputs,
            ..
        } = batch;
        let mut io = FragmentIo {
            groups: n,
            inputs: &inputs[..in_len],
            frag_coord: &frag_coord[..fc_len],
            mask: &mut masks[..n],
            outputs: &mut outputs[..out_len],
        };
        ds.link.fs.run(resources, &mut io);
    }
    if ds.link.fs_info.uses_discard {
        let mut killed = 0u32;
        for (g, grp) in batch.groups.iter_mut().enumerate() {
            let kept = grp.mask & batch.masks[g].to_bitmask() as u8;
            killed += (grp.mask ^ kept).count_ones();
            grp.mask = kept;
        }
        batch.counts.killed += killed as u64;
    }
}

/// One output slot of a folded copy shader over one primitive: per
/// component, the [`RowFill`] its row would get, split into the values
/// that are the same in every lane (`base`) and the planes evaluated per
/// group.  A slot whose components are all splats (blend_overdraw's
/// quads, any flat or constant colour) returns `base` as it is.  Scalars,
/// not lanes: a splat's lanes are one scalar's bits (`splat(a0) * w0` is
/// `a0 * w0` in each lane), and at 96 bytes instead of 256 the table costs
/// tiny_tris_1m's ~2 M primitives a frame a third less to fill.
#[derive(Clone, Copy, Default)]
struct FoldedQuad {
    /// Evaluated components' planes.
    planes: [Plane; 4],
    /// Splat components' values (evaluated ones are overwritten).
    base: [f32; 4],
    /// The 1/w plane where `w` varies over the primitive.
    w_plane: Plane,
    /// `w` where the 1/w plane is flat (`1 / a0`), else unused.
    w0: f32,
    /// The primitive's reference pixel.
    ref_x: i32,
    ref_y: i32,
    /// Bit c: component c is a plane at the group's offsets.
    evaluated: u8,
    /// Bit c: and it is multiplied by the group's `w` (perspective).
    perspective: u8,
    /// `w` is one division per group (`w_plane`), not `w0`.
    varying_w: bool,
}

/// How [`fold_batch`] fills one output slot per primitive, resolved once
/// per batch from `LinkPlan::fs_rows`.
#[derive(Clone, Copy)]
enum SlotFill {
    /// The slot copies the four components of one input, interpolated
    /// alike (planes `first..first + 4`): `return in.color`.  Filled as
    /// four at once.
    Attr { first: usize, interp: Interpolation },
    /// Anything else (some components unwritten, mixed sources): row by
    /// row through [`row_fill`].
    Rows,
}

/// [`fold_batch`]'s tables, kept with the batch so their allocations are
/// reused: the quads `[batch primitive][output slot]`, and per slot how
/// it is filled.
#[derive(Default)]
pub struct FoldedScratch {
    quads: Vec<FoldedQuad>,
    slots: Vec<SlotFill>,
}

/// The fused fragment variant's colour source
/// (`tiles_plan::FragmentVariant::Folded`): a copy shader's outputs,
/// evaluated per group by the stores from each primitive's planes, with no
/// input, output or `w` rows in between.  Each value is the same
/// operations on the same operands as [`shade_batch`]'s (its one-group
/// path's), so the same bits.
///
/// `CONSTANT`: every primitive's colours are splats ([`Folded::constant`]),
/// so a primitive's groups share one colour and the stores prepare its
/// blend source once ([`SlotColors::same_color`]); otherwise that test is
/// compiled out (with it, tiny_tris_1m's stores, whose colours vary, took
/// ~15 more instructions a group).
pub struct Folded<'b, const CONSTANT: bool = false> {
    groups: &'b [FragGroup],
    quads: &'b [FoldedQuad],
    slots: usize,
    sample_offset: (Lanes, Lanes),
}

impl<'b> Folded<'b> {
    /// The same source as one whose colours are constant per primitive,
    /// where they are.
    pub fn constant(&self) -> Option<Folded<'b, true>> {
        self.quads
            .iter()
            .all(|q| q.evaluated == 0)
            .then_some(Folded {
                groups: self.groups,
                quads: self.quads,
                slots: self.slots,
                sample_offset: self.sample_offset,
            })
    }
}

/// One output slot of a [`Folded`] source.
#[derive(Clone, Copy)]
pub struct FoldedSlot<'b, const CONSTANT: bool> {
    groups: &'b [FragGroup],
    quads: &'b [FoldedQuad],
    slots: usize,
    slot: usize,
    sample_offset: (Lanes, Lanes),
}

impl<const CONSTANT: bool> ColorSource for Folded<'_, CONSTANT> {
    type Slot<'s>
        = FoldedSlot<'s, CONSTANT>
    where
        Self: 's;

    #[inline(always)]
    fn slot(&self, slot: usize) -> FoldedSlot<'_, CONSTANT> {
        assert!(slot < self.slots, "output slot {slot} out of range");
        FoldedSlot {
            groups: self.groups,
            quads: self.quads,
            slots: self.slots,
            slot,
            sample_offset: self.sample_offset,
        }
    }
}

impl<const CONSTANT: bool> SlotColors for FoldedSlot<'_, CONSTANT> {
    #[inline(always)]
    fn color(&self, v3: Option<X86V3>, g: usize) -> Quad {
        let grp = &self.groups[g];
        let q = &self.quads[grp.prim as usize * self.slots + self.slot];
        let mut out = q.base.map(Lanes::splat);
        if CONSTANT || q.evaluated == 0 {
            return out;
        }
        // `shade_batch`'s `offsets`: `group_offsets` plus the sample offset.
        let (sx, sy) = self.sample_offset;
        let dx = Lanes::splat((grp.x - q.ref_x) as f32) + lane_x() + sx;
        let dy = Lanes::splat((grp.y - q.ref_y) as f32) + lane_y() + sy;
        let w = if q.perspective == 0 {
            Lanes::ZERO
        } else if q.varying_w {
            Lanes::ONE / plane_at(v3, &q.w_plane, dx, dy)
        } else {
            Lanes::splat(q.w0)
        };
        for (c, v) in out.iter_mut().enumerate() {
            if q.evaluated & (1 << c) != 0 {
                let e = plane_at(v3, &q.planes[c], dx, dy);
                *v = if q.perspective & (1 << c) != 0 {
                    mul_at(v3, e, w)
                } else {
                    e
                };
            }
        }
        out
    }

    /// With `CONSTANT`, two groups of one primitive.
    #[inline(always)]
    fn same_color(&self, a: usize, b: usize) -> bool {
        CONSTANT && self.groups[a].prim == self.groups[b].prim
    }

    #[inline(always)]
    fn holds(&self, n: usize) -> bool {
        self.groups.len() >= n
    }
}

/// The fused variant's first half (the caller counts the lanes as
/// shaded): resolves, per primitive, each output component of the folded copy
/// shader (`LinkPlan::fs_copy_to`) to a splat or a plane, as
/// [`shade_batch`]'s row fill does per run; the stores then evaluate the
/// planes per group ([`Folded`]).  For a state whose
/// `tiles_plan::FragmentVariant` is `Folded` (no window-position rows).
pub fn fold_batch<'b>(
    batch: &'b mut FragBatch,
    ds: &DerivedState,
    jobs: &[BinnedJob],
) -> Folded<'b> {
    let needs_w = reads_perspective(ds);
    let slots = ds.link.fs_info.outputs.len();
    let FoldedScratch {
        quads,
        slots: slot_fills,
    } = &mut batch.folded;
    quads.clear();
    // Per slot, once per batch: the common copy of a whole input is
    // filled four components at once (tiny_tris_1m: ~285 → ~150
    // instructions per primitive); the rest row by row.
    slot_fills.clear();
    slot_fills.extend((0..slots).map(|slot| {
        // (Each output row is written by at most one copy:
        // `link::copy_targets`.)
        let mut srcs = [None; 4];
        for r in ds.link.fs_rows.iter() {
            if r.to_output && r.row as usize / 4 == slot {
                srcs[r.row as usize % 4] = Some(r.src);
            }
        }
        match srcs[0] {
            Some(FsRowSource::Attr { plane, interp })
                if (1..4).all(|c| {
                    srcs[c]
                        == Some(FsRowSource::Attr {
                            plane: plane + c as u32,
                            interp,
                        })
                }) =>
            {
                SlotFill::Attr {
                    first: plane as usize,
                    interp,
                }
            }
            _ => SlotFill::Rows,
        }
    }));
    let by_rows = slot_fills.iter().any(|f| matches!(f, SlotFill::Rows));
    for i in 0..batch.prims.len() {
        let (prim, planes) = prim_of(&batch.prims, jobs, i as u16);
        let const_w = needs_w && planes[1].dadx == 0.0 && planes[1].dady == 0.0;
        let w0 = if const_w { 1.0 / planes[1].a0 } else { 0.0 };
        let first = quads.len();
        for fill in slot_fills.iter() {
            // Outputs the shader leaves unwritten are zero (`shade_batch`
            // clears them).
            let mut q = FoldedQuad {
                w_plane: planes[1],
                w0,
                ref_x: prim.ref_x,
                ref_y: prim.ref_y,
                varying_w: needs_w && !const_w,
                ..FoldedQuad::default()
            };
            if let SlotFill::Attr { first, interp } = *fill {
                // `row_fill` for four components at once: the same
                // decisions, the same values.
                let p = &planes[first..first + 4];
                let p: [Plane; 4] = [p[0], p[1], p[2], p[3]];
                let flat = (0..4).fold(0u8, |m, c| {
                    m | (((p[c].dadx == 0.0 && p[c].dady == 0.0) as u8) << c)
                });
                q.planes = p;
                q.base = p.map(|p| p.a0);
                match interp {
                    Interpolation::Flat => {}
                    Interpolation::Linear => q.evaluated = !flat & 0xf,
                    Interpolation::Perspective if const_w => {
                        for (c, b) in q.base.iter_mut().enumerate() {
                            if flat & (1 << c) != 0 {
                                *b = p[c].a0 * w0;
                            }
                        }
                        q.evaluated = !flat & 0xf;
                        q.perspective = q.evaluated;
                    }
                    Interpolation::Perspective => {
                        q.evaluated = 0xf;
                        q.perspective = 0xf;
                    }
                }
            }
            quads.push(q);
        }
        if !by_rows {
            continue;
        }
        for r in ds.link.fs_rows.iter().filter(|r| r.to_output) {
            let (slot, c) = (r.row as usize / 4, r.row as usize % 4);
            if matches!(slot_fills[slot], SlotFill::Attr { .. }) {
                continue;
            }
            let q = &mut quads[first + slot];
            match row_fill(r.src, planes, const_w, Lanes::splat(w0), prim.front_facing) {
                RowFill::Splat(v) => q.base[c] = v.as_array()[0],
                RowFill::Linear(p) => {
                    q.planes[c] = *p;
                    q.evaluated |= 1 << c;
                }
                RowFill::Perspective(p) => {
                    q.planes[c] = *p;
                    q.evaluated |= 1 << c;
                    q.perspective |= 1 << c;
                }
                // `FragmentVariant::Folded` excludes window-position rows.
                RowFill::FragCoord(_) => unreachable!("a folded batch reads no window position"),
            }
        }
    }
    let so = batch.sample_offset;
    Folded {
        groups: &batch.groups,
        quads: &batch.folded.quads,
        slots,
        sample_offset: (Lanes::splat(so.0), Lanes::splat(so.1)),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use ferropipe_components::enums::PrimType;
    use ferropipe_components::shader::{
        FragmentIo, FragmentShader, Interpolation, Semantic, ShaderInfo, ShaderResources,
    };

    use crate::merge::{ColorSource, SlotColors};
    use crate::tests::{PassFs, Setup, clear, draw, pixels, run, verts, world};
    use ferropipe_components::simd::X86V3;

    /// Colour 0 = the input's components reversed (`wzyx`), as row copies;
    /// `fold` says whether it reports them ([`FragmentShader::interface_copies`]).
    struct ReverseFs {
        info: ShaderInfo,
        fold: bool,
        runs: AtomicUsize,
    }

    const REVERSE: [(u32, u32); 4] = [(0, 3), (1, 2), (2, 1), (3, 0)];

    impl FragmentShader for ReverseFs {
        fn info(&self) -> &ShaderInfo {
            &self.info
        }
        fn run(&self, _: &ShaderResources<'_>, io: &mut FragmentIo<'_>) {
            self.runs.fetch_add(1, Ordering::Relaxed);
            let n = io.groups;
            for &(o, i) in &REVERSE {
                let (o, i) = (o as usize * n, i as usize * n);
                io.outputs[o..o + n].copy_from_slice(&io.inputs[i..i + n]);
            }
        }
        fn interface_copies(&self) -> Option<&[(u32, u32)]> {
            self.fold.then_some(&REVERSE[..])
        }
    }

    /// A copy shader folded into the interpolation (not run) gives the
    /// image of running it, for perspective and flat inputs.
    #[test]
    fn folded_copies_give_the_image_of_running_the_shader() {
        let (w, h) = (40, 36);
        let pts = [
            (1.0, 2.0, 0.5, [1.0, 0.25, 0.0, 0.5]),
            (38.0, 5.0, 0.5, [0.0, 1.0, 0.5, 1.0]),
            (7.0, 35.0, 0.5, [0.5, 0.0, 1.0, 0.75]),
        ];
        for interp in [Interpolation::Perspective, Interpolation::Flat] {
            let image = |fold: bool| {
                let fs = Arc::new(ReverseFs {
                    info: PassFs::interface(Semantic::Generic(0), interp),
                    fold,
                    runs: AtomicUsize::new(0),
                });
                let mut s = Setup::new(w, h, None).with_vertices(&verts(&pts, w, h));
                let mut p = (*s.block.pipeline).clone();
                p.fs = fs.clone();
                s.block.pipeline = Arc::new(p);
                let mut world = world(1);
                let cmds = vec![
                    (None, clear([0.1, 0.2, 0.3, 1.0])),
                    (Some(s.block.clone()), draw(PrimType::Triangles, 0, 3)),
                ];
                run(&mut world, &s.fb, cmds);
                (
                    pixels(s.fb.cbufs[0].as_ref().unwrap()),
                    fs.runs.load(Ordering::Relaxed),
                )
            };
            let ((folded, folded_runs), (ran, runs)) = (image(true), image(false));
            assert_eq!(folded_runs, 0, "{interp:?}: a folded copy shader ran");
            assert!(runs > 0);
            assert_eq!(folded, ran, "{interp:?}");
            // and the triangle is there: reversed, red is the input's
            // alpha (0.5 to 1 over the triangle)
            assert!(folded.chunks(4).any(|p| p[0] > 100 && p[3] > 100));
        }
    }

    /// Copies that read an input row twice, write an output row twice or
    /// leave the interface are not folded (they run).
    #[test]
    fn ambiguous_copies_are_not_folded() {
        struct Copies(ShaderInfo, Vec<(u32, u32)>);
        impl FragmentShader for Copies {
            fn info(&self) -> &ShaderInfo {
                &self.0
            }
            fn run(&self, _: &ShaderResources<'_>, _: &mut FragmentIo<'_>) {}
            fn interface_copies(&self) -> Option<&[(u32, u32)]> {
                Some(&self.1)
            }
        }
        let info = PassFs::interface(Semantic::Generic(0), Interpolation::Perspective);
        let to =
            |c: &[(u32, u32)]| crate::link::copy_targets(&Copies(info.clone(), c.to_vec()), 1, 1);
        assert_eq!(to(&REVERSE).as_deref(), Some(&[3, 2, 1, 0][..]));
        assert_eq!(
            to(&[(0, 1)]).as_deref(),
            Some(&[u32::MAX, 0, u32::MAX, u32::MAX][..])
        );
        assert_eq!(to(&[(0, 1), (2, 1)]), None, "input row read twice");
        assert_eq!(to(&[(0, 1), (0, 2)]), None, "output row written twice");
        assert_eq!(to(&[(4, 0)]), None, "output row past the interface");
        assert_eq!(to(&[(0, 4)]), None, "input row past the interface");
    }

    /// The fused variant's stores write what the shaded path's write, for
    /// the opaque store and the "over" blend: with a primitive whose
    /// colour varies (evaluated per group) beside one whose colour is
    /// constant, and with two constant ones (each prepared once and
    /// reused, [`SlotColors::same_color`]), their groups interleaved.
    #[test]
    fn folded_stores_match_shaded_stores() {
        use super::{BatchPrimRef, FragBatch, FragGroup, fold_batch, shade_batch};
        use crate::derived::DerivedState;
        use crate::merge::{
            ColorTarget, StoreGroup, TargetMemory, Targets, store_batch, store_batch_from,
        };
        use ferropipe_components::batch::{BinnedJob, Plane, SetupPrim, SetupPrims};
        use ferropipe_components::enums::{BlendFactor, BlendFunc};
        use ferropipe_components::format::Format;
        use ferropipe_components::shader::FragmentShaderRef;

        let (w, h) = (24usize, 4usize);
        for (blend, varying) in [(false, true), (true, true), (false, false), (true, false)] {
            let mut s = Setup::new(w as u32, h as u32, None);
            let mut p = (*s.block.pipeline).clone();
            let fs: FragmentShaderRef = Arc::new(ReverseFs {
                info: PassFs::interface(Semantic::Generic(0), Interpolation::Linear),
                fold: true,
                runs: AtomicUsize::new(0),
            });
            p.fs = fs;
            s.block.pipeline = Arc::new(p);
            let mut bs = (*s.block.blend).clone();
            let rt = &mut bs.rt[0];
            rt.blend_enable = blend;
            (rt.rgb_func, rt.alpha_func) = (BlendFunc::Add, BlendFunc::Add);
            (rt.rgb_src_factor, rt.alpha_src_factor) =
                (BlendFactor::SrcAlpha, BlendFactor::SrcAlpha);
            (rt.rgb_dst_factor, rt.alpha_dst_factor) =
                (BlendFactor::InvSrcAlpha, BlendFactor::InvSrcAlpha);
            s.block.blend = Arc::new(bs);
            let ds = DerivedState::new(Arc::new(s.block));
            assert_eq!(ds.fragment, crate::tiles_plan::FragmentVariant::Folded);
            // prim 0's colour varies over x and y; prim 1's is constant
            let per = ds.link.planes_per_prim;
            let mut prims = SetupPrims::default();
            for pi in 0..2 {
                prims.prims.push(SetupPrim {
                    ref_x: 3 * pi,
                    ref_y: 1,
                    planes: (pi as usize * per) as u32,
                    front_facing: true,
                    ..Default::default()
                });
                for k in 0..per {
                    let g = if pi == 1 || !varying {
                        0.0
                    } else {
                        0.013 + k as f32 * 0.007
                    };
                    prims.planes.push(Plane {
                        a0: 0.2 + k as f32 * 0.1 + pi as f32 * 0.05,
                        dadx: g,
                        dady: -g * 1.7,
                    });
                }
            }
            let jobs = [BinnedJob {
                prims,
                bins: Default::default(),
            }];
            let order = [
                (0u16, 0, 0xff),
                (0, 4, 0xff),
                (1, 8, 0x5a),
                (1, 12, 0xff),
                (0, 16, 0xf0),
                (1, 20, 0x81),
            ];
            let batch = || {
                let mut b = FragBatch {
                    prims: vec![
                        BatchPrimRef { job: 0, prim: 0 },
                        BatchPrimRef { job: 0, prim: 1 },
                    ],
                    ..Default::default()
                };
                for &(prim, x, mask) in &order {
                    b.groups.push(FragGroup {
                        x,
                        y: 2,
                        mask,
                        prim,
                    });
                }
                b
            };
            let stores: Vec<StoreGroup> = order
                .iter()
                .map(|&(_, x, mask)| StoreGroup { x, y: 2, mask })
                .collect();
            let start: Vec<u8> = (0..w * h * 4).map(|i| (i * 37 % 251) as u8).collect();
            let targets = |px: &mut Vec<u8>| Targets {
                color: vec![ColorTarget::new(
                    TargetMemory {
                        ptr: px.as_mut_ptr(),
                        len: px.len(),
                        base: 0,
                        row_stride: w * 4,
                        bpp: 4,
                        width: w as u32,
                        height: h as u32,
                        samples: 1,
                        sample_stride: 0,
                    },
                    Format::R8G8B8A8_UNORM,
                )],
                depth: None,
            };
            let mut shaded = start.clone();
            let mut b = batch();
            shade_batch(&mut b, &ds, &jobs, &Default::default());
            store_batch(&ds.merge, &targets(&mut shaded), &stores, &b.outputs);
            let mut folded = start.clone();
            let mut b = batch();
            let src = fold_batch(&mut b, &ds, &jobs);
            match src.constant() {
                Some(constant) => {
                    assert!(!varying);
                    store_batch_from(&ds.merge, &targets(&mut folded), &stores, &constant);
                }
                None => {
                    assert!(varying);
                    store_batch_from(&ds.merge, &targets(&mut folded), &stores, &src);
                }
            }
            assert_ne!(shaded, start, "blend {blend}: nothing stored");
            assert_eq!(folded, shaded, "blend {blend} varying {varying}");
        }
    }

    /// The fused variant is chosen exactly where nothing between the
    /// (never run) copy shader and the stores reads its outputs.
    #[test]
    fn folded_variant_only_without_tests_after_shading() {
        use crate::derived::DerivedState;
        use crate::tiles_plan::FragmentVariant;
        use ferropipe_components::enums::Func;
        use ferropipe_components::format::Format;
        use ferropipe_components::shader::FragmentShaderRef;
        use ferropipe_components::state::DepthStencilAlphaState;

        let variant = |fold: bool, zs: Option<Format>, dsa: DepthStencilAlphaState, pos: bool| {
            let mut s = Setup::new(16, 16, zs);
            let mut p = (*s.block.pipeline).clone();
            let semantic = if pos {
                Semantic::Position
            } else {
                Semantic::Generic(0)
            };
            let fs: FragmentShaderRef = Arc::new(ReverseFs {
                info: PassFs::interface(semantic, Interpolation::Perspective),
                fold,
                runs: AtomicUsize::new(0),
            });
            p.fs = fs;
            s.block.pipeline = Arc::new(p);
            s.block.dsa = Arc::new(dsa);
            DerivedState::new(Arc::new(s.block)).fragment
        };
        let none = DepthStencilAlphaState::default();
        let alpha = DepthStencilAlphaState {
            alpha_enabled: true,
            alpha_func: Func::Greater,
            alpha_ref_value: 0.5,
            ..none
        };
        let depth = DepthStencilAlphaState {
            depth_enabled: true,
            depth_writemask: true,
            depth_func: Func::Less,
            ..none
        };
        let z = Some(Format::Z32_FLOAT);
        assert_eq!(variant(true, None, none, false), FragmentVariant::Folded);
        // early depth keeps it fused
        assert_eq!(variant(true, z, depth, false), FragmentVariant::Folded);
        assert_eq!(variant(false, None, none, false), FragmentVariant::Shaded);
        assert_eq!(variant(true, None, alpha, false), FragmentVariant::Shaded);
        // the alpha test also makes depth late
        assert_eq!(
            variant(
                true,
                z,
                DepthStencilAlphaState {
                    depth_enabled: true,
                    ..alpha
                },
                false
            ),
            FragmentVariant::Shaded
        );
        // a copied window position
        assert_eq!(variant(true, None, none, true), FragmentVariant::Shaded);
    }

    /// A group alone in its run (interpolated value by value) gets the
    /// bits it gets inside a longer run (row by row), for each
    /// interpolation, constant and varying w, flat and sloped planes, into
    /// the shader's inputs and folded into its outputs; and the fused
    /// variant's per-group evaluation ([`super::fold_batch`]) gets them too.
    #[test]
    fn one_group_runs_interpolate_like_longer_runs() {
        use super::{BatchPrimRef, FragBatch, FragGroup, shade_batch};
        use crate::derived::DerivedState;
        use ferropipe_components::batch::{BinnedJob, Plane, SetupPrim, SetupPrims};
        use ferropipe_components::shader::FragmentShaderRef;

        let interps = [
            Interpolation::Perspective,
            Interpolation::Linear,
            Interpolation::Flat,
        ];
        for (interp, fold, const_w) in interps
            .into_iter()
            .flat_map(|i| [(i, false, false), (i, true, false), (i, false, true)])
        {
            let mut s = Setup::new(64, 32, None);
            let mut p = (*s.block.pipeline).clone();
            let fs: FragmentShaderRef = Arc::new(ReverseFs {
                info: PassFs::interface(Semantic::Generic(0), interp),
                fold,
                runs: AtomicUsize::new(0),
            });
            p.fs = fs;
            s.block.pipeline = Arc::new(p);
            let ds = DerivedState::new(Arc::new(s.block));
            assert_eq!(ds.link.fs_copy_to.is_some(), fold);
            // Two primitives; the second's colour planes are flat (w too
            // with `const_w`).
            let per = ds.link.planes_per_prim;
            let mut prims = SetupPrims::default();
            for pi in 0..2 {
                prims.prims.push(SetupPrim {
                    ref_x: 5 * pi,
                    ref_y: 1 + pi,
                    planes: (pi as usize * per) as u32,
                    front_facing: true,
                    ..Default::default()
                });
                for k in 0..per {
                    let flat = (pi == 1 && k > 1) || (const_w && k == 1);
                    let g = if flat { 0.0 } else { 0.37 + k as f32 * 0.11 };
                    prims.planes.push(Plane {
                        a0: 0.75 + k as f32 * 0.5 - pi as f32 * 0.25,
                        dadx: g * 0.031,
                        dady: -g * 0.017,
                    });
                }
            }
            let jobs = [BinnedJob {
                prims,
                bins: Default::default(),
            }];
            // (prim, group x): prim 0's groups, then prim 1's
            let all = [(0u16, 0), (0, 4), (0, 8), (1, 12), (1, 16), (1, 20)];
            let batch_of = |order: &[(u16, i32)]| {
                let mut b = FragBatch {
                    prims: vec![
                        BatchPrimRef { job: 0, prim: 0 },
                        BatchPrimRef { job: 0, prim: 1 },
                    ],
                    ..Default::default()
                };
                for &(prim, x) in order {
                    b.groups.push(FragGroup {
                        x,
                        y: 2,
                        mask: 0xff,
                        prim,
                    });
                }
                b
            };
            let shade = |order: &[(u16, i32)]| {
                let mut b = batch_of(order);
                shade_batch(&mut b, &ds, &jobs, &Default::default());
                let n = order.len();
                // each group's four output components, in `all`'s order
                let mut out = Vec::new();
                for key in &all {
                    let g = order.iter().position(|k| k == key).unwrap();
                    for c in 0..4 {
                        out.push(b.outputs[c * n + g].to_array().map(f32::to_bits));
                    }
                }
                out
            };
            let runs = shade(&all);
            // alternating primitives: every run is one group
            let alternating = [(0, 0), (1, 12), (0, 4), (1, 16), (0, 8), (1, 20)];
            let ones = shade(&alternating);
            assert_eq!(ones, runs, "{interp:?} fold {fold} const_w {const_w}");
            assert!(runs.iter().flatten().any(|&b| b != 0));
            if !fold {
                continue;
            }
            // The fused variant's source: the same bits per group, at
            // either SIMD level, whatever the order.
            assert_eq!(
                crate::tiles_plan::FragmentVariant::of(&ds.link, &ds.tiles, &ds.merge),
                crate::tiles_plan::FragmentVariant::Folded
            );
            for v3 in [None, X86V3::detect()] {
                for order in [&all, &alternating] {
                    let mut b = batch_of(order);
                    let src = super::fold_batch(&mut b, &ds, &jobs);
                    let slot = src.slot(0);
                    let mut out = Vec::new();
                    for key in &all {
                        let g = order.iter().position(|k| k == key).unwrap();
                        for v in slot.color(v3, g) {
                            out.push(v.to_array().map(f32::to_bits));
                        }
                    }
                    assert_eq!(out, runs, "folded: {interp:?} const_w {const_w} {v3:?}");
                }
            }
        }
    }
}
