//! Interface copies: a program that only moves inputs to outputs (the
//! pass-through vertex shader of every 2D scene, the "return the varying"
//! fragment shader) runs as row copies instead of through the
//! interpreter.  llvmpipe gets the same effect from LLVM's optimiser
//! folding the JIT-compiled shader into the fetch/interpolation code.
//!
//! On `blend_overdraw` the interpreter spent ~18 % of the frame copying
//! four varyings through its register file (input rows into chunk
//! registers, registers out to output rows); a copy is one `memcpy` per
//! output row.

use crate::ir::{InputSrc, LaneProgram, Op};

/// `(output row, input row)` pairs, rows as `slot * 4 + component`.
pub type Copies = Box<[(u32, u32)]>;

/// The copies `prog` amounts to, if its whole body is input loads and
/// output stores of those loads (no arithmetic, control flow, discard or
/// resource access, and no uniform work).
pub fn interface_copies(prog: &LaneProgram) -> Option<Copies> {
    if !prog.prologue.is_empty() {
        return None;
    }
    // Register -> input row it holds.
    let mut held: Vec<Option<u32>> = vec![None; prog.num_varying as usize];
    let mut copies = Vec::new();
    for op in &prog.body {
        match *op {
            Op::LoadInput {
                d,
                src: InputSrc::Slot(row),
            } if !d.is_uniform() => *held.get_mut(d.index())? = Some(row),
            Op::StoreOutput { slot, a } if !a.is_uniform() => {
                copies.push((slot, (*held.get(a.index())?)?));
            }
            _ => return None,
        }
    }
    Some(copies.into_boxed_slice())
}

/// Runs the copies over `groups` registers per row.  Rows outside either
/// buffer are skipped (the interpreter's stores are bounds-checked the same
/// way).
pub fn run_copies(
    copies: &[(u32, u32)],
    groups: usize,
    inputs: &[ferropipe_components::shader::Lanes],
    outputs: &mut [ferropipe_components::shader::Lanes],
) {
    for &(out, inp) in copies {
        let (o, i) = (out as usize * groups, inp as usize * groups);
        if let (Some(dst), Some(src)) = (outputs.get_mut(o..o + groups), inputs.get(i..i + groups))
        {
            dst.copy_from_slice(src);
        } else if let Some(dst) = outputs.get_mut(o..o + groups) {
            // A missing input reads as zero, as in the interpreter.
            dst.fill(ferropipe_components::shader::Lanes::ZERO);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Language, compile};
    use ferropipe_components::enums::ShaderType;
    use ferropipe_components::shader::Lanes;

    const PASS: &str = "
        struct V { @builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32> };
        @vertex fn vs(@location(0) p: vec4<f32>, @location(1) c: vec4<f32>) -> V {
            var o: V; o.pos = p; o.c = c; return o;
        }
        @fragment fn fs(v: V) -> @location(0) vec4<f32> { return v.c; }
        @fragment fn fs_swz(v: V) -> @location(0) vec4<f32> { return v.c.zyxw; }
        @fragment fn fs_math(v: V) -> @location(0) vec4<f32> { return v.c * 2.0; }
        @fragment fn fs_pos(v: V) -> @location(0) vec4<f32> { return v.pos; }
        @fragment fn fs_kill(v: V) -> @location(0) vec4<f32> {
            if v.c.x > 0.5 { discard; }
            return v.c;
        }
    ";

    fn copies(entry: &str, stage: ShaderType) -> Option<Copies> {
        let c = compile(Language::Wgsl, PASS, entry, stage, &[]).unwrap();
        interface_copies(c.program())
    }

    #[test]
    fn pass_through_programs_are_copies() {
        let fs = copies("fs", ShaderType::Fragment).unwrap();
        assert_eq!(fs.len(), 4);
        let vs = copies("vs", ShaderType::Vertex).unwrap();
        assert_eq!(vs.len(), 8);
        // A swizzle is still a copy, with rows permuted.
        let swz = copies("fs_swz", ShaderType::Fragment).unwrap();
        let plain = copies("fs", ShaderType::Fragment).unwrap();
        assert_eq!(swz[0].1, plain[2].1);
        assert_eq!(swz[2].1, plain[0].1);
    }

    /// Covering copies, and stores every run reaches (ahead of any jump or
    /// kill), write all outputs; stores behind control flow do not count.
    #[test]
    fn unconditional_covering_stores_write_all_outputs() {
        use ferropipe_components::shader::{FragmentShader, VertexShader};
        let fs = |e: &str| {
            let c = compile(Language::Wgsl, PASS, e, ShaderType::Fragment, &[]).unwrap();
            FragmentShader::writes_all_outputs(&c)
        };
        assert!(fs("fs"));
        assert!(fs("fs_swz"));
        assert!(fs("fs_math"));
        // The store sits behind the discard's control flow.
        assert!(!fs("fs_kill"));
        let vs = compile(Language::Wgsl, PASS, "vs", ShaderType::Vertex, &[]).unwrap();
        assert!(VertexShader::writes_all_outputs(&vs));
    }

    #[test]
    fn arithmetic_and_system_values_are_not_copies() {
        assert!(copies("fs_math", ShaderType::Fragment).is_none());
        // frag_coord is not an input row.
        assert!(copies("fs_pos", ShaderType::Fragment).is_none());
    }

    /// Copies give the interpreter's result.
    #[test]
    fn copies_match_the_interpreter() {
        use ferropipe_components::shader::{FragmentIo, FragmentShader, ShaderResources};
        let c = compile(Language::Wgsl, PASS, "fs_swz", ShaderType::Fragment, &[]).unwrap();
        let groups = 3;
        let n_in = c.info().inputs.len() * 4 * groups;
        let inputs: Vec<Lanes> = (0..n_in)
            .map(|i| Lanes::new(std::array::from_fn(|l| (i * 8 + l) as f32)))
            .collect();
        let frag_coord = vec![Lanes::ZERO; 4 * groups];
        let run = |direct: bool| {
            let mut outputs = vec![Lanes::splat(-1.0); 4 * groups];
            let mut mask = vec![Lanes::from_bits(wide::u32x8::splat(u32::MAX)); groups];
            let mut io = FragmentIo {
                groups,
                inputs: &inputs,
                frag_coord: &frag_coord,
                mask: &mut mask,
                outputs: &mut outputs,
            };
            if direct {
                c.run(&ShaderResources::default(), &mut io);
            } else {
                let stopped = crate::exec::run(
                    c.program(),
                    c.jit(),
                    &mut crate::call::CallIo {
                        resources: &ShaderResources::default(),
                        groups,
                        inputs: &inputs,
                        frag_coord: &frag_coord,
                        vertex_id: &[],
                        instance_id: &[],
                        outputs: &mut outputs,
                        live: Some(&mut mask),
                        count: groups * 8,
                        compute: None,
                    },
                );
                assert!(!stopped);
            }
            outputs.iter().map(|l| l.to_array()).collect::<Vec<_>>()
        };
        assert_eq!(run(true), run(false));
    }
}
