//! The VS→FS linkage (llvmpipe's `lp_state_setup.c` input mapping and
//! draw's `draw_find_shader_output`): which vertex-shader outputs travel
//! with the clipped vertices, in which order, and which planes setup builds
//! for each fragment-shader input.  Clip lays its vertices out by it, setup
//! builds its planes by it, and the fragment stage interpolates by it.
//!
//! Derived from the vertex shader's interface, the fragment shader, the
//! rasterizer state and the framebuffer's sample count, and from nothing
//! else; plans.rs caches it across draws and flushes.  With smooth lines or
//! points (draw's aaline / aapoint stages) the fragment shader the
//! pipeline runs is the block's wrapped in the coverage multiply
//! (aa_state.rs), so the linkage owns the shader the tile stage runs.

use ferropipe_components::draw::FramebufferState;
use ferropipe_components::shader::{
    FragmentShader, FragmentShaderRef, Interpolation, LANES, Semantic, ShaderInfo,
};
use ferropipe_components::state::RasterizerState;

use crate::aa_state::{AaFragmentShader, AaState, smooth_points};
use crate::lanes::fb_samples;

/// The linkage of one (vertex shader, fragment shader, rasterizer,
/// sample count).
#[derive(Clone)]
pub struct LinkPlan {
    /// The fragment shader the pipeline runs: the block's, or with smooth
    /// lines / points the block's wrapped in the coverage multiply
    /// (aa_state.rs `AaFragmentShader`); `fs_info` is its interface.
    pub fs: FragmentShaderRef,
    /// The interface of `fs`.
    pub fs_info: ShaderInfo,
    /// `FragmentShader::writes_all_outputs`: the output buffer needs no
    /// clearing before a call.
    pub fs_writes_all_outputs: bool,
    /// For a shader that only copies inputs to outputs
    /// (`FragmentShader::interface_copies`), the output row of each input
    /// row (`u32::MAX`: copied nowhere): the fragment stage interpolates
    /// into the output rows and does not run the shader.  `None` when the
    /// shader computes, or copies an input row twice or out of range.
    pub fs_copy_to: Option<Box<[u32]>>,
    /// VS output slot of each clipped-vertex attribute, in AoS order.
    pub attrs: Vec<usize>,
    /// Interpolation of each attribute (for clipping `Linear` ones in
    /// window space).
    pub attr_interp: Vec<Interpolation>,
    /// `line_smooth` / `point_smooth` without multisample rasterization
    /// (aa_stage.rs, draw's aaline / aapoint stages); its varying is
    /// attribute `attrs.len()` of the clipped vertices.
    pub aa: Option<AaState>,
    /// Per FS input slot, its source.
    pub fs_inputs: Vec<FsInputSource>,
    /// The rows the fragment stage fills per batch, resolved from
    /// `fs_inputs`' read masks and `fs_copy_to` (`link::fs_rows`).
    pub fs_rows: Box<[FsRow]>,
    /// Planes per set-up primitive: depth, 1/w, then 4 per `Attr` input.
    pub planes_per_prim: usize,
    /// Where a filled triangle's planes come from, for front and back
    /// faces (setup evaluates them 8 at a time).
    pub tri_planes: [PlanePlan; 2],
    /// Floats per clipped vertex this linkage needs: `[x, y, z, 1/w]` + 4
    /// per attribute (+ the smooth-primitive slots), before the scene pads
    /// every block's to the largest (`DerivedState::stride`).
    pub vertex_stride: usize,
}

/// [`LinkPlan::fs_copy_to`] for `fs` with `inputs` and `outputs` slots.
pub(crate) fn copy_targets(
    fs: &dyn FragmentShader,
    inputs: usize,
    outputs: usize,
) -> Option<Box<[u32]>> {
    let copies = fs.interface_copies()?;
    let mut to = vec![u32::MAX; inputs * 4];
    let mut written = vec![false; outputs * 4];
    for &(out, inp) in copies {
        // Each input row interpolated into one output row, each output
        // row written once: otherwise the order of the copies matters.
        let slot = to.get_mut(inp as usize)?;
        let w = written.get_mut(out as usize)?;
        if *slot != u32::MAX || *w {
            return None;
        }
        (*slot, *w) = (out, true);
    }
    Some(to.into_boxed_slice())
}

