//! Vector registers in C: the intrinsic type of a vector and the intrinsics that load, store,
//! set and combine it, on x86 (`immintrin.h`) or AArch64 NEON (`arm_neon.h`), by the target's
//! [`Architecture`].
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
//!
//! On AArch64 a vector is 16 bytes, one NEON register, typed by its lanes (`float32x4_t`,
//! `uint32x4_t`, `int16x8_t`, ...; bf16 as its bits in `uint16x8_t`), loaded and stored with
//! `vld1q`/`vst1q` (which take any alignment). Every ARMv8-A core has NEON and its fused
//! multiply-add (`vfmaq_f32`), so the `fma` choice of [`VectorType::mul_add`] is x86's only.

use morello_core::dtype::Dtype;

use crate::error::CodegenError;
use morello_core::target::{Architecture, IsaFeature, Target};

/// Which instruction set's intrinsics a vector is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorIsa {
    /// x86 SSE, AVX2 and AVX-512 (`immintrin.h`).
    X86,
    /// AArch64 Advanced SIMD (`arm_neon.h`).
    Neon,
}

impl VectorIsa {
    /// The intrinsics of a target's code: NEON for AArch64 targets, x86 for all others.
    pub fn of(target: &Target) -> VectorIsa {
        if target.architecture() == Some(Architecture::Aarch64) { VectorIsa::Neon } else { VectorIsa::X86 }
    }

    /// `e^x` of one float `x` through the 4-lane exp, and the helper it calls.
    pub fn exp_of_one(self, x: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        match self {
            VectorIsa::X86 => (format!("_mm_cvtss_f32(morello_exp_m128(_mm_set_ss({x})))"), Helper::ExpM128),
            VectorIsa::Neon => {
                (format!("vgetq_lane_f32(morello_exp_f32x4(vdupq_n_f32({x})), 0)"), Helper::ExpF32x4)
            }
        }
    }

    /// GELU of one float `x` through the 4-lane GELU, and the helper it calls.
    pub fn gelu_of_one(self, x: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        match self {
            VectorIsa::X86 => (format!("morello_gelu_f32({x})"), Helper::GeluF32),
            VectorIsa::Neon => (format!("morello_gelu_f32_neon({x})"), Helper::GeluF32Neon),
        }
    }

    /// The header declaring its intrinsics.
    pub fn header(self) -> &'static str {
        match self {
            VectorIsa::X86 => "immintrin.h",
            VectorIsa::Neon => "arm_neon.h",
        }
    }
}

/// A vector register's shape: its element type and width, and the intrinsics it is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorType {
    /// The element type.
    pub dtype: Dtype,
    /// Elements per register.
    pub lanes: u32,
    /// Whose intrinsics.
    pub isa: VectorIsa,
}

/// The three x86 vector widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    W128,
    W256,
    W512,
}

impl VectorType {
    /// The vector type, if its width is one the instruction set has: 16, 32 or 64 bytes on x86,
    /// 16 on NEON.
    ///
    /// # Errors
    /// [`CodegenError::Unsupported`] for any other width.
    pub fn new(isa: VectorIsa, dtype: Dtype, lanes: u32) -> Result<Self, CodegenError> {
        let v = VectorType { dtype, lanes, isa };
        v.width()?;
        Ok(v)
    }

    fn width(self) -> Result<Width, CodegenError> {
        match (self.isa, self.lanes * self.dtype.size_bytes()) {
            (_, 16) => Ok(Width::W128),
            (VectorIsa::X86, 32) => Ok(Width::W256),
            (VectorIsa::X86, 64) => Ok(Width::W512),
            (VectorIsa::X86, bytes) => Err(CodegenError::Unsupported {
                reason: format!(
                    "{bytes}-byte vectors of {} (x86 vectors are 16, 32 or 64 bytes)",
                    self.dtype
                ),
            }),
            (VectorIsa::Neon, bytes) => Err(CodegenError::Unsupported {
                reason: format!("{bytes}-byte vectors of {} (NEON vectors are 16 bytes)", self.dtype),
            }),
        }
    }

