//! The HLO text reader: XLA's HLO module text, for the supported subset, to an [`HloModule`].
//!
//! ```text
//! module       = ["HloModule" name ("," attribute)*] (computation+ | instruction+)
//! computation  = ["ENTRY"] name [signature] ("," attribute)* "{" instruction+ "}"
//! signature    = "(" ... ")" ["->" shape]                       read and ignored
//! instruction  = ["ROOT"] name "=" shape opcode "(" arguments ")" ("," attribute)*
//! arguments    = [operand ("," operand)*] | parameter number | constant literal (`literal.rs`)
//! operand      = [shape] name                                   `p0` or `f32[10,20] p0`
//! attribute    = key "=" ( "{...}" | "(...)" | "[...]" | "\"...\"" | word )
//! name         = ["%"] (letter | digit | "_" | "." | "-")+      the `%` is not part of the name
//! ```
//!
//! - Shapes are XLA shape text ([`XlaShape`](crate::xla::XlaShape)), layouts allowed; element types are kept,
//!   a layout's `minor_to_major` is kept when it is not the default, and its tiles
//!   are ignored except on a bitcast, where they are refused. Nested tuples and dynamic
//!   dimensions are refused.
//! - Without `ENTRY`, the last computation is the entry; without `ROOT`, the last instruction is
//!   the root (XLA's conventions). Computations may call computations defined later.
//! - A module may also be a bare list of instructions, as seed 003 writes its examples: it is
//!   one computation named `main`.
//! - Comments `/* ... */` and `// ...` are ignored; newlines are spaces, so an instruction may
//!   span lines.
//! - Opcodes: [`SUPPORTED_OPCODES`], with their maps, and every other XLA opcode
//!   ([`OPCODES_WITHOUT_MAPS`]), kept as [`HloOp::Unknown`](super::HloOp::Unknown) with its
//!   attributes ignored. The attributes each supported opcode reads are listed in
//!   `attributes.rs`; every other attribute (`metadata`, `frontend_attributes`,
//!   `backend_config`, `kind`, `sharding`, ...) is read as a balanced group or string and
//!   ignored.
//! - The stack-frame tables XLA prints after the module header (`FileNames`, `FunctionNames`,
//!   `FileLocations`, `StackFrames`) are skipped, and so are module and computation attributes
//!   (`is_scheduled=true`, `entry_computation_layout={...}`, `execution_thread="main"`).
//!
//! Reading is two passes: `syntax.rs` reads the structure (and the shapes); `resolve.rs`
//! resolves names and builds the ops, and [`HloModule::new`] validates the result. Every error
//! is an [`HloTextError`] with the line, column, computation and instruction; nothing panics,
//! whatever the text (fuzzed with random and mutated modules).
//!
//! ```
//! use morello_xla::hlo::{HloModule, HloOp};
//! let module: HloModule = "
//!     HloModule m
//!     ENTRY main {
//!       p0 = f32[20] parameter(0)
//!       ROOT bc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}
//!     }"
//! .parse()
//! .unwrap();
//! let root = module.entry().root_instruction().unwrap();
//! assert_eq!(root.op, HloOp::Broadcast { dimensions: vec![1] });
//!
//! let error = "ENTRY main {\n  p0 = f32[2,3] parameter(0)\n  t = f32[3,2] transpose(p0), dimensions={0,0}\n}"
//!     .parse::<HloModule>()
//!     .unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "line 3, column 42, instruction `t` in computation `main`: dimensions={0, 0} is not a permutation of 0..2"
//! );
//! ```

mod attributes;
mod cursor;
mod error;
mod literal;
mod resolve;
mod syntax;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use std::str::FromStr;

pub use error::{HloTextError, HloTextErrorKind};

use super::HloModule;

/// The opcodes the reader accepts, as XLA spells them.
pub const SUPPORTED_OPCODES: &[&str] = &[
    "parameter",
    "gather",
    "constant",
    "iota",
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "exponential",
    "log",
    "negate",
    "tanh",
    "convert",
    "select",
    "compare",
    "broadcast",
    "transpose",
    "reverse",
    "reduce",
    "slice",
    "reshape",
    "bitcast",
    "concatenate",
    "dot",
    "pad",
    "reduce-window",
    "fusion",
    "tuple",
    "get-tuple-element",
    "abs",
    "sign",
    "floor",
    "ceil",
    "round-nearest-even",
    "round-nearest-afz",
    "sqrt",
    "rsqrt",
    "cbrt",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "erf",
    "exponential-minus-one",
    "log-plus-one",
    "is-finite",
    "not",
    "popcnt",
    "count-leading-zeros",
    "bitcast-convert",
    "reduce-precision",
    "copy",
    "real",
    "imag",
    "power",
    "remainder",
    "and",
    "or",
    "xor",
    "atan2",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "complex",
    "stochastic-convert",
    "clamp",
    "map",
    "dynamic-slice",
    "dynamic-update-slice",
    "convolution",
];

/// The other opcodes XLA has: read and kept as [`HloOp::Unknown`](super::HloOp::Unknown), whose
/// operands' maps are unknown (an opcode in neither list is an error).
pub const OPCODES_WITHOUT_MAPS: &[&str] = &[
    "add-dependency",
    "after-all",
    "all-gather",
    "all-gather-done",
    "all-gather-start",
    "all-reduce",
    "all-reduce-done",
    "all-reduce-start",
    "all-to-all",
    "async-done",
    "async-start",
    "async-update",
    "batch-norm-grad",
    "batch-norm-inference",
    "batch-norm-training",
    "call",
    "cholesky",
    "collective-broadcast",
    "collective-permute",
    "collective-permute-done",
    "collective-permute-start",
    "conditional",
    "copy-done",
    "copy-start",
    "custom-call",
    "domain",
    "dynamic-reshape",
    "fft",
    "get-dimension-size",
    "infeed",
    "opt-barrier",
    "outfeed",
    "partition-id",
    "ragged-all-to-all",
    "ragged-dot",
    "recv",
    "recv-done",
    "reduce-scatter",
    "replica-id",
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
    "scatter",
    "select-and-scatter",
    "send",
    "send-done",
    "set-dimension-size",
    "sort",
    "topk",
    "triangular-solve",
    "while",
];

/// Whether `opcode` is one XLA has (with or without a map here).
pub(crate) fn is_xla_opcode(opcode: &str) -> bool {
    SUPPORTED_OPCODES.contains(&opcode) || OPCODES_WITHOUT_MAPS.contains(&opcode)
}

impl FromStr for HloModule {
    type Err = HloTextError;

    /// Reads HLO module text; see the [module docs](self) for the syntax.
    fn from_str(text: &str) -> Result<Self, HloTextError> {
        let blanked = cursor::blank_comments(text);
        let mut cursor = cursor::Cursor::new(text, &blanked);
        let raw = syntax::module(&mut cursor)?;
        resolve::module(&cursor, &raw)
    }
}