impl LinkPlan {
    /// Links a vertex shader of interface `vs_info` to `fs` under `rast`
    /// drawing into `fb` (only its sample count is read).
    pub fn derive(
        vs_info: &ShaderInfo,
        fs: &FragmentShaderRef,
        rast: &RasterizerState,
        fb: &FramebufferState,
    ) -> Self {
        let multisampled =
            rast.multisample && fb_samples(fb) as usize == ferropipe_components::batch::MS_SAMPLES;
        use ferropipe_components::enums::ConservativeRasterMode;
        let conservative = rast.conservative_raster_mode != ConservativeRasterMode::Off;
        let smooth_points = smooth_points(rast);
        // poly_smooth (GL's analytic polygon coverage) likewise gives way
        // to multisample and conservative rasterization.
        let aa_wanted = !multisampled
            && !conservative
            && (rast.line_smooth || smooth_points || rast.poly_smooth);
        let fs: FragmentShaderRef = if aa_wanted {
            AaFragmentShader::wrap(fs.clone(), smooth_points, rast.poly_smooth)
        } else {
            fs.clone()
        };
        let fs_info = fs.info().clone();
        let psize_written = vs_info.output_slot(Semantic::PointSize).is_some();

        // Linkage by semantic (FORMAT.md "Shading linkage").
        let mut attrs: Vec<usize> = Vec::new();
        let mut attr_interp: Vec<Interpolation> = Vec::new();
        let mut attr_index = |slot: usize, interp: Interpolation| -> usize {
            if let Some(i) = attrs.iter().position(|&s| s == slot) {
                i
            } else {
                attrs.push(slot);
                attr_interp.push(interp);
                attrs.len() - 1
            }
        };
        let mut fs_inputs = Vec::with_capacity(fs_info.inputs.len());
        let mut next_plane = 2usize;
        // The wrapper's last inputs are the smooth-primitive varying and,
        // with poly_smooth, the two corner slots, linked below (they are no
        // VS outputs).
        let aa_inputs = if aa_wanted {
            1 + 2 * rast.poly_smooth as usize
        } else {
            0
        };
        let user_inputs = fs_info.inputs.len() - aa_inputs;
        for input in &fs_info.inputs[..user_inputs] {
            let src = match input.semantic {
                Semantic::Position => FsInputSource::FragCoord,
                Semantic::FrontFacing => FsInputSource::FrontFacing,
                Semantic::PointCoord => {
                    let plane = next_plane;
                    next_plane += 4;
                    FsInputSource::PointCoord { plane }
                }
                Semantic::SampleId => FsInputSource::SampleId,
                sem @ (Semantic::Color(_) | Semantic::BColor(_) | Semantic::Generic(_)) => {
                    let is_color = matches!(sem, Semantic::Color(_) | Semantic::BColor(_));
                    let interp = if is_color && rast.flatshade {
                        Interpolation::Flat
                    } else {
                        input.interpolation
                    };
                    match vs_info.output_slot(sem) {
                        Some(front_slot) => {
                            let front = attr_index(front_slot, interp);
                            let back = match sem {
                                Semantic::Color(n) if rast.light_twoside => vs_info
                                    .output_slot(Semantic::BColor(n))
                                    .map_or(front, |b| attr_index(b, interp)),
                                _ => front,
                            };
                            let plane = next_plane;
                            next_plane += 4;
                            let sprite = match sem {
                                Semantic::Generic(n) if n < 32 => Some(n),
                                _ => None,
                            };
                            FsInputSource::Attr {
                                front,
                                back,
                                interp,
                                plane,
                                sprite,
                                read: input.read,
                            }
                        }
                        // A GENERIC the vertex shader does not write still
                        // takes the sprite coordinates on points when its
                        // bit is set (a GLSL VS writing only gl_PointSize
                        // and a colour): the point-coordinate planes, which
                        // setup fills per point and zeroes for lines and
                        // triangles, where the input stays undefined.
                        None => match sem {
                            Semantic::Generic(n)
                                if n < 32 && rast.sprite_coord_enable & (1 << n) != 0 =>
                            {
                                let plane = next_plane;
                                next_plane += 4;
                                FsInputSource::PointCoord { plane }
                            }
                            _ => FsInputSource::Zero,
                        },
                    }
                }
                _ => FsInputSource::Zero,
            };
            fs_inputs.push(src);
        }
        let mut aa = AaState::new(rast, !aa_wanted, attrs.len(), psize_written);
        if let Some(aa) = aa.as_mut() {
            fs_inputs.push(FsInputSource::Attr {
                front: aa.attr,
                back: aa.attr,
                interp: Interpolation::Perspective,
                plane: next_plane,
                sprite: None,
                // The wrapper reads all four components.
                read: 0xf,
            });
            next_plane += 4;
            if aa.poly_smooth {
                // The corner slots: setup overwrites their planes for
                // smooth polygons (aa_state::polygon_planes); elsewhere
                // they interpolate clip's zeros, the "no polygon" marker.
                aa.poly_plane = next_plane;
                for k in 1..3 {
                    fs_inputs.push(FsInputSource::Attr {
                        front: aa.attr + k,
                        back: aa.attr + k,
                        interp: Interpolation::Linear,
                        plane: next_plane,
                        sprite: None,
                        read: 0xf,
                    });
                    next_plane += 4;
                }
            }
        }
        let stride = 4 + 4 * (attrs.len() + aa.map_or(0, |a| a.slots()));

        let fs_copy_to = copy_targets(fs.as_ref(), fs_inputs.len(), fs_info.outputs.len());
        LinkPlan {
            fs_rows: fs_rows(&fs_inputs, fs_copy_to.as_deref()),
            fs_copy_to,
            fs_writes_all_outputs: fs.writes_all_outputs(),
            fs,
            fs_info,
            attrs,
            attr_interp,
            aa,
            tri_planes: [
                PlanePlan::new(&fs_inputs, false),
                PlanePlan::new(&fs_inputs, true),
            ],
            fs_inputs,
            planes_per_prim: next_plane,
            vertex_stride: stride,
        }
    }
}

