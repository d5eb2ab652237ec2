//! The plan cache: derived state kept across flushes, llvmpipe's dirty bits
//! and variant caches (`lp_state_derived.c`, `lp_state_fs.c`'s variant
//! list) made type-safe.
//!
//! A state block's derived part ([`DerivedShape`]) follows from its state
//! objects and a few value states alone ([`ShapeKey`]).  The façade never
//! mutates a state object after creation, so the identity of its `Arc` is
//! the identity of its contents: the cache keys the derived part by those
//! pointers and the value states, and a flush derives only what no earlier
//! flush derived.  Each entry holds [`Weak`]s of the objects it was derived
//! from: a weak reference keeps the allocation, so no other object can take
//! the same address while the entry lives (no ABA), and an entry whose
//! object was deleted (its last strong reference gone) is swept at the
//! next flush.  Entries no flush used for [`MAX_IDLE_FLUSHES`] flushes are
//! dropped too (the fragment shader is held strongly by the derived part,
//! so its deletion alone is not seen), and at most [`MAX_SHAPES`] are kept
//! (llvmpipe bounds its fs variants the same way, `LP_MAX_SHADER_VARIANTS`).
//!
//! Deriving the same state twice is a bug: [`PlanCounts::shapes`] counts
//! derivations, and the tests hold it to one per distinct state across
//! draws and flushes.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use bevy_ecs::prelude::Resource;
use ferropipe_components::batch::StateBlock;
use ferropipe_components::state::{
    BlendColor, ClipState, MAX_VIEWPORTS, PolyStipple, ScissorState, StencilRef, ViewportState,
};

use crate::clip_plan::ClipPlan;
use crate::derived::DerivedShape;
use crate::fetch_plan::FetchPlan;
use crate::lanes::fb_samples;
use crate::link::LinkPlan;
use crate::merge::MergePlan;
use crate::setup_plan::SetupPlan;
use crate::shade_plan::ShadePlan;
use crate::tiles_plan::{FragmentVariant, TilesInputs, TilesPlan};

/// Flushes an entry may go unused before it is dropped.
pub const MAX_IDLE_FLUSHES: u64 = 64;
/// Most derived parts kept; past it the least recently used go.
pub const MAX_SHAPES: usize = 1024;

/// How often the cache derived and how often it found a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanCounts {
    /// [`DerivedShape`]s composed (whole-shape cache misses).
    pub shapes: u64,
    /// Blocks whose derived part came from the cache or from the previous
    /// block.
    pub shape_hits: u64,
    /// Per-stage plans derived (misses of each stage's own cache), in
    /// [`DerivedShape`]'s field order: fetch, shade, clip, link, setup,
    /// tiles, merge.
    pub plans: [u64; 7],
}

/// The value states a [`DerivedShape`] reads beside the state objects:
/// every `StateBlock` field that is neither a state object nor a binding
/// the derivation ignores (see [`crate::derived::same_shape_inputs`]).
#[derive(Clone, PartialEq)]
struct ShapeValues {
    blend_color: BlendColor,
    stencil_ref: StencilRef,
    sample_mask: u32,
    min_samples: u32,
    clip: ClipState,
    poly_stipple: PolyStipple,
    viewports: [ViewportState; MAX_VIEWPORTS],
    scissors: [ScissorState; MAX_VIEWPORTS],
}

impl ShapeValues {
    fn of(b: &StateBlock) -> Self {
        ShapeValues {
            blend_color: b.blend_color,
            stencil_ref: b.stencil_ref,
            sample_mask: b.sample_mask,
            min_samples: b.min_samples,
            clip: b.clip,
            poly_stipple: b.poly_stipple,
            viewports: *b.viewports,
            scissors: *b.scissors,
        }
    }
}

/// The identities of the state objects a [`DerivedShape`] reads (data
/// pointers of their `Arc`s; the hash key).
type ShapeKey = [usize; 7];

