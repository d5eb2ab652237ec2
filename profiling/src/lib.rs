//! ferropipe-profiling: the one place that knows puffin.
//!
//! Two instruments, both cheap enough to leave in release builds:
//!
//! * **Scopes** ([`scope!`]) for puffin's flamegraph: a puffin scope when
//!   profiling is on, one relaxed atomic load when it is off.  Open them at
//!   system and tile-job granularity, never per pixel: a puffin scope costs
//!   tens of nanoseconds.
//! * **Counters** ([`Counter`], [`CounterSet`]): monotonically increasing totals
//!   (primitives in / after clipping / after culling, fragments shaded and
//!   killed, tiles touched, time per stage) that the pipeline accumulates
//!   in plain integers per job or tile and commits once per system run.  The demo
//!   overlay reads them per frame; the engine exposes them as Gallium driver
//!   queries (`get_driver_query_info` / `get_driver_query_group_info`,
//!   screen.rst).  See `docs/profiling.md` for what each stage reports.
//!
//! Optional features keep hosts that do not want them free of their
//! dependencies: `server` (a `puffin_http` server `puffin_viewer` attaches
//! to) and `egui` (the flamegraph panel, `puffin_egui`).
#![warn(missing_docs)]

// Everything public in it is re-exported below.
mod counters;

pub use counters::{
    Counter, CounterDesc, CounterGroup, CounterResultType, CounterSet, CounterUnit, Counts, Stage,
    StageTimer, global,
};
pub use puffin;

#[cfg(feature = "egui")]
pub use puffin_egui;

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

/// A running `puffin_http` server; stops when dropped.
#[cfg(feature = "server")]
pub struct ProfileServer {
    _server: puffin_http::Server,
    addr: String,
}

#[cfg(feature = "server")]
impl ProfileServer {
    /// Starts serving profile frames on `addr` (`127.0.0.1:8585` is
    /// `puffin_viewer`'s default) and turns scope collection on.
    pub fn start(addr: &str) -> Result<Self, String> {
        let server = puffin_http::Server::new(addr).map_err(|e| format!("{addr}: {e:#}"))?;
        set_enabled(true);
        Ok(ProfileServer {
            _server: server,
            addr: addr.to_owned(),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> &str {
        &self.addr
    }
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use std::io::Read;
    use std::time::{Duration, Instant};

    #[test]
    fn profile_server_streams_frames_to_a_client() {
        // A free loopback port (released just before the server binds it).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let server = super::ProfileServer::start(&addr).expect("server starts");
        assert_eq!(server.addr(), addr);
        let mut client = std::net::TcpStream::connect(&addr).expect("client connects");
        client
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let start = Instant::now();
        let mut got = Vec::new();
        while got.len() < 2 && start.elapsed() < Duration::from_secs(20) {
            {
                crate::scope!("server_test_frame");
                std::hint::black_box(0);
            }
            super::new_frame();
            let mut buf = [0u8; 64];
            if let Ok(n) = client.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
        }
        assert!(got.len() >= 2, "no frame arrived");
        // Every packet starts with puffin_http's protocol version.
        assert_eq!(
            u16::from_le_bytes([got[0], got[1]]),
            puffin_http::PROTOCOL_VERSION
        );
    }
}
