/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x1x64x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    374   0   0   0    5   1  move operand 2 to f32 RF row-major  Matmul(1x1x64x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    253   0   0   0    5   0    block  Matmul(1x1x64x1, f32 GL row-major, f32 GL row-major, f32 RF row-major, serial)
 *      1   0   0   0    0   0      kernel ValueFill  FillZero(1x1x1, f32 RF row-major, serial)
 *    252   0   0   0    5   0      kernel DotProductLoop  MatmulAccum(1x1x64x1, f32 GL row-major, f32 GL row-major, f32 RF row-major, serial)
 *     61   0   0   0    0   0    [out] kernel ValueAssign  Move(1x1x1, f32 RF row-major, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_HSUM_M128: tests/golden/helpers.c */
/* MORELLO_HELPER_HSUM_M256: tests/golden/helpers.c */

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  {
    float r0_0;
    r0_0 = 0.0f;
    {
      const float *a1 = lhs;
      const float *b1 = rhs;
      __m256 acc1_0 = _mm256_setzero_ps(), acc1_1 = _mm256_setzero_ps(), acc1_2 = _mm256_setzero_ps(), acc1_3 = _mm256_setzero_ps();
      for (int64_t k1 = 0; k1 < 64; k1 += 32) {
        acc1_0 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + k1), _mm256_loadu_ps(b1 + k1), acc1_0);
        acc1_1 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + k1 + 8), _mm256_loadu_ps(b1 + k1 + 8), acc1_1);
        acc1_2 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + k1 + 16), _mm256_loadu_ps(b1 + k1 + 16), acc1_2);
        acc1_3 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + k1 + 24), _mm256_loadu_ps(b1 + k1 + 24), acc1_3);
      }
      acc1_0 = _mm256_add_ps(acc1_0, acc1_1);
      acc1_2 = _mm256_add_ps(acc1_2, acc1_3);
      acc1_0 = _mm256_add_ps(acc1_0, acc1_2);
      r0_0 += morello_hsum_m256(acc1_0);
    }
    out[0] = r0_0;
  }
}
