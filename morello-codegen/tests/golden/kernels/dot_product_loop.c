/* morello kernel `DotProductLoop` by itself, as function `dot_product_loop` for target x86-avx2:
 * MatmulAccum(1x1x32x1, f32 L1 row-major, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 * helpers (emit/helpers.rs): HsumM256
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void dot_product_loop(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  float out_r_0 = out[0];
  {
    const float *a0 = lhs;
    const float *b0 = rhs;
    __m256 acc0_0 = _mm256_setzero_ps(), acc0_1 = _mm256_setzero_ps(), acc0_2 = _mm256_setzero_ps(), acc0_3 = _mm256_setzero_ps();
    acc0_0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + 0), _mm256_loadu_ps(b0 + 0), acc0_0);
    acc0_1 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + 8), _mm256_loadu_ps(b0 + 8), acc0_1);
    acc0_2 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + 16), _mm256_loadu_ps(b0 + 16), acc0_2);
    acc0_3 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + 24), _mm256_loadu_ps(b0 + 24), acc0_3);
    acc0_0 = _mm256_add_ps(acc0_0, acc0_1);
    acc0_2 = _mm256_add_ps(acc0_2, acc0_3);
    acc0_0 = _mm256_add_ps(acc0_0, acc0_2);
    out_r_0 += morello_hsum_m256(acc0_0);
  }
  out[0] = out_r_0;
}
