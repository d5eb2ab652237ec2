//! Compute (llvmpipe's counterpart: `lp_state_cs.c`, `llvmpipe_launch_grid`
//! and the shader-buffer / image binding of `lp_context.c`): compute-state
//! CSOs, `set_shader_buffers`, `set_shader_images`, the compute stage's
//! constant buffers, sampler views and samplers, and `launch_grid`
//! (context.rst "Compute kernel execution").
//!
//! Memory kinds (context.rst) map to WGSL as docs/shaders.md "Compute"
//! says: GLOBAL is the shader buffers (`@group(3)`) and the global
//! bindings of `set_global_binding` (`@group(6)`, with 32-bit handles, see
//! [`Context::set_global_binding`]), LOCAL `var<workgroup>`, PRIVATE
//! `var<private>` and function variables, INPUT the launch's `input`
//! bytes read as `@group(5) @binding(0) var<uniform>`.
//!
//! `launch_grid` validates everything here (typed errors naming the field),
//! executes recorded draws first so the kernel sees them, then runs the
//! grid synchronously on the screen's pool (`ferropipe_systems::compute`),
//! as llvmpipe waits for its compute thread pool: later draws, transfers
//! and readbacks see the kernel's writes.

use std::sync::Arc;

use bevy_ecs::resource::Resource as EcsResource;
use ferropipe_components::batch::StageResources;
use ferropipe_components::enums::{BindFlags, ImageAccess, ShaderType, TextureTarget};
use ferropipe_components::format::Format;
use ferropipe_shader::{
    MAX_GLOBAL_BINDINGS, MAX_SHADER_BUFFERS, MAX_SHADER_IMAGES, MAX_SHARED_BYTES,
};
use ferropipe_shader::{MAX_WORKGROUP_INVOCATIONS, MAX_WORKGROUP_SIZE};
use ferropipe_systems::compute::{
    ComputeDispatch, ComputeGrid, ComputeOutcome, ComputeShaderCso, ShaderBufferBinding,
    ShaderImageBinding,
};

use super::checks::{check_storage_access, resolve_stage, slot_range};
use super::{
    ConstantBufferSlots, Context, Handle, SamplerSlots, SamplerViewSlots, ShaderCode,
    SurfaceHandle, views,
};
use crate::caps::{
    self, MAX_GLOBAL_BUFFER_SIZE, MAX_GRID_SIZE, MAX_INPUT_SIZE, MAX_SHADER_BUFFER_SIZE,
};
use crate::error::{
    BindError, ComputeError, Error, ResourceError, Result, StorageError, StorageKind,
};
use crate::screen::Resource;

/// Handle to a compute-state CSO.
pub type CsHandle = Handle<ComputeShaderCso>;

/// `struct pipe_compute_state` for source-code kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeState {
    /// WGSL or GLSL source with a `@compute` entry point.
    pub code: ShaderCode,
    /// `static_shared_mem` (`req_local_mem`): LOCAL bytes reserved on top
    /// of the shader's own `var<workgroup>` variables.
    pub req_local_mem: u32,
    /// `req_input_mem`: bytes of INPUT every launch must pass.
    pub req_input_mem: u32,
}

/// One `set_shader_buffers` slot (`struct pipe_shader_buffer`).
#[derive(Clone, Copy, Debug)]
pub struct ShaderBuffer<'a> {
    /// The buffer bound.
    pub buffer: &'a Resource,
    /// Byte offset, a multiple of `PIPE_CAP_SHADER_BUFFER_OFFSET_ALIGNMENT`
    /// (4).
    pub offset: u32,
    /// Bytes, at most `PIPE_CAP_MAX_SHADER_BUFFER_SIZE`.
    pub size: u32,
}

/// One `set_shader_images` slot (`struct pipe_image_view`).
///
/// Of a texture, `level` and `first_layer..=last_layer` choose what the
/// kernel sees (cube and cube-array faces are layers: WGSL has no cube
/// storage textures, so a kernel declares `texture_storage_2d_array` and
/// indexes faces, `6 * cube + face`).  Of a buffer (a *buffer image*,
/// `texture_storage_1d` in WGSL), `offset` and `size` do, in bytes, as
/// Gallium's `u.buf`; the other view's fields are ignored, as the other
/// member of Gallium's union.
#[derive(Clone, Copy, Debug)]
pub struct ImageView<'a> {
    /// The texture or buffer viewed.
    pub resource: &'a Resource,
    /// Texel format (4-, 8- or 16-byte texels; for a texture
    /// size-compatible with the resource's format, as sampler views).
    pub format: Format,
    /// Textures: the mip level.
    pub level: u32,
    /// Textures: the first layer.
    pub first_layer: u32,
    /// Textures: the last layer, inclusive.
    pub last_layer: u32,
    /// Buffer images: first byte (a multiple of 4).
    pub offset: u32,
    /// Buffer images: bytes viewed; the image is `size / texel bytes`
    /// texels wide.
    pub size: u32,
    /// `PIPE_IMAGE_ACCESS_READ` and/or `_WRITE`: what shaders may do with
    /// the image.  A draw or launch whose shader loads from it without
    /// `READ` or stores to it without `WRITE` is a `StorageError::ImageAccess`
    /// naming `access`; an empty mask is refused here.
    pub access: ImageAccess,
}

