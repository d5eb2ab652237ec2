//! ECS components for the Gallium objects a context creates.
//!
//! Every CSO, sampler view and surface is an entity in the context's world
//! carrying one of these components; every resource is an entity in the
//! screen's world carrying [`ResourceComponent`].  The payloads are `Arc`s
//! because state objects are immutable after creation and recorded draws
//! snapshot them by cloning the `Arc` (see ARCHITECTURE.md, "Entity model").

use std::sync::Arc;

use bevy_ecs::component::Component;

use crate::draw::StreamOutputTargetRef;
use crate::resource::ResourceRef;
use crate::shader::{FragmentShaderRef, VertexShaderRef};
use crate::state::*;
use crate::view::{SamplerViewRef, SurfaceRef};

/// A resource entity (screen world).
#[derive(Component, Clone, Debug)]
pub struct ResourceComponent(pub ResourceRef);

/// A blend CSO entity.
#[derive(Component, Clone, Debug)]
pub struct BlendCso(pub Arc<BlendState>);

/// A depth/stencil/alpha CSO entity.
#[derive(Component, Clone, Debug)]
pub struct DepthStencilAlphaCso(pub Arc<DepthStencilAlphaState>);

/// A rasterizer CSO entity.
#[derive(Component, Clone, Debug)]
pub struct RasterizerCso(pub Arc<RasterizerState>);

/// A sampler CSO entity.
#[derive(Component, Clone, Debug)]
pub struct SamplerCso(pub Arc<SamplerState>);

/// A vertex-elements CSO entity.
#[derive(Component, Clone, Debug)]
pub struct VertexElementsCso(pub Arc<[VertexElement]>);

/// A vertex shader CSO entity: the program and its validated
/// `pipe_stream_output_info` (`None` when it has no stream output).
#[derive(Component, Clone)]
pub struct VertexShaderCso {
    /// The compiled (or native) shader.
    pub shader: VertexShaderRef,
    /// Its validated stream-output info; `None` when it captures nothing.
    pub stream_output: Option<Arc<StreamOutputInfo>>,
}

/// A fragment shader CSO entity.
#[derive(Component, Clone)]
pub struct FragmentShaderCso(pub FragmentShaderRef);

/// A sampler view entity: the view and the resource it references.
#[derive(Component, Clone, Debug)]
pub struct SamplerViewComponent(pub SamplerViewRef);

/// A surface entity: the render-target view and the resource it references.
#[derive(Component, Clone, Debug)]
pub struct SurfaceComponent(pub SurfaceRef);

/// A stream output target entity: the buffer range, its filled size, and
/// the buffer it references.
#[derive(Component, Clone, Debug)]
pub struct StreamOutputTargetComponent(pub StreamOutputTargetRef);
