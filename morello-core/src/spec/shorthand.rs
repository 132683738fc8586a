//! Specs from shorthand: the few words a user types instead of the full spec text.
//!
//! ```text
//! matmul MxKxN            lhs [b, M, K], rhs [b, K, N], out [b, M, N]   (batch b, default 1)
//! move SHAPE              source and destination of SHAPE                (layouts: from, to)
//! zero SHAPE              a fill with zeros of SHAPE
//! softmax MxN             softmax along the rows of an MxN tensor (x and y row-major)
//! conv IMAGE FILTERS     a 2-D convolution; the shapes in the order of its layouts
//!                         (ConvOptions: NCHW and OIHW by default, NHWC with HWIO or OHWI;
//!                         strides, dilations, padding `N`, `T,B,L,R`, `valid` or `same`)
//! Matmul(1x8x8x8, ...)    the full spec text (anything with a `(`)
//! ```
//!
//! Every operand is in the target's home level; layouts are row-major unless a move names others;
//! bf16 matmuls and convolutions accumulate into f32, and the quantized combinations of
//! [`OperandDtypes`] (`u8s8s32`) name each operand's dtype. [`SpecBuilder`] sets the rest (dtypes, batch,
//! accumulation, a move's layouts) and builds the [`CanonicalSpec`]:
//!
//! ```
//! use morello_core::dtype::Dtype;
//! use morello_core::spec::SpecBuilder;
//! use morello_core::target::Target;
//!
//! let target = Target::builtin("x86-avx2", 1).unwrap();
//! let spec = SpecBuilder::matmul(64, 64, 64).dtype(Dtype::U32).build(&target).unwrap();
//! assert_eq!(
//!     spec.display(&target).to_string(),
//!     "Matmul(1x64x64x64, u32 GL row-major, u32 GL row-major, u32 GL row-major)"
//! );
//! let same = SpecBuilder::parse("matmul 64x64x64").unwrap().dtype(Dtype::U32).build(&target).unwrap();
//! assert_eq!(spec, same);
//! ```

use std::fmt;

use crate::dtype::{Dtype, OperandDtypes};
use crate::layout::{Layout, LayoutParseError};
use crate::shape::{Shape, ShapeError};
use crate::spec::{
    Activation, CanonicalSpec, ConvGeometry, FillValue, LogicalSpec, PrimitiveKind, RequantEpilogue,
    SpecError, SpecParseError, TensorSpec,
};
use crate::target::Target;

/// Why shorthand does not name a spec (always the user's input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShorthandError {
    /// The first word is not a form.
    #[error("unknown spec `{word}`: use matmul, move, zero, conv, softmax, or the full spec text")]
    UnknownForm {
        /// The word.
        word: String,
    },
    /// Nothing was given.
    #[error("no spec given: use matmul, move, zero, conv, softmax, or the full spec text")]
    Empty,
    /// A form is missing its shape(s).
    #[error("{form} needs {what}, e.g. `{example}`")]
    Missing {
        /// The form (`matmul`).
        form: &'static str,
        /// What it needs (`its size`).
        what: &'static str,
        /// An example.
        example: &'static str,
    },
    /// Words after the form's shapes.
    #[error("unexpected `{text}` after the spec")]
    Unexpected {
        /// The extra words.
        text: String,
    },
    /// A shape does not parse.
    #[error("invalid {what} `{text}`: {source}")]
    Shape {
        /// Which shape (`matmul size`).
        what: &'static str,
        /// The text.
        text: String,
        /// Why.
        source: ShapeError,
    },
    /// A shape has the wrong number of dims.
    #[error("{what} `{text}` must be {expected}")]
    Rank {
        /// Which shape.
        what: &'static str,
        /// The text.
        text: String,
        /// What it must be (`MxKxN, e.g. 64x64x64`).
        expected: &'static str,
    },
    /// A shape built from the shorthand is out of range (for example the batch times a dim).
    #[error("{what}: {source}")]
    Dims {
        /// Which spec (`matmul 2x4x4x4`).
        what: String,
        /// Why.
        source: ShapeError,
    },
    /// A move's layout does not parse or does not fit its shape.
    #[error("invalid {which} layout `{text}`: {source}")]
    Layout {
        /// `source`, `destination` or `rhs`.
        which: &'static str,
        /// The text.
        text: String,
        /// Why.
        source: LayoutParseError,
    },
    /// A convolution's filters do not fit its image.
    #[error("conv filters {filters} do not fit image {image}: {why}")]
    ConvFilters {
        /// The image shape.
        image: Shape,
        /// The filter shape.
        filters: Shape,
        /// What is wrong.
        why: String,
    },
    /// A convolution option does not parse.
    #[error("invalid {what} `{text}`: expected {expected}")]
    ConvOption {
        /// Which option.
        what: &'static str,
        /// The text.
        text: String,
        /// What it may be.
        expected: &'static str,
    },
    /// Dtypes that differ between operands for a form whose operands share one.
    #[error(
        "--dtype {dtypes} names the dtypes of a matmul's or convolution's operands; a {form} takes one dtype"
    )]
    MixedDtypes {
        /// The form (`move`).
        form: &'static str,
        /// The dtypes given.
        dtypes: OperandDtypes,
    },
    /// The VNNI layout asked of an `rhs` whose `k` is not a multiple of 4.
    #[error(
        "--rhs-layout vnni needs K a multiple of 4 (each column holds its values of k in groups of four), \
         found K = {k}: pad K with zeros to {padded} in lhs and rhs"
    )]
    VnniReduction {
        /// The reduction length.
        k: u32,
        /// The next multiple of 4.
        padded: u64,
    },
    /// The VNNI filter layout asked of filters whose input channels are not a multiple of 4.
    #[error(
        "--filter-layout vnni needs the input channels a multiple of 4 (each output channel holds its \
         input channels in groups of four), found {c}: pad the channels with zeros to {padded} in the \
         image and the filters"
    )]
    VnniFilters {
        /// The input channels.
        c: u32,
        /// The next multiple of 4.
        padded: u64,
    },
    /// A float epilogue and a requantizing one asked separately, together.
    #[error(
        "a float epilogue (bias, bias,relu, bias,gelu) and requantization were both asked: a requantized \
         matmul's epilogue is one of requant, bias,requant or bias,relu,requant (each with -i8 for an i8 \
         output)"
    )]
    EpilogueWithRequant,
    /// The full spec text does not parse.
    #[error("invalid spec: {0}")]
    Text(#[source] SpecParseError),
    /// The spec is not valid for the target.
    #[error("invalid spec {spec}: {source}")]
    Invalid {
        /// The spec's text.
        spec: String,
        /// Why.
        source: SpecError,
    },
}

