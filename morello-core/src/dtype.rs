//! Element types of tensors.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
    /// IEEE 754 single precision.
    F32,
    /// bfloat16: the upper 16 bits of an `f32`.
    Bf16,
}

/// An element type name that is not one of [`Dtype::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype `{0}`; expected one of u8, i8, u16, i16, u32, i32, f32, bf16")]
pub struct UnknownDtype(pub String);

impl Dtype {
    /// Every dtype, in a fixed order.
    pub const ALL: [Dtype; 8] =
        [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::Bf16];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> u32 {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::Bf16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
        }
    }

    /// The lower-case name used in text forms.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
        }
    }

    /// Whether the type is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::Bf16)
    }

    /// Whether the type is a signed integer.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32)
    }

    /// Whether a value of `self` converts to `to` without loss (the widening moves allow).
    pub fn widens_to(self, to: Dtype) -> bool {
        matches!((self, to), (Dtype::Bf16, Dtype::F32))
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = UnknownDtype;

    fn from_str(s: &str) -> Result<Self, UnknownDtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDtype(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
        }
        assert_eq!(
            "f64".parse::<Dtype>().unwrap_err().to_string(),
            "unknown dtype `f64`; expected one of u8, i8, u16, i16, u32, i32, f32, bf16"
        );
    }
}
