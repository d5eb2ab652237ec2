//! `pipe_screen`: the context-independent part of the device (screen.rst).
//!
//! A [`Screen`] owns the resource world (one entity per resource, shared by
//! all its contexts) and the worker pool.  It is `Send + Sync` and every
//! method takes `&self`: screen.rst requires screen methods to be callable
//! from any thread, concurrently with its contexts, without user locks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::world::World;
use ferropipe_components::resource::{
    PipeResource, ResourceLayout, ResourceRef, ResourceStorage, ResourceTemplate,
};
use ferropipe_systems::pool::{ExecutorRef, PoolExecutor};

use crate::error::{Error, Result};

/// How a screen is set up.
#[derive(Clone, Default)]
pub struct ScreenConfig {
    /// Worker threads for the tile-parallel back end and the parallel front
    /// end; 0 means "number of CPUs".  Ignored when `executor` is given.
    pub threads: usize,
    /// A host-provided executor (the host owns the threads).
    pub executor: Option<ExecutorRef>,
}

/// A resource entity in the screen world.
///
/// Holds a weak reference: the world is a registry (for memory accounting,
/// driver queries and debugging), not an owner.  Entities whose resource is
/// gone are swept as resources are created.
#[derive(Component)]
pub struct ResourceEntry {
    pub resource: Weak<PipeResource>,
    pub templ: ResourceTemplate,
    pub bytes: usize,
}

pub(crate) struct ScreenShared {
    pub(crate) world: Mutex<World>,
    pub(crate) executor: ExecutorRef,
    next_id: AtomicU64,
    creates_since_sweep: AtomicU64,
    epoch: Instant,
}

/// `pipe_screen`.
#[derive(Clone)]
pub struct Screen {
    pub(crate) shared: Arc<ScreenShared>,
}

/// A counted reference to a resource (`struct pipe_resource *`).
///
/// Cloning adds a reference; [`Screen::resource_destroy`] (or dropping)
/// releases one.  Views, surfaces, bindings and recorded draws hold their own
/// references, so the storage lives until all of them are gone.
#[derive(Clone, Debug)]
pub struct Resource {
    pub(crate) inner: ResourceRef,
    pub(crate) entity: Entity,
}

impl Resource {
    /// The template the resource was created from.
    pub fn template(&self) -> &ResourceTemplate {
        &self.inner.templ
    }

    /// Where each level lives in the storage.
    pub fn layout(&self) -> &ResourceLayout {
        &self.inner.layout
    }

    /// The resource's entity in its screen's world.
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// The shared resource data (for systems and embedding hosts).
    pub fn shared(&self) -> &ResourceRef {
        &self.inner
    }
}

impl PartialEq for Resource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Screen {
    /// Creates a screen with its worker pool.
    pub fn new(config: ScreenConfig) -> Result<Self> {
        let executor: ExecutorRef = match config.executor {
            Some(e) => e,
            None => {
                let threads = if config.threads == 0 {
                    std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(1)
                } else {
                    config.threads
                };
                Arc::new(
                    PoolExecutor::new(threads)
                        .map_err(|e| Error::invalid("Screen::new", "threads", e.to_string()))?,
                )
            }
        };
        Ok(Screen {
            shared: Arc::new(ScreenShared {
                world: Mutex::new(World::new()),
                executor,
                next_id: AtomicU64::new(1),
                creates_since_sweep: AtomicU64::new(0),
                epoch: Instant::now(),
            }),
        })
    }

