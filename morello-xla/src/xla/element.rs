//! XLA element types (`PrimitiveType`): their text names, widths and byte sizes.
//!
//! Every primitive type XLA prints in a shape is here: `pred`; signed and unsigned integers of
//! 1, 2, 4, 8, 16, 32 and 64 bits; the floats `f16 bf16 f32 f64`, the 8-bit float families, the
//! 4-bit `f4e2m1fn`; the complex `c64 c128`; and the two non-array types `token` and `opaque`.
//! Names are read without regard to ASCII case (`F32` as on XLA's tiled-layout page, `f32` as in
//! HLO text) and always printed in lower case. This file knows nothing about shapes or layouts.
//!
//! Sizes follow XLA's `primitive_util` and `ShapeUtil::ByteSizeOf`:
//!
//! ```text
//! bit width      pred 8, sN/uN N, f8* 8, f4e2m1fn 4, c64 64, c128 128, token 0, opaque 0
//! byte width     ceil(bit width / 8): every sub-byte element takes a whole byte
//! packed bytes   ceil(elements * E / 8) when the layout says E(n) (element_size_in_bits = n)
//! ```

use std::fmt;

/// The type of one array element (or the whole value, for `token` and `opaque`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ElementType {
    /// A boolean, stored in one byte.
    Pred,
    /// A 1-bit signed integer.
    S1,
    /// A 2-bit signed integer.
    S2,
    /// A 4-bit signed integer.
    S4,
    /// An 8-bit signed integer.
    S8,
    /// A 16-bit signed integer.
    S16,
    /// A 32-bit signed integer.
    S32,
    /// A 64-bit signed integer.
    S64,
    /// A 1-bit unsigned integer.
    U1,
    /// A 2-bit unsigned integer.
    U2,
    /// A 4-bit unsigned integer.
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
    /// 8-bit float, 4 exponent and 3 mantissa bits, finite only (OCP E4M3).
    F8E4M3Fn,
    /// 8-bit float, 5 exponent and 2 mantissa bits (OCP E5M2).
    F8E5M2,
    /// 8-bit float E4M3, finite, unsigned zero (Graphcore's variant).
    F8E4M3Fnuz,
    /// 8-bit float E5M2, finite, unsigned zero (Graphcore's variant).
    F8E5M2Fnuz,
    /// 8-bit float E4M3 with exponent bias 11, finite, unsigned zero.
    F8E4M3B11Fnuz,
    /// 8-bit float, 3 exponent and 4 mantissa bits (IEEE-like).
    F8E3M4,
    /// 8-bit float, 4 exponent and 3 mantissa bits (IEEE-like, with infinities).
    F8E4M3,
    /// 8-bit exponent-only scale factor (OCP MX E8M0).
    F8E8M0Fnu,
    /// 4-bit float, 2 exponent and 1 mantissa bit, finite only (OCP MX E2M1).
    F4E2M1Fn,
    /// A complex number of two `f32`.
    C64,
    /// A complex number of two `f64`.
    C128,
    /// An ordering token: no data (`token[]`).
    Token,
    /// An opaque value handled by the runtime (`opaque[]`).
    Opaque,
}

impl ElementType {
    /// Every element type, in the order of the text names' list.
    pub const ALL: [ElementType; 32] = [
        ElementType::Pred,
        ElementType::S1,
        ElementType::S2,
        ElementType::S4,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U1,
        ElementType::U2,
        ElementType::U4,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F64,
        ElementType::F8E4M3Fn,
        ElementType::F8E5M2,
        ElementType::F8E4M3Fnuz,
        ElementType::F8E5M2Fnuz,
        ElementType::F8E4M3B11Fnuz,
        ElementType::F8E3M4,
        ElementType::F8E4M3,
        ElementType::F8E8M0Fnu,
        ElementType::F4E2M1Fn,
        ElementType::C64,
        ElementType::C128,
        ElementType::Token,
        ElementType::Opaque,
    ];

