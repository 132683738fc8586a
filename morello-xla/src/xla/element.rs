//! XLA element types (`PrimitiveType`): their text names and sizes.
//!
//! Only the array element types the issue lists are supported: `pred`, signed and unsigned
//! integers of 4 to 64 bits, and `f16`, `bf16`, `f32`, `f64`. Names are read without regard to
//! ASCII case (`F32` as on XLA's tiled-layout page, `f32` as in HLO text) and always printed in
//! lower case. This file knows nothing about shapes or layouts.

use std::fmt;

/// The type of one array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ElementType {
    /// A boolean, stored in one byte.
    Pred,
    /// A 4-bit signed integer (two per byte).
    S4,
    /// An 8-bit signed integer.
    S8,
    /// A 16-bit signed integer.
    S16,
    /// A 32-bit signed integer.
    S32,
    /// A 64-bit signed integer.
    S64,
    /// A 4-bit unsigned integer (two per byte).
    U4,
    /// An 8-bit unsigned integer.
    U8,
    /// A 16-bit unsigned integer.
    U16,
    /// A 32-bit unsigned integer.
    U32,
    /// A 64-bit unsigned integer.
    U64,
    /// An IEEE half-precision float.
    F16,
    /// A bfloat16 (8 exponent bits, 7 mantissa bits).
    Bf16,
    /// An IEEE single-precision float.
    F32,
    /// An IEEE double-precision float.
    F64,
}

impl ElementType {
    /// Every supported element type, in the order of the text names' list.
    pub const ALL: [ElementType; 15] = [
        ElementType::Pred,
        ElementType::S4,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U4,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F64,
    ];

    /// The lower-case text name, as HLO text writes it (`bf16`).
    pub const fn name(self) -> &'static str {
        match self {
            ElementType::Pred => "pred",
            ElementType::S4 => "s4",
            ElementType::S8 => "s8",
            ElementType::S16 => "s16",
            ElementType::S32 => "s32",
            ElementType::S64 => "s64",
            ElementType::U4 => "u4",
            ElementType::U8 => "u8",
            ElementType::U16 => "u16",
            ElementType::U32 => "u32",
            ElementType::U64 => "u64",
            ElementType::F16 => "f16",
            ElementType::Bf16 => "bf16",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
        }
    }

    /// The element type named `name`, ignoring ASCII case; `None` for any other name.
    pub fn from_name(name: &str) -> Option<ElementType> {
        ElementType::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The storage size of one element in bits: 4 for `s4`/`u4`, 8 for `pred` (one byte, as XLA
    /// stores it), otherwise the type's width.
    pub const fn bits(self) -> u32 {
        match self {
            ElementType::S4 | ElementType::U4 => 4,
            ElementType::Pred | ElementType::S8 | ElementType::U8 => 8,
            ElementType::S16 | ElementType::U16 | ElementType::F16 | ElementType::Bf16 => 16,
            ElementType::S32 | ElementType::U32 | ElementType::F32 => 32,
            ElementType::S64 | ElementType::U64 | ElementType::F64 => 64,
        }
    }

    /// The bytes `elements` elements occupy, sub-byte types packed (two 4-bit elements per
    /// byte, an odd count rounded up); `None` if that exceeds `u64`.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let bits = u128::from(elements) * u128::from(self.bits());
        u64::try_from(bits.div_ceil(8)).ok()
    }

    /// The supported names, comma-separated, for error messages.
    pub(crate) fn supported_names() -> String {
        ElementType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
