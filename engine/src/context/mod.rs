//! `pipe_context`: per-context state, CSOs and work (context.rst).
//!
//! A context owns a bevy_ecs [`World`]: every CSO, sampler view and surface it
//! creates is an entity there, the currently bound state is the
//! [`BoundState`] resource, and draws are recorded into the world for the
//! pipeline schedule, which runs at flush/readback time, not per draw.
//!
//! The methods are split by context.rst section, one file each:
//! `cso.rs` (CSO triplets), `bind.rs` (resource binding and non-CSO state),
//! `views.rs` (sampler views, surfaces), `draw.rs`, `clear.rs`,
//! `transfer.rs`, `query.rs`, `blit.rs`, `stream_output.rs`, `compute.rs`
//! (compute states, shader buffers and images, `launch_grid`).

mod bind;
mod blit;
mod capture;
mod checks;
mod clear;
mod compute;
mod cso;
mod draw;
mod lint;
mod query;
mod shader;
mod stream_output;
mod transfer;
mod views;

/// The compute limits, where the API has named them since compute landed
/// (defined with the other caps).
pub use crate::caps::{
    MAX_GLOBAL_BUFFER_SIZE, MAX_GRID_SIZE, MAX_INPUT_SIZE, MAX_SHADER_BUFFER_SIZE,
};
pub use bind::{ConstantBuffer, FramebufferTemplate, IndexBuffer, VertexBuffer};
pub use blit::{BlitInfo, BlitSide};
pub use capture::{CallRecorder, CapturedCall, CapturedQuery, ShaderRef, ShaderSource};
pub use compute::{
    ComputeBindings, ComputeState, CsHandle, GLOBAL_HANDLE_OFFSET_MASK, GLOBAL_HANDLE_SLOT_SHIFT,
    GLOBAL_HANDLE_VALID, GridInfo, ImageView, ShaderBuffer, global_handle,
};
pub use draw::DrawIndirectInfo;
pub use draw::Fence;
pub use query::{QueryHandle, QueryObject, QueryResult};
pub use shader::{FsHandle, MAX_SO_OUTPUTS, MAX_SO_STRIDE, ShaderCode, ShaderState, VsHandle};
pub use stream_output::{SO_APPEND, StreamOutputTargetHandle};
pub use transfer::read_box;
pub use transfer::{Transfer, TransferMapping};

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource as EcsResource;
use bevy_ecs::world::World;
use ferropipe_components::batch::{
    ScissorSlots, ShaderBufferSlots, ShaderImageSlots, ViewportSlots,
};
use ferropipe_components::draw::{
    ConstantBufferBinding, FramebufferState, IndexBufferBinding, StreamOutputTargetRef,
    VertexBufferBinding,
};
use ferropipe_components::enums::ShaderType;
use ferropipe_components::state::*;
use ferropipe_components::view::SamplerViewRef;

use crate::error::{Error, Result};
use crate::screen::Screen;
pub use ferropipe_systems::budget::WorkBudget;

static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A typed handle to an object (CSO, view, surface, query) a context created.
///
/// Handles are plain entity ids tagged with their context: using one after
/// its object was deleted, or with another context, is a typed
/// [`Error::InvalidHandle`], never a crash.
pub struct Handle<T> {
    pub(crate) entity: Entity,
    pub(crate) context: u64,
    _kind: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    pub(crate) fn new(entity: Entity, context: u64) -> Self {
        Handle {
            entity,
            context,
            _kind: PhantomData,
        }
    }

    /// The object's entity in its context's world.
    pub fn entity(&self) -> Entity {
        self.entity
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.entity == other.entity && self.context == other.context
    }
}
impl<T> Eq for Handle<T> {}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.entity.hash(state);
        self.context.hash(state);
    }
}
impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Handle<{}>({:?})",
            std::any::type_name::<T>().rsplit("::").next().unwrap_or(""),
            self.entity
        )
    }
}

