//! CSO triplets: `create_*_state`, `bind_*_state`, `delete_*_state`
//! (context.rst "CSO State").
//!
//! A CSO is validated once at creation, stored as an `Arc` in an entity,
//! and bound by cloning the `Arc` into [`BoundState`](super::BoundState).
//! Deleting a CSO despawns its entity; bindings and recorded draws keep
//! their `Arc`.  Vertex and fragment shader CSOs live in `shader.rs`;
//! geometry and tessellation shaders are refused here with a typed
//! [`Error::Unsupported`].

use std::sync::Arc;

use ferropipe_components::cso::{
    BlendCso, DepthStencilAlphaCso, RasterizerCso, SamplerCso, VertexElementsCso,
};
use ferropipe_components::enums::{BindFlags, ShaderType, TextureTarget};
use ferropipe_components::state::{
    BlendState, DepthStencilAlphaState, MAX_ATTRIBS, MAX_SAMPLERS, MAX_VERTEX_BUFFERS,
    RasterizerState, SamplerState, VertexElement,
};

use super::checks::{resolve_stage, slot_range};
use super::{
    BlendHandle, Context, DsaHandle, RasterizerHandle, SamplerHandle, VertexElementsHandle,
};
use crate::caps;
use crate::error::{Error, Result, StateError};

/// Checks that every listed float is finite.
fn finite(call: &'static str, fields: &[(&'static str, f32)]) -> Result<()> {
    for &(field, v) in fields {
        if !v.is_finite() {
            return Err(StateError::NotFinite {
                call,
                field,
                value: v,
            }
            .into());
        }
    }
    Ok(())
}

impl Context {
    /// `create_blend_state`.
    pub fn create_blend_state(&mut self, state: &BlendState) -> Result<BlendHandle> {
        self.alive("create_blend_state")?;
        for rt in &state.rt {
            if rt.colormask > 0xf {
                return Err(StateError::ValueTooLarge {
                    call: "create_blend_state",
                    field: "colormask",
                    value: rt.colormask.into(),
                    limit: 0xf,
                }
                .into());
            }
        }
        Ok(self.spawn(BlendCso(Arc::new(state.clone()))))
    }