fn key_of(b: &StateBlock) -> ShapeKey {
    [
        id(&b.rasterizer),
        id(&b.dsa),
        id(&b.blend),
        id(&b.velems),
        id(&b.vs),
        id(&b.fs),
        id(&b.framebuffer),
    ]
}

/// A weak reference whose target may be gone: what a cache entry pins
/// (any `Weak`, whatever its pointee) so that no other object takes the
/// address while the entry lives, and to tell when the object is gone.
trait Pin: Send + Sync {
    fn alive(&self) -> bool;
}

impl<T: ?Sized + Send + Sync> Pin for Weak<T> {
    fn alive(&self) -> bool {
        self.strong_count() > 0
    }
}

/// The state-object identities one stage's plan reads: the hash key of
/// its [`Memo`] (`Arc` data pointers, pinned by the entry's weak
/// references so that no other object can take an address while the entry
/// lives).
type Ids = [usize; 6];

fn id<T: ?Sized>(a: &Arc<T>) -> usize {
    Arc::as_ptr(a) as *const () as usize
}

struct MemoEntry<V, P> {
    pins: Vec<Box<dyn Pin>>,
    values: V,
    plan: Arc<P>,
    last_used: u64,
}

/// One stage's plan cache: plans keyed by the identities of the state
/// objects the stage reads and compared on the value states it reads
/// (`V`), so that a plan is derived once per distinct input, whichever
/// other state changed beside it.  An entry lives while its objects do
/// and while a cached shape holds its plan or a flush used it in the last
/// [`MAX_IDLE_FLUSHES`].
struct Memo<V, P> {
    map: HashMap<Ids, Vec<MemoEntry<V, P>>>,
}

impl<V, P> Default for Memo<V, P> {
    fn default() -> Self {
        Memo {
            map: HashMap::new(),
        }
    }
}

impl<V: PartialEq, P> Memo<V, P> {
    /// The plan for `ids` and `values`: the cached one, or `derive()`'s
    /// (counted in `derived`), kept with `pins`.
    fn get(
        &mut self,
        now: u64,
        ids: Ids,
        values: V,
        pins: impl FnOnce() -> Vec<Box<dyn Pin>>,
        derive: impl FnOnce() -> P,
        derived: &mut u64,
    ) -> Arc<P> {
        let list = self.map.entry(ids).or_default();
        if let Some(e) = list.iter_mut().find(|e| e.values == values) {
            e.last_used = now;
            return e.plan.clone();
        }
        *derived += 1;
        let plan = Arc::new(derive());
        list.push(MemoEntry {
            pins: pins(),
            values,
            plan: plan.clone(),
            last_used: now,
        });
        plan
    }

    /// Drops entries whose objects are gone, and idle ones no shape holds.
    fn sweep(&mut self, now: u64) {
        self.map.retain(|_, list| {
            list.retain(|e| {
                e.pins.iter().all(|p| p.alive())
                    && (Arc::strong_count(&e.plan) > 1 || now - e.last_used <= MAX_IDLE_FLUSHES)
            });
            !list.is_empty()
        });
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.values().map(Vec::len).sum()
    }
}

/// Pins for `Weak`s of the given `Arc`s.
macro_rules! pins {
    ($($a:expr),* $(,)?) => {
        || vec![$(Box::new(Arc::downgrade($a)) as Box<dyn Pin>),*]
    };
}

impl DerivedShape {
    /// Derives every plan of `block` from scratch, through the same
    /// composition as the cache with nothing cached (tests and benches;
    /// the pipeline takes its shapes from plans.rs' `PlanCache::shape`).
    pub fn new(block: &StateBlock) -> Self {
        StageMemos::default().compose(0, block, &mut [0; 7])
    }
}

