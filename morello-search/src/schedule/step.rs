//! [`Step`]: one schedule step as data, and its text form (one line of a schedule file).
//!
//! ```text
//! tile_out 1x64x256                 tile the output (one serial loop per dim that changes)
//! split 256                         tile the one reduction dim (of an accumulating spec)
//! tile k 256                        tile any iteration dim, by name
//! parallel 1x256x512                one parallel loop over tiles of the output
//! move_to rhs L1 row-major v16      move an operand: level, then optional layout and vector size
//! pack rhs L1 [0, 2, 1, 2 p(16)]    copy an operand into a new buffer there (never a cache view)
//! to_accum                          zero the output, then accumulate into it
//! peel 16                           compute the first 16 of the reduction, accumulate the rest
//! split_epilogue | as_matmul | padding_regions | softmax_parts L1 | pad L1 32
//! select BroadcastVecMultAdd        a kernel
//! ```
//!
//! Operands are named (`lhs`) or numbered (`0`); layouts are `row-major`, `col-major` or the
//! bracketed form of `morello_core::layout`. A step's fields are kept as written and checked when
//! the step is applied, so a refusal can name the spec it was applied to.

use std::fmt;

/// Whether a move may take a cache view of the operand or must copy it into a new buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Copy {
    /// `move_to`: a cache view when the search offers one with that layout, else a new buffer.
    ViewOrBuffer,
    /// `pack`: always a new buffer.
    Buffer,
}

/// One schedule step (see the module docs for the text of each).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// Tile the output to `shape`: one serial loop per output dim that changes, outermost first.
    TileOut {
        /// The output tile's shape.
        shape: Vec<u32>,
    },
    /// Tile the one reduction dim to `size` (the spec must accumulate).
    Split {
        /// The reduction tile.
        size: u32,
    },
    /// Tile the iteration dim named `dim` (`b`, `m`, `k`, `n` for a matmul) to `size`.
    Tile {
        /// The dim's name.
        dim: String,
        /// The tile size.
        size: u32,
    },
    /// One parallel loop over tiles of the output of `shape`.
    Parallel {
        /// The output tile's shape.
        shape: Vec<u32>,
    },
    /// Move an operand to a level, optionally in a layout and with a vector size.
    MoveTo {
        /// The operand's name or index.
        operand: String,
        /// The level's name.
        level: String,
        /// The destination layout (any the search offers when `None`).
        layout: Option<String>,
        /// The destination vector size in elements (any when `None`).
        vector_size: Option<u32>,
        /// Cache view or new buffer.
        copy: Copy,
    },
    /// Zero the output, then accumulate into it.
    ToAccum,
    /// Compute the first `size` of the reduction as it is, then accumulate the rest.
    Peel {
        /// The peeled chunk.
        size: u32,
    },
    /// Split a matmul's epilogue into a pass of its own.
    SplitEpilogue,
    /// Compute a one-row 1x1 convolution as a matmul.
    AsMatmul,
    /// Split a padded convolution into unpadded regions.
    PaddingRegions,
    /// Softmax as its three passes, with temporaries at `level`.
    SoftmaxParts {
        /// The temporaries' level.
        level: String,
    },
    /// Pad a matmul's columns to `columns` in buffers at `level`.
    Pad {
        /// The padded buffers' level.
        level: String,
        /// The padded column count.
        columns: u32,
    },
    /// A requantizing matmul as its matmul and its requantization, the i32 accumulator at `level`
    /// (with `vector_size` lanes in vector registers).
    RequantParts {
        /// The accumulator's level.
        level: String,
        /// Its lanes, in vector registers.
        vector_size: Option<u32>,
    },
    /// An s8s8s32 matmul as its `lhs` shifted into u8 at `level`, the correction and a u8s8s32
    /// matmul.
    ShiftS8 {
        /// The shifted `lhs`'s level.
        level: String,
    },
    /// Implement the spec with a kernel.
    Select {
        /// The kernel's name.
        kernel: String,
    },
}