    /// `bind_blend_state`; `None` unbinds.
    pub fn bind_blend_state(&mut self, handle: Option<BlendHandle>) -> Result<()> {
        self.alive("bind_blend_state")?;
        let state = match handle {
            Some(h) => Some(self.get("bind_blend_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().blend = state;
        Ok(())
    }

    /// `delete_blend_state`.  A draw already recorded keeps its snapshot.
    pub fn delete_blend_state(&mut self, handle: BlendHandle) -> Result<()> {
        self.alive("delete_blend_state")?;
        self.despawn("delete_blend_state", handle)
    }

    /// `create_depth_stencil_alpha_state`.
    pub fn create_depth_stencil_alpha_state(
        &mut self,
        state: &DepthStencilAlphaState,
    ) -> Result<DsaHandle> {
        self.alive("create_depth_stencil_alpha_state")?;
        finite(
            "create_depth_stencil_alpha_state",
            &[
                ("depth_bounds_min", state.depth_bounds_min),
                ("depth_bounds_max", state.depth_bounds_max),
                ("alpha_ref_value", state.alpha_ref_value),
            ],
        )?;
        Ok(self.spawn(DepthStencilAlphaCso(Arc::new(*state))))
    }

    /// `bind_depth_stencil_alpha_state`; `None` unbinds.
    pub fn bind_depth_stencil_alpha_state(&mut self, handle: Option<DsaHandle>) -> Result<()> {
        self.alive("bind_depth_stencil_alpha_state")?;
        let state = match handle {
            Some(h) => Some(
                self.get("bind_depth_stencil_alpha_state", "handle", h)?
                    .0
                    .clone(),
            ),
            None => None,
        };
        self.bound_mut().depth_stencil_alpha = state;
        Ok(())
    }

    /// `delete_depth_stencil_alpha_state`.
    pub fn delete_depth_stencil_alpha_state(&mut self, handle: DsaHandle) -> Result<()> {
        self.alive("delete_depth_stencil_alpha_state")?;
        self.despawn("delete_depth_stencil_alpha_state", handle)
    }

    /// `create_rasterizer_state`.
    pub fn create_rasterizer_state(&mut self, state: &RasterizerState) -> Result<RasterizerHandle> {
        self.alive("create_rasterizer_state")?;
        const CALL: &str = "create_rasterizer_state";
        finite(
            CALL,
            &[
                ("offset_units", state.offset_units),
                ("offset_scale", state.offset_scale),
                ("offset_clamp", state.offset_clamp),
                ("line_width", state.line_width),
                ("point_size", state.point_size),
                (
                    "conservative_raster_dilate",
                    state.conservative_raster_dilate,
                ),
            ],
        )?;
        if state.line_width < 0.0 {
            return Err(StateError::Negative {
                call: CALL,
                field: "line_width",
                value: state.line_width,
            }
            .into());
        }
        if state.point_size < 0.0 {
            return Err(StateError::Negative {
                call: CALL,
                field: "point_size",
                value: state.point_size,
            }
            .into());
        }
        Ok(self.spawn(RasterizerCso(Arc::new(*state))))
    }

    /// `bind_rasterizer_state`; `None` unbinds.
    pub fn bind_rasterizer_state(&mut self, handle: Option<RasterizerHandle>) -> Result<()> {
        self.alive("bind_rasterizer_state")?;
        let state = match handle {
            Some(h) => Some(self.get("bind_rasterizer_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().rasterizer = state;
        Ok(())
    }

    /// `delete_rasterizer_state`.
    pub fn delete_rasterizer_state(&mut self, handle: RasterizerHandle) -> Result<()> {
        self.alive("delete_rasterizer_state")?;
        self.despawn("delete_rasterizer_state", handle)
    }

    /// `create_sampler_state`.
    pub fn create_sampler_state(&mut self, state: &SamplerState) -> Result<SamplerHandle> {
        self.alive("create_sampler_state")?;
        const CALL: &str = "create_sampler_state";
        finite(
            CALL,
            &[
                ("lod_bias", state.lod_bias),
                ("min_lod", state.min_lod),
                ("max_lod", state.max_lod),
            ],
        )?;
        if state.border_color.iter().any(|c| c.is_nan()) {
            return Err(StateError::Nan {
                call: CALL,
                field: "border_color",
            }
            .into());
        }
        if state.max_anisotropy > 16 {
            return Err(StateError::ValueTooLarge {
                call: CALL,
                field: "max_anisotropy",
                value: state.max_anisotropy.into(),
                limit: 16,
            }
            .into());
        }
        Ok(self.spawn(SamplerCso(Arc::new(*state))))
    }

    /// `bind_sampler_states`: binds `samplers` to slots
    /// `start_slot..start_slot + samplers.len()` of `shader`; `None` entries
    /// unbind.  Other slots keep their samplers.
    pub fn bind_sampler_states(
        &mut self,
        shader: ShaderType,
        start_slot: u32,
        samplers: &[Option<SamplerHandle>],
    ) -> Result<()> {
        self.alive("bind_sampler_states")?;
        const CALL: &str = "bind_sampler_states";
        let stage = resolve_stage(CALL, shader)?;
        slot_range(CALL, "start_slot", start_slot, samplers.len(), MAX_SAMPLERS)?;
        let mut states = Vec::with_capacity(samplers.len());
        for s in samplers {
            states.push(match s {
                Some(h) => Some(self.get(CALL, "samplers", *h)?.0.clone()),
                None => None,
            });
        }
        let slots = self.stage_slots_mut(stage).samplers();
        for (i, s) in states.into_iter().enumerate() {
            slots[start_slot as usize + i] = s;
        }
        Ok(())
    }

    /// `delete_sampler_state`.
    pub fn delete_sampler_state(&mut self, handle: SamplerHandle) -> Result<()> {
        self.alive("delete_sampler_state")?;
        self.despawn("delete_sampler_state", handle)
    }

    /// `create_vertex_elements_state`: element `i` feeds vertex shader input
    /// `@location(i)`.  Formats must be vertex-fetchable, buffer indices and
    /// offsets within the caps.
    pub fn create_vertex_elements_state(
        &mut self,
        elements: &[VertexElement],
    ) -> Result<VertexElementsHandle> {
        self.alive("create_vertex_elements_state")?;
        const CALL: &str = "create_vertex_elements_state";
        if elements.len() > MAX_ATTRIBS {
            return Err(StateError::ValueTooLarge {
                call: CALL,
                field: "elements",
                value: elements.len() as u64,
                limit: MAX_ATTRIBS as u64,
            }
            .into());
        }
        for e in elements {
            if e.vertex_buffer_index as usize >= MAX_VERTEX_BUFFERS {
                return Err(StateError::ValueTooLarge {
                    call: CALL,
                    field: "vertex_buffer_index",
                    value: e.vertex_buffer_index.into(),
                    limit: MAX_VERTEX_BUFFERS as u64 - 1,
                }
                .into());
            }
            let max_offset =
                caps::get_param(ferropipe_components::Cap::MaxVertexElementSrcOffset) as u32;
            if e.src_offset > max_offset {
                return Err(StateError::ValueTooLarge {
                    call: CALL,
                    field: "src_offset",
                    value: e.src_offset.into(),
                    limit: max_offset.into(),
                }
                .into());
            }
            if let Err(why) = caps::format_support(
                e.src_format,
                TextureTarget::Buffer,
                0,
                0,
                BindFlags::VERTEX_BUFFER,
            ) {
                return Err(StateError::VertexFormat {
                    format: e.src_format,
                    reason: why.what,
                }
                .into());
            }
        }
        Ok(self.spawn(VertexElementsCso(Arc::from(elements))))
    }

    /// `bind_vertex_elements_state`; `None` unbinds.
    pub fn bind_vertex_elements_state(
        &mut self,
        handle: Option<VertexElementsHandle>,
    ) -> Result<()> {
        self.alive("bind_vertex_elements_state")?;
        let state = match handle {
            Some(h) => Some(
                self.get("bind_vertex_elements_state", "handle", h)?
                    .0
                    .clone(),
            ),
            None => None,
        };
        self.bound_mut().vertex_elements = state;
        Ok(())
    }

    /// `delete_vertex_elements_state`.
    pub fn delete_vertex_elements_state(&mut self, handle: VertexElementsHandle) -> Result<()> {
        self.alive("delete_vertex_elements_state")?;
        self.despawn("delete_vertex_elements_state", handle)
    }

    /// `create_gs_state`: geometry shaders are not implemented
    /// (`PIPE_SHADER_CAP_MAX_INSTRUCTIONS` is 0 for the stage).
    pub fn create_gs_state(&mut self, state: &super::ShaderState) -> Result<()> {
        self.alive("create_gs_state")?;
        let _ = state;
        Err(Error::unsupported("create_gs_state", "geometry shaders"))
    }

    /// `create_tcs_state`: tessellation is not implemented.
    pub fn create_tcs_state(&mut self, state: &super::ShaderState) -> Result<()> {
        self.alive("create_tcs_state")?;
        let _ = state;
        Err(Error::unsupported(
            "create_tcs_state",
            "tessellation control shaders",
        ))
    }

    /// `create_tes_state`: tessellation is not implemented.
    pub fn create_tes_state(&mut self, state: &super::ShaderState) -> Result<()> {
        self.alive("create_tes_state")?;
        let _ = state;
        Err(Error::unsupported(
            "create_tes_state",
            "tessellation evaluation shaders",
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::error::{BindError, StateError};
    use crate::{Error, Screen, ScreenConfig};
    use ferropipe_components::enums::ShaderType;
    use ferropipe_components::format::Format;
    use ferropipe_components::state::*;

    fn ctx() -> crate::Context {
        Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap()
        .context_create()
        .unwrap()
    }

    #[test]
    fn deleted_and_foreign_handles_are_errors() {
        let screen = Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let mut a = screen.context_create().unwrap();
        let mut b = screen.context_create().unwrap();
        let h = a.create_blend_state(&BlendState::default()).unwrap();
        assert!(a.bind_blend_state(Some(h)).is_ok());
        assert!(matches!(
            b.bind_blend_state(Some(h)),
            Err(Error::InvalidHandle { .. })
        ));
        a.delete_blend_state(h).unwrap();
        assert!(matches!(
            a.bind_blend_state(Some(h)),
            Err(Error::InvalidHandle { .. })
        ));
        assert!(
            a.bound().blend.is_some(),
            "deleting a bound CSO keeps the binding's snapshot"
        );
        assert!(matches!(
            a.delete_blend_state(h),
            Err(Error::InvalidHandle { .. })
        ));
    }

    #[test]
    fn every_triplet_binds_and_snapshots_survive() {
        let mut c = ctx();
        let dsa = c
            .create_depth_stencil_alpha_state(&DepthStencilAlphaState {
                depth_enabled: true,
                ..Default::default()
            })
            .unwrap();
        let rast = c
            .create_rasterizer_state(&RasterizerState::default())
            .unwrap();
        let samp = c.create_sampler_state(&SamplerState::default()).unwrap();
        let ve = c
            .create_vertex_elements_state(&[VertexElement {
                src_offset: 0,
                vertex_buffer_index: 0,
                src_format: Format::R32G32B32A32_FLOAT,
                instance_divisor: 0,
            }])
            .unwrap();
        c.bind_depth_stencil_alpha_state(Some(dsa)).unwrap();
        c.bind_rasterizer_state(Some(rast)).unwrap();
        c.bind_vertex_elements_state(Some(ve)).unwrap();
        c.bind_sampler_states(ShaderType::Fragment, 2, &[Some(samp), None, Some(samp)])
            .unwrap();
        let snapshot = c.bound().clone();
        c.delete_depth_stencil_alpha_state(dsa).unwrap();
        c.delete_sampler_state(samp).unwrap();
        c.bind_sampler_states(ShaderType::Fragment, 2, &[None])
            .unwrap();
        c.bind_rasterizer_state(None).unwrap();
        // The snapshot still sees what was bound.
        assert!(snapshot.depth_stencil_alpha.as_ref().unwrap().depth_enabled);
        assert!(snapshot.samplers[1][2].is_some() && snapshot.samplers[1][4].is_some());
        assert!(snapshot.rasterizer.is_some());
        // The context sees the new state; other slots are untouched.
        let b = c.bound();
        assert!(b.samplers[1][2].is_none() && b.samplers[1][4].is_some());
        assert!(b.rasterizer.is_none());
        assert!(!Arc::ptr_eq(&snapshot.samplers[1], &b.samplers[1]));
        assert_eq!(b.vertex_elements.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn bad_cso_input_is_typed() {
        let mut c = ctx();
        let s = c.create_sampler_state(&SamplerState::default()).unwrap();
        assert!(matches!(
            c.bind_sampler_states(ShaderType::Fragment, 31, &[Some(s), Some(s)]),
            Err(Error::Bind(BindError::SlotOutOfRange {
                call: "bind_sampler_states",
                field: "start_slot",
                start: 31,
                count: 2,
                limit: 32,
            }))
        ));
        assert!(
            c.bind_sampler_states(ShaderType::Geometry, 0, &[Some(s)])
                .unwrap_err()
                .is_unsupported()
        );
        assert!(matches!(
            c.create_rasterizer_state(&RasterizerState {
                line_width: f32::NAN,
                ..Default::default()
            }),
            Err(Error::State(StateError::NotFinite {
                call: "create_rasterizer_state",
                field: "line_width",
                value,
            })) if value.is_nan()
        ));
        assert_eq!(
            c.create_rasterizer_state(&RasterizerState {
                point_size: -2.0,
                ..Default::default()
            })
            .unwrap_err(),
            Error::State(StateError::Negative {
                call: "create_rasterizer_state",
                field: "point_size",
                value: -2.0,
            })
        );
        let mut bad_ve = |f, vb| {
            c.create_vertex_elements_state(&[VertexElement {
                src_offset: 0,
                vertex_buffer_index: vb,
                src_format: f,
                instance_divisor: 0,
            }])
        };
        assert!(matches!(
            bad_ve(Format::Z24_UNORM_S8_UINT, 0),
            Err(Error::State(StateError::VertexFormat {
                format: Format::Z24_UNORM_S8_UINT,
                ..
            }))
        ));
        assert!(matches!(
            bad_ve(Format::R8G8B8A8_UNORM, 32),
            Err(Error::State(StateError::ValueTooLarge {
                field: "vertex_buffer_index",
                value: 32,
                limit: 31,
                ..
            }))
        ));
        let mut c = ctx();
        assert!(
            c.create_gs_state(&crate::ShaderState {
                code: crate::ShaderCode::Wgsl {
                    code: String::new(),
                    entry_point: "main".into()
                },
                semantics: vec![],
                stream_output: Default::default(),
            })
            .unwrap_err()
            .is_unsupported()
        );
    }
}
