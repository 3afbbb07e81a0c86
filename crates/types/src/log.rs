//! The server's one logger: every message the server and its background threads report
//! (startup, shutdown, a failed checkpoint or purge) goes through here to stderr, as
//! MySQL's error log does.
//!
//! It never panics: `eprintln!`/`println!` panic when the write fails (a closed pipe, a
//! full disk behind a redirect), and a panic in the page cleaner, the checkpointer or the
//! signal thread silently ends that thread for good. Here a failed write is ignored: a
//! message that cannot be delivered is lost, the server goes on. Each line is formatted
//! first and written with one `write_all`, so lines from different threads never mix.

use std::fmt;
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    fn label(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warning => "Warning",
            Level::Note => "Note",
        }
    }
}

/// Formats one log line: `2026-11-26T06:52:01Z [Warning] message`.
pub fn line(level: Level, args: fmt::Arguments) -> String {
    let now = crate::DateTime::now();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z [{}] {}\n",
        now.year,
        now.month,
        now.day,
        now.hour,
        now.minute,
        now.second,
        level.label(),
        args
    )
}

/// Writes one line to stderr, ignoring any failure.
pub fn write(level: Level, args: fmt::Arguments) {
    let text = line(level, args);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

pub fn error(args: fmt::Arguments) {
    write(Level::Error, args)
}

pub fn warning(args: fmt::Arguments) {
    write(Level::Warning, args)
}

pub fn note(args: fmt::Arguments) {
    write(Level::Note, args)
}

/// `log_error!("checkpoint failed: {e}")`: one ERROR line on stderr, never a panic.
#[macro_export]
macro_rules! log_error {
    ($($arg:tt)*) => { $crate::log::error(format_args!($($arg)*)) };
}

/// `log_warning!(...)`: one Warning line on stderr, never a panic.
#[macro_export]
macro_rules! log_warning {
    ($($arg:tt)*) => { $crate::log::warning(format_args!($($arg)*)) };
}

/// `log_note!(...)`: one Note line on stderr (startup, shutdown), never a panic.
#[macro_export]
macro_rules! log_note {
    ($($arg:tt)*) => { $crate::log::note(format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_time_level_and_text() {
        let l = line(Level::Warning, format_args!("purge of {} failed", 7));
        assert!(l.ends_with(" [Warning] purge of 7 failed\n"), "{l}");
        assert_eq!(&l[4..5], "-");
        assert_eq!(&l[10..11], "T");
        assert_eq!(l.lines().count(), 1);
    }
}