/// `struct pipe_grid_info`.
#[derive(Clone, Copy, Debug, Default)]
pub struct GridInfo<'a> {
    /// Entry offset for native IR; must be 0 (entry points are named).
    pub pc: u32,
    /// INPUT memory (`@group(5) @binding(0)`), at least `req_input_mem`
    /// bytes, at most `PIPE_COMPUTE_CAP_MAX_INPUT_SIZE`.
    pub input: &'a [u8],
    /// Extra LOCAL bytes for this launch.
    pub variable_shared_mem: u32,
    /// OpenCL's work dimension, 1 to 3 (informative: the grid is 3D).
    pub work_dim: u32,
    /// Invocations per workgroup; must equal the shader's
    /// `@workgroup_size` (`PIPE_COMPUTE_CAP_MAX_VARIABLE_THREADS_PER_BLOCK`
    /// is 0).
    pub block: [u32; 3],
    /// Partial last blocks (`PIPE_CAP_COMPUTE_GRID_INFO_LAST_BLOCK`):
    /// where `last_block[d]` is not 0, the last workgroup along dimension
    /// `d` runs only the invocations whose `local_invocation_id[d]` is
    /// below it; the others never run (no writes, and barriers wait for
    /// the running ones only).  At most `block[d]`.  `workgroup_id`,
    /// `num_workgroups` and the invocation ids keep their full-block
    /// values.
    pub last_block: [u32; 3],
    /// Workgroups per dimension.  A zero dimension launches nothing (GL's
    /// and Vulkan's rule for empty dispatches).
    pub grid: [u32; 3],
    /// Added to every `workgroup_id`.
    pub grid_base: [u32; 3],
    /// Indirect launch: three `u32` grid sizes read from this buffer at
    /// this byte offset (a multiple of 4) at launch time.
    pub indirect: Option<(&'a Resource, u32)>,
}

/// Bit 31 of every global handle: no handle is 0, the null pointer.
pub const GLOBAL_HANDLE_VALID: u32 = 1 << 31;
/// Bits 27..30 of a global handle hold the global slot.
pub const GLOBAL_HANDLE_SLOT_SHIFT: u32 = 27;
// The offset bits below the slot address every byte of the largest global
// buffer (`caps::MAX_GLOBAL_BUFFER_SIZE`, 128 MiB).
const _: () = assert!(MAX_GLOBAL_BUFFER_SIZE == 1 << GLOBAL_HANDLE_SLOT_SHIFT);
/// Bits 0..26 of a global handle hold a byte offset in the slot's buffer.
pub const GLOBAL_HANDLE_OFFSET_MASK: u32 = (1 << GLOBAL_HANDLE_SLOT_SHIFT) - 1;

/// The GLOBAL address of byte 0 of global slot `slot` (what
/// [`Context::set_global_binding`] returns): `GLOBAL_HANDLE_VALID | slot
/// << 27`.  A kernel gets handles (plus byte offsets, as pointer
/// arithmetic) through INPUT as `u32`s and decodes them with
/// `(h >> 27u) & 15u` (the slot, whose buffer it declares as
/// `@group(6) @binding(slot)`) and `h & 0x7ffffffu` (the byte offset);
/// docs/shaders.md "Compute" has an example.
pub const fn global_handle(slot: u32) -> u32 {
    GLOBAL_HANDLE_VALID | (slot << GLOBAL_HANDLE_SLOT_SHIFT)
}

/// What is bound to the compute stage (its own resource: the draw
/// pipeline's `BoundState` never sees it).
#[derive(EcsResource, Clone)]
pub struct ComputeBindings {
    /// `bind_compute_state`.
    pub shader: Option<ComputeShaderCso>,
    /// Constant buffers, sampler views and samplers of
    /// `PIPE_SHADER_COMPUTE`.
    pub stage: StageResources,
    /// `set_shader_buffers` of the compute stage.
    pub buffers: Vec<Option<ShaderBufferBinding>>,
    /// `set_global_binding` slots: whole `PIPE_BIND_GLOBAL` buffers.
    pub globals: Vec<Option<ShaderBufferBinding>>,
    /// `set_shader_images` of the compute stage.
    pub images: Vec<Option<ShaderImageBinding>>,
}

