//! Equivalent of llvmpipe's `lp_bld_interp.c` and the shading loop of
//! `lp_state_fs.c` (`generate_fs_loop`): plane-equation interpolation of the
//! fragment shader's inputs over 4x2 lane groups, and the fragment shader
//! call.
//!
//! Raster collects covered groups of consecutive primitives that share a
//! state block into a [`FragBatch`] (up to [`MAX_BATCH_GROUPS`] groups, i.e.
//! 512 pixels): one shader call per batch amortises an interpreter's
//! dispatch over many small triangles, which is what makes 4-pixel
//! triangles affordable.  Helper lanes (outside the primitive) are
//! interpolated and shaded like live ones, so derivatives across a 2x2
//! quad are exact; only the mask decides what merge writes.

use ferropipe_components::batch::{BinnedJob, Plane, SetupPrim};
use ferropipe_components::shader::{
    FRAG_LANE_X, FRAG_LANE_Y, FragmentIo, Interpolation, LANES, Lanes, ShaderResources,
};

use crate::derived::{DerivedState, FsInputSource};
use crate::fetch::resize_lanes;

/// Groups per fragment batch (8 lanes each: 512 pixels, two 16x16 blocks).
pub const MAX_BATCH_GROUPS: usize = 64;

/// One covered 4x2 group awaiting shading.
#[derive(Clone, Copy, Debug, Default)]
pub struct FragGroup {
    /// Pixel coordinates of the group's top-left pixel.
    pub x: i32,
    pub y: i32,
    /// Live lanes (bit l = lane l, see `FRAG_LANE_X/Y`).
    pub mask: u8,
    /// Index into [`FragBatch::prims`].
    pub prim: u16,
}

/// A primitive referenced by a batch: job and index of its set-up record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPrimRef {
    pub job: u32,
    pub prim: u32,
}

/// Covered groups of one state block, and the SoA buffers they are shaded
/// in.  Holds indices, not references, so tile jobs can reuse batches.
#[derive(Default)]
pub struct FragBatch {
    pub state: Option<u32>,
    pub groups: Vec<FragGroup>,
    pub prims: Vec<BatchPrimRef>,
    /// `[input slot][component][group]`.
    pub inputs: Vec<Lanes>,
    /// `[component][group]`: x, y, z, 1/w.
    pub frag_coord: Vec<Lanes>,
    pub masks: Vec<Lanes>,
    pub outputs: Vec<Lanes>,
}

impl FragBatch {
    pub fn clear(&mut self) {
        self.state = None;
        self.groups.clear();
        self.prims.clear();
    }

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
        let r = self.prims[i as usize];
        let job = &jobs[r.job as usize];
        let p = &job.prims.prims[r.prim as usize];
        (p, &job.prims.planes[p.planes as usize..])
    }
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
pub fn eval_plane(p: &Plane, dx: Lanes, dy: Lanes) -> Lanes {
    Lanes::splat(p.a0) + Lanes::splat(p.dadx) * dx + Lanes::splat(p.dady) * dy
}

/// Offsets (dx, dy) of a group's lanes from its primitive's reference pixel.
#[inline]
pub fn group_offsets(g: &FragGroup, p: &SetupPrim) -> (Lanes, Lanes) {
    (
        Lanes::splat((g.x - p.ref_x) as f32) + lane_x(),
        Lanes::splat((g.y - p.ref_y) as f32) + lane_y(),
    )
}

/// The depth of a group's lanes as the depth test sees it: interpolated,
/// clamped to the viewport's range with `depth_clamp`.
#[inline]
pub fn group_depth(ds: &DerivedState, g: &FragGroup, p: &SetupPrim, planes: &[Plane]) -> Lanes {
    let (dx, dy) = group_offsets(g, p);
    let z = eval_plane(&planes[0], dx, dy);
    if ds.merge.depth_clamp {
        let (lo, hi) = ds.depth_range[p.viewport as usize];
        z.max(Lanes::splat(lo)).min(Lanes::splat(hi))
    } else {
        z
    }
}

