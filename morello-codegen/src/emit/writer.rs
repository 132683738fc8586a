//! An indenting line writer for the emitted C.

/// Collects C lines with two-space indentation.
#[derive(Debug, Default)]
pub(crate) struct CWriter {
    text: String,
    depth: usize,
}

impl CWriter {
    /// Writes one line at the current indentation (an empty `line` writes an empty line).
    pub fn line(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        if !line.is_empty() {
            for _ in 0..self.depth {
                self.text.push_str("  ");
            }
            self.text.push_str(line);
        }
        self.text.push('\n');
    }

    /// Writes `line` (which should end with `{`) and indents what follows.
    pub fn open(&mut self, line: impl AsRef<str>) {
        self.line(line);
        self.depth += 1;
    }

    /// Ends the innermost open block with `}`.
    pub fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.line("}");
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.text
    }
}
