//! Numeric command-line values, parsed and checked in one place: durations in seconds, and
//! counts (threads, processors, candidates, samples, sizes). Every numeric flag takes its value
//! through one of these parsers, so a value out of range is refused by clap (status 2) with what
//! was wrong and what is allowed, and nothing later converts an unchecked number (a duration of
//! `1e20` seconds, `--jobs 0`).
//!
//! ```text
//! Seconds   a decimal number of seconds, finite, not negative, at most a year (MAX_SECONDS)
//! Count     a whole number from 1 to MAX_COUNT
//! jobs      a Count; more than the CPUs this process may use is clamped to them, with a note
//!           (threads beyond the CPUs only wait for each other, and a search's thousands of
//!           threads would also answer a signal late)
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The longest duration a flag takes, in seconds: a year. A longer time limit or checkpoint is
/// a typo (or a way to say "never", which leaving the flag out says).
pub const MAX_SECONDS: u64 = 365 * 24 * 3600;

/// The largest count a flag takes (threads, processors, candidates, samples).
pub const MAX_COUNT: u64 = 1 << 20;

/// A duration given in seconds: finite, not negative, at most [`MAX_SECONDS`] (0 is allowed: a time
/// limit of 0 stops at once and returns the quick fallback's answer, a checkpoint interval of 0
/// saves after every step; a flag that needs more says so itself).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Seconds(f64);

impl Seconds {
    /// The duration.
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }

    /// The number of seconds.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl FromStr for Seconds {
    type Err = String;

    fn from_str(text: &str) -> Result<Seconds, String> {
        let shown = quoted(text);
        let seconds: f64 = text.trim().parse().map_err(|_| {
            format!("{shown} is not a number of seconds: write a decimal number such as 2 or 0.5")
        })?;
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(format!("{shown} is not a number of seconds from 0 to {MAX_SECONDS}"));
        }
        if seconds > MAX_SECONDS as f64 {
            return Err(format!(
                "{shown} seconds is longer than a year ({MAX_SECONDS} seconds), the longest duration \
                 accepted"
            ));
        }
        Ok(Seconds(seconds))
    }
}

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} s", self.0)
    }
}

/// A count of things (threads, processors, candidates, samples): a whole number from 1 to
/// [`MAX_COUNT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Count(u64);

impl Count {
    /// The count.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Count {
    type Err = String;

    fn from_str(text: &str) -> Result<Count, String> {
        let shown = quoted(text);
        let trimmed = text.trim();
        if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{shown} is not a whole number: write digits only, such as 4"));
        }
        match trimmed.parse::<u64>() {
            Ok(0) => Err("0 is not allowed here: give at least 1".to_string()),
            Ok(n) if n <= MAX_COUNT => Ok(Count(n)),
            _ => Err(format!("{shown} is more than {MAX_COUNT}, the largest count accepted")),
        }
    }
}

/// `text` in backticks for a message, its control characters escaped and a long one cut.
fn quoted(text: &str) -> String {
    let escaped: String = text.chars().flat_map(char::escape_debug).collect();
    if escaped.chars().count() > 40 {
        let head: String = escaped.chars().take(40).collect();
        format!("`{head}...`")
    } else {
        format!("`{escaped}`")
    }
}

/// Parses a duration in seconds ([`Seconds`]), for clap.
///
/// # Errors
/// What is wrong with the text, for clap's message (status 2).
pub fn parse_seconds(text: &str) -> Result<Seconds, String> {
    text.parse()
}

/// Parses a count ([`Count`]) as a `usize`, for clap.
///
/// # Errors
/// What is wrong with the text, for clap's message (status 2).
pub fn parse_count(text: &str) -> Result<usize, String> {
    let count: Count = text.parse()?;
    usize::try_from(count.get()).map_err(|_| format!("`{text}` is too large for this machine"))
}

/// Parses a count ([`Count`]) as a `u64`, for clap.
///
/// # Errors
/// What is wrong with the text, for clap's message (status 2).
pub fn parse_count_u64(text: &str) -> Result<u64, String> {
    text.parse::<Count>().map(Count::get)
}

