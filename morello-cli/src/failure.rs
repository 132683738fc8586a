//! Exit codes: bad input (2), work that ran and failed (1), a stop by a signal (128 + its number).

use std::fmt;
use std::process::ExitCode;

/// An error caused by what the user typed or supplied; exits with status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Wraps a message as a [`BadInput`] error.
pub fn bad_input(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(message.into()))
}

/// Extension for results whose error is the user's fault.
pub trait Failure<T> {
    /// Turns the error into [`BadInput`], prefixed with `what`.
    fn bad_input(self, what: impl FnOnce() -> String) -> anyhow::Result<T>;
}

impl<T, E: fmt::Display> Failure<T> for Result<T, E> {
    fn bad_input(self, what: impl FnOnce() -> String) -> anyhow::Result<T> {
        self.map_err(|e| bad_input(format!("{}: {e}", what())))
    }
}

/// The longest quoted input a message shows in full (longer ones show their ends and length).
const QUOTE_CHARS: usize = 80;

/// The error and its causes on one line, each cause once: a cause whose text the line already
/// holds (the OS error a message quotes, as `cannot read x: Is a directory (os error 21)`) is not
/// repeated. Inputs quoted in backticks longer than [`QUOTE_CHARS`] are shortened, and control
/// characters a user's input brought in (a NUL, an escape sequence) are shown escaped (`\0`,
/// `\u{1b}`), never written to the terminal.
pub fn message(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line += ": ";
        }
        line += &text;
    }
    escape_controls(&shorten_quotes(&line))
}

/// `text` with every control character but line breaks and tabs escaped as Rust writes it.
fn escape_controls(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let keep = !c.is_control() || c == '\n' || c == '\t';
            let escaped: Vec<char> = if keep { vec![c] } else { c.escape_debug().collect() };
            escaped
        })
        .collect()
}

/// `text` with every backtick-quoted span longer than [`QUOTE_CHARS`] characters cut to its start
/// and end and its length, so a megabyte of input does not come back in an error.
fn shorten_quotes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(length) = rest[open + 1..].find('`') else { break };
        let quoted = &rest[open + 1..open + 1 + length];
        out += &rest[..open];
        let chars = quoted.chars().count();
        if chars > QUOTE_CHARS {
            let head: String = quoted.chars().take(QUOTE_CHARS / 2).collect();
            let tail: String = quoted.chars().skip(chars - QUOTE_CHARS / 4).collect();
            out += &format!("`{head} ... {tail}` ({chars} characters)");
        } else {
            out += &format!("`{quoted}`");
        }
        rest = &rest[open + 2 + length..];
    }
    out += rest;
    out
}

/// Prints the error on one line and picks the exit status.
#[allow(clippy::print_stderr)]
pub fn report(err: &anyhow::Error) -> ExitCode {
    if let Some(stop) = err.chain().find_map(|cause| cause.downcast_ref::<crate::signals::Interrupted>()) {
        eprintln!("{stop}");
        return ExitCode::from(stop.signal.exit_status());
    }
    eprintln!("error: {}", message(err));
    if err.chain().any(|cause| cause.is::<BadInput>()) { ExitCode::from(2) } else { ExitCode::from(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_printed_once() {
        // A table error quotes its OS error and also gives it as its source.
        let io = morello_search::db::DbError::Io {
            path: "/tmp".into(),
            action: "read",
            source: std::io::Error::from_raw_os_error(21),
        };
        let os = std::io::Error::from_raw_os_error(21).to_string();
        let err = anyhow::Error::new(io).context("loading the table");
        assert_eq!(err.chain().count(), 3);
        assert_eq!(message(&err), format!("loading the table: cannot read /tmp: {os}"));
    }

    #[test]
    fn long_quoted_inputs_are_shortened() {
        let long = "0, ".repeat(1000);
        let err = anyhow::anyhow!("invalid layout `[{long}]`: too long; and `short` stays");
        let text = message(&err);
        assert!(text.len() < 200, "{text}");
        assert!(text.contains("(3002 characters)") && text.contains("`short` stays"), "{text}");
        assert_eq!(message(&anyhow::anyhow!("a lone ` backtick")), "a lone ` backtick");
    }

    #[test]
    fn control_characters_of_an_input_are_escaped() {
        let err = anyhow::anyhow!("invalid shape `4\0x4`: and \u{1b}[31m red");
        assert_eq!(message(&err), "invalid shape `4\\0x4`: and \\u{1b}[31m red");
    }
}
