//! The ferropipe demo as a library: the window (`app`), the headless
//! renderer (`headless`), and the pieces both use — showcase scenes with
//! Rust-native shaders, the Gallium plumbing (`gfx`), and the settings the
//! side panel edits.  The `demo` binary (`main.rs`) is the command line on
//! top; the tests and examples use the library directly.

pub mod app;
pub mod camera;
pub mod cli;
pub mod gfx;
pub mod headless;
pub mod logger;
pub mod mesh;
/// The overdraw heat-map: the user pipeline system of
/// `examples/custom_system.rs`, compiled in here so the demo's *Overdraw*
/// toggle shows it (one source, so the example is what the demo runs).
#[path = "../../examples/custom_system.rs"]
pub mod overdraw;
pub mod render;
pub mod scenes;
pub mod settings;
pub mod shaders;
pub mod texture;
pub mod view;
