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

use ferropipe_components::caps::{Cap, CapF, ComputeCap, ShaderCap};
use ferropipe_components::enums::{BindFlags, ResourceFlags, ShaderType, TextureTarget};
use ferropipe_components::format::Format;

use crate::caps;
use crate::error::{ConfigError, Error, ResourceError, Result};

/// How a screen is set up.
#[derive(Clone, Default)]
pub struct ScreenConfig {
    /// Threads for the tile-parallel back end and the parallel front end:
    /// the thread that flushes takes part, beside `threads - 1` pool
    /// workers (`PoolExecutor`); 0 means `FERROPIPE_NUM_THREADS` if set
    /// (llvmpipe's `LP_NUM_THREADS`), else the number of CPUs.  Ignored
    /// when `executor` is given.
    pub threads: usize,
    /// A host-provided executor (the host owns the threads).
    pub executor: Option<ExecutorRef>,
    /// Largest single resource in bytes `can_create_resource` accepts;
    /// `None` means [`DEFAULT_MAX_RESOURCE_BYTES`].
    pub max_resource_bytes: Option<usize>,
    /// The validation layer for embedders: each draw that cannot produce
    /// anything, or reads something unbound, logs one `log::warn!` naming
    /// the draw and the cause (`context/lint.rs`).  Also switched on by
    /// `FERROPIPE_DEBUG=validate`.  Never changes rendering.
    pub validate: bool,
    /// Which back end runs the screen's shaders (the interpreter or the
    /// JIT, byte-identical); `None` means `FERROPIPE_SHADER` if set
    /// ([`SHADER_ENV`]: `interp` or `jit`, anything else is an error of
    /// [`Screen::new`]), else [`ShaderBackend::default`].
    pub shader_backend: Option<ShaderBackend>,
    /// How `RasterizerState::poly_smooth` renders; `None` means
    /// `FERROPIPE_POLY_SMOOTH` if set ([`POLY_SMOOTH_ENV`]: `analytic` or
    /// `off`, anything else is an error of [`Screen::new`]), else
    /// [`PolySmooth::Analytic`].
    pub poly_smooth: Option<PolySmooth>,
}

/// What `poly_smooth` does ([`ScreenConfig::poly_smooth`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolySmooth {
    /// GL's polygon antialiasing (GL 4.6 §14.6.1): a fragment for every
    /// pixel the polygon covers with non-zero area, its colour outputs'
    /// alpha multiplied by the covered fraction of the pixel's square.
    /// Multisample and conservative rasterization turn it off.
    #[default]
    Analytic,
    /// As Mesa 22.3's llvmpipe renders it: as if `poly_smooth` were off
    /// (neither draw nor llvmpipe has an antialiased-polygon stage), for
    /// comparisons with llvmpipe references.
    Off,
}

/// The environment variable that picks [`PolySmooth`] when
/// [`ScreenConfig::poly_smooth`] is `None`.
pub const POLY_SMOOTH_ENV: &str = "FERROPIPE_POLY_SMOOTH";

impl PolySmooth {
    /// Parses a [`POLY_SMOOTH_ENV`] value (`analytic` or `off`, case and
    /// surrounding blanks ignored).
    pub fn parse(v: &str) -> std::result::Result<Self, String> {
        match v.trim().to_ascii_lowercase().as_str() {
            "analytic" => Ok(PolySmooth::Analytic),
            "off" => Ok(PolySmooth::Off),
            _ => Err(format!(
                "{POLY_SMOOTH_ENV}={v:?}: expected \"analytic\" or \"off\""
            )),
        }
    }

    /// [`POLY_SMOOTH_ENV`] if set, else the default.
    pub fn from_env() -> std::result::Result<Self, String> {
        match std::env::var(POLY_SMOOTH_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(PolySmooth::default()),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(format!("{POLY_SMOOTH_ENV}={v:?} is not valid text"))
            }
            Ok(v) => Self::parse(&v),
        }
    }
}

