//! The front end: naga parses and validates WGSL or Vulkan-style GLSL 450;
//! errors become [`ShaderError`]s with naga's message and a 1-based source
//! location.

use ferropipe_components::enums::ShaderType;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{Module, ShaderStage};

use crate::{Language, ShaderError};

/// A parsed and validated module.
pub struct Parsed {
    pub module: Module,
    pub info: ModuleInfo,
}

/// Gallium stage → naga stage.
pub fn naga_stage(stage: ShaderType) -> Result<ShaderStage, ShaderError> {
    match stage {
        ShaderType::Vertex => Ok(ShaderStage::Vertex),
        ShaderType::Fragment => Ok(ShaderStage::Fragment),
        ShaderType::Compute => Ok(ShaderStage::Compute),
        other => Err(ShaderError::Unsupported {
            construct: format!("{other:?} shaders"),
        }),
    }
}

fn stage_name(stage: ShaderStage) -> &'static str {
    match stage {
        ShaderStage::Vertex => "vertex",
        ShaderStage::Fragment => "fragment",
        ShaderStage::Compute => "compute",
        _ => "other",
    }
}

/// Full message of an error: its display plus its `source()` chain.
fn chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !msg.contains(&t) {
            msg.push_str(": ");
            msg.push_str(&t);
        }
        src = s.source();
    }
    msg
}

/// Parses and validates `source`.  GLSL needs the stage at parse time.
pub fn parse(language: Language, source: &str, stage: ShaderStage) -> Result<Parsed, ShaderError> {
    let module = match language {
        Language::Wgsl => naga::front::wgsl::parse_str(source).map_err(|e| {
            let (line, column) = e
                .location(source)
                .map_or((0, 0), |l| (l.line_number, l.line_position));
            let mut message = e.message().to_string();
            for (_, label) in e.labels() {
                if !label.is_empty() {
                    message.push_str(" (");
                    message.push_str(label);
                    message.push(')');
                    break;
                }
            }
            ShaderError::Parse {
                language,
                message,
                line,
                column,
            }
        })?,
        Language::Glsl => {
            let opts = naga::front::glsl::Options::from(stage);
            naga::front::glsl::Frontend::default()
                .parse(&opts, source)
                .map_err(|e| {
                    let first = e.errors.first();
                    let (line, column) =
                        first
                            .filter(|err| err.meta.is_defined())
                            .map_or((0, 0), |err| {
                                let l = err.meta.location(source);
                                (l.line_number, l.line_position)
                            });
                    let message = first.map_or_else(
                        || "unknown GLSL error".to_string(),
                        |err| err.kind.to_string(),
                    );
                    ShaderError::Parse {
                        language,
                        message,
                        line,
                        column,
                    }
                })?
        }
    };
    // Every capability is allowed here: what ferropipe cannot run is
    // reported as `Unsupported` by the lowering, naming the construct,
    // rather than as a validation failure.
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::all());
    let info = validator.validate(&module).map_err(|e| {
        let (line, column) = e
            .location(source)
            .map_or((0, 0), |l| (l.line_number, l.line_position));
        let mut message = chain(e.as_inner());
        if let Some((_, ctx)) = e.spans().next()
            && !ctx.is_empty()
        {
            message.push_str(&format!(" ({ctx})"));
        }
        ShaderError::Validation {
            message,
            line,
            column,
        }
    })?;
    Ok(Parsed { module, info })
}

/// Index of the entry point `name` of `stage`.
pub fn find_entry(module: &Module, name: &str, stage: ShaderStage) -> Result<usize, ShaderError> {
    module
        .entry_points
        .iter()
        .position(|ep| ep.stage == stage && ep.name == name)
        .ok_or_else(|| ShaderError::MissingEntryPoint {
            stage: stage_name(stage),
            name: name.to_string(),
        })
}
