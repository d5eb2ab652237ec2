//! A `log::Log` that prints warnings and errors to stderr, for the `demo`
//! and `replay` binaries: ferropipe reports the validation layer's
//! findings (`FERROPIPE_DEBUG=validate`) and bad environment settings
//! (`FERROPIPE_NUM_THREADS`) through the `log` crate, and a binary that
//! installs no logger would drop them.  Twenty lines instead of a
//! dependency (env_logger) for one fixed format.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= Level::Warn
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let level = record.level().as_str().to_ascii_lowercase();
            eprintln!("{level}: {}", record.args());
        }
    }

    fn flush(&self) {}
}

/// Installs the stderr logger (warnings and errors; once per process,
/// later calls do nothing).
pub fn init() {
    static LOGGER: Stderr = Stderr;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(LevelFilter::Warn);
    }
}