/// Handle to a blend CSO.
pub type BlendHandle = Handle<ferropipe_components::cso::BlendCso>;
/// Handle to a depth/stencil/alpha CSO.
pub type DsaHandle = Handle<ferropipe_components::cso::DepthStencilAlphaCso>;
/// Handle to a rasterizer CSO.
pub type RasterizerHandle = Handle<ferropipe_components::cso::RasterizerCso>;
/// Handle to a sampler CSO.
pub type SamplerHandle = Handle<ferropipe_components::cso::SamplerCso>;
/// Handle to a vertex-elements CSO.
pub type VertexElementsHandle = Handle<ferropipe_components::cso::VertexElementsCso>;
/// Handle to a sampler view.
pub type SamplerViewHandle = Handle<ferropipe_components::cso::SamplerViewComponent>;
/// Handle to a surface.
pub type SurfaceHandle = Handle<ferropipe_components::cso::SurfaceComponent>;

/// Shader stages that have per-stage bindings (samplers, sampler views,
/// constant buffers) in [`BoundState`], indexed by `stage_index`.
pub const BOUND_STAGES: [ShaderType; 2] = [ShaderType::Vertex, ShaderType::Fragment];

/// Index of `shader`'s slot in [`BoundState`]'s per-stage arrays, or `None`
/// for stages ferropipe does not run (geometry, tessellation, compute).
pub fn stage_index(shader: ShaderType) -> Option<usize> {
    match shader {
        ShaderType::Vertex => Some(0),
        ShaderType::Fragment => Some(1),
        _ => None,
    }
}

/// Samplers bound to one stage.
pub type SamplerSlots = [Option<Arc<SamplerState>>; MAX_SAMPLERS];
/// Sampler views bound to one stage.
pub type SamplerViewSlots = [Option<SamplerViewRef>; MAX_SAMPLER_VIEWS];
/// Constant buffers bound to one stage.
pub type ConstantBufferSlots = [ConstantBufferBinding; MAX_CONSTANT_BUFFERS];
/// Vertex buffer bindings.
pub type VertexBufferSlots = [VertexBufferBinding; MAX_VERTEX_BUFFERS];

/// Everything currently bound to a context: the inputs of derived state and
/// of every recorded draw.
///
/// **Snapshots are cheap.**  Every payload is an `Arc` (CSOs, views,
/// surfaces, resources, user constants) or a small value, and the large
/// slot arrays are themselves behind `Arc`s that the setters replace
/// copy-on-write (`Arc::make_mut`).  Cloning a `BoundState` therefore
/// costs a few dozen reference-count increments and about 1 KiB of copies
/// (viewports, scissors, clip planes, stipple), so the pipeline can record
/// a snapshot per state change; deleting a CSO, destroying a view or
/// rebinding never disturbs a snapshot.
///
/// **Validity.**  Every field was validated by the setter that wrote it
/// (slot ranges, formats vs. bind flags, strides, index sizes, view and
/// surface ranges), so readers need not re-check; they must still clamp
/// memory accesses (offsets past the end of a buffer read zeros).
///
/// Per-stage arrays (`samplers`, `sampler_views`, `constant_buffers`) are
/// indexed by `stage_index`: 0 = vertex, 1 = fragment.
#[derive(EcsResource, Clone)]
pub struct BoundState {
    // --- CSOs ---------------------------------------------------------------
    /// `bind_blend_state` (`None`: unbound; draws refuse it).
    pub blend: Option<Arc<BlendState>>,
    /// `bind_depth_stencil_alpha_state`.
    pub depth_stencil_alpha: Option<Arc<DepthStencilAlphaState>>,
    /// `bind_rasterizer_state`.
    pub rasterizer: Option<Arc<RasterizerState>>,
    /// `bind_vertex_elements_state`.
    pub vertex_elements: Option<Arc<[VertexElement]>>,
    /// `bind_vs_state`.
    pub vs: Option<ferropipe_components::shader::VertexShaderRef>,
    /// The bound vertex shader's stream-output info (`None`: none).
    pub vs_stream_output: Option<Arc<StreamOutputInfo>>,
    /// `bind_fs_state`.
    pub fs: Option<ferropipe_components::shader::FragmentShaderRef>,
    /// `bind_sampler_states`, per stage.
    pub samplers: [Arc<SamplerSlots>; 2],

