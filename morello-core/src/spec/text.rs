//! The text form of specs and memory limits.
//!
//! ```text
//! spec    = kind "(" shape ("," operand)+ ["," "serial"] ")"
//! kind    = a form's name (`PrimitiveKind::ALL`: Matmul, MatmulAccum, Move, FillZero, ...),
//!           then its operator's attributes: a convolution's geometry, `:sHxW` strides,
//!           `:dHxW` dilations, `:pTxBxLxR` zero padding (`Conv:s2x2:p0x1x0x1`)
//! shape   = N ("x" N)*                                   (the iteration shape)
//! operand = dtype level layout ["c" N] ["v" N] ["s" N]  e.g. `f32 L1 [1, 0, 1 p(4)] c1 s256`
//! layout  = "row-major" | "col-major" | "[" ... "]"
//! limits  = level "=" size ("," level "=" size)*        e.g. `L1=16KiB,VRF=8`
//! ```
//!
//! `cN` (only N innermost physical dims contiguous) is printed when the operand is not one
//! contiguous run; `vN` when it lives in vector registers; `sN` the class of its buffer's pitch
//! (the stride between runs, in elements, modulo the caches' set period: see
//! [`TensorSpec::pitch`]) when it has one. Level names come from the target.

use std::fmt;

use super::{LogicalSpec, PrimitiveKind, SpecError, TensorSpec};
use crate::dtype::Dtype;
use crate::layout::{Layout, LayoutView};
use crate::shape::Shape;
use crate::target::{MemVec, Target, parse_size};
use crate::text::Cursor;

/// Why spec or limits text could not be read (the user's input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecParseError {
    /// Malformed text.
    #[error("{message} (in `{text}`)")]
    Syntax {
        /// What was wrong, and where.
        message: String,
        /// The text.
        text: String,
    },
    /// The text parses but the spec is invalid.
    #[error(transparent)]
    Invalid(#[from] SpecError),
}

impl TensorSpec {
    /// The operand's text (`f32 GL row-major`), with level names from `target`.
    pub fn display<'a>(&'a self, target: &'a Target) -> impl fmt::Display + 'a {
        DisplayOperand { operand: self, target }
    }
}

struct DisplayOperand<'a> {
    operand: &'a TensorSpec,
    target: &'a Target,
}

/// `row-major` or `col-major` when the layout is that order's canonical form for the shape.
pub(crate) fn layout_name(layout: &Layout, shape: &Shape) -> Option<&'static str> {
    let rank = shape.rank() as u8;
    let named = [("row-major", Layout::row_major(rank)), ("col-major", Layout::col_major(rank))];
    named.into_iter().find_map(|(name, order)| {
        let canonical = LayoutView::dense(&order, shape).ok()?.layout;
        (canonical == *layout).then_some(name)
    })
}

impl fmt::Display for DisplayOperand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.operand;
        let level = self.target.levels().get(o.level.index()).map_or("?", |l| l.name.as_str());
        write!(f, "{} {level} ", o.dtype)?;
        match layout_name(&o.layout, &o.shape) {
            Some(name) => f.write_str(name)?,
            None => write!(f, "{}", o.layout)?,
        }
        if !o.is_fully_contiguous() {
            write!(f, " c{}", o.contiguous_dims)?;
        }
        if let Some(v) = o.vector_size {
            write!(f, " v{v}")?;
        }
        if let Some(p) = o.pitch {
            write!(f, " s{p}")?;
        }
        Ok(())
    }
}

impl LogicalSpec {
    /// The spec's text, with level names from `target`.
    pub fn display<'a>(&'a self, target: &'a Target) -> impl fmt::Display + 'a {
        DisplaySpec { spec: self, target }
    }

    /// Parses spec text (not canonicalised; see [`LogicalSpec::canonicalize`]).
    ///
    /// # Errors
    /// [`SpecParseError`] for malformed text.
    pub fn parse(text: &str, target: &Target) -> Result<LogicalSpec, SpecParseError> {
        Reader { cursor: Cursor::new(text), target }.spec()
    }
}

struct DisplaySpec<'a> {
    spec: &'a LogicalSpec,
    target: &'a Target,
}

impl fmt::Display for DisplaySpec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}", self.spec.kind, self.spec.shape)?;
        for operand in &self.spec.operands {
            write!(f, ", {}", operand.display(self.target))?;
        }
        if self.spec.serial_only {
            f.write_str(", serial")?;
        }
        f.write_str(")")
    }
}

/// The spec grammar over the workspace's [`Cursor`].
struct Reader<'a> {
    cursor: Cursor<'a>,
    target: &'a Target,
}

impl<'a> Reader<'a> {
    fn error(&self, message: impl fmt::Display) -> SpecParseError {
        SpecParseError::Syntax {
            message: format!("{message} at column {}", self.cursor.offset() + 1),
            text: self.cursor.text().to_string(),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.cursor.eat(c)
    }

    /// A run of characters that are not spaces, commas or parentheses.
    fn word(&mut self) -> &'a str {
        let span =
            self.cursor.take_while_after_space(|c| !(c.is_whitespace() || matches!(c, ',' | '(' | ')')));
        self.cursor.slice(span)
    }