impl Default for ComputeBindings {
    fn default() -> Self {
        ComputeBindings {
            shader: None,
            stage: StageResources::default(),
            buffers: vec![None; MAX_SHADER_BUFFERS as usize],
            globals: vec![None; MAX_GLOBAL_BINDINGS as usize],
            images: vec![None; MAX_SHADER_IMAGES as usize],
        }
    }
}

/// The slot arrays of one stage (see [`resolve_stage`]), each copied on
/// write alone: recorded state blocks keep sharing the arrays a setter
/// does not touch (a constant buffer per draw, many_draws, had copied the
/// stage's 128 sampler views and 32 samplers per call, and given every
/// block arrays of its own).
pub(crate) struct StageSlots<'a> {
    constant_buffers: &'a mut Arc<ConstantBufferSlots>,
    sampler_views: &'a mut Arc<SamplerViewSlots>,
    samplers: &'a mut Arc<SamplerSlots>,
}

impl<'a> StageSlots<'a> {
    /// The constant-buffer slots, copied on write: a shared array is copied
    /// into one of `spares` (unshared, from executed blocks) rather than a
    /// new allocation.
    pub(crate) fn constant_buffers_from(
        self,
        spares: &mut Vec<Arc<ConstantBufferSlots>>,
    ) -> &'a mut ConstantBufferSlots {
        if Arc::get_mut(self.constant_buffers).is_none()
            && let Some(mut spare) = spares.pop()
            && let Some(slots) = Arc::get_mut(&mut spare)
        {
            // Slot by slot: `clone_from` of the whole array builds a copy
            // on the stack and moves it (~2x the instructions).
            for (slot, bound) in slots.iter_mut().zip(self.constant_buffers.iter()) {
                slot.clone_from(bound);
            }
            *self.constant_buffers = spare;
        }
        Arc::make_mut(self.constant_buffers)
    }

    pub(crate) fn sampler_views(self) -> &'a mut SamplerViewSlots {
        Arc::make_mut(self.sampler_views)
    }

    pub(crate) fn samplers(self) -> &'a mut SamplerSlots {
        Arc::make_mut(self.samplers)
    }
}

/// Refuses host memory whose address is not 4-byte aligned: kernels see
/// resources as 32-bit words in place.
fn require_word_aligned(call: &'static str, field: &'static str, r: &Resource) -> Result<()> {
    let storage = &r.shared().storage;
    if storage.is_user_memory() && !(storage.read().as_ptr() as usize).is_multiple_of(4) {
        return Err(Error::unsupported(
            call,
            format!("{field}: host memory not aligned to 4 bytes"),
        ));
    }
    Ok(())
}

fn require_bind(
    call: &'static str,
    field: &'static str,
    r: &Resource,
    bind: BindFlags,
) -> Result<()> {
    if !r.template().bind.contains(bind) {
        let name = BindFlags::NAMED
            .iter()
            .find(|(_, f)| *f == bind)
            .map_or("the bind flag", |(n, _)| n);
        return Err(ResourceError::MissingBind {
            call,
            field,
            bind: name,
        }
        .into());
    }
    Ok(())
}

impl Context {
    /// `create_compute_state`: compiles the kernel now, so every error and
    /// every construct ferropipe cannot run surfaces here.
    pub fn create_compute_state(&mut self, state: &ComputeState) -> Result<CsHandle> {
        self.create_compute_state_with_overrides(state, &[])
    }

