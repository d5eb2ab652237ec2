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
        other => Err(ShaderError::unsupported(format!(
            "{} shaders",
            crate::lower::types::snake(&format!("{other:?}")).replace('_', " ")
        ))),
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

/// naga's messages name IR handles (`Type [16]`, `naga::ir::Expression`),
/// which mean nothing to the author of the source: strip them.
pub(crate) fn clean_message(msg: &str) -> String {
    let msg = msg
        .replace("naga::ir::", "")
        .replace("naga::", "")
        .replace(" at Vertex is", " (vertex) is")
        .replace(" at Fragment is", " (fragment) is")
        .replace(" at Compute is", " (compute) is");
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg.as_str();
    while let Some(open) = rest.find(" [") {
        let tail = &rest[open + 2..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail.as_bytes().get(digits) == Some(&b']') {
            out.push_str(&rest[..open]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..open + 2]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// 1-based line and column of `span` in `source`, `(0, 0)` when naga has
/// none.
pub(crate) fn span_location(span: naga::Span, source: &str) -> (u32, u32) {
    if span.is_defined() {
        let l = span.location(source);
        (l.line_number, l.line_position)
    } else {
        (0, 0)
    }
}

/// Parses `source` without validating it.  GLSL needs the stage at parse
/// time.
pub fn parse_module(
    language: Language,
    source: &str,
    stage: ShaderStage,
) -> Result<Module, ShaderError> {
    match language {
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
                message: clean_message(&message),
                line,
                column,
            }
        }),
        Language::Glsl => {
            let opts = naga::front::glsl::Options::from(stage);
            naga::front::glsl::Frontend::default()
                .parse(&opts, source)
                .map_err(|e| {
                    let first = e.errors.first();
                    let (line, column) =
                        first.map_or((0, 0), |err| span_location(err.meta, source));
                    let message = first.map_or_else(
                        || "unknown GLSL error".to_string(),
                        |err| err.kind.to_string(),
                    );
                    ShaderError::Parse {
                        language,
                        message: clean_message(&message),
                        line,
                        column,
                    }
                })
        }
    }
}

/// Validates a whole module.
fn validate(module: &Module, source: &str) -> Result<ModuleInfo, ShaderError> {
    // Every capability is allowed here: what ferropipe cannot run is
    // reported as `Unsupported` by the lowering, naming the construct,
    // rather than as a validation failure.
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::all());
    validator.validate(module).map_err(|e| {
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
            message: clean_message(&message),
            line,
            column,
        }
    })
}

/// Parses and validates `source` (the whole module).
pub fn parse(language: Language, source: &str, stage: ShaderStage) -> Result<Parsed, ShaderError> {
    let module = parse_module(language, source, stage)?;
    let info = validate(&module, source)?;
    Ok(Parsed { module, info })
}

/// `module` reduced to entry point `entry` and what it uses
/// (`naga::compact`), or `None` when compaction fails (naga documents that
/// it may panic on invalid modules, which is when this is called).
fn compact_to(module: &Module, entry: usize) -> Option<Module> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut m = module.clone();
        let keep = m.entry_points.swap_remove(entry);
        m.entry_points = vec![keep];
        naga::compact::compact(&mut m, naga::compact::KeepUnused::No);
        m
    }))
    .ok()
}

/// Parses `source`, validates entry point `name` of `stage` and what it
/// uses, and replaces WGSL `override`s by `overrides` (or their
/// defaults).  Returns the module and the index of the entry point in it.
///
/// An error in a function or entry point the requested one does not use
/// does not reject it: when the whole module fails validation, it is
/// compacted to the entry point and validated again, and only an error in
/// what is left is reported.
pub fn prepare(
    language: Language,
    source: &str,
    name: &str,
    stage: ShaderStage,
    overrides: &[crate::OverrideValue<'_>],
) -> Result<(Parsed, usize), ShaderError> {
    let module = parse_module(language, source, stage)?;
    prepare_module(module, source, name, stage, overrides)
}

/// [`prepare`] for a module already parsed from `source` (tests rebind
/// resources in it first).
pub fn prepare_module(
    module: Module,
    source: &str,
    name: &str,
    stage: ShaderStage,
    overrides: &[crate::OverrideValue<'_>],
) -> Result<(Parsed, usize), ShaderError> {
    let entry = find_entry(&module, name, stage)?;
    let (module, info) = match validate(&module, source) {
        Ok(info) => (module, info),
        Err(whole) => match compact_to(&module, entry) {
            Some(small) => {
                let info = validate(&small, source)?;
                (small, info)
            }
            None => return Err(whole),
        },
    };
    let entry = find_entry(&module, name, stage)?;
    if module.overrides.is_empty() {
        if let Some((n, _)) = overrides.first() {
            return Err(ShaderError::BadOverride {
                name: n.to_string(),
                message: "the shader declares no such override".into(),
            });
        }
        return Ok((Parsed { module, info }, entry));
    }
    let mut constants = naga::back::PipelineConstants::default();
    for (n, v) in overrides {
        constants.insert(n.to_string(), *v);
    }
    let processed = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((stage, name)),
        &constants,
    );
    let (m, i) = processed.map_err(|e| override_error(e, &module, overrides, source))?;
    let (module, info) = (m.into_owned(), i.into_owned());
    let entry = find_entry(&module, name, stage)?;
    Ok((Parsed { module, info }, entry))
}

fn override_error(
    e: naga::back::pipeline_constants::PipelineConstantError,
    module: &Module,
    overrides: &[crate::OverrideValue<'_>],
    source: &str,
) -> ShaderError {
    use naga::back::pipeline_constants::PipelineConstantError as E;
    let names = || {
        overrides
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match e {
        // naga names an `@id(n)` override by its number: use its WGSL name
        E::MissingValue(key) => ShaderError::MissingOverride {
            name: module
                .overrides
                .iter()
                .find(|(_, o)| o.id.map(|i| i.to_string()).as_deref() == Some(key.as_str()))
                .and_then(|(_, o)| o.name.clone())
                .unwrap_or(key),
        },
        E::NotFound(name) => ShaderError::BadOverride {
            name,
            message: "the shader declares no such override".into(),
        },
        E::SrcNeedsToBeFinite => ShaderError::BadOverride {
            name: names(),
            message: "values must be finite".into(),
        },
        E::DstRangeTooSmall => ShaderError::BadOverride {
            name: names(),
            message: "a value does not fit the override's type".into(),
        },
        E::ValidationError(v) => {
            let (line, column) = v
                .location(source)
                .map_or((0, 0), |l| (l.line_number, l.line_position));
            ShaderError::Validation {
                message: clean_message(&format!(
                    "after substituting overrides: {}",
                    chain(v.as_inner())
                )),
                line,
                column,
            }
        }
        other => ShaderError::validation(clean_message(&format!(
            "after substituting overrides: {}",
            chain(&other)
        ))),
    }
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