/// Parses a count ([`Count`]) as a `u32` (processors, a batch, a size), for clap.
///
/// # Errors
/// What is wrong with the text, for clap's message (status 2).
pub fn parse_count_u32(text: &str) -> Result<u32, String> {
    let count: Count = text.parse()?;
    u32::try_from(count.get()).map_err(|_| format!("`{text}` is too large"))
}

/// Parses a number of seconds ([`Seconds`]) as an `f64`, for flags whose value is handed on as
/// seconds (benchmark sample times).
///
/// # Errors
/// What is wrong with the text, for clap's message (status 2).
pub fn parse_seconds_f64(text: &str) -> Result<f64, String> {
    parse_seconds(text).map(Seconds::get)
}

/// The CPUs this process may use (at least 1).
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The threads a command uses for `--jobs`: the value, clamped to the CPUs this process may use
/// ([`available_cpus`]), with a note on standard error (unless `quiet`) when it is clamped.
/// `None` (all CPUs) stays `None`.
pub fn jobs(requested: Option<usize>, quiet: bool) -> Option<usize> {
    let requested = requested?;
    let cpus = available_cpus();
    if requested <= cpus {
        return Some(requested);
    }
    if !quiet {
        crate::database::eprint_line(&format!(
            "note: --jobs {requested} is more than the {cpus} CPUs this process may use; using {cpus} \
             threads (more would only wait for each other)"
        ));
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `parse` refuses each text of `cases` with a message containing its phrase.
    fn assert_refused<T: fmt::Debug>(parse: fn(&str) -> Result<T, String>, cases: &[(&str, &str)]) {
        for (bad, says) in cases {
            let message = parse(bad).expect_err(bad);
            assert!(message.contains(says), "{bad}: {message}");
        }
    }

    #[test]
    fn seconds_are_finite_positive_and_at_most_a_year() {
        assert_eq!(parse_seconds("2").map(Seconds::duration), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds(" 0.25 ").map(Seconds::duration), Ok(Duration::from_millis(250)));
        assert_eq!(parse_seconds("31536000").map(Seconds::get), Ok(31_536_000.0));
        assert_eq!(parse_seconds("0").map(Seconds::duration), Ok(Duration::ZERO));
        let refused = [
            ("1e20", "longer than a year"),
            ("1e308", "longer than a year"),
            ("18446744073709551616", "longer than a year"),
            ("inf", "not a number of seconds from 0 to 31536000"),
            ("NaN", "not a number of seconds from 0"),
            ("-1", "not a number of seconds from 0"),
            ("", "not a number of seconds"),
            ("2s", "not a number of seconds"),
            ("1\0", "`1\\0` is not a number"),
        ];
        assert_refused(parse_seconds, &refused);
    }

    #[test]
    fn counts_are_whole_numbers_from_one() {
        assert_eq!(parse_count("1"), Ok(1));
        assert_eq!(parse_count("1048576"), Ok(1 << 20));
        assert_eq!(parse_count_u32("32"), Ok(32));
        let refused = [
            ("0", "give at least 1"),
            ("1048577", "more than 1048576"),
            ("18446744073709551616", "more than 1048576"),
            ("-1", "not a whole number"),
            ("1.5", "not a whole number"),
            ("1e3", "not a whole number"),
            ("", "not a whole number"),
        ];
        assert_refused(parse_count, &refused);
    }

    #[test]
    fn jobs_beyond_the_cpus_are_clamped_to_them() {
        let cpus = available_cpus();
        assert_eq!(jobs(None, true), None);
        assert_eq!(jobs(Some(1), true), Some(1));
        assert_eq!(jobs(Some(cpus), true), Some(cpus));
        assert_eq!(jobs(Some(cpus + 1), true), Some(cpus));
        assert_eq!(jobs(Some(10_000), true), Some(cpus));
    }
}