fn shape_text(shape: &[u32]) -> String {
    shape.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

/// The step's line in a schedule file.
impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::TileOut { shape } => write!(f, "tile_out {}", shape_text(shape)),
            Step::Split { size } => write!(f, "split {size}"),
            Step::Tile { dim, size } => write!(f, "tile {dim} {size}"),
            Step::Parallel { shape } => write!(f, "parallel {}", shape_text(shape)),
            Step::MoveTo { operand, level, layout, vector_size, copy } => {
                let name = match copy {
                    Copy::ViewOrBuffer => "move_to",
                    Copy::Buffer => "pack",
                };
                write!(f, "{name} {operand} {level}")?;
                if let Some(layout) = layout {
                    write!(f, " {layout}")?;
                }
                if let Some(v) = vector_size {
                    write!(f, " v{v}")?;
                }
                Ok(())
            }
            Step::ToAccum => f.write_str("to_accum"),
            Step::Peel { size } => write!(f, "peel {size}"),
            Step::SplitEpilogue => f.write_str("split_epilogue"),
            Step::AsMatmul => f.write_str("as_matmul"),
            Step::PaddingRegions => f.write_str("padding_regions"),
            Step::SoftmaxParts { level } => write!(f, "softmax_parts {level}"),
            Step::Pad { level, columns } => write!(f, "pad {level} {columns}"),
            Step::Select { kernel } => write!(f, "select {kernel}"),
            Step::RequantParts { level, vector_size: None } => write!(f, "requant_parts {level}"),
            Step::RequantParts { level, vector_size: Some(v) } => write!(f, "requant_parts {level} v{v}"),
            Step::ShiftS8 { level } => write!(f, "shift_s8 {level}"),
        }
    }
}

/// A word of a line and the column (1-based, in characters) where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word<'a> {
    pub text: &'a str,
    pub column: usize,
}

/// Splits a line (without its comment) into words at blanks, keeping a bracketed layout
/// (`[0, 2, 1 p(16)]`) one word.
///
/// # Errors
/// The column and message of an unclosed `[`.
pub(super) fn words(line: &str) -> Result<Vec<Word<'_>>, (usize, String)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut depth = 0usize;
    let mut column = 0;
    for (offset, c) in line.char_indices() {
        column += 1;
        if c == '[' {
            depth += 1;
        } else if c == ']' {
            depth = depth.saturating_sub(1);
        }
        if c.is_whitespace() && depth == 0 {
            if let Some((from, col)) = start.take() {
                out.push(Word { text: &line[from..offset], column: col });
            }
        } else if start.is_none() {
            start = Some((offset, column));
        }
    }
    if let Some((from, col)) = start {
        if depth > 0 {
            return Err((col, "a `[` is not closed on this line".into()));
        }
        out.push(Word { text: &line[from..], column: col });
    }
    Ok(out)
}