/// What [`TilesPlan::derive`] reads of `block`, given its linkage and
/// merge plan.
fn tiles_inputs<'a>(
    block: &'a StateBlock,
    link: &'a LinkPlan,
    merge: &'a MergePlan,
) -> TilesInputs<'a> {
    TilesInputs {
        rast: &block.rasterizer,
        dsa: &block.dsa,
        blend: &block.blend,
        fb: &block.framebuffer,
        viewports: &block.viewports,
        sample_mask: block.sample_mask,
        min_samples: block.min_samples,
        poly_stipple: &block.poly_stipple,
        fs_info: &link.fs_info,
        merge,
    }
}

/// The per-stage caches [`PlanCache::shape`] composes a new shape from.
#[derive(Default)]
struct StageMemos {
    fetch: Memo<(), FetchPlan>,
    shade: Memo<bool, ShadePlan>,
    clip: Memo<(ClipState, ViewportState), ClipPlan>,
    link: Memo<u32, LinkPlan>,
    setup: Memo<SetupValues, SetupPlan>,
    tiles: Memo<TilesValues, TilesPlan>,
    merge: Memo<MergeValues, MergePlan>,
}

/// The value states the setup plan reads.
#[derive(PartialEq)]
struct SetupValues {
    viewports: [ViewportState; MAX_VIEWPORTS],
    scissors: [ScissorState; MAX_VIEWPORTS],
}

/// The value states the tile plan reads.
#[derive(PartialEq)]
struct TilesValues {
    viewports: [ViewportState; MAX_VIEWPORTS],
    sample_mask: u32,
    min_samples: u32,
    poly_stipple: PolyStipple,
}

/// The value states the merge plan reads, with the two rasterizer flags
/// (so that a rasterizer change elsewhere does not derive it again).
#[derive(PartialEq)]
struct MergeValues {
    stencil_ref: StencilRef,
    blend_color: BlendColor,
    clamp_fragment_color: bool,
    depth_clamp: bool,
}

impl StageMemos {
    /// `block`'s shape from the per-stage caches: each plan keyed by
    /// exactly what its `derive` reads (see each stage's plan type).
    fn compose(&mut self, now: u64, b: &StateBlock, n: &mut [u64; 7]) -> DerivedShape {
        let [n_fetch, n_shade, n_clip, n_link, n_setup, n_tiles, n_merge] = n;
        let (rast, fb) = (&b.rasterizer, &b.framebuffer);
        let shade = self.shade.get(
            now,
            [id(&b.vs), 0, 0, 0, 0, 0],
            rast.clamp_vertex_color,
            pins!(&b.vs),
            || ShadePlan::derive(&b.vs, rast),
            n_shade,
        );
        let vs_info = &shade.vs_info;
        let fetch = self.fetch.get(
            now,
            [id(&b.velems), id(&b.vs), 0, 0, 0, 0],
            (),
            pins!(&b.velems, &b.vs),
            || FetchPlan::derive(&b.velems, vs_info),
            n_fetch,
        );
        let clip = self.clip.get(
            now,
            [id(rast), id(&b.vs), 0, 0, 0, 0],
            (b.clip, b.viewports[0]),
            pins!(rast, &b.vs),
            || ClipPlan::derive(rast, &b.clip, &b.viewports, vs_info),
            n_clip,
        );
        let link = self.link.get(
            now,
            [id(&b.vs), id(&b.fs), id(rast), 0, 0, 0],
            fb_samples(fb),
            pins!(&b.vs, &b.fs, rast),
            || LinkPlan::derive(vs_info, &b.fs, rast, fb),
            n_link,
        );
        let setup = self.setup.get(
            now,
            [id(rast), id(fb), 0, 0, 0, 0],
            SetupValues {
                viewports: *b.viewports,
                scissors: *b.scissors,
            },
            pins!(rast, fb),
            || SetupPlan::derive(rast, fb, &b.viewports, &b.scissors),
            n_setup,
        );
        // Merge reads the linked fragment shader's interface: keyed by that
        // shader's identity (the block's, or the smooth-primitive wrapper
        // its linkage made), not by the rasterizer the linkage read.
        let merge = self.merge.get(
            now,
            [id(&b.dsa), id(&b.blend), id(fb), id(&link.fs), 0, 0],
            MergeValues {
                stencil_ref: b.stencil_ref,
                blend_color: b.blend_color,
                clamp_fragment_color: rast.clamp_fragment_color,
                depth_clamp: rast.depth_clamp,
            },
            pins!(&b.dsa, &b.blend, fb, &link.fs),
            || {
                MergePlan::derive(
                    &b.dsa,
                    &b.blend,
                    fb,
                    rast,
                    &b.stencil_ref,
                    &b.blend_color,
                    &link.fs_info,
                )
            },
            n_merge,
        );
        let tiles = self.tiles.get(
            now,
            [
                id(rast),
                id(&b.dsa),
                id(&b.blend),
                id(fb),
                id(&link.fs),
                id(&merge),
            ],
            TilesValues {
                viewports: *b.viewports,
                sample_mask: b.sample_mask,
                min_samples: b.min_samples,
                poly_stipple: b.poly_stipple,
            },
            pins!(rast, &b.dsa, &b.blend, fb, &link.fs, &merge),
            || TilesPlan::derive(&tiles_inputs(b, &link, &merge)),
            n_tiles,
        );
        DerivedShape {
            fragment: FragmentVariant::of(&link, &tiles, &merge),
            fetch,
            shade,
            clip,
            link,
            setup,
            tiles,
            merge,
        }
    }