/// The VNNI layout of a matmul's `rhs` `[b, k, n]`, `[K/4][N][4]` in each batch: a strip of four
/// values of `k` inside `n`, what `vpdpbusd` reads (`--rhs-layout vnni`). `k` a multiple of 4
/// fills every strip; otherwise the last strip is padding.
pub const VNNI_LAYOUT: &str = "[0, 1, 2, 1 p(4)]";

/// The form of a shorthand: which primitive, over which shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shorthand {
    /// `matmul MxKxN`.
    Matmul {
        /// Rows of the output.
        m: u32,
        /// The reduction length.
        k: u32,
        /// Columns of the output.
        n: u32,
    },
    /// `move SHAPE`: a copy that may change the layout.
    Move {
        /// The shape.
        shape: Shape,
    },
    /// `zero SHAPE`: a fill with zeros.
    Zero {
        /// The shape.
        shape: Shape,
    },
    /// `softmax MxN`: softmax along the last dim.
    Softmax {
        /// Rows.
        m: u32,
        /// Columns (the softmax's length).
        n: u32,
    },
    /// `conv IMAGE FILTERS`, in the order of the [`ConvOptions`] layouts (NCHW and OIHW by default).
    Conv {
        /// The image, e.g. NxCxHxW.
        image: Shape,
        /// The filters, e.g. FxCxFHxFW.
        filters: Shape,
    },
    /// The full spec text, parsed against the target when built.
    Text(String),
}

impl Shorthand {
    /// Parses `matmul 64x64x64`, `move 8x8`, `zero 64x64`, `conv 1x4x8x8 8x4x3x3` (words split on
    /// white space) or the full spec text.
    ///
    /// # Errors
    /// [`ShorthandError`] saying what is wrong.
    pub fn parse(text: &str) -> Result<Shorthand, ShorthandError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some(first) = words.first() else { return Err(ShorthandError::Empty) };
        let exactly = |n: usize| match words.get(n..) {
            Some(extra) if !extra.is_empty() => Err(ShorthandError::Unexpected { text: extra.join(" ") }),
            _ => Ok(()),
        };
        let missing = |form, what, example| ShorthandError::Missing { form, what, example };
        match first.to_ascii_lowercase().as_str() {
            "matmul" => {
                let size =
                    words.get(1).ok_or_else(|| missing("matmul", "its size", "matmul 64x64x64 (MxKxN)"))?;
                exactly(2)?;
                let dims = shape(size, "matmul size")?;
                let [m, k, n] = *dims.dims() else {
                    return Err(ShorthandError::Rank {
                        what: "matmul size",
                        text: (*size).to_string(),
                        expected: "MxKxN, e.g. 64x64x64",
                    });
                };
                Ok(Shorthand::Matmul { m, k, n })
            }
            "move" => {
                let text = words
                    .get(1)
                    .ok_or_else(|| missing("move", "a shape", "move 8x8 --from row-major --to col-major"))?;
                exactly(2)?;
                Ok(Shorthand::Move { shape: shape(text, "move shape")? })
            }
            "softmax" => {
                let size =
                    words.get(1).ok_or_else(|| missing("softmax", "its size", "softmax 32x1024 (MxN)"))?;
                exactly(2)?;
                let dims = shape(size, "softmax size")?;
                let [m, n] = *dims.dims() else {
                    return Err(ShorthandError::Rank {
                        what: "softmax size",
                        text: (*size).to_string(),
                        expected: "MxN, e.g. 32x1024",
                    });
                };
                Ok(Shorthand::Softmax { m, n })
            }
            "zero" => {
                let text = words.get(1).ok_or_else(|| missing("zero", "a shape", "zero 64x64"))?;
                exactly(2)?;
                Ok(Shorthand::Zero { shape: shape(text, "shape")? })
            }
            "conv" => {
                let (Some(image), Some(filters)) = (words.get(1), words.get(2)) else {
                    return Err(missing(
                        "conv",
                        "an image and filters",
                        "conv 1x4x8x8 8x4x3x3 (NxCxHxW FxCxFHxFW) or conv 1x8x8x4 3x3x4x8 --layout nhwc",
                    ));
                };
                exactly(3)?;
                let (image, filters) = (shape(image, "conv image")?, shape(filters, "conv filters")?);
                if image.rank() != 4 || filters.rank() != 4 {
                    return Err(ShorthandError::Rank {
                        what: "conv image and filters",
                        text: format!("{image} {filters}"),
                        expected: "two shapes of four dims: NxCxHxW FxCxFHxFW (or NxHxWxC HxWxIxO with --layout nhwc)",
                    });
                }
                Ok(Shorthand::Conv { image, filters })
            }
            _ if text.contains('(') => Ok(Shorthand::Text(text.trim().to_string())),
            other => Err(ShorthandError::UnknownForm { word: other.to_string() }),
        }
    }
}