/// Reads one step from its words (the first is the step's name).
///
/// # Errors
/// The column and message of the first word that is not what the step takes.
pub(super) fn parse_step(words: &[Word<'_>]) -> Result<Step, (usize, String)> {
    let (name, args) = words.split_first().ok_or((1, "expected a step".to_string()))?;
    let end = words.last().map_or(1, |w| w.column + w.text.chars().count());
    let arity = |min: usize, max: usize, usage: &str| {
        if args.len() < min {
            Err((end, format!("`{}` takes {usage}", name.text)))
        } else if args.len() > max {
            Err((args[max].column, format!("unexpected `{}`: `{}` takes {usage}", args[max].text, name.text)))
        } else {
            Ok(())
        }
    };
    let step = match name.text {
        "tile_out" | "parallel" => {
            arity(1, 1, "a shape such as 1x64x256")?;
            let shape = parse_shape(&args[0])?;
            if name.text == "tile_out" { Step::TileOut { shape } } else { Step::Parallel { shape } }
        }
        "split" => {
            arity(1, 1, "a size")?;
            Step::Split { size: parse_count(&args[0])? }
        }
        "peel" => {
            arity(1, 1, "a size")?;
            Step::Peel { size: parse_count(&args[0])? }
        }
        "tile" => {
            arity(2, 2, "a dim name and a size, such as `tile k 64`")?;
            Step::Tile { dim: args[0].text.to_string(), size: parse_count(&args[1])? }
        }
        "move_to" | "pack" => {
            arity(2, 4, "an operand, a level, and optionally a layout and a vector size such as v8")?;
            let copy = if name.text == "pack" { Copy::Buffer } else { Copy::ViewOrBuffer };
            let mut layout = None;
            let mut vector_size = None;
            for word in &args[2..] {
                if let Some(v) = vector_width(word.text) {
                    if vector_size.is_some() {
                        return Err((word.column, "the vector size is given twice".into()));
                    }
                    vector_size = Some(v.map_err(|message| (word.column, message))?);
                } else if layout.is_none() && vector_size.is_none() {
                    layout = Some(word.text.to_string());
                } else {
                    return Err((
                        word.column,
                        format!("unexpected `{}` (the layout comes before the vector size)", word.text),
                    ));
                }
            }
            Step::MoveTo {
                operand: args[0].text.to_string(),
                level: args[1].text.to_string(),
                layout,
                vector_size,
                copy,
            }
        }
        "to_accum" | "split_epilogue" | "as_matmul" | "padding_regions" => {
            arity(0, 0, "nothing")?;
            match name.text {
                "to_accum" => Step::ToAccum,
                "split_epilogue" => Step::SplitEpilogue,
                "as_matmul" => Step::AsMatmul,
                _ => Step::PaddingRegions,
            }
        }
        "softmax_parts" => {
            arity(1, 1, "a level")?;
            Step::SoftmaxParts { level: args[0].text.to_string() }
        }
        "pad" => {
            arity(2, 2, "a level and a column count")?;
            Step::Pad { level: args[0].text.to_string(), columns: parse_count(&args[1])? }
        }
        "requant_parts" => {
            arity(1, 2, "a level and optionally a vector size (v16)")?;
            let vector_size = match args.get(1) {
                Some(word) => {
                    Some(word.text.strip_prefix('v').and_then(|v| v.parse().ok()).ok_or_else(|| {
                        (word.column, format!("`{}` is not a vector size (v16)", word.text))
                    })?)
                }
                None => None,
            };
            Step::RequantParts { level: args[0].text.to_string(), vector_size }
        }
        "shift_s8" => {
            arity(1, 1, "a level")?;
            Step::ShiftS8 { level: args[0].text.to_string() }
        }
        "select" => {
            arity(1, 1, "a kernel name")?;
            Step::Select { kernel: args[0].text.to_string() }
        }
        other => {
            return Err((
                name.column,
                format!(
                    "unknown step `{other}` (steps: tile_out, split, tile, parallel, move_to, pack, to_accum, \
                     peel, split_epilogue, as_matmul, padding_regions, softmax_parts, pad, requant_parts, shift_s8, \
                     select, synthesize, sub)"
                ),
            ));
        }
    };
    Ok(step)
}

/// `vN` as a vector size: `None` when the word is not of that form.
fn vector_width(text: &str) -> Option<Result<u32, String>> {
    let digits = text.strip_prefix('v')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u32>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(format!("`{text}` is not a vector size (v1 to v{})", u32::MAX)),
    })
}

fn parse_count(word: &Word<'_>) -> Result<u32, (usize, String)> {
    match word.text.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err((word.column, format!("`{}` is not a size (a whole number from 1)", word.text))),
    }
}

fn parse_shape(word: &Word<'_>) -> Result<Vec<u32>, (usize, String)> {
    let mut column = word.column;
    let mut out = Vec::new();
    for part in word.text.split('x') {
        match part.parse::<u32>() {
            Ok(n) if n > 0 => out.push(n),
            _ => {
                return Err((
                    column,
                    format!(
                        "`{part}` in `{}` is not a size (a shape is sizes joined by x, such as 1x64x256)",
                        word.text
                    ),
                ));
            }
        }
        column += part.chars().count() + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn step(line: &str) -> Result<Step, (usize, String)> {
        parse_step(&words(line).unwrap())
    }

    #[test]
    fn every_step_prints_and_parses_back() {
        for line in [
            "tile_out 1x64x256",
            "split 256",
            "tile k 8",
            "parallel 1x256x512",
            "move_to rhs L1",
            "move_to 0 VRF row-major v8",
            "pack rhs L1 [0, 2, 1, 2 p(16)]",
            "move_to out RF v4",
            "to_accum",
            "peel 16",
            "split_epilogue",
            "as_matmul",
            "padding_regions",
            "softmax_parts L1",
            "pad L1 32",
            "requant_parts VRF v16",
            "requant_parts L1",
            "shift_s8 GL",
            "select BroadcastVecMultAdd",
        ] {
            assert_eq!(step(line).unwrap().to_string(), line);
        }
    }

    #[test]
    fn bad_words_name_their_column() {
        assert_eq!(step("tile_out 1x0x4").unwrap_err().0, 12);
        assert_eq!(step("split").unwrap_err().0, 6);
        assert_eq!(step("to_accum now").unwrap_err().0, 10);
        assert_eq!(step("  frobnicate").unwrap_err().0, 3);
        assert_eq!(step("move_to rhs L1 v8 row-major").unwrap_err().0, 19);
        assert!(words("pack rhs L1 [0, 2").unwrap_err().1.contains("not closed"));
    }
}