    fn sweep(&mut self, now: u64) {
        self.fetch.sweep(now);
        self.shade.sweep(now);
        self.clip.sweep(now);
        self.link.sweep(now);
        self.setup.sweep(now);
        self.tiles.sweep(now);
        self.merge.sweep(now);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.fetch.len()
            + self.shade.len()
            + self.clip.len()
            + self.link.len()
            + self.setup.len()
            + self.tiles.len()
            + self.merge.len()
    }
}

struct ShapeEntry {
    pins: Vec<Box<dyn Pin>>,
    values: ShapeValues,
    shape: Arc<DerivedShape>,
    last_used: u64,
}

/// Derived state cached across flushes (one per context world; see the
/// module docs).
#[derive(Resource, Default)]
pub struct PlanCache {
    shapes: HashMap<ShapeKey, Vec<ShapeEntry>>,
    stages: StageMemos,
    flush: u64,
    counts: PlanCounts,
}

impl PlanCache {
    /// Starts a flush: sweeps entries whose objects were deleted or that no
    /// flush used for [`MAX_IDLE_FLUSHES`].
    pub fn begin_flush(&mut self) {
        self.flush += 1;
        let now = self.flush;
        self.shapes.retain(|_, list| {
            list.retain(|e| {
                e.pins.iter().all(|p| p.alive()) && now - e.last_used <= MAX_IDLE_FLUSHES
            });
            !list.is_empty()
        });
        // After the shapes: a plan no remaining shape holds may go.
        self.stages.sweep(now);
    }

    /// The derived part of `block`: the cached one, or a new derivation
    /// (counted) that the cache keeps.
    pub fn shape(&mut self, block: &StateBlock) -> Arc<DerivedShape> {
        let key = key_of(block);
        let values = ShapeValues::of(block);
        let now = self.flush;
        let list = self.shapes.entry(key).or_default();
        if let Some(e) = list.iter_mut().find(|e| e.values == values) {
            e.last_used = now;
            self.counts.shape_hits += 1;
            return e.shape.clone();
        }
        let shape = Arc::new(self.stages.compose(now, block, &mut self.counts.plans));
        self.counts.shapes += 1;
        list.push(ShapeEntry {
            pins: pins!(
                &block.rasterizer,
                &block.dsa,
                &block.blend,
                &block.velems,
                &block.vs,
                &block.fs,
                &block.framebuffer,
            )(),
            values,
            shape: shape.clone(),
            last_used: now,
        });
        if self.len() > MAX_SHAPES {
            self.evict_least_recent();
        }
        shape
    }