    // --- Resource bindings ---------------------------------------------------
    /// `set_framebuffer_state`.
    pub framebuffer: Arc<FramebufferState>,
    /// `set_vertex_buffers`, 32 slots.
    pub vertex_buffers: Arc<VertexBufferSlots>,
    /// `set_index_buffer`.
    pub index_buffer: IndexBufferBinding,
    /// `set_constant_buffer`, per stage, 16 slots.
    pub constant_buffers: [Arc<ConstantBufferSlots>; 2],
    /// `set_sampler_views`, per stage, 128 slots.
    pub sampler_views: [Arc<SamplerViewSlots>; 2],
    /// `set_stream_output_targets` (slot = `output_buffer`).
    pub so_targets: [Option<StreamOutputTargetRef>; MAX_SO_BUFFERS],
    /// `set_shader_buffers` of the vertex (0) and fragment (1) stages.
    pub shader_buffers: [Arc<ShaderBufferSlots>; 2],
    /// `set_shader_images` of the vertex (0) and fragment (1) stages.
    pub shader_images: [Arc<ShaderImageSlots>; 2],

    // --- Non-CSO state -----------------------------------------------------------
    /// `set_blend_color`.
    pub blend_color: BlendColor,
    /// `set_stencil_ref`.
    pub stencil_ref: StencilRef,
    /// `set_sample_mask`.
    pub sample_mask: u32,
    /// `set_min_samples`.
    pub min_samples: u32,
    /// `set_clip_state`.
    pub clip: ClipState,
    /// `set_polygon_stipple`.
    pub poly_stipple: PolyStipple,
    /// `set_viewport_states`, 16 slots.
    pub viewports: Arc<ViewportSlots>,
    /// `set_scissor_states`, 16 slots.
    pub scissors: Arc<ScissorSlots>,
}

impl Default for BoundState {
    /// A new context's state (FORMAT.md "Defaults and initial state"):
    /// nothing bound, sample mask all ones, min samples 1, everything else
    /// zero.
    fn default() -> Self {
        BoundState {
            blend: None,
            depth_stencil_alpha: None,
            rasterizer: None,
            vertex_elements: None,
            vs: None,
            vs_stream_output: None,
            fs: None,
            samplers: std::array::from_fn(|_| Arc::new(std::array::from_fn(|_| None))),
            framebuffer: Arc::default(),
            vertex_buffers: Arc::new(std::array::from_fn(|_| VertexBufferBinding::default())),
            index_buffer: IndexBufferBinding::default(),
            constant_buffers: std::array::from_fn(|_| {
                Arc::new(std::array::from_fn(|_| ConstantBufferBinding::default()))
            }),
            sampler_views: std::array::from_fn(|_| Arc::new(std::array::from_fn(|_| None))),
            so_targets: std::array::from_fn(|_| None),
            shader_buffers: Default::default(),
            shader_images: Default::default(),
            blend_color: BlendColor::default(),
            stencil_ref: StencilRef::default(),
            sample_mask: 0xffff_ffff,
            min_samples: 1,
            clip: ClipState::default(),
            poly_stipple: PolyStipple::default(),
            viewports: Arc::new([ViewportState::default(); MAX_VIEWPORTS]),
            scissors: Arc::new([ScissorState::default(); MAX_VIEWPORTS]),
        }
    }
}

