//! ferropipe-components: the data of a Gallium driver, and nothing else.
//!
//! **Architecture invariant:** this crate depends on nothing in the
//! workspace.  It holds the Gallium vocabulary (enums, formats, CSO structs),
//! the ECS components that make resources, CSOs, views and surfaces entities,
//! the shader interface, and the structure-of-arrays batch types the pipeline
//! systems pass between stages.  Behaviour lives in `ferropipe-systems`
//! (pipeline stages), `ferropipe-shader` (shader execution, sampling) and
//! `ferropipe` (the Gallium façade); the only code here is what is intrinsic
//! to the data, such as format packing.
#![warn(missing_docs)]

pub mod batch;
pub mod caps;
pub mod cso;
pub mod draw;
pub mod enums;
pub mod format;
pub mod pack;
pub mod resource;
pub mod shader;
pub mod simd;
pub mod state;
pub mod view;

pub use caps::{Cap, CapF, ComputeCap, ShaderCap};
pub use enums::*;
pub use format::{ChannelType, Format, FormatDesc, FormatKind};
