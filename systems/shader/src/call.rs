//! What one call of a lane program reads and writes ([`CallIo`]).  The
//! stages' runners (`lib.rs`, `compute.rs`) build it; both back ends read
//! it: the interpreter (`exec.rs`) and the JIT's regions (`jit/`), so it
//! stands below both rather than inside either.

use ferropipe_components::shader::{Lanes, ShaderResources};

use crate::memory::ComputeCall;

/// The data of one `run` call, independent of the stage.
pub struct CallIo<'a, 'r> {
    pub resources: &'a ShaderResources<'r>,
    /// Registers per value in `inputs` / `outputs` (all chunks).
    pub groups: usize,
    /// `[slot][component][group]`.
    pub inputs: &'a [Lanes],
    /// FS: `[component][group]`.
    pub frag_coord: &'a [Lanes],
    /// VS: per group.
    pub vertex_id: &'a [Lanes],
    pub instance_id: &'a [Lanes],
    /// `[slot][component][group]`.
    pub outputs: &'a mut [Lanes],
    /// FS: live mask per group (discard clears lanes).
    pub live: Option<&'a mut [Lanes]>,
    /// VS: number of real lanes (the rest is padding).  CS: invocations
    /// of the workgroup.
    pub count: usize,
    /// CS: the workgroup's memory and ids; VS and FS: their shader buffers
    /// and images ([`ComputeCall::graphics`]), or `None` when the program
    /// has no memory ops.
    pub compute: Option<&'a ComputeCall<'r>>,
}
