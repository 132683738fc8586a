/* morello kernel `kernel` for target x86-avx2:
 * AddBiasGelu(2x3, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    768   0   0   0    0   0  tile 1x1  AddBiasGelu(2x3, f32 GL row-major, f32 GL row-major)
 *    128   0   0   0    0   0    kernel ValueAddBias  AddBiasGelu(1x1, f32 GL row-major, f32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
#ifndef MORELLO_HELPER_GELU_M128
#define MORELLO_HELPER_GELU_M128
static inline __attribute__((unused)) __m128 morello_gelu_m128(__m128 x) {
  __m128 cube = _mm_mul_ps(_mm_mul_ps(x, x), x);
  __m128 y = _mm_mul_ps(_mm_set1_ps(0.797884561f), _mm_fmadd_ps(_mm_set1_ps(0.044715f), cube, x));
  __m128 e = morello_exp_m128(_mm_mul_ps(y, _mm_set1_ps(-2.0f)));
  return _mm_div_ps(x, _mm_add_ps(_mm_set1_ps(1.0f), e));
}
#endif
#ifndef MORELLO_HELPER_GELU_F32
#define MORELLO_HELPER_GELU_F32
static inline __attribute__((unused)) float morello_gelu_f32(float x) {
  return _mm_cvtss_f32(morello_gelu_m128(_mm_set_ss(x)));
}
#endif

void kernel(const float *restrict bias, float *restrict out) {
  for (int64_t d0_0 = 0; d0_0 < 2; d0_0++) {
    for (int64_t d1_1 = 0; d1_1 < 3; d1_1++) {
      out[3 * d0_0 + d1_1] = morello_gelu_f32(out[3 * d0_0 + d1_1] + bias[d1_1]);
    }
  }
}
