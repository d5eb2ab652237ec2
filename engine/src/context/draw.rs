//! Drawing and flushing (context.rst "Drawing", "Flushing").
//!
//! `draw_vbo` records; `flush` runs the pipeline schedule over everything
//! recorded since the last flush.

use ferropipe_components::draw::DrawInfo;

use super::Context;
use crate::error::{Error, Result};

/// `struct pipe_fence_handle`: signalled once the flushed work is done.
///
/// ferropipe executes a flush before returning, so fences are signalled on
/// creation; the type exists so hosts are written against Gallium's model.
#[derive(Clone, Debug)]
pub struct Fence {
    _private: (),
}

impl Fence {
    /// Whether the work before the fence has finished.
    pub fn is_signalled(&self) -> bool {
        true
    }

    /// Blocks until the work before the fence has finished.
    pub fn wait(&self) {}
}

impl Context {
    /// `draw_vbo`.
    pub fn draw_vbo(&mut self, info: &DrawInfo) -> Result<()> {
        let _ = info;
        Err(Error::unsupported("draw_vbo", "drawing"))
    }

    /// `flush`: executes all recorded work and returns a fence.
    pub fn flush(&mut self) -> Result<Fence> {
        self.flush_recorded()?;
        Ok(Fence { _private: () })
    }

    /// Executes recorded work, if any.  Called by every operation that
    /// touches resources outside the recorded command stream (transfers,
    /// copies, clears of unbound surfaces, query results, framebuffer
    /// changes), so they observe draws in submission order.
    pub(crate) fn flush_recorded(&mut self) -> Result<()> {
        Ok(())
    }
}
