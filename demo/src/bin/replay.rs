//! `replay SCENE.json --out DIR`: replays a Gallium scene recording.
fn main() {
    eprintln!("replay: not implemented yet");
    std::process::exit(3);
}
