//! Vector registers in C: the intrinsic type of a vector and the intrinsics that load, store,
//! set and combine it.
//!
//! A vector register holding `lanes` elements of a dtype is one C variable of the `immintrin.h`
//! type of its width: `__m128`, `__m256`, `__m512` for f32, and `__m128i`, `__m256i`, `__m512i`
//! for every integer dtype and bf16 (bits). Memory is always accessed with unaligned loads and
//! stores (`loadu`, `storeu`): views start anywhere in their buffers, and an unaligned access to
//! aligned data costs nothing on the CPUs these targets describe.
//!
//! ```text
//! width   f32 type  int type  needs
//! 16 B    __m128    __m128i   (SSE, always on x86-64; 32-bit mullo needs SSE4.1, in AVX2)
//! 32 B    __m256    __m256i   avx2
//! 64 B    __m512    __m512i   avx512f
//! ```

use morello_core::dtype::Dtype;

use crate::error::CodegenError;
use morello_core::target::IsaFeature;

/// A vector register's shape: its element type and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorType {
    /// The element type.
    pub dtype: Dtype,
    /// Elements per register.
    pub lanes: u32,
}

/// The three x86 vector widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    W128,
    W256,
    W512,
}

impl VectorType {
    /// The vector type, if its width is one of 16, 32 or 64 bytes.
    ///
    /// # Errors
    /// [`CodegenError::Unsupported`] for any other width.
    pub fn new(dtype: Dtype, lanes: u32) -> Result<Self, CodegenError> {
        let v = VectorType { dtype, lanes };
        v.width()?;
        Ok(v)
    }

    fn width(self) -> Result<Width, CodegenError> {
        match self.lanes * self.dtype.size_bytes() {
            16 => Ok(Width::W128),
            32 => Ok(Width::W256),
            64 => Ok(Width::W512),
            bytes => Err(CodegenError::Unsupported {
                reason: format!(
                    "{bytes}-byte vectors of {} (x86 vectors are 16, 32 or 64 bytes)",
                    self.dtype
                ),
            }),
        }
    }

    fn w(self) -> Width {
        self.width().expect("a VectorType is only built with a valid width")
    }

    fn is_f32(self) -> bool {
        self.dtype == Dtype::F32
    }

    /// The instruction-set feature the register width needs, if any.
    pub fn feature(self) -> Option<IsaFeature> {
        match self.w() {
            Width::W128 => None,
            Width::W256 => Some(IsaFeature::Avx2),
            Width::W512 => Some(IsaFeature::Avx512f),
        }
    }