    /// The lower-case text name, as HLO text writes it (`bf16`, `f8e4m3fn`).
    pub const fn name(self) -> &'static str {
        match self {
            ElementType::Pred => "pred",
            ElementType::S1 => "s1",
            ElementType::S2 => "s2",
            ElementType::S4 => "s4",
            ElementType::S8 => "s8",
            ElementType::S16 => "s16",
            ElementType::S32 => "s32",
            ElementType::S64 => "s64",
            ElementType::U1 => "u1",
            ElementType::U2 => "u2",
            ElementType::U4 => "u4",
            ElementType::U8 => "u8",
            ElementType::U16 => "u16",
            ElementType::U32 => "u32",
            ElementType::U64 => "u64",
            ElementType::F16 => "f16",
            ElementType::Bf16 => "bf16",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
            ElementType::F8E4M3Fn => "f8e4m3fn",
            ElementType::F8E5M2 => "f8e5m2",
            ElementType::F8E4M3Fnuz => "f8e4m3fnuz",
            ElementType::F8E5M2Fnuz => "f8e5m2fnuz",
            ElementType::F8E4M3B11Fnuz => "f8e4m3b11fnuz",
            ElementType::F8E3M4 => "f8e3m4",
            ElementType::F8E4M3 => "f8e4m3",
            ElementType::F8E8M0Fnu => "f8e8m0fnu",
            ElementType::F4E2M1Fn => "f4e2m1fn",
            ElementType::C64 => "c64",
            ElementType::C128 => "c128",
            ElementType::Token => "token",
            ElementType::Opaque => "opaque",
        }
    }

    /// The element type named `name`, ignoring ASCII case; `None` for any other name.
    pub fn from_name(name: &str) -> Option<ElementType> {
        ElementType::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// XLA's bit width of the type: 8 for `pred` (one byte, as XLA stores it), the width of
    /// the number otherwise, 0 for `token` and `opaque`.
    pub const fn bits(self) -> u32 {
        match self {
            ElementType::Token | ElementType::Opaque => 0,
            ElementType::S1 | ElementType::U1 => 1,
            ElementType::S2 | ElementType::U2 => 2,
            ElementType::S4 | ElementType::U4 | ElementType::F4E2M1Fn => 4,
            ElementType::Pred
            | ElementType::S8
            | ElementType::U8
            | ElementType::F8E4M3Fn
            | ElementType::F8E5M2
            | ElementType::F8E4M3Fnuz
            | ElementType::F8E5M2Fnuz
            | ElementType::F8E4M3B11Fnuz
            | ElementType::F8E3M4
            | ElementType::F8E4M3
            | ElementType::F8E8M0Fnu => 8,
            ElementType::S16 | ElementType::U16 | ElementType::F16 | ElementType::Bf16 => 16,
            ElementType::S32 | ElementType::U32 | ElementType::F32 => 32,
            ElementType::S64 | ElementType::U64 | ElementType::F64 | ElementType::C64 => 64,
            ElementType::C128 => 128,
        }
    }

    /// XLA's byte width of one element (`ByteSizeOfPrimitiveType`): the bit width rounded up
    /// to whole bytes, so 1 for every sub-byte type; 0 for `token` and `opaque`.
    pub const fn byte_width(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Whether this is a signed or unsigned integer type (`s1` ... `s64`, `u1` ... `u64`).
    pub const fn is_integer(self) -> bool {
        matches!(
            self,
            ElementType::S1
                | ElementType::S2
                | ElementType::S4
                | ElementType::S8
                | ElementType::S16
                | ElementType::S32
                | ElementType::S64
                | ElementType::U1
                | ElementType::U2
                | ElementType::U4
                | ElementType::U8
                | ElementType::U16
                | ElementType::U32
                | ElementType::U64
        )
    }

    /// Whether this is an array element type (everything but `token` and `opaque`, which are
    /// values of their own, written `token[]` and `opaque[]`).
    pub const fn is_array_element(self) -> bool {
        !matches!(self, ElementType::Token | ElementType::Opaque)
    }

    /// The bytes `elements` elements occupy, as XLA's `ShapeUtil::ByteSizeOfElements` counts
    /// them: `elements * byte_width` when `element_size_in_bits` is 0 (every sub-byte element
    /// takes a whole byte), otherwise `ceil(elements * element_size_in_bits / 8)` (packed);
    /// `None` if that exceeds `u64`.
    pub fn bytes_for(self, elements: u64, element_size_in_bits: u64) -> Option<u64> {
        let bits = if element_size_in_bits == 0 {
            u128::from(elements) * u128::from(self.byte_width()) * 8
        } else {
            u128::from(elements) * u128::from(element_size_in_bits)
        };
        u64::try_from(bits.div_ceil(8)).ok()
    }

    /// The names, comma-separated, for error messages.
    pub(crate) fn supported_names() -> String {
        ElementType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
