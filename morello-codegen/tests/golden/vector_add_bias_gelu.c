/* morello kernel `kernel` for target x86-avx2:
 * AddBiasGelu(2x8, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    261   0   0   0    6   0  move operand 1 to f32 VRF row-major v8  AddBiasGelu(2x8, f32 GL row-major, f32 GL row-major)
 *     62   0   0   0    0   0    [in] kernel VectorAssign  Move(2x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *     77   0   0   0    4   0    kernel VectorAddBias  AddBiasGelu(2x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *     62   0   0   0    0   0    [out] kernel VectorAssign  Move(2x8, f32 VRF row-major v8, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
#ifndef MORELLO_HELPER_GELU_M256
#define MORELLO_HELPER_GELU_M256
static inline __attribute__((unused)) __m256 morello_gelu_m256(__m256 x) {
  __m256 cube = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  __m256 y = _mm256_mul_ps(_mm256_set1_ps(0.797884561f), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), cube, x));
  __m256 e = morello_exp_m256(_mm256_mul_ps(y, _mm256_set1_ps(-2.0f)));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
#endif

void kernel(const float *restrict bias, float *restrict out) {
  {
    __m256 v0_0, v0_1;
    v0_0 = _mm256_loadu_ps(out);
    v0_1 = _mm256_loadu_ps(&out[8]);
    v0_0 = morello_gelu_m256(_mm256_add_ps(v0_0, _mm256_loadu_ps(bias)));
    v0_1 = morello_gelu_m256(_mm256_add_ps(v0_1, _mm256_loadu_ps(bias)));
    _mm256_storeu_ps(out, v0_0);
    _mm256_storeu_ps(&out[8], v0_1);
  }
}