    /// `_mm`, `_mm256` or `_mm512`.
    fn prefix(self) -> &'static str {
        match self.w() {
            Width::W128 => "_mm",
            Width::W256 => "_mm256",
            Width::W512 => "_mm512",
        }
    }

    /// The C type, e.g. `__m256` or `__m512i`.
    pub fn c_type(self) -> &'static str {
        match (self.w(), self.is_f32()) {
            (Width::W128, true) => "__m128",
            (Width::W256, true) => "__m256",
            (Width::W512, true) => "__m512",
            (Width::W128, false) => "__m128i",
            (Width::W256, false) => "__m256i",
            (Width::W512, false) => "__m512i",
        }
    }

    /// An unaligned load from the address `ptr`.
    pub fn load(self, ptr: &str) -> String {
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_loadu_ps({ptr})", self.prefix()),
            (Width::W128, false) => format!("_mm_loadu_si128((const __m128i *)({ptr}))"),
            (Width::W256, false) => format!("_mm256_loadu_si256((const __m256i *)({ptr}))"),
            (Width::W512, false) => format!("_mm512_loadu_si512((const void *)({ptr}))"),
        }
    }

    /// An unaligned store of `value` to the address `ptr` (a statement without its `;`).
    pub fn store(self, ptr: &str, value: &str) -> String {
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_storeu_ps({ptr}, {value})", self.prefix()),
            (Width::W128, false) => format!("_mm_storeu_si128((__m128i *)({ptr}), {value})"),
            (Width::W256, false) => format!("_mm256_storeu_si256((__m256i *)({ptr}), {value})"),
            (Width::W512, false) => format!("_mm512_storeu_si512((void *)({ptr}), {value})"),
        }
    }

    /// All lanes zero.
    pub fn zero(self) -> String {
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_setzero_ps()", self.prefix()),
            (Width::W128, false) => "_mm_setzero_si128()".into(),
            (Width::W256, false) => "_mm256_setzero_si256()".into(),
            (Width::W512, false) => "_mm512_setzero_si512()".into(),
        }
    }

    /// Every lane set to the scalar C expression `value` (of the element type).
    pub fn splat(self, value: &str) -> String {
        let p = self.prefix();
        match self.dtype {
            Dtype::F32 => format!("{p}_set1_ps({value})"),
            Dtype::U32 | Dtype::I32 => format!("{p}_set1_epi32((int)({value}))"),
            Dtype::U16 | Dtype::I16 | Dtype::Bf16 => format!("{p}_set1_epi16((short)({value}))"),
            Dtype::U8 | Dtype::I8 => format!("{p}_set1_epi8((char)({value}))"),
        }
    }

    /// `acc + a * b` lane by lane, for f32 (fused when `fma`) and 32-bit integers (wrapping).
    ///
    /// # Errors
    /// [`CodegenError::Unsupported`] for other dtypes.
    pub fn mul_add(self, a: &str, b: &str, acc: &str, fma: bool) -> Result<String, CodegenError> {
        let p = self.prefix();
        match self.dtype {
            Dtype::F32 if fma => Ok(format!("{p}_fmadd_ps({a}, {b}, {acc})")),
            Dtype::F32 => Ok(format!("{p}_add_ps({acc}, {p}_mul_ps({a}, {b}))")),
            Dtype::U32 | Dtype::I32 => Ok(format!("{p}_add_epi32({acc}, {p}_mullo_epi32({a}, {b}))")),
            other => Err(CodegenError::Unsupported {
                reason: format!("vector multiply-add of {other} (f32, u32 and i32 are supported)"),
            }),
        }
    }

    /// For an f32 vector of 8 or 16 lanes: `lanes` bf16 elements loaded from the address `ptr`
    /// (a `uint16_t` pointer) and widened to f32 (a bf16 value is the high half of its f32).
    ///
    /// # Errors
    /// [`CodegenError::Unsupported`] for other vector types.
    pub fn load_bf16_as_f32(self, ptr: &str) -> Result<String, CodegenError> {
        match (self.w(), self.is_f32()) {
            (Width::W256, true) => Ok(format!(
                "_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)({ptr}))), 16))"
            )),
            (Width::W512, true) => Ok(format!(
                "_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)({ptr}))), 16))"
            )),
            _ => Err(CodegenError::Unsupported {
                reason: format!(
                    "widening bf16 into {}-lane {} vectors (8 or 16 f32 lanes are supported)",
                    self.lanes, self.dtype
                ),
            }),
        }
    }

    /// `a + b` for f32 vectors.
    pub fn add_f32(self, a: &str, b: &str) -> String {
        format!("{}_add_ps({a}, {b})", self.prefix())
    }

    /// `max(a, b)` for f32 vectors.
    pub fn max_f32(self, a: &str, b: &str) -> String {
        format!("{}_max_ps({a}, {b})", self.prefix())
    }

    /// `a * b` for f32 vectors.
    pub fn mul_f32(self, a: &str, b: &str) -> String {
        format!("{}_mul_ps({a}, {b})", self.prefix())
    }

    /// `a - b` for f32 vectors.
    pub fn sub_f32(self, a: &str, b: &str) -> String {
        format!("{}_sub_ps({a}, {b})", self.prefix())
    }

    /// GELU (tanh form) of an f32 vector, and the helper it calls.
    pub fn gelu(self, v: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        match self.w() {
            Width::W128 => (format!("morello_gelu_m128({v})"), Helper::GeluM128),
            Width::W256 => (format!("morello_gelu_m256({v})"), Helper::GeluM256),
            Width::W512 => (format!("morello_gelu_m512({v})"), Helper::GeluM512),
        }
    }

    /// `e^x` of an f32 vector, and the helper it calls.
    pub fn exp(self, v: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        match self.w() {
            Width::W128 => (format!("morello_exp_m128({v})"), Helper::ExpM128),
            Width::W256 => (format!("morello_exp_m256({v})"), Helper::ExpM256),
            Width::W512 => (format!("morello_exp_m512({v})"), Helper::ExpM512),
        }
    }

    /// The sum of an f32 vector's lanes (a float), and the helper it needs.
    pub fn horizontal_sum(self, v: &str) -> (String, Option<super::helpers::Helper>) {
        use super::helpers::Helper;
        match self.w() {
            Width::W128 => (format!("morello_hsum_m128({v})"), Some(Helper::HsumM128)),
            Width::W256 => (format!("morello_hsum_m256({v})"), Some(Helper::HsumM256)),
            Width::W512 => (format!("_mm512_reduce_add_ps({v})"), None),
        }
    }
}
