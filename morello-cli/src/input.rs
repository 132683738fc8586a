//! Reading the text a user names: target files, files of specs, HLO modules (a path or `-` for
//! standard input). Every such input goes through [`read_text`], which bounds what it holds.
//!
//! ```text
//! size    at most the kind's cap (TextKind::max_bytes): a regular file larger than that is
//!         refused before reading; anything else (a pipe, a device) stops being read one chunk
//!         past it, so `/dev/zero` or `yes` cannot fill the memory
//! text    no NUL byte (checked per chunk: a binary file or `/dev/zero` is refused at its first
//!         chunk), and UTF-8
//! ```
//!
//! The caps are far above any real input of the kind (XLA's largest HLO dumps are tens of
//! megabytes) and far below what would strain a machine.

use std::io::Read;
use std::path::Path;

use anyhow::Result;

use crate::failure::bad_input;

/// What a text input is, with the most bytes it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// A target description (TOML or JSON).
    TargetFile,
    /// A file of specs, one per line (`precompute --specs`).
    SpecFile,
    /// An HLO module (`morello indexing`).
    Hlo,
}

impl TextKind {
    /// The most bytes an input of this kind may have, in MiB.
    fn max_mib(self) -> u64 {
        match self {
            TextKind::TargetFile => 1,
            TextKind::SpecFile => 64,
            TextKind::Hlo => 512,
        }
    }

    /// The most bytes an input of this kind may have.
    pub fn max_bytes(self) -> u64 {
        self.max_mib() << 20
    }

    /// What it is called in messages.
    fn name(self) -> &'static str {
        match self {
            TextKind::TargetFile => "a target file",
            TextKind::SpecFile => "a file of specs",
            TextKind::Hlo => "an HLO module",
        }
    }
}

/// Bytes read at a time (and the most read past the cap).
const CHUNK: usize = 64 << 10;

/// Reads the file `path` (or standard input for `-` when `stdin_dash`) as text of `kind`.
///
/// # Errors
/// Bad input (status 2) naming the file: it cannot be opened or read, it is larger than the
/// kind's cap (saying the cap), it holds a NUL byte, or it is not UTF-8.
pub fn read_text(path: &Path, kind: TextKind, stdin_dash: bool) -> Result<String> {
    if stdin_dash && path == Path::new("-") {
        return read_from(std::io::stdin().lock(), "standard input", kind);
    }
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| bad_input(format!("cannot read {name}: {e}")))?;
    let metadata = file.metadata().map_err(|e| bad_input(format!("cannot read {name}: {e}")))?;
    if metadata.is_dir() {
        return Err(bad_input(format!("cannot read {name}: it is a directory")));
    }
    if metadata.is_file() && metadata.len() > kind.max_bytes() {
        return Err(too_large(&name, kind));
    }
    read_from(file, &name, kind)
}

/// Reads `source` to its end as text of `kind`, `name` naming it in messages.
fn read_from(mut source: impl Read, name: &str, kind: TextKind) -> Result<String> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(bad_input(format!("cannot read {name}: {e}"))),
        };
        if let Some(at) = chunk[..n].iter().position(|&b| b == 0) {
            return Err(bad_input(format!(
                "{name} holds a NUL byte (byte {}): {} is text, and this is not",
                bytes.len() + at,
                kind.name()
            )));
        }
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() as u64 > kind.max_bytes() {
            return Err(too_large(name, kind));
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        bad_input(format!(
            "{name} is not UTF-8 text (byte {} is not valid UTF-8): {} is text",
            e.utf8_error().valid_up_to(),
            kind.name()
        ))
    })
}

fn too_large(name: &str, kind: TextKind) -> anyhow::Error {
    bad_input(format!(
        "{name} is larger than {} MiB, the most {} may be: is it the right file?",
        kind.max_mib(),
        kind.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], kind: TextKind) -> Result<String> {
        read_from(bytes, "t.txt", kind)
    }

    #[test]
    fn text_within_the_cap_is_read() {
        assert_eq!(read(b"matmul 8x8x8\n", TextKind::SpecFile).expect("text"), "matmul 8x8x8\n");
        assert_eq!(read(b"", TextKind::SpecFile).expect("empty"), "");
    }

    #[test]
    fn nul_bytes_oversized_input_and_invalid_utf8_are_refused_with_the_file_and_the_cap() {
        let message = |r: Result<String>| crate::failure::message(&r.expect_err("refused"));
        assert_eq!(
            message(read(b"matmul 4\0x4\n", TextKind::SpecFile)),
            "t.txt holds a NUL byte (byte 8): a file of specs is text, and this is not"
        );
        let big = vec![b'y'; (1 << 20) + 1];
        assert_eq!(
            message(read(&big, TextKind::TargetFile)),
            "t.txt is larger than 1 MiB, the most a target file may be: is it the right file?"
        );
        assert!(read(&big[..1 << 20], TextKind::TargetFile).is_ok(), "the cap itself is allowed");
        assert_eq!(
            message(read(b"ok \xff", TextKind::Hlo)),
            "t.txt is not UTF-8 text (byte 3 is not valid UTF-8): an HLO module is text"
        );
    }

    /// An endless source (`/dev/zero`, `yes`) is refused after at most one chunk past the cap.
    #[test]
    fn endless_input_stops_at_the_cap() {
        let yes = std::io::repeat(b'y');
        let err = read_from(yes, "yes", TextKind::TargetFile).expect_err("refused");
        assert!(crate::failure::message(&err).contains("larger than 1 MiB"));
        let zero = std::io::repeat(0);
        let err = read_from(zero, "/dev/zero", TextKind::Hlo).expect_err("refused");
        assert!(crate::failure::message(&err).contains("holds a NUL byte (byte 0)"));
    }
}