/// One row of a fragment batch that the fragment stage fills
/// (`fragment::shade_batch`): an input component the shader reads, or
/// for a folded copy shader the output row that component is copied to.
/// Resolved once per state, so the per-run loop of the stage (a run is
/// one primitive's groups in a batch: about one group on tiny_tris_1m)
/// no longer tests read masks and copy targets per input and component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FsRow {
    /// Row index in the batch's inputs, or its outputs with `to_output`.
    pub row: u32,
    /// Whether `row` is an output row (a folded copy).
    pub to_output: bool,
    /// What fills it.
    pub src: FsRowSource,
}

/// What fills an [`FsRow`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FsRowSource {
    /// Plane `plane` (after depth and 1/w), interpolated as `interp`.
    Attr {
        /// The component's plane.
        plane: u32,
        /// How it is interpolated.
        interp: Interpolation,
    },
    /// Plane `plane` evaluated linearly (sprite coordinates).
    PointCoord {
        /// The component's plane.
        plane: u32,
    },
    /// Component `c` of the window position.
    FragCoord {
        /// The component.
        c: u32,
    },
    /// All bits set on front faces, zero on back faces.
    FrontFacing,
    /// Zeros (`SampleId` single-sampled, or nothing upstream writes it).
    Zero,
}

/// [`LinkPlan::fs_rows`]: every component of `inputs` the shader reads
/// (an `Attr`'s read mask), in input and component order, into its input
/// row, or with `copy_to` into the output row it is copied to (components
/// copied nowhere are not filled).
pub(crate) fn fs_rows(inputs: &[FsInputSource], copy_to: Option<&[u32]>) -> Box<[FsRow]> {
    let mut rows = Vec::new();
    for (s, src) in inputs.iter().enumerate() {
        for c in 0..4u32 {
            if let FsInputSource::Attr { read, .. } = *src
                && read & (1 << c) == 0
            {
                continue;
            }
            let at = s as u32 * 4 + c;
            let (row, to_output) = match copy_to {
                None => (at, false),
                Some(to) => match to.get(at as usize) {
                    Some(&o) if o != u32::MAX => (o, true),
                    _ => continue,
                },
            };
            let src = match *src {
                FsInputSource::Attr { plane, interp, .. } => FsRowSource::Attr {
                    plane: plane as u32 + c,
                    interp,
                },
                FsInputSource::PointCoord { plane } => FsRowSource::PointCoord {
                    plane: plane as u32 + c,
                },
                FsInputSource::FragCoord => FsRowSource::FragCoord { c },
                FsInputSource::FrontFacing => FsRowSource::FrontFacing,
                FsInputSource::SampleId | FsInputSource::Zero => FsRowSource::Zero,
            };
            rows.push(FsRow {
                row,
                to_output,
                src,
            });
        }
    }
    rows.into_boxed_slice()
}