impl fmt::Display for Shorthand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shorthand::Matmul { m, k, n } => write!(f, "matmul {m}x{k}x{n}"),
            Shorthand::Move { shape } => write!(f, "move {shape}"),
            Shorthand::Zero { shape } => write!(f, "zero {shape}"),
            Shorthand::Softmax { m, n } => write!(f, "softmax {m}x{n}"),
            Shorthand::Conv { image, filters } => write!(f, "conv {image} {filters}"),
            Shorthand::Text(text) => f.write_str(text),
        }
    }
}

fn shape(text: &str, what: &'static str) -> Result<Shape, ShorthandError> {
    text.parse::<Shape>().map_err(|source| ShorthandError::Shape { what, text: text.to_string(), source })
}

/// The memory order of a convolution's image and output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConvLayout {
    /// Batch, channels, rows, columns (the default).
    #[default]
    Nchw,
    /// Batch, rows, columns, channels.
    Nhwc,
}

/// The memory order of a convolution's filters (O output channels, I input channels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterLayout {
    /// O, I, rows, columns (the default with NCHW).
    Oihw,
    /// Rows, columns, I, O (the default with NHWC).
    Hwio,
    /// O, rows, columns, I.
    Ohwi,
    /// HWIO with four input channels side by side in each output channel (`[FH][FW][I/4][O][4]`):
    /// every tap's slice is the VNNI layout that the int8 kernels read (`--filter-layout vnni`;
    /// the shape is written in HWIO order). I a multiple of 4.
    HwioVnni,
}

/// A convolution's zero padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// Top, bottom, left, right (`valid` is all zeros).
    Explicit([u32; 4]),
    /// As much as keeps `ceil(size / stride)` outputs, the odd one at the bottom and right.
    Same,
}

/// How `conv IMAGE FILTERS` reads and computes: layouts, strides, dilations and padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvOptions {
    /// The image and output layout.
    pub layout: ConvLayout,
    /// The filter layout (`None`: OIHW with NCHW, HWIO with NHWC).
    pub filter_layout: Option<FilterLayout>,
    /// Strides along rows and columns.
    pub stride: [u32; 2],
    /// Dilations along rows and columns.
    pub dilation: [u32; 2],
    /// Zero padding.
    pub padding: Padding,
}

impl Default for ConvOptions {
    fn default() -> Self {
        ConvOptions {
            layout: ConvLayout::Nchw,
            filter_layout: None,
            stride: [1, 1],
            dilation: [1, 1],
            padding: Padding::Explicit([0; 4]),
        }
    }
}

fn option_error(what: &'static str, text: &str, expected: &'static str) -> ShorthandError {
    ShorthandError::ConvOption { what, text: text.to_string(), expected }
}

/// The value of the choice named `text` (case-insensitively), or the option's error.
fn choice<T: Copy>(
    what: &'static str,
    text: &str,
    choices: &[(&str, T)],
    expected: &'static str,
) -> Result<T, ShorthandError> {
    choices
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|&(_, value)| value)
        .ok_or_else(|| option_error(what, text, expected))
}

impl std::str::FromStr for ConvLayout {
    type Err = ShorthandError;

    fn from_str(text: &str) -> Result<Self, ShorthandError> {
        let choices = [("nchw", ConvLayout::Nchw), ("nhwc", ConvLayout::Nhwc)];
        choice("conv layout", text, &choices, "nchw or nhwc")
    }
}

impl std::str::FromStr for FilterLayout {
    type Err = ShorthandError;

    fn from_str(text: &str) -> Result<Self, ShorthandError> {
        let choices = [
            ("oihw", FilterLayout::Oihw),
            ("hwio", FilterLayout::Hwio),
            ("ohwi", FilterLayout::Ohwi),
            ("vnni", FilterLayout::HwioVnni),
        ];
        choice("filter layout", text, &choices, "oihw, hwio, ohwi or vnni")
    }
}

impl std::str::FromStr for Padding {
    type Err = ShorthandError;

    fn from_str(text: &str) -> Result<Self, ShorthandError> {
        let expected = "N, TOP,BOTTOM,LEFT,RIGHT, valid or same";
        match text.to_ascii_lowercase().as_str() {
            "same" => return Ok(Padding::Same),
            "valid" => return Ok(Padding::Explicit([0; 4])),
            _ => {}
        }
        let numbers: Vec<u32> = text
            .split(',')
            .map(|n| n.trim().parse::<u32>().map_err(|_| option_error("padding", text, expected)))
            .collect::<Result<_, _>>()?;
        match numbers.as_slice() {
            [p] => Ok(Padding::Explicit([*p; 4])),
            [t, b, l, r] => Ok(Padding::Explicit([*t, *b, *l, *r])),
            _ => Err(option_error("padding", text, expected)),
        }
    }
}

/// Parses a stride or dilation: `N` (both axes) or `HxW`.
///
/// # Errors
/// [`ShorthandError::ConvOption`] for anything else, or zero.
pub fn parse_pair(text: &str, what: &'static str) -> Result<[u32; 2], ShorthandError> {
    let numbers: Vec<u32> = text
        .split('x')
        .map(|n| n.parse::<u32>().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| option_error(what, text, "a positive N or HxW"))?;
    match numbers.as_slice() {
        [n] => Ok([*n, *n]),
        [h, w] => Ok([*h, *w]),
        _ => Err(option_error(what, text, "a positive N or HxW")),
    }
}

