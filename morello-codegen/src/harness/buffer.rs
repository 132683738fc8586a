//! `Buffer`: a kernel parameter's contents in Rust, its raw little-endian file form, and the
//! seeded input generator shared bit for bit with the C harness.
//!
//! The generator is splitmix64, one stream per parameter:
//!
//! ```text
//! state_0 = seed XOR (0xD1B54A32D192ED03 * (param_index + 1))        (wrapping)
//! r_i     = splitmix64(state)                                        (advances state)
//! f32     = ((r_i >> 58) - 32) / 16          in [-2, 1.9375], exact multiples of 1/16
//! bf16    = upper 16 bits of that f32        (exact: at most 6 significant bits)
//! integer = r_i truncated to the type's width (the whole range, two's complement)
//! ```
//!
//! Small exact floats keep sums exact for short reductions; integers cover their whole range so
//! wrapping arithmetic is exercised.

use serde::Serialize;

use super::CType;

/// Multiplier separating the parameters' streams.
pub(crate) const STREAM_MULTIPLIER: u64 = 0xD1B5_4A32_D192_ED03;

/// One parameter's elements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Buffer {
    /// `float` elements.
    F32(Vec<f32>),
    /// `uint32_t` elements.
    U32(Vec<u32>),
    /// `int32_t` elements.
    I32(Vec<i32>),
    /// `uint16_t` elements.
    U16(Vec<u16>),
    /// `int16_t` elements.
    I16(Vec<i16>),
    /// `uint8_t` elements.
    U8(Vec<u8>),
    /// `int8_t` elements.
    I8(Vec<i8>),
    /// bfloat16 elements as their bits.
    Bf16(Vec<u16>),
}

/// splitmix64: advances `state` and returns the next 64 random bits.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator's f32 value for 64 random bits.
fn seeded_f32(r: u64) -> f32 {
    // (r >> 58) is in [0, 63]; the conversion is exact.
    ((r >> 58) as i32 - 32) as f32 / 16.0
}

impl Buffer {
    /// `elements` zeros (bf16 zero is the bit pattern 0).
    pub fn zeros(c_type: CType, elements: usize) -> Self {
        match c_type {
            CType::F32 => Buffer::F32(vec![0.0; elements]),
            CType::U32 => Buffer::U32(vec![0; elements]),
            CType::I32 => Buffer::I32(vec![0; elements]),
            CType::U16 => Buffer::U16(vec![0; elements]),
            CType::I16 => Buffer::I16(vec![0; elements]),
            CType::U8 => Buffer::U8(vec![0; elements]),
            CType::I8 => Buffer::I8(vec![0; elements]),
            CType::Bf16 => Buffer::Bf16(vec![0; elements]),
        }
    }

    /// The seeded contents of parameter number `param_index` (in signature order), identical to
    /// what the C harness generates for the same seed (see the module docs).
    pub fn from_seed(c_type: CType, elements: usize, seed: u64, param_index: usize) -> Self {
        let mut state = seed ^ STREAM_MULTIPLIER.wrapping_mul(param_index as u64 + 1);
        let mut next = || splitmix64(&mut state);
        match c_type {
            CType::F32 => Buffer::F32((0..elements).map(|_| seeded_f32(next())).collect()),
            CType::U32 => Buffer::U32((0..elements).map(|_| next() as u32).collect()),
            CType::I32 => Buffer::I32((0..elements).map(|_| next() as u32 as i32).collect()),
            CType::U16 => Buffer::U16((0..elements).map(|_| next() as u16).collect()),
            CType::I16 => Buffer::I16((0..elements).map(|_| next() as u16 as i16).collect()),
            CType::U8 => Buffer::U8((0..elements).map(|_| next() as u8).collect()),
            CType::I8 => Buffer::I8((0..elements).map(|_| next() as u8 as i8).collect()),
            CType::Bf16 => {
                Buffer::Bf16((0..elements).map(|_| (seeded_f32(next()).to_bits() >> 16) as u16).collect())
            }
        }
    }

    /// Decodes raw little-endian bytes; `None` if the length is not a multiple of the element
    /// size.
    pub fn from_le_bytes(c_type: CType, bytes: &[u8]) -> Option<Self> {
        let size = c_type.size_bytes();
        if bytes.len() % size != 0 {
            return None;
        }
        fn each<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes
                .chunks_exact(N)
                .map(|chunk| f(chunk.try_into().expect("chunks_exact yields N bytes")))
                .collect()
        }
        Some(match c_type {
            CType::F32 => Buffer::F32(each(bytes, f32::from_le_bytes)),
            CType::U32 => Buffer::U32(each(bytes, u32::from_le_bytes)),
            CType::I32 => Buffer::I32(each(bytes, i32::from_le_bytes)),
            CType::U16 => Buffer::U16(each(bytes, u16::from_le_bytes)),
            CType::I16 => Buffer::I16(each(bytes, i16::from_le_bytes)),
            CType::U8 => Buffer::U8(bytes.to_vec()),
            CType::I8 => Buffer::I8(each(bytes, i8::from_le_bytes)),
            CType::Bf16 => Buffer::Bf16(each(bytes, u16::from_le_bytes)),
        })
    }

    /// The raw little-endian bytes (the file form the harness reads and writes).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Buffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buffer::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buffer::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buffer::U16(v) | Buffer::Bf16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buffer::I16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Buffer::U8(v) => v.clone(),
            Buffer::I8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// The element type.
    pub fn c_type(&self) -> CType {
        match self {
            Buffer::F32(_) => CType::F32,
            Buffer::U32(_) => CType::U32,
            Buffer::I32(_) => CType::I32,
            Buffer::U16(_) => CType::U16,
            Buffer::I16(_) => CType::I16,
            Buffer::U8(_) => CType::U8,
            Buffer::I8(_) => CType::I8,
            Buffer::Bf16(_) => CType::Bf16,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Buffer::F32(v) => v.len(),
            Buffer::U32(v) => v.len(),
            Buffer::I32(v) => v.len(),
            Buffer::U16(v) | Buffer::Bf16(v) => v.len(),
            Buffer::I16(v) => v.len(),
            Buffer::U8(v) => v.len(),
            Buffer::I8(v) => v.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements if this is an f32 buffer.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Buffer::F32(v) => Some(v),
            _ => None,
        }
    }

    /// The elements if this is a u32 buffer.
    pub fn as_u32(&self) -> Option<&[u32]> {
        match self {
            Buffer::U32(v) => Some(v),
            _ => None,
        }
    }
}