pub use ferropipe_shader::Backend as ShaderBackend;

/// The environment variable that picks the shader back end when
/// [`ScreenConfig::shader_backend`] is `None`, as llvmpipe users pick with
/// `GALLIUM_DRIVER` / `LP_*`.
pub const SHADER_ENV: &str = ferropipe_shader::BACKEND_ENV;

/// The environment variable that sets the worker count when
/// [`ScreenConfig::threads`] is 0, as llvmpipe's `LP_NUM_THREADS` does.
pub const NUM_THREADS_ENV: &str = "FERROPIPE_NUM_THREADS";

/// The largest worker count [`NUM_THREADS_ENV`] accepts (llvmpipe's
/// `LP_MAX_THREADS` is 32; hosts with more cores than this pass
/// [`ScreenConfig::threads`] instead).
pub const MAX_ENV_THREADS: usize = 1024;

/// The environment variable of debug options, a comma-separated list
/// (Mesa's `LP_DEBUG` / `GALLIUM_DEBUG` style); `validate` switches on
/// [`ScreenConfig::validate`].
pub const DEBUG_ENV: &str = "FERROPIPE_DEBUG";

/// Parses a [`NUM_THREADS_ENV`] value: a whole number in
/// `1..=MAX_ENV_THREADS`, surrounding spaces allowed.  The error says what
/// was wrong, for the warning [`Screen::new`] logs.
pub fn parse_num_threads(value: &str) -> std::result::Result<usize, String> {
    let v = value.trim();
    match v.parse::<usize>() {
        Ok(n) if (1..=MAX_ENV_THREADS).contains(&n) => Ok(n),
        Ok(n) => Err(format!(
            "{NUM_THREADS_ENV}={n} is out of range 1..={MAX_ENV_THREADS}"
        )),
        Err(_) => Err(format!(
            "{NUM_THREADS_ENV}={value:?} is not a whole number of threads"
        )),
    }
}

/// Whether a [`DEBUG_ENV`] value asks for `option`.
pub fn debug_option_set(value: &str, option: &str) -> bool {
    value
        .split([',', ' ', ':'])
        .any(|o| o.trim().eq_ignore_ascii_case(option))
}

/// The worker count for `ScreenConfig::threads == 0`: the environment's,
/// or (unset, or unusable with a warning) one per CPU.
fn default_threads() -> usize {
    let cpus = || {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    };
    match std::env::var(NUM_THREADS_ENV) {
        Err(std::env::VarError::NotPresent) => cpus(),
        Err(std::env::VarError::NotUnicode(v)) => {
            let n = cpus();
            log::warn!(
                "{NUM_THREADS_ENV}={v:?} is not valid text; using {n} threads (one per CPU)"
            );
            n
        }
        Ok(v) => parse_num_threads(&v).unwrap_or_else(|e| {
            let n = cpus();
            log::warn!("{e}; using {n} threads (one per CPU)");
            n
        }),
    }
}

/// Default limit on one resource's storage: 4 GiB (a 16384² RGBA32F texture
/// with its mip chain is 5.3 GiB; llvmpipe's limit is 1 GiB on 32-bit hosts).
pub const DEFAULT_MAX_RESOURCE_BYTES: usize = 4 << 30;

/// A resource entity in the screen world.
///
/// Holds a weak reference: the world is a registry (for memory accounting,
/// driver queries and debugging), not an owner.  Entities whose resource is
/// gone are swept as resources are created.  The template is the
/// resource's own (`PipeResource::templ`), reached through `resource`.
#[derive(Component)]
pub struct ResourceEntry {
    /// The resource, while anything holds it.
    pub resource: Weak<PipeResource>,
    /// Its storage size in bytes (`Screen::resource_usage` sums the live
    /// ones).
    pub bytes: usize,
}