/// Builds a [`CanonicalSpec`] from a [`Shorthand`] and the settings it leaves open.
///
/// Defaults: f32, batch 1, no accumulation, row-major layouts. Settings that do not apply to the
/// form are ignored (a batch for a move); the full spec text ignores all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecBuilder {
    shorthand: Shorthand,
    dtypes: OperandDtypes,
    batch: u32,
    accum: bool,
    from: Option<String>,
    to: Option<String>,
    rhs_layout: Option<String>,
    conv: ConvOptions,
    epilogue: Option<Activation>,
    requant: Option<(RequantEpilogue, Dtype)>,
}

impl SpecBuilder {
    /// A builder for `shorthand` with the defaults.
    pub fn new(shorthand: Shorthand) -> Self {
        SpecBuilder {
            shorthand,
            dtypes: OperandDtypes::single(Dtype::F32),
            batch: 1,
            accum: false,
            from: None,
            to: None,
            rhs_layout: None,
            conv: ConvOptions::default(),
            epilogue: None,
            requant: None,
        }
    }

    /// A builder for shorthand text (see [`Shorthand::parse`]).
    ///
    /// # Errors
    /// As [`Shorthand::parse`].
    pub fn parse(text: &str) -> Result<Self, ShorthandError> {
        Shorthand::parse(text).map(SpecBuilder::new)
    }

    /// `matmul MxKxN`.
    pub fn matmul(m: u32, k: u32, n: u32) -> Self {
        SpecBuilder::new(Shorthand::Matmul { m, k, n })
    }

    /// The element type of the operands (bf16 reductions accumulate into f32).
    pub fn dtype(mut self, dtype: Dtype) -> Self {
        self.dtypes = OperandDtypes::single(dtype);
        self
    }

    /// The element types of each operand (`u8s8s32`: u8 lhs, i8 rhs, i32 output), for a matmul
    /// or convolution; other forms need [`OperandDtypes::uniform`] ones.
    pub fn dtypes(mut self, dtypes: OperandDtypes) -> Self {
        self.dtypes = dtypes;
        self
    }

    /// The batch size of a matmul.
    pub fn batch(mut self, batch: u32) -> Self {
        self.batch = batch;
        self
    }

    /// Accumulate into the output instead of overwriting it (matmul, conv).
    pub fn accumulate(mut self) -> Self {
        self.accum = true;
        self
    }

    /// The source layout of a move, as text (`row-major`, `[1, 0]`, `[0, 1, 1 p(4)]`).
    pub fn from_layout(mut self, layout: impl Into<String>) -> Self {
        self.from = Some(layout.into());
        self
    }

    /// The destination layout of a move, as text.
    pub fn to_layout(mut self, layout: impl Into<String>) -> Self {
        self.to = Some(layout.into());
        self
    }

    /// How a convolution's shapes are read and what it computes (layouts, strides, padding).
    pub fn conv(mut self, options: ConvOptions) -> Self {
        self.conv = options;
        self
    }

    /// The layout of a matmul's `rhs` `[b, k, n]`, as text (`row-major`, `[0, 2, 1]`), or `vnni`:
    /// [`VNNI_LAYOUT`], the four values of `k` of each column side by side (weights packed
    /// ahead of time for the int8 kernels).
    pub fn rhs_layout(mut self, layout: impl Into<String>) -> Self {
        self.rhs_layout = Some(layout.into());
        self
    }

    /// A matmul followed by a per-column bias and `activation` (`MatmulBias`).
    pub fn epilogue(mut self, activation: Activation) -> Self {
        self.epilogue = Some(activation);
        self
    }

    /// A quantized matmul requantized to `out` (u8 or i8) in its epilogue (`MatmulRequant`), with a
    /// per-column f32 scale and zero point, and with `epilogue`'s i32 bias and ReLU; its dtypes
    /// name the inputs and the i32 accumulator.
    pub fn requant(mut self, epilogue: RequantEpilogue, out: Dtype) -> Self {
        self.requant = Some((epilogue, out));
        self
    }

    /// The shorthand being built.
    pub fn shorthand(&self) -> &Shorthand {
        &self.shorthand
    }