    fn neon(self) -> bool {
        self.isa == VectorIsa::Neon
    }

    /// The NEON intrinsics' type suffix and element C type: `f32` and `float`, `s32` and
    /// `int32_t`, ... (bf16 as its bits, `u16`).
    fn neon_element(self) -> (&'static str, &'static str) {
        match self.dtype {
            Dtype::F32 => ("f32", "float"),
            Dtype::U32 => ("u32", "uint32_t"),
            Dtype::I32 => ("s32", "int32_t"),
            Dtype::U16 | Dtype::Bf16 => ("u16", "uint16_t"),
            Dtype::I16 => ("s16", "int16_t"),
            Dtype::U8 => ("u8", "uint8_t"),
            Dtype::I8 => ("s8", "int8_t"),
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
        if self.neon() {
            return Some(IsaFeature::Neon);
        }
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

    /// The C type, e.g. `__m256`, `__m512i` or `float32x4_t`.
    pub fn c_type(self) -> &'static str {
        if self.neon() {
            return match self.dtype {
                Dtype::F32 => "float32x4_t",
                Dtype::U32 => "uint32x4_t",
                Dtype::I32 => "int32x4_t",
                Dtype::U16 | Dtype::Bf16 => "uint16x8_t",
                Dtype::I16 => "int16x8_t",
                Dtype::U8 => "uint8x16_t",
                Dtype::I8 => "int8x16_t",
            };
        }
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
        if self.neon() {
            let (suffix, element) = self.neon_element();
            return format!("vld1q_{suffix}((const {element} *)({ptr}))");
        }
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_loadu_ps({ptr})", self.prefix()),
            (Width::W128, false) => format!("_mm_loadu_si128((const __m128i *)({ptr}))"),
            (Width::W256, false) => format!("_mm256_loadu_si256((const __m256i *)({ptr}))"),
            (Width::W512, false) => format!("_mm512_loadu_si512((const void *)({ptr}))"),
        }
    }