    /// `create_compute_state` with values for WGSL `override`s, which
    /// `@workgroup_size` may use (see
    /// [`Context::create_vs_state_with_overrides`]).
    pub fn create_compute_state_with_overrides(
        &mut self,
        state: &ComputeState,
        overrides: &[ferropipe_shader::OverrideValue<'_>],
    ) -> Result<CsHandle> {
        self.alive("create_compute_state")?;
        const CALL: &str = "create_compute_state";
        let (lang, code, entry) = state.code.parts();
        let shader = ferropipe_shader::compile_compute_with_backend(
            lang,
            code,
            entry,
            overrides,
            self.screen.shader_backend(),
        )
        .map_err(|source| Error::Shader { call: CALL, source })?;
        let local = u64::from(shader.info().shared_bytes) + u64::from(state.req_local_mem);
        if local > u64::from(MAX_SHARED_BYTES) {
            return Err(ComputeError::LocalMemory {
                call: CALL,
                field: "req_local_mem",
                bytes: local,
                limit: MAX_SHARED_BYTES,
            }
            .into());
        }
        if state.req_input_mem > MAX_INPUT_SIZE {
            return Err(ComputeError::InputTooLarge {
                call: CALL,
                field: "req_input_mem",
                len: state.req_input_mem.into(),
                limit: MAX_INPUT_SIZE,
            }
            .into());
        }
        self.shader_sources.add_cs(
            &shader,
            super::ShaderSource {
                code: state.code.clone(),
                semantics: Vec::new(),
                stream_output: Default::default(),
                overrides: super::capture::owned_overrides(overrides),
                req_local_mem: state.req_local_mem,
                req_input_mem: state.req_input_mem,
            },
        );
        Ok(self.spawn(ComputeShaderCso {
            shader,
            req_input_mem: state.req_input_mem,
            req_local_mem: state.req_local_mem,
        }))
    }

    /// `bind_compute_state`; `None` unbinds.
    pub fn bind_compute_state(&mut self, handle: Option<CsHandle>) -> Result<()> {
        self.alive("bind_compute_state")?;
        let cso = match handle {
            Some(h) => Some(self.get("bind_compute_state", "handle", h)?.clone()),
            None => None,
        };
        self.compute_mut().shader = cso;
        Ok(())
    }

    /// `delete_compute_state` (a bound state stays bound, as Gallium's
    /// reference counting keeps it).
    pub fn delete_compute_state(&mut self, handle: CsHandle) -> Result<()> {
        self.alive("delete_compute_state")?;
        self.despawn("delete_compute_state", handle)
    }

    /// What is bound to the compute stage.
    pub fn compute_bindings(&self) -> &ComputeBindings {
        self.world.resource::<ComputeBindings>()
    }

    pub(crate) fn compute_mut(&mut self) -> &mut ComputeBindings {
        self.world.resource_mut::<ComputeBindings>().into_inner()
    }

    /// The slot arrays of `stage` (from [`resolve_stage`]), copied on write.
    pub(crate) fn stage_slots_mut(&mut self, stage: Option<usize>) -> StageSlots<'_> {
        let (cb, sv, s) = match stage {
            Some(i) => {
                let b = self.world.resource_mut::<super::BoundState>().into_inner();
                (
                    &mut b.constant_buffers[i],
                    &mut b.sampler_views[i],
                    &mut b.samplers[i],
                )
            }
            None => {
                let st = &mut self.compute_mut().stage;
                let bindings = Arc::make_mut(&mut st.bindings);
                (
                    &mut st.constant_buffers,
                    &mut bindings.sampler_views,
                    &mut bindings.samplers,
                )
            }
        };
        StageSlots {
            constant_buffers: cb,
            sampler_views: sv,
            samplers: s,
        }
    }

    /// `set_shader_buffers` for `PIPE_SHADER_COMPUTE`, `_VERTEX` and
    /// `_FRAGMENT` (each stage has its own 32 slots): slots
    /// `start_slot..`; `None` unbinds.  Bit `i` of `writable_bitmask`
    /// lets the shader write `buffers[i]` (slot `start_slot + i`): a draw
    /// or launch whose shader stores to or runs atomics on a slot bound
    /// without it is a `StorageError::NotWritable` with the
    /// slot and the stage (checked once per draw, against the shader's
    /// [`ShaderInfo::shader_buffers_written`](crate::ShaderInfo::shader_buffers_written)).  Bits at or above
    /// `buffers.len()` name no buffer (so `!0` means "all writable").  Vertex
    /// and fragment bindings are draw state (recorded draws keep theirs);
    /// compute bindings never change what a draw uses.
    pub fn set_shader_buffers(
        &mut self,
        shader: ShaderType,
        start_slot: u32,
        buffers: &[Option<ShaderBuffer>],
        writable_bitmask: u32,
    ) -> Result<()> {
        self.alive("set_shader_buffers")?;
        let call = "set_shader_buffers";
        let stage = resolve_stage(call, shader)?;
        let mut index = 0;
        let bindings = check_slots(call, start_slot, buffers, MAX_SHADER_BUFFERS, |b| {
            let writable = writable_bitmask & 1u32.checked_shl(index).unwrap_or(0) != 0;
            index += 1;
            validate_shader_buffer(call, b, writable)
        })?;
        match stage {
            None => {
                let slots = &mut self.compute_mut().buffers;
                slots[start_slot as usize..][..bindings.len()].clone_from_slice(&bindings);
            }
            Some(i) => {
                let b = self.world.resource_mut::<super::BoundState>().into_inner();
                store_slots(
                    Arc::make_mut(&mut b.shader_buffers[i]),
                    start_slot,
                    bindings,
                );
            }
        }
        Ok(())
    }