    /// The logical spec, before validation against the target.
    ///
    /// # Errors
    /// [`ShorthandError`] for shapes out of range, bad layouts, filters that do not fit, or
    /// spec text that does not parse.
    pub fn logical(&self, target: &Target) -> Result<LogicalSpec, ShorthandError> {
        let OperandDtypes { lhs: lhs_dtype, rhs: rhs_dtype, out: out_dtype } = self.dtypes;
        // The one dtype of a form whose operands share it.
        let dtype = |form: &'static str| {
            self.dtypes.uniform().ok_or(ShorthandError::MixedDtypes { form, dtypes: self.dtypes })
        };
        let operand = |shape: Shape, dtype: Dtype, layout: Layout| TensorSpec {
            contiguous_dims: layout.len() as u8,
            shape,
            dtype,
            level: target.home_level(),
            layout,
            vector_size: None,
            pitch: None,
        };
        let row = |rank: usize| Layout::row_major(rank as u8);
        Ok(match &self.shorthand {
            Shorthand::Matmul { m, k, n } => {
                let b = self.batch;
                let what = || format!("matmul {b}x{m}x{k}x{n}");
                let dims = |d: &[u32]| {
                    Shape::new(d.to_vec()).map_err(|source| ShorthandError::Dims { what: what(), source })
                };
                let rhs_layout = match self.rhs_layout.as_deref() {
                    None => row(3),
                    Some(text) => {
                        let vnni = text.trim() == "vnni";
                        if vnni && k % 4 != 0 {
                            return Err(ShorthandError::VnniReduction {
                                k: *k,
                                padded: u64::from(*k).div_ceil(4) * 4,
                            });
                        }
                        let text = if vnni { VNNI_LAYOUT } else { text };
                        Layout::parse_for_rank(text, 3).map_err(|source| ShorthandError::Layout {
                            which: "rhs",
                            text: text.to_string(),
                            source,
                        })?
                    }
                };
                let mut operands = vec![
                    operand(dims(&[b, *m, *k])?, lhs_dtype, row(3)),
                    operand(dims(&[b, *k, *n])?, rhs_dtype, rhs_layout),
                    operand(dims(&[b, *m, *n])?, out_dtype, row(3)),
                ];
                let kind = match (self.epilogue, self.requant) {
                    (Some(_), Some(_)) => return Err(ShorthandError::EpilogueWithRequant),
                    (Some(activation), None) => {
                        operands.insert(2, operand(dims(&[*n])?, out_dtype, row(1)));
                        PrimitiveKind::MatmulBias { activation }
                    }
                    (None, Some((epilogue, requant))) => {
                        operands[2].dtype = requant;
                        operands.insert(2, operand(dims(&[*n])?, requant, row(1)));
                        operands.insert(2, operand(dims(&[*n])?, Dtype::F32, row(1)));
                        if epilogue.has_bias() {
                            operands.insert(2, operand(dims(&[*n])?, Dtype::I32, row(1)));
                        }
                        PrimitiveKind::MatmulRequant { epilogue }
                    }
                    (None, None) => PrimitiveKind::Matmul { accum: self.accum },
                };
                LogicalSpec { kind, shape: dims(&[b, *m, *k, *n])?, operands, serial_only: false }
            }
            Shorthand::Move { shape } => {
                let layout = |text: &Option<String>, which| {
                    let text = text.as_deref().unwrap_or("row-major");
                    Layout::parse_for_rank(text, shape.rank()).map_err(|source| ShorthandError::Layout {
                        which,
                        text: text.to_string(),
                        source,
                    })
                };
                let (from, to) = (layout(&self.from, "source")?, layout(&self.to, "destination")?);
                let dtype = dtype("move")?;
                LogicalSpec {
                    kind: PrimitiveKind::Move,
                    shape: shape.clone(),
                    operands: vec![operand(shape.clone(), dtype, from), operand(shape.clone(), dtype, to)],
                    serial_only: false,
                }
            }
            Shorthand::Softmax { m, n } => {
                let shape = Shape::new(vec![*m, *n])
                    .map_err(|source| ShorthandError::Dims { what: format!("softmax {m}x{n}"), source })?;
                LogicalSpec {
                    kind: PrimitiveKind::Softmax,
                    shape: shape.clone(),
                    operands: vec![
                        operand(shape.clone(), dtype("softmax")?, row(2)),
                        operand(shape, dtype("softmax")?, row(2)),
                    ],
                    serial_only: false,
                }
            }
            Shorthand::Zero { shape } => LogicalSpec {
                kind: PrimitiveKind::Fill { value: FillValue::Zero },
                shape: shape.clone(),
                operands: vec![operand(shape.clone(), dtype("zero")?, row(shape.rank()))],
                serial_only: false,
            },
            Shorthand::Conv { image, filters } => {
                let (kind, shape, layouts) = conv_spec(image, filters, &self.conv, self.accum)?;
                let dims = |d: &[u32]| {
                    Shape::new(d.to_vec()).map_err(|source| ShorthandError::Dims {
                        what: format!("conv {image} {filters}"),
                        source,
                    })
                };
                let shapes = kind.operand_shapes(&dims(&shape)?).map_err(|source| {
                    ShorthandError::Invalid { spec: format!("conv {image} {filters}"), source }
                })?;
                let dtypes = [lhs_dtype, rhs_dtype, out_dtype];
                LogicalSpec {
                    kind,
                    shape: dims(&shape)?,
                    operands: shapes
                        .into_iter()
                        .zip(dtypes)
                        .zip(layouts)
                        .map(|((shape, dtype), layout)| operand(shape, dtype, layout))
                        .collect(),
                    serial_only: false,
                }
            }
            Shorthand::Text(text) => LogicalSpec::parse(text, target).map_err(ShorthandError::Text)?,
        })
    }

    /// The canonical spec for `target`.
    ///
    /// # Errors
    /// As [`SpecBuilder::logical`], and [`ShorthandError::Invalid`] if the target cannot hold it
    /// (for example a dtype its home level does not support).
    pub fn build(&self, target: &Target) -> Result<CanonicalSpec, ShorthandError> {
        let logical = self.logical(target)?;
        logical
            .canonicalize(target)
            .map_err(|source| ShorthandError::Invalid { spec: logical.display(target).to_string(), source })
    }
}