    /// An unaligned store of `value` to the address `ptr` (a statement without its `;`).
    pub fn store(self, ptr: &str, value: &str) -> String {
        if self.neon() {
            let (suffix, element) = self.neon_element();
            return format!("vst1q_{suffix}(({element} *)({ptr}), {value})");
        }
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_storeu_ps({ptr}, {value})", self.prefix()),
            (Width::W128, false) => format!("_mm_storeu_si128((__m128i *)({ptr}), {value})"),
            (Width::W256, false) => format!("_mm256_storeu_si256((__m256i *)({ptr}), {value})"),
            (Width::W512, false) => format!("_mm512_storeu_si512((void *)({ptr}), {value})"),
        }
    }

    /// All lanes zero.
    pub fn zero(self) -> String {
        if self.neon() {
            let (suffix, element) = self.neon_element();
            return format!("vdupq_n_{suffix}(({element})0)");
        }
        match (self.w(), self.is_f32()) {
            (_, true) => format!("{}_setzero_ps()", self.prefix()),
            (Width::W128, false) => "_mm_setzero_si128()".into(),
            (Width::W256, false) => "_mm256_setzero_si256()".into(),
            (Width::W512, false) => "_mm512_setzero_si512()".into(),
        }
    }

    /// Every lane set to the scalar C expression `value` (of the element type).
    pub fn splat(self, value: &str) -> String {
        if self.neon() {
            let (suffix, element) = self.neon_element();
            return format!("vdupq_n_{suffix}(({element})({value}))");
        }
        let p = self.prefix();
        match self.dtype {
            Dtype::F32 => format!("{p}_set1_ps({value})"),
            Dtype::U32 | Dtype::I32 => format!("{p}_set1_epi32((int)({value}))"),
            Dtype::U16 | Dtype::I16 | Dtype::Bf16 => format!("{p}_set1_epi16((short)({value}))"),
            Dtype::U8 | Dtype::I8 => format!("{p}_set1_epi8((char)({value}))"),
        }
    }

    /// `acc + a * b` lane by lane, for f32 (fused when `fma`, always on NEON) and 32-bit integers
    /// (wrapping).
    ///
    /// # Errors
    /// [`CodegenError::Unsupported`] for other dtypes.
    pub fn mul_add(self, a: &str, b: &str, acc: &str, fma: bool) -> Result<String, CodegenError> {
        if self.neon() {
            return match self.dtype {
                Dtype::F32 => Ok(format!("vfmaq_f32({acc}, {a}, {b})")),
                Dtype::U32 => Ok(format!("vmlaq_u32({acc}, {a}, {b})")),
                Dtype::I32 => Ok(format!("vmlaq_s32({acc}, {a}, {b})")),
                other => Err(CodegenError::Unsupported {
                    reason: format!("vector multiply-add of {other} (f32, u32 and i32 are supported)"),
                }),
            };
        }
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
        match (self.w(), self.is_f32() && !self.neon()) {
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
        if self.neon() {
            return format!("vaddq_f32({a}, {b})");
        }
        format!("{}_add_ps({a}, {b})", self.prefix())
    }

    /// `a + b` for i32 vectors, wrapping.
    pub fn add_i32(self, a: &str, b: &str) -> String {
        if self.neon() {
            return format!("vaddq_s32({a}, {b})");
        }
        format!("{}_add_epi32({a}, {b})", self.prefix())
    }

    /// `max(a, b)` for f32 vectors.
    pub fn max_f32(self, a: &str, b: &str) -> String {
        if self.neon() {
            return format!("vmaxq_f32({a}, {b})");
        }
        format!("{}_max_ps({a}, {b})", self.prefix())
    }

    /// `a * b` for f32 vectors.
    pub fn mul_f32(self, a: &str, b: &str) -> String {
        if self.neon() {
            return format!("vmulq_f32({a}, {b})");
        }
        format!("{}_mul_ps({a}, {b})", self.prefix())
    }

    /// `a - b` for f32 vectors.
    pub fn sub_f32(self, a: &str, b: &str) -> String {
        if self.neon() {
            return format!("vsubq_f32({a}, {b})");
        }
        format!("{}_sub_ps({a}, {b})", self.prefix())
    }

    /// GELU (tanh form) of an f32 vector, and the helper it calls.
    pub fn gelu(self, v: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        if self.neon() {
            return (format!("morello_gelu_f32x4({v})"), Helper::GeluF32x4);
        }
        match self.w() {
            Width::W128 => (format!("morello_gelu_m128({v})"), Helper::GeluM128),
            Width::W256 => (format!("morello_gelu_m256({v})"), Helper::GeluM256),
            Width::W512 => (format!("morello_gelu_m512({v})"), Helper::GeluM512),
        }
    }

    /// `e^x` of an f32 vector, and the helper it calls.
    pub fn exp(self, v: &str) -> (String, super::helpers::Helper) {
        use super::helpers::Helper;
        if self.neon() {
            return (format!("morello_exp_f32x4({v})"), Helper::ExpF32x4);
        }
        match self.w() {
            Width::W128 => (format!("morello_exp_m128({v})"), Helper::ExpM128),
            Width::W256 => (format!("morello_exp_m256({v})"), Helper::ExpM256),
            Width::W512 => (format!("morello_exp_m512({v})"), Helper::ExpM512),
        }
    }

    /// The sum of an f32 vector's lanes (a float), and the helper it needs.
    pub fn horizontal_sum(self, v: &str) -> (String, Option<super::helpers::Helper>) {
        use super::helpers::Helper;
        if self.neon() {
            return (format!("vaddvq_f32({v})"), None);
        }
        match self.w() {
            Width::W128 => (format!("morello_hsum_m128({v})"), Some(Helper::HsumM128)),
            Width::W256 => (format!("morello_hsum_m256({v})"), Some(Helper::HsumM256)),
            Width::W512 => (format!("_mm512_reduce_add_ps({v})"), None),
        }
    }
}
