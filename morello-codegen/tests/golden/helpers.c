#ifndef MORELLO_HELPER_FLOORDIV
#define MORELLO_HELPER_FLOORDIV
static inline __attribute__((unused)) int64_t morello_floordiv(int64_t a, int64_t c) {
  int64_t q = a / c;
  return (a % c != 0 && a < 0) ? q - 1 : q;
}
#endif
#ifndef MORELLO_HELPER_MOD
#define MORELLO_HELPER_MOD
static inline __attribute__((unused)) int64_t morello_mod(int64_t a, int64_t c) {
  int64_t r = a % c;
  return r < 0 ? r + c : r;
}
#endif
#ifndef MORELLO_HELPER_BF16_TO_F32
#define MORELLO_HELPER_BF16_TO_F32
static inline __attribute__((unused)) float morello_bf16_to_f32(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &wide, sizeof value);
  return value;
}
#endif
#ifndef MORELLO_HELPER_F32_TO_BF16
#define MORELLO_HELPER_F32_TO_BF16
static inline __attribute__((unused)) uint16_t morello_f32_to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(bits >> 16);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}
#endif
#ifndef MORELLO_HELPER_HSUM_M128
#define MORELLO_HELPER_HSUM_M128
static inline __attribute__((unused)) float morello_hsum_m128(__m128 v) {
  __m128 pairs = _mm_add_ps(v, _mm_movehl_ps(v, v));
  __m128 total = _mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 0x55));
  return _mm_cvtss_f32(total);
}
#endif
#ifndef MORELLO_HELPER_HSUM_M256
#define MORELLO_HELPER_HSUM_M256
static inline __attribute__((unused)) float morello_hsum_m256(__m256 v) {
  return morello_hsum_m128(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}
#endif
#ifndef MORELLO_HELPER_EXP_M128
#define MORELLO_HELPER_EXP_M128
static inline __attribute__((unused)) __m128 morello_exp_m128(__m128 x) {
  x = _mm_min_ps(_mm_max_ps(x, _mm_set1_ps(-87.0f)), _mm_set1_ps(88.0f));
  __m128i k = _mm_cvtps_epi32(_mm_mul_ps(x, _mm_set1_ps(1.44269504f)));
  __m128 n = _mm_cvtepi32_ps(k);
  __m128 r = _mm_fnmadd_ps(n, _mm_set1_ps(0.693359375f), x);
  r = _mm_fnmadd_ps(n, _mm_set1_ps(-2.12194440e-4f), r);
  __m128 q = _mm_set1_ps(1.98412698e-4f);
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(1.38888889e-3f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(8.33333333e-3f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(4.16666667e-2f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(1.66666667e-1f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(0.5f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(1.0f));
  q = _mm_fmadd_ps(q, r, _mm_set1_ps(1.0f));
  __m128i scale = _mm_slli_epi32(_mm_add_epi32(k, _mm_set1_epi32(127)), 23);
  return _mm_mul_ps(q, _mm_castsi128_ps(scale));
}
#endif
#ifndef MORELLO_HELPER_EXP_M256
#define MORELLO_HELPER_EXP_M256
static inline __attribute__((unused)) __m256 morello_exp_m256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  __m256i k = _mm256_cvtps_epi32(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)));
  __m256 n = _mm256_cvtepi32_ps(k);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 q = _mm256_set1_ps(1.98412698e-4f);
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.38888889e-3f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(8.33333333e-3f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(4.16666667e-2f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.66666667e-1f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.5f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
  __m256i scale = _mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(q, _mm256_castsi256_ps(scale));
}
#endif
#ifndef MORELLO_HELPER_EXP_M512
#define MORELLO_HELPER_EXP_M512
static inline __attribute__((unused)) __m512 morello_exp_m512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  __m512i k = _mm512_cvtps_epi32(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)));
  __m512 n = _mm512_cvtepi32_ps(k);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(1.98412698e-4f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.38888889e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(8.33333333e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(4.16666667e-2f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.66666667e-1f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.5f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
  __m512i scale = _mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(q, _mm512_castsi512_ps(scale));
}
#endif
#ifndef MORELLO_HELPER_GELU_M128
#define MORELLO_HELPER_GELU_M128
static inline __attribute__((unused)) __m128 morello_gelu_m128(__m128 x) {
  __m128 cube = _mm_mul_ps(_mm_mul_ps(x, x), x);
  __m128 y = _mm_mul_ps(_mm_set1_ps(0.797884561f), _mm_fmadd_ps(_mm_set1_ps(0.044715f), cube, x));
  __m128 e = morello_exp_m128(_mm_mul_ps(y, _mm_set1_ps(-2.0f)));
  return _mm_div_ps(x, _mm_add_ps(_mm_set1_ps(1.0f), e));
}
#endif
#ifndef MORELLO_HELPER_GELU_M256
#define MORELLO_HELPER_GELU_M256
static inline __attribute__((unused)) __m256 morello_gelu_m256(__m256 x) {
  __m256 cube = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  __m256 y = _mm256_mul_ps(_mm256_set1_ps(0.797884561f), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), cube, x));
  __m256 e = morello_exp_m256(_mm256_mul_ps(y, _mm256_set1_ps(-2.0f)));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
#endif
#ifndef MORELLO_HELPER_GELU_M512
#define MORELLO_HELPER_GELU_M512
static inline __attribute__((unused)) __m512 morello_gelu_m512(__m512 x) {
  __m512 cube = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  __m512 y = _mm512_mul_ps(_mm512_set1_ps(0.797884561f), _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), cube, x));
  __m512 e = morello_exp_m512(_mm512_mul_ps(y, _mm512_set1_ps(-2.0f)));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}
#endif
#ifndef MORELLO_HELPER_GELU_F32
#define MORELLO_HELPER_GELU_F32
static inline __attribute__((unused)) float morello_gelu_f32(float x) {
  return _mm_cvtss_f32(morello_gelu_m128(_mm_set_ss(x)));
}
#endif
#ifndef MORELLO_HELPER_EXP_F32X4
#define MORELLO_HELPER_EXP_F32X4
static inline __attribute__((unused)) float32x4_t morello_exp_f32x4(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.0f)), vdupq_n_f32(88.0f));
  int32x4_t k = vcvtnq_s32_f32(vmulq_f32(x, vdupq_n_f32(1.44269504f)));
  float32x4_t n = vcvtq_f32_s32(k);
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t q = vdupq_n_f32(1.98412698e-4f);
  q = vfmaq_f32(vdupq_n_f32(1.38888889e-3f), q, r);
  q = vfmaq_f32(vdupq_n_f32(8.33333333e-3f), q, r);
  q = vfmaq_f32(vdupq_n_f32(4.16666667e-2f), q, r);
  q = vfmaq_f32(vdupq_n_f32(1.66666667e-1f), q, r);
  q = vfmaq_f32(vdupq_n_f32(0.5f), q, r);
  q = vfmaq_f32(vdupq_n_f32(1.0f), q, r);
  q = vfmaq_f32(vdupq_n_f32(1.0f), q, r);
  int32x4_t scale = vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23);
  return vmulq_f32(q, vreinterpretq_f32_s32(scale));
}
#endif
#ifndef MORELLO_HELPER_GELU_F32X4
#define MORELLO_HELPER_GELU_F32X4
static inline __attribute__((unused)) float32x4_t morello_gelu_f32x4(float32x4_t x) {
  float32x4_t cube = vmulq_f32(vmulq_f32(x, x), x);
  float32x4_t y = vmulq_f32(vdupq_n_f32(0.797884561f), vfmaq_f32(x, vdupq_n_f32(0.044715f), cube));
  float32x4_t e = morello_exp_f32x4(vmulq_f32(y, vdupq_n_f32(-2.0f)));
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), e));
}
#endif
#ifndef MORELLO_HELPER_GELU_F32_NEON
#define MORELLO_HELPER_GELU_F32_NEON
static inline __attribute__((unused)) float morello_gelu_f32_neon(float x) {
  return vgetq_lane_f32(morello_gelu_f32x4(vdupq_n_f32(x)), 0);
}
#endif
#ifndef MORELLO_HELPER_DPBUSD_M512
#define MORELLO_HELPER_DPBUSD_M512
static inline __attribute__((unused)) __m512i morello_dpbusd_m512(__m512i acc, __m512i u8, __m512i i8) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(i8));
  return acc;
}
#endif
#ifndef MORELLO_HELPER_DPBUSD_M256
#define MORELLO_HELPER_DPBUSD_M256
static inline __attribute__((unused)) __m256i morello_dpbusd_m256(__m256i acc, __m256i u8, __m256i i8) {
  __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u8), "x"(i8));
  return acc;
}
#endif