/// The convolution `image` and `filters` (in the orders `options` name) describe: its kind, its
/// iteration shape `[b, f, c, h, w, fh, fw]` and the image, filter and output layouts.
fn conv_spec(
    image: &Shape,
    filters: &Shape,
    options: &ConvOptions,
    accum: bool,
) -> Result<(PrimitiveKind, Vec<u32>, [Layout; 3]), ShorthandError> {
    let bad =
        |why: String| ShorthandError::ConvFilters { image: image.clone(), filters: filters.clone(), why };
    let Ok(&[i0, i1, i2, i3]) = <&[u32; 4]>::try_from(image.dims()) else {
        return Err(bad("the image needs four dims".into()));
    };
    let ([n, c, h, w], nchw) = match options.layout {
        ConvLayout::Nchw => ([i0, i1, i2, i3], Layout::row_major(4)),
        ConvLayout::Nhwc => ([i0, i3, i1, i2], nhwc()),
    };
    let filter_layout = options.filter_layout.unwrap_or(match options.layout {
        ConvLayout::Nchw => FilterLayout::Oihw,
        ConvLayout::Nhwc => FilterLayout::Hwio,
    });
    let Ok(&[a, b2, c2, d2]) = <&[u32; 4]>::try_from(filters.dims()) else {
        return Err(bad("the filters need four dims".into()));
    };
    // Logical filters are [F, C, FH, FW]; the physical orders below list those dims.
    let (f, fc, fh, fw, filter_order): (u32, u32, u32, u32, [u8; 4]) = match filter_layout {
        FilterLayout::Oihw => (a, b2, c2, d2, [0, 1, 2, 3]),
        FilterLayout::Hwio | FilterLayout::HwioVnni => (d2, c2, a, b2, [2, 3, 1, 0]),
        FilterLayout::Ohwi => (a, d2, b2, c2, [0, 2, 3, 1]),
    };
    if c != fc {
        return Err(bad(format!("the image has {c} channels and the filters take {fc}")));
    }
    if filter_layout == FilterLayout::HwioVnni && fc % 4 != 0 {
        return Err(ShorthandError::VnniFilters { c: fc, padded: u64::from(fc).div_ceil(4) * 4 });
    }
    let [sh, sw] = options.stride;
    let [dh, dw] = options.dilation;
    let extent = |k: u32, d: u32| u64::from(k - 1) * u64::from(d) + 1;
    let (eh, ew) = (extent(fh, dh), extent(fw, dw));
    let padding = match options.padding {
        Padding::Explicit(p) => p,
        Padding::Same => {
            let total = |size: u32, stride: u32, window: u64| {
                let out = u64::from(size.div_ceil(stride));
                let needed = (out - 1) * u64::from(stride) + window;
                u32::try_from(needed.saturating_sub(u64::from(size))).unwrap_or(u32::MAX)
            };
            let (th, tw) = (total(h, sh, eh), total(w, sw, ew));
            [th / 2, th - th / 2, tw / 2, tw - tw / 2]
        }
    };
    let mut padding = padding.map(u64::from);
    let mut outputs = [0u32; 2];
    for (axis, (size, stride, window)) in [(h, sh, eh), (w, sw, ew)].into_iter().enumerate() {
        let padded = u64::from(size) + padding[2 * axis] + padding[2 * axis + 1];
        if window > padded {
            return Err(bad(format!(
                "the filter spans {window} {} but the padded image has {padded}",
                ["rows", "columns"][axis]
            )));
        }
        let out = (padded - window) / u64::from(stride) + 1;
        // Rows past the last window are never read: take them off the far padding, or refuse.
        let read = (out - 1) * u64::from(stride) + window;
        let unread = padded - read;
        let cut = unread.min(padding[2 * axis + 1]);
        padding[2 * axis + 1] -= cut;
        if unread > cut {
            return Err(bad(format!(
                "with stride {stride} the last {} image {} are never read (crop the image or pad it)",
                unread - cut,
                ["rows", "columns"][axis]
            )));
        }
        outputs[axis] = u32::try_from(out).map_err(|_| bad("the output is too large".into()))?;
    }
    let narrow = |v: u64, what: &'static str| {
        u16::try_from(v).map_err(|_| option_error(what, &v.to_string(), "at most 65535"))
    };
    let narrow32 = |v: u32, what: &'static str| narrow(u64::from(v), what);
    let geometry = ConvGeometry {
        stride: [narrow32(sh, "stride")?, narrow32(sw, "stride")?],
        dilation: [narrow32(dh, "dilation")?, narrow32(dw, "dilation")?],
        padding: [
            narrow(padding[0], "padding")?,
            narrow(padding[1], "padding")?,
            narrow(padding[2], "padding")?,
            narrow(padding[3], "padding")?,
        ],
    };
    let mut filter_dims: Vec<crate::layout::LayoutDim> =
        filter_order.iter().map(|&d| crate::layout::LayoutDim::dynamic(d)).collect();
    if filter_layout == FilterLayout::HwioVnni {
        filter_dims.push(crate::layout::LayoutDim::packed(1, 4));
    }
    let filter_layout = Layout::new(filter_dims).expect("a permutation, then a strip of one of its dims");
    let kind = PrimitiveKind::Conv { accum, geometry };
    Ok((kind, vec![n, f, c, outputs[0], outputs[1], fh, fw], [nchw.clone(), filter_layout, nchw]))
}