    /// Counts a block that shares its predecessor's derived part.
    pub fn count_shared(&mut self) {
        self.counts.shape_hits += 1;
    }

    /// How often the cache derived and hit.
    #[cfg(test)]
    pub fn counts(&self) -> PlanCounts {
        self.counts
    }

    /// Derived parts held.
    pub fn len(&self) -> usize {
        self.shapes.values().map(Vec::len).sum()
    }

    /// Per-stage plans held.
    #[cfg(test)]
    fn plans_len(&self) -> usize {
        self.stages.len()
    }

    /// Drops the older half of the entries (by last use), keeping the
    /// current flush's.
    fn evict_least_recent(&mut self) {
        let mut ages: Vec<u64> = self
            .shapes
            .values()
            .flatten()
            .map(|e| e.last_used)
            .collect();
        ages.sort_unstable();
        let cut = ages[ages.len() / 2].min(self.flush);
        self.shapes.retain(|_, list| {
            list.retain(|e| e.last_used >= cut);
            !list.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{Setup, draw, run, world};
    use ferropipe_components::batch::StateBlock;
    use ferropipe_components::draw::ConstantBufferBinding;
    use ferropipe_components::enums::PrimType;
    use ferropipe_components::state::RasterizerState;

    /// `block` with a constant buffer of its own (a binding the
    /// derivation does not read).
    fn with_constants(block: &StateBlock, v: u8) -> StateBlock {
        let mut b = block.clone();
        let mut slots = (*b.vs_resources.constant_buffers).clone();
        slots[0] = ConstantBufferBinding {
            user_buffer: Some(Arc::from(vec![v; 16])),
            ..Default::default()
        };
        b.vs_resources.constant_buffers = Arc::new(slots);
        b
    }

    /// Two blend states alternating over draws (each draw with its own
    /// constants) and over three flushes derive two shapes, not twelve;
    /// a deleted state's shape is swept at the next flush.
    #[test]
    fn each_state_is_derived_once_across_draws_and_flushes() {
        let s = Setup::new(32, 32, None);
        let a = s.block.clone();
        let mut b = s.block.clone();
        let mut blend = (*a.blend).clone();
        blend.rt[0].colormask = 0x3;
        b.blend = Arc::new(blend);
        let mut w = world(1);
        let tri = || draw(PrimType::Triangles, 0, 3);
        for flush in 0..3u8 {
            run(
                &mut w,
                &s.fb,
                vec![
                    (Some(with_constants(&a, flush)), tri()),
                    (Some(with_constants(&b, flush)), tri()),
                    (Some(with_constants(&a, flush + 10)), tri()),
                    (Some(with_constants(&b, flush + 10)), tri()),
                ],
            );
        }
        let cache = w.resource::<PlanCache>();
        assert_eq!(cache.counts().shapes, 2, "one derivation per state");
        assert_eq!(cache.counts().shape_hits, 10);
        assert_eq!(cache.len(), 2);

        // A value state is part of the key: a new blend colour derives.
        let mut c = a.clone();
        c.blend_color.color = [0.5; 4];
        drop(b);
        run(&mut w, &s.fb, vec![(Some(c), tri())]);
        let cache = w.resource::<PlanCache>();
        assert_eq!(cache.counts().shapes, 3);
        // `b`'s blend state is gone (its blocks were cleared with the
        // scene): its shape was swept at that flush's start.
        assert_eq!(cache.len(), 2);
    }

    /// Blocks that differ only in bindings the derivation does not read
    /// share one derived part; any other difference derives anew.
    #[test]
    fn derived_parts_are_shared_only_across_binding_changes() {
        use crate::derived::same_shape_inputs;
        use ferropipe_components::enums::Face;
        let base = Arc::new(Setup::new(32, 32, None).block);
        let mut plans = PlanCache::default();
        plans.begin_flush();
        let first = plans.shape(&base);

        let cb = with_constants(&base, 1);
        assert!(same_shape_inputs(&base, &cb));
        assert!(Arc::ptr_eq(&first, &plans.shape(&cb)), "constants only");

        let mut color = (*base).clone();
        color.blend_color.color = [0.5; 4];
        assert!(!same_shape_inputs(&base, &color));
        let next = plans.shape(&color);
        assert!(!Arc::ptr_eq(&first, &next), "blend colour");
        assert_eq!(next.merge.blend_color, [0.5; 4]);

        let mut rast = (*base).clone();
        rast.rasterizer = Arc::new(RasterizerState {
            cull_face: Face::Back,
            ..*base.rasterizer
        });
        assert!(!same_shape_inputs(&base, &rast));
        let next = plans.shape(&rast);
        assert!(!Arc::ptr_eq(&first, &next), "rasterizer");
        assert_eq!(next.setup.cull_face, Face::Back);
        assert_eq!(plans.counts().shapes, 3);
    }

    /// Each stage's plan is derived once per distinct input to that
    /// stage: a blend change derives only the merge and tile plans, a
    /// cull-face change only those reading the rasterizer object (and not
    /// the merge plan, which reads two of its flags by value), a viewport
    /// change only clip (viewport 0's transform), setup and tiles.
    #[test]
    fn each_stage_derives_only_when_its_inputs_change() {
        let base = Arc::new(Setup::new(32, 32, None).block);
        let mut plans = PlanCache::default();
        plans.begin_flush();
        let first = plans.shape(&base);
        // fetch, shade, clip, link, setup, tiles, merge
        assert_eq!(plans.counts().plans, [1, 1, 1, 1, 1, 1, 1]);

        let mut blend = (*base).clone();
        let mut b = (*base.blend).clone();
        b.rt[0].colormask = 0x3;
        blend.blend = Arc::new(b);
        let s = plans.shape(&blend);
        assert_eq!(plans.counts().plans, [1, 1, 1, 1, 1, 2, 2]);
        assert!(Arc::ptr_eq(&first.setup, &s.setup));
        assert!(!Arc::ptr_eq(&first.merge, &s.merge));

        let mut cull = (*base).clone();
        cull.rasterizer = Arc::new(RasterizerState {
            cull_face: ferropipe_components::enums::Face::Back,
            ..*base.rasterizer
        });
        let s = plans.shape(&cull);
        assert_eq!(plans.counts().plans, [1, 1, 2, 2, 2, 3, 2]);
        assert!(
            Arc::ptr_eq(&first.merge, &s.merge),
            "merge reads two flags only"
        );
        assert!(Arc::ptr_eq(&first.shade, &s.shade));

        let mut vp = (*base).clone();
        Arc::make_mut(&mut vp.viewports)[0].scale[0] *= 0.5;
        let s = plans.shape(&vp);
        assert_eq!(plans.counts().plans, [1, 1, 3, 2, 3, 4, 2]);
        assert!(Arc::ptr_eq(&first.link, &s.link));

        // The same states again, in a later flush: no derivation at all.
        plans.begin_flush();
        for b in [&*base, &blend, &cull, &vp] {
            plans.shape(b);
        }
        assert_eq!(plans.counts().plans, [1, 1, 3, 2, 3, 4, 2]);
        assert_eq!(plans.counts().shapes, 4);
        assert_eq!(plans.plans_len(), 1 + 1 + 3 + 2 + 3 + 4 + 2);

        // A composed shape equals a from-scratch derivation.
        let fresh = DerivedShape::new(&cull);
        assert_eq!(*fresh.setup, *plans.shape(&cull).setup);
        assert_eq!(*fresh.clip, *plans.shape(&cull).clip);

        // Objects deleted (the blend and rasterizer states): their shapes
        // and then their plans are swept.  The viewport's shape stays (its
        // objects live in `base`), with its own clip, setup and tile plans.
        drop((blend, cull, vp, first, s));
        plans.begin_flush();
        assert_eq!(plans.len(), 2);
        assert_eq!(plans.plans_len(), 7 + 3);
    }
}