    /// `set_global_binding` (context.rst "Compute kernel execution"):
    /// maps `PIPE_BIND_GLOBAL` buffers into the GLOBAL space, at global
    /// slots `first..`, and returns each one's GLOBAL address (0 for a
    /// `None`, which unbinds the slot).
    ///
    /// WGSL has no pointers into memory, so the mapping is a bind point
    /// plus an address convention: global slot `i` is the kernel's
    /// `@group(6) @binding(i) var<storage, …>` (the whole buffer, at most
    /// [`MAX_GLOBAL_BUFFER_SIZE`] bytes), and its address is
    /// [`global_handle`]`(i)`: bit 31 set, the slot in bits 27..30, byte
    /// offset 0 in bits 0..26 (`PIPE_COMPUTE_CAP_ADDRESS_BITS` is 32).
    /// As Gallium's callers add an argument's offset to the base address,
    /// callers add byte offsets to the handle and pass it in INPUT; the
    /// kernel decodes slot and offset (docs/shaders.md "Compute").
    /// Gallium writes the address into caller memory (`uint32_t
    /// **handles`); here it is returned.
    pub fn set_global_binding(
        &mut self,
        first: u32,
        resources: &[Option<&Resource>],
    ) -> Result<Vec<u64>> {
        self.alive("set_global_binding")?;
        const CALL: &str = "set_global_binding";
        slot_range(
            CALL,
            "first",
            first,
            resources.len(),
            MAX_GLOBAL_BINDINGS as usize,
        )?;
        let bindings = resources
            .iter()
            .map(|r| r.map(|r| validate_global(CALL, r)).transpose())
            .collect::<Result<Vec<_>>>()?;
        let handles = bindings
            .iter()
            .zip(first..)
            .map(|(b, slot)| b.as_ref().map_or(0, |_| u64::from(global_handle(slot))))
            .collect();
        let slots = &mut self.compute_mut().globals;
        slots[first as usize..][..bindings.len()].clone_from_slice(&bindings);
        Ok(handles)
    }

    /// `set_compute_resources` (context.rst "Compute kernel execution"):
    /// extra surfaces that TGSI kernels address with the same byte-based
    /// LOAD/STORE opcodes as GLOBAL.  WGSL has neither those opcodes nor
    /// any way to name such a surface — a kernel's texel memory is a
    /// typed storage texture, which [`Context::set_shader_images`] binds —
    /// so there is nothing for these surfaces to be bound to: binding is a
    /// typed `Unsupported` error; unbinding succeeds.
    pub fn set_compute_resources(
        &mut self,
        start: u32,
        surfaces: &[Option<SurfaceHandle>],
    ) -> Result<()> {
        self.alive("set_compute_resources")?;
        let _ = start;
        if surfaces.iter().any(Option::is_some) {
            return Err(Error::unsupported(
                "set_compute_resources",
                "compute resources (TGSI LOAD/STORE surfaces); bind storage images with \
                 set_shader_images instead",
            ));
        }
        Ok(())
    }

    /// `set_shader_images` for `PIPE_SHADER_COMPUTE`, `_VERTEX` and
    /// `_FRAGMENT` (32 slots each, as [`Context::set_shader_buffers`]):
    /// slots `start_slot..`; `None` unbinds.  Images are textures (cubes included, as layers)
    /// or buffers with `PIPE_BIND_SHADER_IMAGE`, viewed in a format
    /// `is_format_supported` accepts for it (see [`ImageView`]).
    /// Multisampled images are a typed `Unsupported` error: WGSL has no
    /// multisampled storage texture type.
    pub fn set_shader_images(
        &mut self,
        shader: ShaderType,
        start_slot: u32,
        images: &[Option<ImageView>],
    ) -> Result<()> {
        self.alive("set_shader_images")?;
        let call = "set_shader_images";
        let stage = resolve_stage(call, shader)?;
        let bindings = check_slots(call, start_slot, images, MAX_SHADER_IMAGES, |v| {
            validate_shader_image(call, v)
        })?;
        match stage {
            None => {
                let slots = &mut self.compute_mut().images;
                slots[start_slot as usize..][..bindings.len()].clone_from_slice(&bindings);
            }
            Some(i) => {
                let b = self.world.resource_mut::<super::BoundState>().into_inner();
                store_slots(Arc::make_mut(&mut b.shader_images[i]), start_slot, bindings);
            }
        }
        Ok(())
    }

