//! Prints the lane program of a shader: `cargo run -p ferropipe-shader
//! --example disasm -- FILE ENTRY (vs|fs)`.

use ferropipe_components::enums::ShaderType;
use ferropipe_shader::{Language, compile};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: disasm FILE ENTRY vs|fs");
        std::process::exit(2);
    }
    let src = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let lang = if args[1].ends_with(".wgsl") {
        Language::Wgsl
    } else {
        Language::Glsl
    };
    let stage = if args[3] == "vs" {
        ShaderType::Vertex
    } else {
        ShaderType::Fragment
    };
    match compile(lang, &src, &args[2], stage, &[]) {
        Ok(s) => {
            println!("{:#?}", s.info());
            print!("{}", s.program());
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
