//! Structured fuzzing of the Gallium API: an `arbitrary` sequence of
//! context calls (see `ferropipe_fuzz::Op`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferropipe_fuzz::run_api(data);
});
