//! The text form of layouts: `[1, 0, 1 p(4)]`, `[0, 1 oe(16)]`, `row-major`, `col-major`.
//!
//! ```text
//! layout = "[" [dim ("," dim)*] "]" | "row-major" | "col-major"
//! dim    = logical [("p" | "oe") "(" size ")"]
//! ```

use std::fmt;
use std::str::FromStr;

use super::{Layout, LayoutDim, LayoutError, PhysDim};
use crate::text::Cursor;

/// Why layout text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutParseError {
    /// The text is not in the layout syntax (the user's input).
    #[error("{message} at column {column} of `{text}`", column = .offset + 1)]
    Syntax {
        /// What was wrong.
        message: String,
        /// Byte offset of the problem.
        offset: usize,
        /// The whole text.
        text: String,
    },
    /// The text parses but breaks a layout rule (the user's input).
    #[error(transparent)]
    Invalid(#[from] LayoutError),
}

/// The text of one physical dim: `1`, `1 p(4)`, `0 oe(16)`.
pub(crate) fn dim_text(dim: &LayoutDim) -> String {
    match dim.kind {
        PhysDim::Dynamic => format!("{}", dim.logical),
        PhysDim::Packed(n) => format!("{} p({n})", dim.logical),
        PhysDim::OddEven(n) => format!("{} oe({n})", dim.logical),
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, dim) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&dim_text(dim))?;
        }
        f.write_str("]")
    }
}

impl FromStr for Layout {
    type Err = LayoutParseError;

    /// Parses the bracketed form; see [`Layout::parse_for_rank`] for the names.
    fn from_str(text: &str) -> Result<Self, LayoutParseError> {
        let mut reader = Reader { cursor: Cursor::new(text) };
        let layout = reader.layout()?;
        if !reader.cursor.at_end() {
            return Err(reader.error("unexpected text after the closing `]`"));
        }
        Ok(layout)
    }
}

impl Layout {
    /// Parses a layout, also accepting the names `row-major` and `col-major` for `rank`.
    ///
    /// # Errors
    /// [`LayoutParseError`] for malformed text or an invalid layout.
    pub fn parse_for_rank(text: &str, rank: usize) -> Result<Layout, LayoutParseError> {
        let rank_u8 = || {
            u8::try_from(rank).map_err(|_| LayoutParseError::Syntax {
                message: format!("rank {rank} is above the limit of 255"),
                offset: 0,
                text: text.to_string(),
            })
        };
        match text.trim() {
            "row-major" => Ok(Layout::row_major(rank_u8()?)),
            "col-major" => Ok(Layout::col_major(rank_u8()?)),
            _ => text.parse(),
        }
    }
}

/// The layout grammar over the workspace's [`Cursor`].
struct Reader<'a> {
    cursor: Cursor<'a>,
}

impl Reader<'_> {
    fn error(&self, message: impl Into<String>) -> LayoutParseError {
        LayoutParseError::Syntax {
            message: message.into(),
            offset: self.cursor.offset(),
            text: self.cursor.text().to_string(),
        }
    }

    fn expect(&mut self, token: &str, what: &str) -> Result<(), LayoutParseError> {
        if self.cursor.eat_str(token) { Ok(()) } else { Err(self.error(format!("expected {what}"))) }
    }

    fn number(&mut self, what: &str) -> Result<u64, LayoutParseError> {
        let start = self.cursor.offset();
        let Some(number) = self.cursor.unsigned() else {
            return Err(self.error(format!("expected {what}")));
        };
        number.value.and_then(|v| u64::try_from(v).ok()).ok_or_else(|| {
            self.cursor.set_offset(start);
            self.cursor.skip_space();
            self.error(format!("{what} is too large"))
        })
    }

    fn layout(&mut self) -> Result<Layout, LayoutParseError> {
        if !self.cursor.eat('[') {
            return Err(self.error("expected `[` (or one of the names `row-major`, `col-major`)"));
        }
        let mut dims = Vec::new();
        if !self.cursor.eat(']') {
            loop {
                dims.push(self.dim()?);
                if self.cursor.eat(']') {
                    break;
                }
                self.expect(",", "`,` or `]`")?;
            }
        }
        Ok(Layout::new(dims)?)
    }

    fn dim(&mut self) -> Result<LayoutDim, LayoutParseError> {
        self.cursor.skip_space();
        let start = self.cursor.offset();
        let logical = self.number("a logical dimension index")?;
        let logical = u8::try_from(logical).map_err(|_| {
            self.cursor.set_offset(start);
            self.error(format!("logical dimension {logical} is above the limit of 255"))
        })?;
        let kind = if self.cursor.eat_str("oe") {
            PhysDim::OddEven(self.packing_size()?)
        } else if self.cursor.eat_str("p") {
            PhysDim::Packed(self.packing_size()?)
        } else {
            PhysDim::Dynamic
        };
        Ok(LayoutDim { logical, kind })
    }

    fn packing_size(&mut self) -> Result<u32, LayoutParseError> {
        self.expect("(", "`(` after `p` or `oe`")?;
        self.cursor.skip_space();
        let start = self.cursor.offset();
        let size = self.number("a packing size")?;
        let size = u32::try_from(size).map_err(|_| {
            self.cursor.set_offset(start);
            self.error("packing size is above the limit of 2^32 - 1")
        })?;
        self.expect(")", "`)`")?;
        Ok(size)
    }
}