/// Expands an 8-bit mask to all-ones / zero lanes.
#[inline]
pub fn mask_lanes(mask: u8) -> Lanes {
    let mut a = [0f32; LANES];
    for (l, v) in a.iter_mut().enumerate() {
        if mask & (1 << l) != 0 {
            *v = f32::from_bits(u32::MAX);
        }
    }
    Lanes::new(a)
}

/// Interpolates the batch's inputs and runs the fragment shader; afterwards
/// each group's mask has the shader's discards applied.
pub fn shade_batch(
    batch: &mut FragBatch,
    ds: &DerivedState,
    jobs: &[BinnedJob],
    resources: &ShaderResources<'_>,
) {
    let n = batch.groups.len();
    if n == 0 {
        return;
    }
    let n_in = ds.fs_inputs.len();
    resize_lanes(&mut batch.inputs, n_in * 4 * n);
    resize_lanes(&mut batch.frag_coord, 4 * n);
    resize_lanes(&mut batch.masks, n);
    resize_lanes(&mut batch.outputs, ds.fs_info.outputs.len() * 4 * n);
    batch.outputs.iter_mut().for_each(|l| *l = Lanes::ZERO);

    let lx = lane_x() + Lanes::splat(0.5);
    let ly = lane_y() + Lanes::splat(0.5);
    for (g, grp) in batch.groups.iter().enumerate() {
        let (prim, planes) = batch.prim(jobs, grp.prim);
        let (dx, dy) = group_offsets(grp, prim);
        let z = group_depth(ds, grp, prim, planes);
        let inv_w = eval_plane(&planes[1], dx, dy);
        let w = Lanes::ONE / inv_w;
        batch.frag_coord[g] = Lanes::splat(grp.x as f32) + lx;
        batch.frag_coord[n + g] = Lanes::splat(grp.y as f32) + ly;
        batch.frag_coord[2 * n + g] = z;
        batch.frag_coord[3 * n + g] = inv_w;
        batch.masks[g] = mask_lanes(grp.mask);
        for (s, src) in ds.fs_inputs.iter().enumerate() {
            let row = |c: usize| (s * 4 + c) * n + g;
            match *src {
                FsInputSource::Attr { plane, interp, .. } => {
                    for c in 0..4 {
                        let p = &planes[plane + c];
                        batch.inputs[row(c)] = match interp {
                            Interpolation::Flat => Lanes::splat(p.a0),
                            Interpolation::Linear => eval_plane(p, dx, dy),
                            Interpolation::Perspective => eval_plane(p, dx, dy) * w,
                        };
                    }
                }
                FsInputSource::PointCoord { plane } => {
                    for c in 0..4 {
                        batch.inputs[row(c)] = eval_plane(&planes[plane + c], dx, dy);
                    }
                }
                FsInputSource::FragCoord => {
                    for c in 0..4 {
                        batch.inputs[row(c)] = batch.frag_coord[c * n + g];
                    }
                }
                FsInputSource::FrontFacing => {
                    let v =
                        Lanes::splat(f32::from_bits(if prim.front_facing { u32::MAX } else { 0 }));
                    for c in 0..4 {
                        batch.inputs[row(c)] = v;
                    }
                }
                FsInputSource::SampleId | FsInputSource::Zero => {
                    for c in 0..4 {
                        batch.inputs[row(c)] = Lanes::ZERO;
                    }
                }
            }
        }
    }

    {
        let FragBatch {
            inputs,
            frag_coord,
            masks,
            outputs,
            ..
        } = batch;
        let mut io = FragmentIo {
            groups: n,
            inputs,
            frag_coord,
            mask: masks,
            outputs,
        };
        ds.block.fs.run(resources, &mut io);
    }
    if ds.fs_info.uses_discard {
        for (g, grp) in batch.groups.iter_mut().enumerate() {
            grp.mask &= batch.masks[g].to_bitmask() as u8;
        }
    }
}