    /// `get_name`.
    pub fn get_name(&self) -> &'static str {
        "ferropipe"
    }

    /// `get_vendor`.
    pub fn get_vendor(&self) -> &'static str {
        "ferropipe"
    }

    /// `get_device_vendor`: the CPU does the work.
    pub fn get_device_vendor(&self) -> &'static str {
        "CPU"
    }

    /// Worker threads the screen renders with.
    pub fn threads(&self) -> usize {
        self.shared.executor.threads()
    }

    /// `get_timestamp`: nanoseconds since the screen was created; the same
    /// clock as `PIPE_QUERY_TIMESTAMP`.
    pub fn get_timestamp(&self) -> u64 {
        self.shared.epoch.elapsed().as_nanos() as u64
    }

    /// `resource_create`.
    pub fn resource_create(&self, templ: &ResourceTemplate) -> Result<Resource> {
        const CALL: &str = "resource_create";
        crate::validate::resource_template(CALL, templ)?;
        let layout = ResourceLayout::new(templ).ok_or(Error::OutOfMemory {
            call: CALL,
            bytes: u64::MAX,
        })?;
        let storage = ResourceStorage::new_zeroed(layout.size).ok_or(Error::OutOfMemory {
            call: CALL,
            bytes: layout.size as u64,
        })?;
        Ok(self.register(*templ, layout, storage))
    }

    /// `resource_from_user_memory`: a resource whose storage the host owns.
    ///
    /// The layout is the same tightly packed one `resource_create` uses
    /// (`ResourceLayout::new`); `len` must cover it.
    ///
    /// # Safety
    /// `ptr` must stay valid for reads and writes of `len` bytes while the
    /// resource or anything referencing it lives, and the host must not touch
    /// the memory while ferropipe may be using it (after a flush, wait on the
    /// fence before reading).
    pub unsafe fn resource_from_user_memory(
        &self,
        templ: &ResourceTemplate,
        ptr: std::ptr::NonNull<u8>,
        len: usize,
    ) -> Result<Resource> {
        const CALL: &str = "resource_from_user_memory";
        crate::validate::resource_template(CALL, templ)?;
        let layout = ResourceLayout::new(templ).ok_or(Error::OutOfMemory {
            call: CALL,
            bytes: u64::MAX,
        })?;
        if len < layout.size {
            return Err(Error::invalid(
                CALL,
                "len",
                format!("{len} bytes, the resource needs {}", layout.size),
            ));
        }
        // SAFETY: forwarded from this function's contract.
        let storage = unsafe { ResourceStorage::from_user_memory(ptr, layout.size) };
        Ok(self.register(*templ, layout, storage))
    }

    /// `resource_destroy`: releases this reference.  The storage is freed
    /// when the last reference (views, surfaces, bindings, pending draws)
    /// goes.
    pub fn resource_destroy(&self, resource: Resource) {
        drop(resource);
    }

    /// Number of live resources and their total bytes.
    pub fn resource_usage(&self) -> (usize, usize) {
        let mut world = self.shared.world.lock().unwrap_or_else(|e| e.into_inner());
        let mut q = world.query::<&ResourceEntry>();
        q.iter(&world)
            .filter(|e| e.resource.strong_count() > 0)
            .fold((0, 0), |(n, b), e| (n + 1, b + e.bytes))
    }

    fn register(
        &self,
        templ: ResourceTemplate,
        layout: ResourceLayout,
        storage: ResourceStorage,
    ) -> Resource {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = layout.size;
        let inner = Arc::new(PipeResource {
            id,
            templ,
            layout,
            storage,
        });
        let mut world = self.shared.world.lock().unwrap_or_else(|e| e.into_inner());
        self.sweep_dead(&mut world);
        let entity = world
            .spawn(ResourceEntry {
                resource: Arc::downgrade(&inner),
                templ,
                bytes,
            })
            .id();
        Resource { inner, entity }
    }

    /// Despawns entities of dropped resources, amortised: a sweep runs once
    /// the number of creations since the last one exceeds half the live
    /// entities, so creation stays O(1) on average.
    fn sweep_dead(&self, world: &mut World) {
        let since = self
            .shared
            .creates_since_sweep
            .fetch_add(1, Ordering::Relaxed);
        let live = world.entities().len() as u64;
        if since < live / 2 + 16 {
            return;
        }
        self.shared.creates_since_sweep.store(0, Ordering::Relaxed);
        let mut q = world.query::<(Entity, &ResourceEntry)>();
        let dead: Vec<Entity> = q
            .iter(world)
            .filter(|(_, e)| e.resource.strong_count() == 0)
            .map(|(id, _)| id)
            .collect();
        for e in dead {
            world.despawn(e);
        }
    }

    /// The worker pool the pipeline runs on.
    pub fn executor(&self) -> &ExecutorRef {
        &self.shared.executor
    }
}