    /// `launch_grid`: runs the bound kernel over the grid (see the module
    /// docs).  Every input is checked first; nothing runs on error.
    pub fn launch_grid(&mut self, info: &GridInfo) -> Result<()> {
        self.alive("launch_grid")?;
        const CALL: &str = "launch_grid";
        let b = self.compute_bindings();
        let Some(cso) = b.shader.clone() else {
            return Err(ComputeError::NoComputeState.into());
        };
        let ci = cso.shader.info().clone();
        if info.pc != 0 {
            return Err(ComputeError::ProgramCounter { pc: info.pc }.into());
        }
        if !(1..=3).contains(&info.work_dim) {
            return Err(ComputeError::WorkDim {
                work_dim: info.work_dim,
            }
            .into());
        }
        if info.block.contains(&0) {
            return Err(ComputeError::EmptyBlock { block: info.block }.into());
        }
        let threads: u64 = info.block.iter().map(|&v| u64::from(v)).product();
        if threads > u64::from(MAX_WORKGROUP_INVOCATIONS)
            || info
                .block
                .iter()
                .zip(MAX_WORKGROUP_SIZE)
                .any(|(b, m)| *b > m)
        {
            return Err(ComputeError::BlockTooLarge {
                block: info.block,
                max_invocations: MAX_WORKGROUP_INVOCATIONS,
                max_size: MAX_WORKGROUP_SIZE,
            }
            .into());
        }
        if info.block != ci.workgroup_size {
            return Err(ComputeError::BlockMismatch {
                block: info.block,
                workgroup_size: ci.workgroup_size,
            }
            .into());
        }
        if let Some(k) = (0..3).find(|&k| info.last_block[k] > info.block[k]) {
            return Err(ComputeError::LastBlock {
                last_block: info.last_block,
                block: info.block,
                dim: k,
            }
            .into());
        }
        if info.input.len() > MAX_INPUT_SIZE as usize {
            return Err(ComputeError::InputTooLarge {
                call: CALL,
                field: "input",
                len: info.input.len() as u64,
                limit: MAX_INPUT_SIZE,
            }
            .into());
        }
        if info.input.len() < cso.req_input_mem as usize {
            return Err(ComputeError::InputTooSmall {
                len: info.input.len(),
                required: cso.req_input_mem,
            }
            .into());
        }
        let local = u64::from(ci.shared_bytes)
            + u64::from(cso.req_local_mem)
            + u64::from(info.variable_shared_mem);
        if local > u64::from(MAX_SHARED_BYTES) {
            return Err(ComputeError::LocalMemory {
                call: CALL,
                field: "variable_shared_mem",
                bytes: local,
                limit: MAX_SHARED_BYTES,
            }
            .into());
        }
        for slot in 0..MAX_SHADER_BUFFERS {
            if ci.buffers_used & (1 << slot) != 0 && b.buffers[slot as usize].is_none() {
                return Err(StorageError::Unbound {
                    call: CALL,
                    stage: "compute",
                    kind: StorageKind::Buffer,
                    slot,
                }
                .into());
            }
        }
        for slot in 0..MAX_GLOBAL_BINDINGS {
            if ci.globals_used & (1 << slot) != 0 && b.globals[slot as usize].is_none() {
                return Err(StorageError::Unbound {
                    call: CALL,
                    stage: "compute",
                    kind: StorageKind::Global,
                    slot,
                }
                .into());
            }
        }
        for slot in 0..MAX_SHADER_IMAGES {
            if ci.images_used & (1 << slot) != 0 && b.images[slot as usize].is_none() {
                return Err(StorageError::Unbound {
                    call: CALL,
                    stage: "compute",
                    kind: StorageKind::Image,
                    slot,
                }
                .into());
            }
        }
        check_storage_access(
            CALL,
            "compute",
            &cso.shader.program().info,
            &b.buffers,
            &b.images,
        )?;
        self.record(super::CapturedCall::LaunchGrid(info));
        // draws recorded so far write what the kernel may read
        self.flush_recorded()?;
        let grid = match info.indirect {
            Some((buf, offset)) => read_indirect_grid(CALL, buf, offset)?,
            None => info.grid,
        };
        if let Some(k) = grid.iter().position(|&g| g > MAX_GRID_SIZE) {
            return Err(ComputeError::GridTooLarge {
                call: CALL,
                grid,
                dim: k,
                limit: MAX_GRID_SIZE,
            }
            .into());
        }
        if grid
            .iter()
            .zip(info.grid_base)
            .any(|(g, base)| base.checked_add(*g).is_none())
        {
            return Err(ComputeError::GridBaseOverflow {
                grid_base: info.grid_base,
                grid,
            }
            .into());
        }
        if grid.contains(&0) {
            return Ok(());
        }
        // invocations that run: full blocks, and last_block[d] in the
        // last workgroup along d
        let ran: u64 = (0..3)
            .map(|k| {
                let (g, b) = (u64::from(grid[k]), u64::from(info.block[k]));
                match info.last_block[k] {
                    0 => g * b,
                    last => (g - 1) * b + u64::from(last),
                }
            })
            .product();
        // The work budget: units (one per invocation) are known exactly
        // here, so an over-budget launch runs no workgroup at all.
        let budget = self.work_budget();
        if let Some(limit) = budget.units
            && ran > limit
        {
            let e = ferropipe_systems::BudgetExceeded::Units { needed: ran, limit };
            return Err(self.lose(CALL, e.to_string()));
        }
        let b = self.compute_bindings();
        let dispatch = ComputeDispatch {
            shader: cso.shader.clone(),
            grid,
            grid_base: info.grid_base,
            stage: b.stage.clone(),
            buffers: b.buffers.clone(),
            globals: b.globals.clone(),
            images: b.images.clone(),
            last_block: info.last_block,
            input: Arc::from(info.input),
            shared_words: local.div_ceil(4) as usize,
            deadline: budget.time.map(|t| std::time::Instant::now() + t),
        };
        self.world.insert_resource(dispatch);
        self.world.run_schedule(ComputeGrid);
        self.world.remove_resource::<ComputeDispatch>();
        if self.world.resource::<ComputeOutcome>().timed_out {
            let e = ferropipe_systems::BudgetExceeded::Time {
                limit: budget.time.unwrap_or_default(),
            };
            return Err(self.lose(CALL, e.to_string()));
        }
        self.count_compute_invocations(ran);
        if self.world.resource::<ComputeOutcome>().loop_limit {
            return Err(Error::Shader {
                call: CALL,
                source: ferropipe_shader::ShaderError::LoopLimit { stage: "compute" },
            });
        }
        if self.world.resource::<ComputeOutcome>().divergent_barrier {
            return Err(ComputeError::DivergentBarrier.into());
        }
        Ok(())
    }
}