/// `pipe_context`.
///
/// A context is used from one thread at a time (`Send`, not `Sync`), as
/// Gallium requires; different contexts of one screen may run in different
/// threads concurrently.
pub struct Context {
    pub(crate) screen: Screen,
    pub(crate) id: u64,
    pub(crate) world: World,
    /// Why the context was lost (a flush or launch past its work budget);
    /// every call then fails with [`Error::DeviceLost`].
    lost: Option<String>,
    /// The screen's validation layer is on (lint.rs).
    validate: bool,
    /// `draw_vbo` calls so far, counted while validating: the index the
    /// validation layer's warnings name.
    draws: u64,
    /// The running capture (capture.rs); `None` costs each hooked call
    /// one check.
    capture: Option<Box<dyn CallRecorder>>,
    /// Compiled shaders' sources, for capture.
    shader_sources: capture::ShaderSources,
    /// Constant-buffer slot arrays and user constants of executed blocks,
    /// reused by `set_constant_buffer` (bind.rs).
    constant_spares: bind::ConstantSpares,
    /// Draw recording state (draw.rs): a field, not a world resource,
    /// because `draw_vbo` reads it four times a draw and a
    /// `World::resource` lookup is ~80 instructions (many_draws: 10,000
    /// draws a frame).
    recorder: draw::DrawRecorder,
}

impl Screen {
    /// `context_create`.
    pub fn context_create(&self) -> Result<Context> {
        let mut world = World::new();
        world.insert_resource(BoundState::default());
        // The draw pipeline: its two schedules (front end per wave, back end
        // per tile pass), the recorded scene and the worker pool
        // (ferropipe-systems), plus draw recording and query bookkeeping.
        ferropipe_systems::configure_pipeline(&mut world, self.executor().clone());
        world.init_resource::<compute::ComputeBindings>();
        world.init_resource::<query::QueryTracker>();
        Ok(Context {
            screen: self.clone(),
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
            world,
            lost: None,
            validate: self.validates(),
            draws: 0,
            capture: None,
            shader_sources: Default::default(),
            constant_spares: Default::default(),
            recorder: Default::default(),
        })
    }
}

impl Context {
    /// The screen this context belongs to.
    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    /// The context's ECS world (CSOs, views, surfaces, recorded draws).
    ///
    /// Exposed for extensions that insert their own systems into the
    /// pipeline; see ARCHITECTURE.md, "Extending the pipeline".
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Inserts user systems into one of the pipeline schedules
    /// ([`FrontEnd`](crate::FrontEnd), run once per wave
    /// of jobs, or [`BackEnd`](crate::BackEnd), run once
    /// per tile pass), ordered against the stages with
    /// [`PipelineSet`](crate::PipelineSet):
    ///
    /// ```
    /// use ferropipe::bevy_ecs::prelude::*;
    /// use ferropipe::{BackEnd, PipelineSet, SceneExecution};
    ///
    /// #[derive(Resource, Default)]
    /// struct TilePasses(u32);
    ///
    /// fn count_tile_passes(exec: Res<SceneExecution>, mut n: ResMut<TilePasses>) {
    ///     n.0 += u32::from(exec.grid.tiles() > 0);
    /// }
    ///
    /// let screen = ferropipe::Screen::new(Default::default())?;
    /// let mut ctx = screen.context_create()?;
    /// ctx.insert_resource(TilePasses::default());
    /// ctx.add_systems(
    ///     BackEnd,
    ///     count_tile_passes.before(PipelineSet::Tiles),
    /// );
    /// # Ok::<(), ferropipe::Error>(())
    /// ```
    ///
    /// Where a system can go and what it sees there: ARCHITECTURE.md,
    /// "Extending the pipeline"; `examples/custom_system.rs` is a complete
    /// one.  User systems run on the schedule's single-threaded executor
    /// like the built-in ones (parallelism lives inside systems, on the
    /// screen's pool: [`crate::PipelineExecutor`]).  They must not
    /// write render targets: only output merge does, and the images stay
    /// independent of thread count only while that holds.
    pub fn add_systems<M>(
        &mut self,
        schedule: impl bevy_ecs::schedule::ScheduleLabel,
        systems: impl bevy_ecs::schedule::IntoScheduleConfigs<bevy_ecs::system::ScheduleSystem, M>,
    ) -> &mut Self {
        self.world.schedule_scope(schedule, |_, s| {
            s.add_systems(systems);
        });
        self
    }

    /// Inserts (or replaces) a resource user systems read or write.
    pub fn insert_resource<R: bevy_ecs::resource::Resource>(&mut self, resource: R) -> &mut Self {
        self.world.insert_resource(resource);
        self
    }

