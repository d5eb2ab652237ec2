//! Renders a glTF model to a PNG with its default camera (the file's first
//! camera, or one framing the scene).
//!
//! ```sh
//! cargo run --release -p ferropipe-gltf --example render_model -- \
//!     gltf/tests/assets/barrel/barrel.glb out/barrel.png 640 480
//! ```

use ferropipe::{Screen, ScreenConfig};
use ferropipe_gltf::{DrawOptions, Model, Offscreen};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(input), Some(output)) = (args.first(), args.get(1)) else {
        eprintln!("usage: render_model MODEL.glb OUT.png [WIDTH HEIGHT]");
        std::process::exit(2);
    };
    let width = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(640);
    let height = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(480);
    if let Err(e) = run(input, output, width, height) {
        eprintln!("render_model: {e}");
        std::process::exit(1);
    }
}

fn run(
    input: &str,
    output: &str,
    width: u32,
    height: u32,
) -> Result<(), Box<dyn std::error::Error>> {
    let screen = Screen::new(ScreenConfig::default())?;
    let mut ctx = screen.context_create()?;
    let mut model = Model::load(&screen, &mut ctx, input)?;
    let target = Offscreen::new(&screen, &mut ctx, width, height)?;
    let camera = model.default_camera(target.aspect());
    let (rgba, stats) = target.render(
        &mut ctx,
        &mut model,
        &camera,
        &DrawOptions::default(),
        [0.1, 0.1, 0.12, 1.0],
    )?;
    let file = std::io::BufWriter::new(std::fs::File::create(output)?);
    let mut enc = png::Encoder::new(file, width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()?.write_image_data(&rgba)?;
    println!(
        "render_model: {} draws, {} triangles -> {output}",
        stats.draws, stats.triangles
    );
    Ok(())
}
