//! Texture sampling (llvmpipe: `lp_bld_sample*.c`, softpipe: `sp_tex_sample.c`).
//!
//! Not reachable yet: the lowering reports texture built-ins as
//! `Unsupported` until the sampler lands, so these entry points exist only
//! to keep the executor's op set complete.

use ferropipe_components::shader::{Lanes, ShaderResources};

use crate::ir::{TexOp, TexQuery};

/// Runs a texture access for every group of the chunk.
pub fn exec_texture(
    _t: &TexOp,
    _file: &mut [Lanes],
    _nu: usize,
    _groups: usize,
    _res: &ShaderResources<'_>,
) {
}

/// Runs a texture query.
pub fn exec_query(
    _q: &TexQuery,
    _file: &mut [Lanes],
    _nu: usize,
    _groups: usize,
    _res: &ShaderResources<'_>,
) {
}
