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
//! `transfer.rs`, `query.rs`, `blit.rs`.

mod cso;
mod draw;
mod query;
mod shader;

pub use draw::Fence;
pub use query::{QueryHandle, QueryObject, QueryResult};
pub use shader::{FsHandle, ShaderCode, ShaderState, VsHandle};

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource as EcsResource;
use bevy_ecs::world::World;
use ferropipe_components::state::*;

use crate::error::{Error, Result};
use crate::screen::Screen;

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

/// The state currently bound to a context (the "derived state" inputs).
///
/// Payloads are `Arc`s of immutable CSOs, so recording a draw snapshots the
/// whole binding by cloning pointers.
#[derive(EcsResource, Default, Clone)]
pub struct BoundState {
    pub blend: Option<Arc<BlendState>>,
    pub vs: Option<ferropipe_components::shader::VertexShaderRef>,
    pub fs: Option<ferropipe_components::shader::FragmentShaderRef>,
    pub blend_color: BlendColor,
    pub stencil_ref: StencilRef,
    pub sample_mask: u32,
    pub min_samples: u32,
    pub clip: ClipState,
    pub poly_stipple: PolyStipple,
    pub viewports: [ViewportState; MAX_VIEWPORTS],
    pub scissors: [ScissorState; MAX_VIEWPORTS],
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
}

impl Screen {
    /// `context_create`.
    pub fn context_create(&self) -> Result<Context> {
        let mut world = World::new();
        world.insert_resource(BoundState {
            sample_mask: 0xffff_ffff,
            min_samples: 1,
            ..Default::default()
        });
        Ok(Context {
            screen: self.clone(),
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
            world,
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