/// The NHWC order of logical NCHW dims.
fn nhwc() -> Layout {
    Layout::new([0, 2, 3, 1].iter().map(|&d| crate::layout::LayoutDim::dynamic(d)).collect())
        .expect("a permutation is a valid layout")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn target() -> Target {
        Target::builtin("x86-avx2", 1).unwrap()
    }

    #[test]
    fn layouts_parse_by_name_in_any_case_and_errors_name_the_choices() {
        assert_eq!("NHWC".parse::<ConvLayout>().ok(), Some(ConvLayout::Nhwc));
        assert_eq!("nchw".parse::<ConvLayout>().ok(), Some(ConvLayout::Nchw));
        assert_eq!("Hwio".parse::<FilterLayout>().ok(), Some(FilterLayout::Hwio));
        assert_eq!("ohwi".parse::<FilterLayout>().ok(), Some(FilterLayout::Ohwi));
        assert_eq!("VNNI".parse::<FilterLayout>().ok(), Some(FilterLayout::HwioVnni));
        let conv = "nwhc".parse::<ConvLayout>().unwrap_err().to_string();
        assert!(conv.contains("nwhc") && conv.contains("nchw or nhwc"), "{conv}");
        let filter = "oihwx".parse::<FilterLayout>().unwrap_err().to_string();
        assert!(filter.contains("oihw, hwio, ohwi or vnni"), "{filter}");
    }

    fn text(shorthand: &str) -> String {
        let target = target();
        SpecBuilder::parse(shorthand).unwrap().build(&target).unwrap().display(&target).to_string()
    }

    #[test]
    fn every_form_builds_its_spec() {
        assert_eq!(
            text("matmul 2x3x4"),
            "Matmul(1x2x3x4, f32 GL row-major, f32 GL row-major, f32 GL row-major)"
        );
        assert_eq!(text("zero 4x4"), "FillZero(4x4, f32 GL row-major)");
        assert_eq!(text("softmax 2x8"), "Softmax(2x8, f32 GL row-major, f32 GL row-major)");
        assert_eq!(text("conv 1x2x5x5 3x2x3x3"), {
            let target = target();
            let spec = SpecBuilder::parse("conv 1x2x5x5 3x2x3x3").unwrap().logical(&target).unwrap();
            assert_eq!(spec.shape.dims(), &[1, 3, 2, 3, 3, 3, 3]);
            spec.canonicalize(&target).unwrap().display(&target).to_string()
        });
        let full = "Matmul(1x2x2x2, f32 GL row-major, f32 GL col-major, f32 GL row-major)";
        assert_eq!(text(full), full);
        let target = target();
        let moved = SpecBuilder::parse("move 8x8")
            .unwrap()
            .from_layout("row-major")
            .to_layout("col-major")
            .build(&target)
            .unwrap();
        assert_eq!(moved.display(&target).to_string(), "Move(8x8, f32 GL row-major, f32 GL col-major)");
    }

    fn conv_text(shorthand: &str, options: ConvOptions) -> Result<String, ShorthandError> {
        let target = target();
        let spec = SpecBuilder::parse(shorthand)?.conv(options).build(&target)?;
        Ok(spec.display(&target).to_string())
    }

    #[test]
    fn conv_options_reach_the_spec() {
        let nhwc = ConvOptions { layout: ConvLayout::Nhwc, ..ConvOptions::default() };
        // NHWC image 1x5x5x2, HWIO filters 3x3x2x4: logical NCHW [1, 2, 5, 5], FCHW [4, 2, 3, 3].
        assert_eq!(
            conv_text("conv 1x5x5x2 3x3x2x4", nhwc).unwrap(),
            "Conv(1x4x2x3x3x3x3, f32 GL [2, 3, 1], f32 GL [2, 3, 1, 0], f32 GL [2, 3, 1])"
        );
        let same = ConvOptions { padding: Padding::Same, stride: [2, 2], ..nhwc };
        // 56 rows, stride 2, same: 28 outputs, one row of padding at the bottom.
        let text = conv_text("conv 1x56x56x8 3x3x8x8", same).unwrap();
        assert!(text.starts_with("Conv:s2x2:p0x1x0x1(1x8x8x28x28x3x3,"), "{text}");
        let ohwi = ConvOptions {
            filter_layout: Some(FilterLayout::Ohwi),
            padding: Padding::Explicit([1; 4]),
            ..nhwc
        };
        let text = conv_text("conv 2x4x4x3 5x3x3x3", ohwi).unwrap();
        assert!(
            text.starts_with("Conv:p1x1x1x1(2x5x3x4x4x3x3, f32 GL [0, 2, 3, 1], f32 GL [0, 2, 3, 1]"),
            "{text}"
        );
        // Explicit padding 1 with stride 2 on 8 rows: the unread last row comes off the bottom pad.
        let strided =
            ConvOptions { padding: Padding::Explicit([1; 4]), stride: [2, 2], ..ConvOptions::default() };
        assert!(
            conv_text("conv 1x1x8x8 1x1x3x3", strided)
                .unwrap()
                .starts_with("Conv:s2x2:p1x0x1x0(1x1x1x4x4x3x3")
        );
        // Filters already in the int8 kernels' strips: HWIO with the input channels in quads.
        let vnni = ConvOptions { filter_layout: Some(FilterLayout::HwioVnni), ..nhwc };
        let text = conv_text("conv 1x5x5x8 3x3x8x4", vnni).unwrap();
        assert!(text.contains("GL [2, 3, 1, 0, 1 p(4)]"), "{text}");
        let error = conv_text("conv 1x5x5x6 3x3x6x4", vnni).unwrap_err().to_string();
        assert!(error.contains("found 6: pad the channels with zeros to 8"), "{error}");
        let unread = ConvOptions { stride: [2, 2], ..ConvOptions::default() };
        let error = conv_text("conv 1x1x8x8 1x1x3x3", unread).unwrap_err().to_string();
        assert!(error.contains("the last 1 image rows are never read"), "{error}");
        let dilated = ConvOptions { dilation: [2, 2], ..ConvOptions::default() };
        assert!(conv_text("conv 1x1x5x5 1x1x3x3", dilated).unwrap().starts_with("Conv:d2x2(1x1x1x1x1x3x3"));
        assert!("sideways".parse::<Padding>().unwrap_err().to_string().contains("valid or same"));
        assert_eq!("1,2,3,4".parse::<Padding>().unwrap(), Padding::Explicit([1, 2, 3, 4]));
        assert!(parse_pair("0", "stride").is_err());
        assert_eq!(parse_pair("2x1", "stride").unwrap(), [2, 1]);
    }

    #[test]
    fn an_epilogue_makes_a_matmul_with_a_bias() {
        let target = target();
        let spec = SpecBuilder::matmul(4, 8, 16).epilogue(Activation::Gelu).build(&target).unwrap();
        assert_eq!(
            spec.display(&target).to_string(),
            "MatmulBiasGelu(1x4x8x16, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)"
        );
        assert_eq!(spec.operands[2].shape.dims(), &[16]);
    }

    #[test]
    fn settings_reach_the_spec() {
        let target = target();
        let spec =
            SpecBuilder::matmul(3, 5, 7).batch(2).accumulate().dtype(Dtype::Bf16).logical(&target).unwrap();
        assert_eq!(spec.kind, PrimitiveKind::Matmul { accum: true });
        assert_eq!(spec.shape.dims(), &[2, 3, 5, 7]);
        assert_eq!(spec.operands[0].dtype, Dtype::Bf16);
        assert_eq!(spec.operands[2].dtype, Dtype::F32, "bf16 accumulates into f32");
    }

    #[test]
    fn shorthand_prints_and_parses_back() {
        for text in ["matmul 64x64x64", "move 8x8", "zero 4x4x4", "conv 1x4x8x8 8x4x3x3", "softmax 7x33"] {
            assert_eq!(Shorthand::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Shorthand::parse("MATMUL 2x2x2").unwrap(), Shorthand::Matmul { m: 2, k: 2, n: 2 });
    }

    #[test]
    fn bad_shorthand_says_what_is_wrong() {
        let target = target();
        let error = |text: &str| match SpecBuilder::parse(text) {
            Err(e) => e.to_string(),
            Ok(b) => b.build(&target).unwrap_err().to_string(),
        };
        for (text, message) in [
            ("", "no spec given"),
            ("frobnicate 4", "unknown spec `frobnicate`"),
            ("matmul", "matmul needs its size"),
            ("matmul 4x4", "must be MxKxN"),
            ("matmul 0x4x4", "dimension 0 is zero"),
            ("matmul 4xax4", "is not a positive integer"),
            ("matmul 4x4x4 extra", "unexpected `extra` after the spec"),
            ("move", "move needs a shape"),
            ("zero 4x4 4x4", "unexpected `4x4`"),
            ("conv 1x2x3x3", "conv needs an image and filters"),
            ("conv 1x2x3 1x2x2x2", "must be two shapes of four dims"),
            ("conv 1x2x3x3 1x3x2x2", "the image has 2 channels and the filters take 3"),
            ("conv 1x2x3x3 1x2x4x2", "the filter spans 4 rows but the padded image has 3"),
            ("Matmul(1x2x2, f32 GL row-major)", "Matmul needs an iteration shape of rank 4"),
        ] {
            let got = error(text);
            assert!(got.contains(message), "{text}: {got}");
        }
        let big = SpecBuilder::matmul(2, 2, 2).batch(0).build(&target).unwrap_err();
        assert!(matches!(big, ShorthandError::Dims { .. }), "{big}");
        let bad_layout =
            SpecBuilder::parse("move 4x4").unwrap().to_layout("[0, 0]").build(&target).unwrap_err();
        assert!(bad_layout.to_string().contains("invalid destination layout"), "{bad_layout}");
    }

    /// The quantized dtypes name each operand's dtype, print and parse back, and a reduction
    /// whose i32 sum could wrap is refused with the limit.
    #[test]
    fn quantized_dtypes_name_each_operand() {
        let target = target();
        let u8s8s32: OperandDtypes = "u8s8s32".parse().unwrap();
        let spec = SpecBuilder::matmul(4, 8, 16).dtypes(u8s8s32).build(&target).unwrap();
        let text = spec.display(&target).to_string();
        assert_eq!(text, "Matmul(1x4x8x16, u8 GL row-major, i8 GL row-major, i32 GL row-major)");
        assert_eq!(SpecBuilder::parse(&text).unwrap().build(&target).unwrap(), spec);
        let conv = SpecBuilder::parse("conv 1x4x8x8 8x4x3x3").unwrap().dtypes("s8s8s32".parse().unwrap());
        assert!(conv.build(&target).unwrap().display(&target).to_string().contains("i8 GL row-major, i8 GL"));
        assert!(SpecBuilder::matmul(1, 65793, 1).dtypes(u8s8s32).build(&target).is_ok());
        let wraps = SpecBuilder::matmul(1, 65794, 1).dtypes(u8s8s32).build(&target).unwrap_err().to_string();
        assert!(
            wraps.contains("sums 65794 products of u8 and i8") && wraps.contains("up to 65793"),
            "{wraps}"
        );
        let conv = SpecBuilder::parse("conv 1x8192x3x3 1x8192x3x3").unwrap().dtypes(u8s8s32);
        assert!(conv.build(&target).unwrap_err().to_string().contains("sums 73728 products"));
        let odd =
            SpecBuilder::matmul(4, 10, 16).dtypes(u8s8s32).rhs_layout("vnni").build(&target).unwrap_err();
        assert!(odd.to_string().contains("found K = 10: pad K with zeros to 12"), "{odd}");
        let vnni = SpecBuilder::matmul(4, 12, 16).dtypes(u8s8s32).rhs_layout("vnni").build(&target).unwrap();
        assert_eq!(vnni.operands[1].layout.to_string(), "[1, 2, 1 p(4)]");
        let moved = SpecBuilder::parse("move 4x4").unwrap().dtypes(u8s8s32).build(&target).unwrap_err();
        assert_eq!(
            moved.to_string(),
            "--dtype u8s8s32 names the dtypes of a matmul's or convolution's operands; a move takes one dtype"
        );
        let mixed = "Matmul(1x2x2x2, u8 GL row-major, u8 GL row-major, i32 GL row-major)";
        let refused = SpecBuilder::parse(mixed).unwrap().build(&target).unwrap_err().to_string();
        assert!(refused.contains("output must be u8 (or f32 for bf16 inputs, i32 for u8 x i8"), "{refused}");
    }
}