/// The grid of an indirect launch: three `u32`s at `offset`.
fn read_indirect_grid(call: &'static str, buf: &Resource, offset: u32) -> Result<[u32; 3]> {
    let t = buf.template();
    if t.target != TextureTarget::Buffer {
        return Err(ResourceError::NotABuffer {
            call,
            field: "indirect",
            target: t.target,
        }
        .into());
    }
    if !offset.is_multiple_of(4) || u64::from(offset) + 12 > u64::from(t.width0) {
        return Err(ComputeError::IndirectOffset {
            call,
            offset,
            buffer_size: t.width0,
        }
        .into());
    }
    let bytes = buf.shared().storage.read();
    let at = offset as usize;
    Ok(std::array::from_fn(|k| {
        let o = at + 4 * k;
        bytes
            .get(o..o + 4)
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }))
}

/// A vertex or fragment stage's slots `start..` become `bindings`; the
/// list keeps only up to its last bound slot (what the tile pass prepares).
fn store_slots<B: Clone>(slots: &mut Vec<Option<B>>, start: u32, bindings: Vec<Option<B>>) {
    let end = start as usize + bindings.len();
    if slots.len() < end {
        slots.resize(end, None);
    }
    slots[start as usize..end].clone_from_slice(&bindings);
    while slots.last().is_some_and(Option::is_none) {
        slots.pop();
    }
}

/// Checks a slot range and converts each bound entry.
fn check_slots<T, B>(
    call: &'static str,
    start_slot: u32,
    items: &[Option<T>],
    slots: u32,
    mut convert: impl FnMut(&T) -> Result<B>,
) -> Result<Vec<Option<B>>> {
    slot_range(call, "start_slot", start_slot, items.len(), slots as usize)?;
    items
        .iter()
        .map(|i| i.as_ref().map(&mut convert).transpose())
        .collect()
}

/// Validates one shader buffer (`pipe_shader_buffer`).
fn validate_shader_buffer(
    call: &'static str,
    b: &ShaderBuffer,
    writable: bool,
) -> Result<ShaderBufferBinding> {
    let t = b.buffer.template();
    if t.target != TextureTarget::Buffer {
        return Err(ResourceError::NotABuffer {
            call,
            field: "buffer",
            target: t.target,
        }
        .into());
    }
    require_bind(call, "buffer", b.buffer, BindFlags::SHADER_BUFFER)?;
    check_buffer_range(
        call,
        ["buffer_offset", "buffer_offset/buffer_size", "buffer_size"],
        b.offset,
        b.size,
        t.width0,
    )?;
    require_word_aligned(call, "buffer", b.buffer)?;
    Ok(ShaderBufferBinding {
        buffer: b.buffer.shared().clone(),
        offset: b.offset,
        size: b.size,
        writable,
    })
}