/// Where a fragment-shader input gets its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FsInputSource {
    /// A varying: attribute `front` of the clipped vertices (attribute `back`
    /// on back faces, for `light_twoside`), interpolated as `interp`.
    /// `plane` is the index of its first component's plane after the depth
    /// and 1/w planes (see [`LinkPlan::planes_per_prim`]).
    Attr {
        /// Attribute index of the clipped vertices for front faces.
        front: usize,
        /// Attribute index for back faces.
        back: usize,
        /// How it is interpolated.
        interp: Interpolation,
        /// Its first plane after depth and 1/w.
        plane: usize,
        /// `Generic(n)`: replaced by sprite coordinates on points when bit
        /// n of `sprite_coord_enable` is set.
        sprite: Option<u8>,
        /// Components the fragment shader reads (`IoSlot::read`): the
        /// others get no plane and no interpolation.
        read: u8,
    },
    /// `@builtin(position)`: the window position (x, y, z, 1/w).
    FragCoord,
    /// `@builtin(front_facing)`: all bits set in front-facing lanes.
    FrontFacing,
    /// `gl_PointCoord`, or a `GENERIC` input whose `sprite_coord_enable`
    /// bit is set and that the vertex shader does not write: sprite
    /// coordinates (s, t, 0, 1) in `sprite_coord_mode` on points, zeros
    /// otherwise; planes like an attribute's.
    PointCoord {
        /// Its first plane after depth and 1/w.
        plane: usize,
    },
    /// Sample index (0: single-sampled).
    SampleId,
    /// Nothing upstream writes it: zeros.
    Zero,
}

/// Where each plane of a filled triangle comes from, decided once per
/// state and facing ([`LinkPlan::tri_planes`]): the same planes, in the
/// same order, as the per-input loop of setup.rs's `setup_triangle_as`
/// pushes, so that 8 of them are evaluated at once (setup.rs's
/// `PlanePlan::push_planes`) in `f32x8` lanes (lane = plane)
/// with the same operations in the same order, bit for bit.  The per-input
/// loop cost ~40 % of setup on tiny_tris_1m (a match and a scalar plane per
/// component).
#[derive(Clone, Debug, Default)]
pub struct PlanePlan {
    pub(crate) chunks: Vec<PlaneChunk>,
}

/// Up to 8 consecutive planes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlaneChunk {
    /// Vertex slot each lane reads (0 for constant-zero lanes).
    pub(crate) src: [u16; LANES],
    /// Planes in use (the rest of the lanes are not stored).
    pub(crate) len: usize,
    /// `Some(s)` when lane `l` reads slot `s + l` (zero lanes aside).
    pub(crate) consecutive: Option<u16>,
    /// Lane masks: perspective-corrected (value times 1/w), flat (the
    /// provoking vertex's value, no gradient), zero (an unread component
    /// or a point coordinate: `Plane::default()`).
    pub(crate) perspective: u8,
    pub(crate) flat: u8,
    pub(crate) zero: u8,
}

impl PlanePlan {
    /// The plan of `fs_inputs` for front (`back` false) or back faces.
    pub fn new(fs_inputs: &[FsInputSource], back: bool) -> Self {
        // (slot, interpolation) per plane; `None` is a zero plane.
        let mut planes: Vec<Option<(usize, Interpolation)>> = vec![
            Some((2, Interpolation::Linear)),
            Some((3, Interpolation::Linear)),
        ];
        for src in fs_inputs {
            match *src {
                FsInputSource::Attr {
                    front: fa,
                    back: ba,
                    interp,
                    read,
                    ..
                } => {
                    let o = 4 + 4 * if back { ba } else { fa };
                    for c in 0..4 {
                        planes.push((read & (1 << c) != 0).then_some((o + c, interp)));
                    }
                }
                FsInputSource::PointCoord { .. } => planes.extend([None; 4]),
                _ => {}
            }
        }
        let chunks = planes
            .chunks(LANES)
            .map(|c| {
                let mut k = PlaneChunk {
                    src: [0; LANES],
                    len: c.len(),
                    consecutive: None,
                    perspective: 0,
                    flat: 0,
                    zero: 0,
                };
                for (l, p) in c.iter().enumerate() {
                    match *p {
                        None => k.zero |= 1 << l,
                        Some((slot, interp)) => {
                            k.src[l] = slot.min(u16::MAX as usize) as u16;
                            match interp {
                                Interpolation::Flat => k.flat |= 1 << l,
                                Interpolation::Perspective => k.perspective |= 1 << l,
                                Interpolation::Linear => {}
                            }
                        }
                    }
                }
                let first = (0..k.len).find(|&l| k.zero & (1 << l) == 0);
                k.consecutive = first
                    .and_then(|l| k.src[l].checked_sub(l as u16))
                    .filter(|&b| {
                        (0..k.len).all(|l| k.zero & (1 << l) != 0 || k.src[l] == b + l as u16)
                    });
                k
            })
            .collect();
        PlanePlan { chunks }
    }
}
