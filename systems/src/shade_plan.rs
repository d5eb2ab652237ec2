//! The shade stage's plan (draw's `draw_vs` output mapping): where the
//! outputs the later stages look for are, and which ones
//! `clamp_vertex_color` clamps.  Derived from the vertex shader and the
//! rasterizer's `clamp_vertex_color`, and from nothing else; plans.rs
//! caches it across draws and flushes.

use ferropipe_components::shader::{Semantic, ShaderInfo, VertexShaderRef};
use ferropipe_components::state::RasterizerState;

/// What the shade stage derives from the vertex shader and the rasterizer
/// state (draw's `draw_vs` output mapping): where the outputs the later
/// stages look for are, and which outputs to clamp.  Cached with the rest
/// of a block's plans (plans.rs).
#[derive(Clone, Debug)]
pub struct ShadePlan {
    /// The vertex shader's interface.
    pub vs_info: ShaderInfo,
    /// VS output slot of the position (`None`: the shader writes none and
    /// nothing is drawn).
    pub pos_slot: Option<usize>,
    /// VS output slot of the point size, when the shader writes one (points
    /// read it with `point_size_per_vertex`).
    pub psize_slot: Option<usize>,
    /// VS output slots that `clamp_vertex_color` clamps (COLOR/BCOLOR).
    pub clamp_slots: Vec<usize>,
    /// `VertexShader::writes_all_outputs`: the output lanes need no
    /// clearing before a call.
    pub writes_all_outputs: bool,
}

impl ShadePlan {
    /// The plan of `vs` under `rast` (only `clamp_vertex_color` is read).
    pub fn derive(vs: &VertexShaderRef, rast: &RasterizerState) -> Self {
        let vs_info = vs.info().clone();
        let clamp_slots = if rast.clamp_vertex_color {
            vs_info
                .outputs
                .iter()
                .enumerate()
                .filter(|(_, o)| matches!(o.semantic, Semantic::Color(_) | Semantic::BColor(_)))
                .map(|(i, _)| i)
                .collect()
        } else {
            Vec::new()
        };
        ShadePlan {
            pos_slot: vs_info.output_slot(Semantic::Position),
            psize_slot: vs_info.output_slot(Semantic::PointSize),
            clamp_slots,
            writes_all_outputs: vs.writes_all_outputs(),
            vs_info,
        }
    }
}