/// Checks a byte range of a `width0`-byte buffer bound to a shader (a
/// shader buffer or a buffer image): offset a multiple of 4, inside the
/// buffer, at most `PIPE_CAP_MAX_SHADER_BUFFER_SIZE` bytes.  `fields`
/// names the offset, the range and the size in the caller's terms.
fn check_buffer_range(
    call: &'static str,
    fields: [&'static str; 3],
    offset: u32,
    size: u32,
    width0: u32,
) -> Result<()> {
    let [offset_field, range_field, size_field] = fields;
    if !offset.is_multiple_of(4) {
        return Err(ResourceError::Misaligned {
            call,
            field: offset_field,
            value: offset.into(),
            align: 4,
        }
        .into());
    }
    if u64::from(offset) + u64::from(size) > u64::from(width0) {
        return Err(ResourceError::RangePastEnd {
            call,
            field: range_field,
            offset: offset.into(),
            size: size.into(),
            buffer_size: width0.into(),
        }
        .into());
    }
    if size > MAX_SHADER_BUFFER_SIZE {
        return Err(ResourceError::TooLarge {
            call,
            field: size_field,
            value: size.into(),
            limit: MAX_SHADER_BUFFER_SIZE.into(),
        }
        .into());
    }
    Ok(())
}

/// Validates one `set_global_binding` buffer.
fn validate_global(call: &'static str, r: &Resource) -> Result<ShaderBufferBinding> {
    let t = r.template();
    if t.target != TextureTarget::Buffer {
        return Err(ResourceError::NotABuffer {
            call,
            field: "resources",
            target: t.target,
        }
        .into());
    }
    require_bind(call, "resources", r, BindFlags::GLOBAL)?;
    if t.width0 > MAX_GLOBAL_BUFFER_SIZE {
        return Err(ResourceError::TooLarge {
            call,
            field: "resources",
            value: t.width0.into(),
            limit: MAX_GLOBAL_BUFFER_SIZE.into(),
        }
        .into());
    }
    require_word_aligned(call, "resources", r)?;
    Ok(ShaderBufferBinding {
        buffer: r.shared().clone(),
        offset: 0,
        size: t.width0,
        // GLOBAL memory has no read-only binding
        writable: true,
    })
}

/// Checks a view format for `PIPE_BIND_SHADER_IMAGE` on `target`.
fn check_image_format(call: &'static str, format: Format, target: TextureTarget) -> Result<()> {
    caps::format_support(format, target, 0, 0, BindFlags::SHADER_IMAGE).map_err(|e| {
        if e.unimplemented {
            Error::unsupported(call, e.what)
        } else {
            ResourceError::FormatNotSupported {
                call,
                field: "format",
                format,
                reason: e.what,
            }
            .into()
        }
    })
}

/// Validates a buffer image (`pipe_image_view::u.buf`).
fn validate_buffer_image(call: &'static str, v: &ImageView) -> Result<ShaderImageBinding> {
    let t = v.resource.template();
    check_image_format(call, v.format, TextureTarget::Buffer)?;
    check_buffer_range(
        call,
        ["offset", "offset/size", "size"],
        v.offset,
        v.size,
        t.width0,
    )?;
    require_word_aligned(call, "resource", v.resource)?;
    Ok(ShaderImageBinding {
        resource: v.resource.shared().clone(),
        format: v.format,
        level: 0,
        first_layer: 0,
        last_layer: 0,
        buffer_range: Some((v.offset, v.size)),
        access: v.access,
    })
}

/// Validates one image view (`pipe_image_view`).
fn validate_shader_image(call: &'static str, v: &ImageView) -> Result<ShaderImageBinding> {
    let t = v.resource.template();
    require_bind(call, "resource", v.resource, BindFlags::SHADER_IMAGE)?;
    if !v.access.intersects(ImageAccess::READ_WRITE) {
        return Err(BindError::ImageAccessNone { call }.into());
    }
    if t.target == TextureTarget::Buffer {
        return validate_buffer_image(call, v);
    }
    check_image_format(call, v.format, t.target)?;
    if !views::formats_compatible(t.format, v.format) {
        return Err(ResourceError::FormatIncompatible {
            call,
            field: "format",
            format: v.format,
            resource_format: t.format,
        }
        .into());
    }
    if t.nr_samples > 1 {
        return Err(Error::unsupported(
            call,
            "multisampled images (WGSL has no multisampled storage textures)",
        ));
    }
    if v.level > t.last_level {
        return Err(ResourceError::LevelOutOfRange {
            call,
            field: "level",
            level: v.level,
            last_level: t.last_level,
        }
        .into());
    }
    let layers = v.resource.layout().levels[v.level as usize].depth;
    if t.target != TextureTarget::Texture3D
        && (v.first_layer > v.last_layer || v.last_layer >= layers)
    {
        return Err(ResourceError::LayersOutOfRange {
            call,
            first: v.first_layer,
            last: v.last_layer,
            layers,
        }
        .into());
    }
    require_word_aligned(call, "resource", v.resource)?;
    Ok(ShaderImageBinding {
        resource: v.resource.shared().clone(),
        format: v.format,
        level: v.level,
        first_layer: v.first_layer,
        last_layer: v.last_layer,
        buffer_range: None,
        access: v.access,
    })
}