    fn spec(mut self) -> Result<LogicalSpec, SpecParseError> {
        let word = self.word().to_string();
        let (name, suffix) = word.split_once(':').map_or((word.as_str(), ""), |(n, s)| (n, s));
        let mut kind = PrimitiveKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                self.error(format!(
                    "unknown spec kind `{name}`; expected one of {}",
                    PrimitiveKind::ALL.map(|k| k.name()).join(", ")
                ))
            })?;
        match kind.with_attributes(suffix) {
            Some(with) => kind = with.map_err(|e| self.error(e))?,
            None if !suffix.is_empty() => {
                return Err(self.error(format!("`{name}` takes no attributes (`:{suffix}`)")));
            }
            None => {}
        }
        if !self.eat('(') {
            return Err(self.error("expected `(` after the kind"));
        }
        let shape_text = self.word().to_string();
        let shape: Shape =
            shape_text.parse().map_err(|e| self.error(format!("iteration shape `{shape_text}`: {e}")))?;
        let shapes = kind.operand_shapes(&shape)?;
        let mut operands = Vec::new();
        let mut serial_only = false;
        loop {
            if self.eat(')') {
                break;
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `)`"));
            }
            if self.cursor.looking_at("serial") {
                self.word();
                serial_only = true;
                if !self.eat(')') {
                    return Err(self.error("`serial` must be the last item"));
                }
                break;
            }
            let Some(operand_shape) = shapes.get(operands.len()) else {
                return Err(self.error(format!("{} takes {} operands", kind.name(), shapes.len())));
            };
            operands.push(self.operand(operand_shape.clone())?);
        }
        if !self.cursor.at_end() {
            return Err(self.error("unexpected text after the closing `)`"));
        }
        if operands.len() != shapes.len() {
            return Err(SpecError::OperandCount {
                kind: kind.name(),
                expected: shapes.len(),
                found: operands.len(),
            }
            .into());
        }
        Ok(LogicalSpec { kind, shape, operands, serial_only })
    }

    fn operand(&mut self, shape: Shape) -> Result<TensorSpec, SpecParseError> {
        let dtype_text = self.word().to_string();
        let dtype: Dtype = dtype_text.parse().map_err(|e| self.error(e))?;
        let level_text = self.word().to_string();
        let level = self.target.level_id(&level_text).ok_or_else(|| {
            self.error(format!(
                "unknown level `{level_text}`; {} has {}",
                self.target.name(),
                self.target.level_names().join(", ")
            ))
        })?;
        let layout = if self.cursor.looking_at("[") {
            let rest = self.cursor.rest();
            let len = rest.find(']').map(|i| i + 1).ok_or_else(|| self.error("unclosed `[` in a layout"))?;
            let layout: Layout = rest[..len].parse().map_err(|e| self.error(format!("layout: {e}")))?;
            self.cursor.advance(len);
            layout
        } else {
            // A name means that order's canonical form for the shape, which is what `cN` counts.
            let name = self.word().to_string();
            let layout = Layout::parse_for_rank(&name, shape.rank())
                .map_err(|e| self.error(format!("layout `{name}`: {e}")))?;
            LayoutView::dense(&layout, &shape)
                .map_err(|e| self.error(format!("layout `{name}`: {e}")))?
                .layout
        };
        let mut contiguous_dims = layout.len() as u8;
        let mut vector_size = None;
        let mut pitch = None;
        loop {
            if matches!(self.cursor.peek(), Some(',' | ')') | None) {
                break;
            }
            let word = self.word().to_string();
            let number = |w: &str| w.get(1..).and_then(|n| n.parse::<u32>().ok());
            match (word.chars().next(), number(&word)) {
                (Some('c'), Some(n)) if n <= 255 => contiguous_dims = n as u8,
                (Some('v'), Some(n)) if n > 0 => vector_size = Some(n),
                (Some('s'), Some(n)) => pitch = Some(n),
                _ => {
                    return Err(
                        self.error(format!("unexpected `{word}` (expected `cN`, `vN`, `sN`, `,` or `)`)"))
                    );
                }
            }
        }
        Ok(TensorSpec { shape, dtype, level, layout, contiguous_dims, vector_size, pitch })
    }
}

/// Parses memory limits `L1=16KiB,VRF=8` over the target's capacities (levels not named keep
/// their capacity).
///
/// # Errors
/// [`SpecParseError::Syntax`] for an unknown level or a malformed size.
pub fn parse_limits(text: &str, target: &Target) -> Result<MemVec, SpecParseError> {
    let syntax = |message: String| SpecParseError::Syntax { message, text: text.to_string() };
    let mut limits = target.capacities();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, size) = part
            .split_once('=')
            .ok_or_else(|| syntax(format!("`{part}` is not LEVEL=SIZE, e.g. L1=16KiB")))?;
        let level = target.level_id(name.trim()).ok_or_else(|| {
            syntax(format!(
                "unknown level `{}`; {} has {}",
                name.trim(),
                target.name(),
                target.level_names().join(", ")
            ))
        })?;
        let value = parse_size(size).map_err(syntax)?;
        limits.set(level, value);
    }
    Ok(limits)
}