    /// A resource inserted with [`Context::insert_resource`] (or one of the
    /// pipeline's own, read-only).
    pub fn resource<R: bevy_ecs::resource::Resource>(&self) -> Option<&R> {
        self.world.get_resource::<R>()
    }

    /// A resource, writable: how a host reads back and resets what its
    /// systems accumulated.
    pub fn resource_mut<
        R: bevy_ecs::resource::Resource<Mutability = bevy_ecs::component::Mutable>,
    >(
        &mut self,
    ) -> Option<bevy_ecs::world::Mut<'_, R>> {
        self.world.get_resource_mut::<R>()
    }

    /// Removes a user resource.
    pub fn remove_resource<R: bevy_ecs::resource::Resource>(&mut self) -> Option<R> {
        self.world.remove_resource::<R>()
    }

    /// Bounds the work of every later flush and `launch_grid` on this
    /// context (a GPU driver's timeout detection and recovery; what a unit
    /// is and where the limits are checked: `ferropipe_systems::budget`).
    /// Past either limit the work stops at the next safe point and the
    /// context is lost: that call and every later one return
    /// [`Error::DeviceLost`].  `WorkBudget::default()` is unbounded, as
    /// Gallium is.
    pub fn set_work_budget(&mut self, budget: WorkBudget) -> Result<()> {
        self.alive("set_work_budget")?;
        self.world.insert_resource(budget);
        Ok(())
    }

    /// The budget [`Context::set_work_budget`] set.
    pub fn work_budget(&self) -> WorkBudget {
        self.world
            .get_resource::<WorkBudget>()
            .copied()
            .unwrap_or_default()
    }

    /// Why the context was lost, if it was ([`Error::DeviceLost`]).
    pub fn lost_reason(&self) -> Option<&str> {
        self.lost.as_deref()
    }

    /// Every public call's first step: a lost context does nothing more.
    pub(crate) fn alive(&self, call: &'static str) -> Result<()> {
        match &self.lost {
            None => Ok(()),
            Some(reason) => Err(Error::DeviceLost {
                call,
                reason: reason.clone(),
            }),
        }
    }

    /// Marks the context lost: recorded work is dropped (its resource
    /// references released) and the error to return is built.
    pub(crate) fn lose(&mut self, call: &'static str, reason: String) -> Error {
        self.world
            .resource_mut::<ferropipe_components::batch::RecordedScene>()
            .clear();
        self.recorder = draw::DrawRecorder::default();
        self.world
            .remove_resource::<ferropipe_systems::compute::ComputeDispatch>();
        self.lost = Some(reason.clone());
        Error::DeviceLost { call, reason }
    }

    /// The state currently bound.
    pub fn bound(&self) -> &BoundState {
        self.world.resource::<BoundState>()
    }

    pub(crate) fn bound_mut(&mut self) -> bevy_ecs::world::Mut<'_, BoundState> {
        self.world.resource_mut::<BoundState>()
    }

    /// Spawns an object entity and returns its typed handle.
    pub(crate) fn spawn<C: bevy_ecs::component::Component>(&mut self, component: C) -> Handle<C> {
        Handle::new(self.world.spawn(component).id(), self.id)
    }

    /// Looks up an object's component, checking the handle belongs here.
    pub(crate) fn get<C: bevy_ecs::component::Component>(
        &self,
        call: &'static str,
        field: &'static str,
        handle: Handle<C>,
    ) -> Result<&C> {
        let kind = std::any::type_name::<C>()
            .rsplit("::")
            .next()
            .unwrap_or("object");
        if handle.context != self.id {
            return Err(Error::InvalidHandle { call, field, kind });
        }
        self.world
            .get::<C>(handle.entity)
            .ok_or(Error::InvalidHandle { call, field, kind })
    }

    /// Despawns an object, checking the handle.
    pub(crate) fn despawn<C: bevy_ecs::component::Component>(
        &mut self,
        call: &'static str,
        handle: Handle<C>,
    ) -> Result<()> {
        self.get(call, "handle", handle)?;
        self.world.despawn(handle.entity);
        Ok(())
    }
}
