//! ferropipe-profiling: the one place that knows puffin.
//!
//! Systems open scopes with [`scope!`] (a puffin scope when profiling is on,
//! one relaxed atomic load when it is off) at system and tile-job
//! granularity, never per pixel: a puffin scope costs tens of nanoseconds.

pub use puffin;

/// Opens a profiling scope for the rest of the enclosing block.
///
/// `scope!("rasterize_tile")` or `scope!("shade", format!("{n} px"))`.
#[macro_export]
macro_rules! scope {
    ($name:expr) => {
        $crate::puffin::profile_scope!($name);
    };
    ($name:expr, $data:expr) => {
        $crate::puffin::profile_scope!($name, $data);
    };
}

/// Turns scope collection on or off for the whole process.
pub fn set_enabled(enabled: bool) {
    puffin::set_scopes_on(enabled);
}

/// Whether scopes are being collected.
pub fn is_enabled() -> bool {
    puffin::are_scopes_on()
}

/// Marks the end of a frame for the profiler UI.
pub fn new_frame() {
    puffin::GlobalProfiler::lock().new_frame();
}