pub(crate) struct ScreenShared {
    pub(crate) world: Mutex<World>,
    pub(crate) executor: ExecutorRef,
    max_resource_bytes: usize,
    next_id: AtomicU64,
    creates_since_sweep: AtomicU64,
    epoch: Instant,
    /// [`ScreenConfig::validate`] or `FERROPIPE_DEBUG=validate`.
    pub(crate) validate: bool,
    /// [`ScreenConfig::shader_backend`] or `FERROPIPE_SHADER`.
    pub(crate) shader_backend: ShaderBackend,
    /// [`ScreenConfig::poly_smooth`] or `FERROPIPE_POLY_SMOOTH`.
    poly_smooth: PolySmooth,
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
                    default_threads()
                } else {
                    config.threads
                };
                Arc::new(
                    PoolExecutor::new(threads).map_err(|e| ConfigError::Threads {
                        reason: e.to_string(),
                    })?,
                )
            }
        };
        let shader_backend = match config.shader_backend {
            Some(b) => b,
            None => ShaderBackend::from_env().map_err(|e| ConfigError::Env {
                var: SHADER_ENV,
                reason: e.to_string(),
            })?,
        };
        let poly_smooth = match config.poly_smooth {
            Some(p) => p,
            None => PolySmooth::from_env().map_err(|reason| ConfigError::Env {
                var: POLY_SMOOTH_ENV,
                reason,
            })?,
        };
        Ok(Screen {
            shared: Arc::new(ScreenShared {
                shader_backend,
                poly_smooth,
                world: Mutex::new(World::new()),
                executor,
                max_resource_bytes: config
                    .max_resource_bytes
                    .unwrap_or(DEFAULT_MAX_RESOURCE_BYTES),
                next_id: AtomicU64::new(1),
                creates_since_sweep: AtomicU64::new(0),
                epoch: Instant::now(),
                validate: config.validate
                    || std::env::var(DEBUG_ENV).is_ok_and(|v| debug_option_set(&v, "validate")),
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

    /// Whether the validation layer is on ([`ScreenConfig::validate`]).
    pub fn validates(&self) -> bool {
        self.shared.validate
    }

    /// The back end the screen's shaders run on
    /// ([`ScreenConfig::shader_backend`]).
    pub fn shader_backend(&self) -> ShaderBackend {
        self.shared.shader_backend
    }

    /// How `poly_smooth` renders ([`ScreenConfig::poly_smooth`]).
    pub fn poly_smooth(&self) -> PolySmooth {
        self.shared.poly_smooth
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

    /// `get_param`: see [`crate::caps`] for what each value promises.
    pub fn get_param(&self, cap: Cap) -> i32 {
        caps::get_param(cap)
    }

    /// `get_paramf`.
    pub fn get_paramf(&self, cap: CapF) -> f32 {
        caps::get_paramf(cap)
    }

    /// `get_shader_param`.
    pub fn get_shader_param(&self, shader: ShaderType, cap: ShaderCap) -> i32 {
        caps::get_shader_param(shader, cap)
    }

    /// `get_compute_param`: `None` when the parameter is not supported.
    pub fn get_compute_param(&self, cap: ComputeCap) -> Option<caps::ComputeParam> {
        caps::get_compute_param(cap, self.executor().threads())
    }

    /// `is_format_supported`: whether a resource of `format` and `target`
    /// with this many samples can be used for all of `bindings`.
    pub fn is_format_supported(
        &self,
        format: Format,
        target: TextureTarget,
        sample_count: u32,
        storage_sample_count: u32,
        bindings: BindFlags,
    ) -> bool {
        caps::format_support(format, target, sample_count, storage_sample_count, bindings).is_ok()
    }

    /// `can_create_resource`: whether `resource_create(templ)` would succeed
    /// as far as the template, the format and the size limit can tell
    /// (allocation itself may still fail).  Never allocates.
    pub fn can_create_resource(&self, templ: &ResourceTemplate) -> bool {
        self.check_template("can_create_resource", templ).is_ok()
    }

    /// The checks `resource_create` makes before allocating.
    fn check_template(
        &self,
        call: &'static str,
        templ: &ResourceTemplate,
    ) -> Result<ResourceLayout> {
        crate::validate::resource_template(call, templ)?;
        // Sparse resources need `resource_commit` and unbacked pages
        // (PIPE_CAP_SPARSE_BUFFER_PAGE_SIZE is 0); coherent mappings are
        // refused at map time (PIPE_CAP_BUFFER_MAP_PERSISTENT_COHERENT is
        // 0), so a resource promising them is refused here rather than
        // behaving as a plain one.
        for (flag, name) in [
            (ResourceFlags::SPARSE, "PIPE_RESOURCE_FLAG_SPARSE"),
            (
                ResourceFlags::MAP_COHERENT,
                "PIPE_RESOURCE_FLAG_MAP_COHERENT",
            ),
        ] {
            if templ.flags.contains(flag) {
                return Err(Error::unsupported(call, format!("flags: {name}")));
            }
        }
        // A buffer's format is not a texel format: buffer images take
        // theirs from the view (`set_shader_images` checks it).
        let bind = if templ.target == TextureTarget::Buffer {
            templ.bind - BindFlags::SHADER_IMAGE
        } else {
            templ.bind
        };
        if let Err(e) = caps::format_support(
            templ.format,
            templ.target,
            templ.nr_samples,
            templ.nr_storage_samples,
            bind,
        ) {
            return Err(if e.unimplemented {
                Error::unsupported(call, e.what)
            } else {
                ResourceError::FormatNotSupported {
                    call,
                    field: "format/bind",
                    format: templ.format,
                    reason: e.what,
                }
                .into()
            });
        }
        let layout = ResourceLayout::new(templ).ok_or(Error::OutOfMemory {
            call,
            bytes: u64::MAX,
        })?;
        if layout.size > self.shared.max_resource_bytes {
            return Err(Error::OutOfMemory {
                call,
                bytes: layout.size as u64,
            });
        }
        Ok(layout)
    }

    /// `resource_create`: validates the template against the caps
    /// (dimensions, levels, format × target × bindings, size limit), then
    /// allocates zeroed storage.  Every refusal is a typed error, never an
    /// abort: an allocation the system cannot satisfy is
    /// [`Error::OutOfMemory`].
    pub fn resource_create(&self, templ: &ResourceTemplate) -> Result<Resource> {
        const CALL: &str = "resource_create";
        let layout = self.check_template(CALL, templ)?;
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
        let layout = self.check_template(CALL, templ)?;
        if len < layout.size {
            return Err(ResourceError::DataTooSmall {
                call: CALL,
                field: "len",
                len,
                needed: layout.size,
            }
            .into());
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

#[cfg(test)]
mod tests {
    use super::*;
    use ferropipe_components::enums::Usage;

    fn screen() -> Screen {
        Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap()
    }

    /// `FERROPIPE_NUM_THREADS`: whole numbers in range are taken, anything
    /// else is an error message naming the variable (Screen::new logs it
    /// as a warning and uses one thread per CPU), never a panic.
    #[test]
    fn num_threads_values_parse_or_say_why_not() {
        assert_eq!(parse_num_threads("4"), Ok(4));
        assert_eq!(parse_num_threads(" 1 \n"), Ok(1));
        assert_eq!(parse_num_threads("1024"), Ok(MAX_ENV_THREADS));
        for bad in [
            "0",
            "1025",
            "-2",
            "four",
            "",
            "2.5",
            "99999999999999999999999",
        ] {
            let e = parse_num_threads(bad).unwrap_err();
            assert!(e.contains(NUM_THREADS_ENV), "{bad}: {e}");
        }
        assert!(debug_option_set("validate", "validate"));
        assert!(debug_option_set("perf,Validate", "validate"));
        assert!(!debug_option_set("novalidate", "validate"));
        assert!(!debug_option_set("", "validate"));
    }

    #[test]
    fn the_shader_back_end_is_a_screen_option() {
        for backend in [
            ShaderBackend::Interp,
            ShaderBackend::Jit,
            ShaderBackend::Cranelift,
            ShaderBackend::Llvm,
        ] {
            let s = Screen::new(ScreenConfig {
                threads: 1,
                shader_backend: Some(backend),
                ..Default::default()
            })
            .unwrap();
            assert_eq!(s.shader_backend(), backend);
        }
        // what Screen::new reports for a bad FERROPIPE_SHADER
        let e = ShaderBackend::parse("swr").unwrap_err();
        assert!(e.to_string().contains("FERROPIPE_SHADER=\"swr\""), "{e}");
    }

    #[test]
    fn poly_smooth_is_a_screen_option() {
        for p in [PolySmooth::Analytic, PolySmooth::Off] {
            let s = Screen::new(ScreenConfig {
                threads: 1,
                poly_smooth: Some(p),
                ..Default::default()
            })
            .unwrap();
            assert_eq!(s.poly_smooth(), p);
        }
        assert_eq!(PolySmooth::parse(" Off\n"), Ok(PolySmooth::Off));
        assert_eq!(PolySmooth::parse("analytic"), Ok(PolySmooth::Analytic));
        // what Screen::new reports for a bad FERROPIPE_POLY_SMOOTH
        for bad in ["", "on", "llvmpipe"] {
            let e = PolySmooth::parse(bad).unwrap_err();
            assert!(e.contains("FERROPIPE_POLY_SMOOTH="), "{e}");
        }
    }

    #[test]
    fn screen_and_context_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Screen>();
        send_sync::<Resource>();
        send::<crate::Context>();
    }

    #[test]
    fn every_target_creates_and_bad_templates_are_typed_errors() {
        let s = screen();
        let rt = BindFlags::RENDER_TARGET | BindFlags::SAMPLER_VIEW;
        let ok = [
            ResourceTemplate::buffer(100, BindFlags::VERTEX_BUFFER),
            ResourceTemplate {
                target: TextureTarget::Texture1D,
                width0: 64,
                last_level: 6,
                bind: rt,
                ..Default::default()
            },
            ResourceTemplate {
                target: TextureTarget::Texture1DArray,
                width0: 16,
                array_size: 5,
                bind: rt,
                ..Default::default()
            },
            ResourceTemplate::texture_2d(Format::B8G8R8A8_UNORM, 17, 9, rt),
            ResourceTemplate {
                target: TextureTarget::TextureRect,
                width0: 17,
                height0: 9,
                bind: rt,
                ..Default::default()
            },
            ResourceTemplate {
                target: TextureTarget::Texture2DArray,
                width0: 8,
                height0: 8,
                array_size: 3,
                last_level: 3,
                bind: rt,
                ..Default::default()
            },
            ResourceTemplate {
                target: TextureTarget::Texture3D,
                width0: 8,
                height0: 4,
                depth0: 2,
                last_level: 3,
                bind: rt,
                ..Default::default()
            },
            ResourceTemplate {
                target: TextureTarget::TextureCube,
                format: Format::Z24_UNORM_S8_UINT,
                width0: 8,
                height0: 8,
                array_size: 6,
                bind: BindFlags::DEPTH_STENCIL,
                ..Default::default()
            },
            ResourceTemplate {
                target: TextureTarget::TextureCubeArray,
                width0: 4,
                height0: 4,
                array_size: 12,
                last_level: 2,
                bind: rt,
                usage: Usage::Staging,
                ..Default::default()
            },
        ];
        for t in &ok {
            assert!(s.can_create_resource(t), "{t:?}");
            let r = s.resource_create(t).unwrap();
            assert_eq!(r.layout().levels.len(), t.last_level as usize + 1);
        }
        let bad = |t: ResourceTemplate| s.resource_create(&t).unwrap_err();
        assert!(matches!(
            bad(ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                0,
                4,
                rt
            )),
            Error::Resource(ResourceError::ZeroExtent {
                call: "resource_create",
                field: "width0",
            })
        ));
        assert!(matches!(
            bad(ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                20000,
                4,
                rt
            )),
            Error::Resource(ResourceError::ExtentTooLarge {
                field: "width0",
                value: 20000,
                limit: 16384,
                ..
            })
        ));
        assert!(matches!(
            bad(ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                4,
                4,
                BindFlags::DEPTH_STENCIL
            )),
            Error::Resource(ResourceError::FormatNotSupported {
                field: "format/bind",
                format: Format::R8G8B8A8_UNORM,
                ..
            })
        ));
        let msaa = ResourceTemplate {
            nr_samples: 4,
            ..ResourceTemplate::texture_2d(Format::R8G8B8A8_UNORM, 4, 4, rt)
        };
        assert!(bad(msaa).is_unsupported());
        assert!(!s.can_create_resource(&msaa));
    }

    #[test]
    fn too_large_is_an_error_not_an_abort() {
        let s = Screen::new(ScreenConfig {
            threads: 1,
            max_resource_bytes: Some(1 << 20),
            ..Default::default()
        })
        .unwrap();
        let big = ResourceTemplate::texture_2d(
            Format::R32G32B32A32_FLOAT,
            1024,
            1024,
            BindFlags::SAMPLER_VIEW,
        );
        assert!(!s.can_create_resource(&big));
        assert!(matches!(
            s.resource_create(&big),
            Err(Error::OutOfMemory { bytes, .. }) if bytes == 16 << 20
        ));
        // The default limit refuses a 3D texture of 2048³ RGBA32F (128 GiB).
        let huge = ResourceTemplate {
            target: TextureTarget::Texture3D,
            format: Format::R32G32B32A32_FLOAT,
            width0: 2048,
            height0: 2048,
            depth0: 2048,
            bind: BindFlags::SAMPLER_VIEW,
            ..Default::default()
        };
        let s = screen();
        assert!(!s.can_create_resource(&huge));
        assert!(matches!(
            s.resource_create(&huge),
            Err(Error::OutOfMemory { .. })
        ));
    }

    #[test]
    fn resources_are_reference_counted() {
        let s = screen();
        let r = s
            .resource_create(&ResourceTemplate::buffer(256, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let r2 = r.clone();
        assert_eq!(s.resource_usage(), (1, 256));
        s.resource_destroy(r);
        assert_eq!(s.resource_usage(), (1, 256));
        drop(r2);
        assert_eq!(s.resource_usage(), (0, 0));
    }

    #[test]
    fn user_memory_backs_a_resource() {
        let s = screen();
        let mut host = vec![0u8; 64];
        host[5] = 42;
        let t = ResourceTemplate::buffer(64, BindFlags::VERTEX_BUFFER);
        let ptr = std::ptr::NonNull::new(host.as_mut_ptr()).unwrap();
        // SAFETY: `host` outlives the resource (dropped before `host` below)
        // and is not touched while the resource lives.
        let r = unsafe { s.resource_from_user_memory(&t, ptr, host.len()) }.unwrap();
        assert!(r.shared().storage.is_user_memory());
        assert_eq!(r.shared().storage.read()[5], 42);
        r.shared().storage.write()[6] = 7;
        // SAFETY: as above; 32 bytes is too small for a 64-byte buffer.
        let short = unsafe { s.resource_from_user_memory(&t, ptr, 32) };
        assert!(matches!(
            short,
            Err(Error::Resource(ResourceError::DataTooSmall {
                call: "resource_from_user_memory",
                field: "len",
                len: 32,
                needed: 64,
            }))
        ));
        drop(r);
        assert_eq!(host[6], 7);
    }
}

#[cfg(test)]
mod thread_tests {
    use super::*;
    use crate::context::FramebufferTemplate;
    use ferropipe_components::enums::{ClearFlags, TransferFlags};
    use ferropipe_components::state::{ColorUnion, PipeBox};
    use ferropipe_components::view::SurfaceTemplate;

    /// screen.rst "Thread safety": screen methods from several threads while
    /// contexts of the same screen render in others, without user locks.
    #[test]
    fn resources_and_contexts_from_many_threads() {
        let screen = Screen::new(ScreenConfig {
            threads: 2,
            ..Default::default()
        })
        .unwrap();
        // A shared texture both contexts' threads read while it is cleared.
        let shared = screen
            .resource_create(&ResourceTemplate::texture_2d(
                Format::R8G8B8A8_UNORM,
                64,
                64,
                BindFlags::RENDER_TARGET,
            ))
            .unwrap();
        std::thread::scope(|scope| {
            for t in 0..3u32 {
                let screen = &screen;
                scope.spawn(move || {
                    for i in 0..200u32 {
                        let r = screen
                            .resource_create(&ResourceTemplate::buffer(
                                64 + i + t,
                                BindFlags::VERTEX_BUFFER,
                            ))
                            .unwrap();
                        assert!(screen.get_param(Cap::MaxRenderTargets) > 0);
                        let _ = screen.resource_usage();
                        screen.resource_destroy(r);
                    }
                });
            }
            for k in 0..2u32 {
                let screen = &screen;
                let shared = &shared;
                scope.spawn(move || {
                    let mut ctx = screen.context_create().unwrap();
                    let own = screen
                        .resource_create(&ResourceTemplate::texture_2d(
                            Format::R8G8B8A8_UNORM,
                            32,
                            32,
                            BindFlags::RENDER_TARGET,
                        ))
                        .unwrap();
                    let surf = ctx
                        .create_surface(&own, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
                        .unwrap();
                    let shared_surf = ctx
                        .create_surface(shared, &SurfaceTemplate::new(Format::R8G8B8A8_UNORM))
                        .unwrap();
                    ctx.set_framebuffer_state(&FramebufferTemplate {
                        width: 32,
                        height: 32,
                        cbufs: vec![Some(surf)],
                        ..Default::default()
                    })
                    .unwrap();
                    for i in 0..100u32 {
                        let v = ((i + k) % 2) as f32;
                        ctx.clear(ClearFlags::COLOR, &ColorUnion::float([v; 4]), 0.0, 0)
                            .unwrap();
                        ctx.clear_render_target(
                            shared_surf,
                            &ColorUnion::float([v, 0.0, 0.0, 1.0]),
                            0,
                            0,
                            64,
                            64,
                            false,
                        )
                        .unwrap();
                        let t = ctx
                            .transfer_map(
                                &own,
                                0,
                                TransferFlags::READ,
                                &PipeBox::new_2d(0, 0, 32, 32),
                            )
                            .unwrap();
                        let want = (v * 255.0) as u8;
                        assert!(t.data().iter().all(|&b| b == want));
                        // Every pixel of the shared texture is one of the
                        // two clear colours: clears are never torn.
                        let t2 = ctx
                            .transfer_map(
                                shared,
                                0,
                                TransferFlags::READ,
                                &PipeBox::new_2d(0, 0, 64, 64),
                            )
                            .unwrap();
                        let first = t2.data()[0];
                        assert!(t2.data().chunks(4).all(|p| p == [first, 0, 0, 255]));
                        ctx.transfer_unmap(t).unwrap();
                        ctx.transfer_unmap(t2).unwrap();
                    }
                });
            }
        });
        assert_eq!(screen.resource_usage().0, 1);
    }
}
