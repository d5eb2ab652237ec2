//! The ferropipe demo (placeholder until the interactive demo lands).
fn main() {
    eprintln!("the interactive demo is not built yet; use `replay` for scenes");
    std::process::exit(3);
}
