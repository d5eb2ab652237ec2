//! Arbitrary bytes as a scene file: parse (confined to `tests/scenes/`),
//! then replay what parses.  Invalid scenes must be typed errors, valid
//! ones must replay; nothing may panic, hang or exhaust memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferropipe_fuzz::run_scene(data);
});
