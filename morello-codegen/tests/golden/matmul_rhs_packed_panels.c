/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x2x4x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL   L2  L1  VRF  RF  implementation
 *   2784   0  256   0    3   0  move operand 1 to f32 L2 [2, 1, 2 p(8)]  Matmul(1x2x4x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    992   0    0   0    1   0    [in] tile 1x1x8  Move(1x4x16, f32 GL row-major, f32 L2 [2, 1, 2 p(8)])
 *    124   0    0   0    1   0      move operand 0 to f32 VRF row-major v8  Move(1x1x8, f32 GL row-major, f32 L2 row-major)
 *     61   0    0   0    0   0        [in] kernel VectorAssign  Move(1x1x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *      3   0    0   0    0   0        kernel VectorAssign  Move(1x1x8, f32 VRF row-major v8, f32 L2 row-major, serial)
 *   1648   0    0   0    3   0    tile 1x1x4x8  Matmul(1x2x4x16, f32 GL row-major, f32 L2 [2, 1, 2 p(8)], f32 GL row-major)
 *    412   0    0   0    3   0      move operand 2 to f32 VRF row-major v8  Matmul(1x1x4x8, f32 GL row-major, f32 L2 row-major, f32 GL row-major)
 *    291   0    0   0    2   0        block  Matmul(1x1x4x8, f32 GL row-major, f32 L2 row-major, f32 VRF row-major v8, serial)
 *      1   0    0   0    0   0          kernel VectorFill  FillZero(1x1x8, f32 VRF row-major v8, serial)
 *    268   0    0   0    2   0          tile 1x1x1x8  MatmulAccum(1x1x4x8, f32 GL row-major, f32 L2 row-major, f32 VRF row-major v8, serial)
 *     67   0    0   0    2   0            move operand 1 to f32 VRF row-major v8  MatmulAccum(1x1x1x8, f32 GL row-major, f32 L2 row-major, f32 VRF row-major v8, serial)
 *      3   0    0   0    0   0              [in] kernel VectorAssign  Move(1x1x8, f32 L2 row-major, f32 VRF row-major v8, serial)
 *     62   0    0   0    1   0              kernel BroadcastVecMultAdd  MatmulAccum(1x1x1x8, f32 GL row-major, f32 VRF row-major v8, f32 VRF row-major v8, serial)
 *     61   0    0   0    0   0        [out] kernel VectorAssign  Move(1x1x8, f32 VRF row-major v8, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  {
    float buf0[64] __attribute__((aligned(64)));
    for (int64_t d1_1 = 0; d1_1 < 4; d1_1++) {
      for (int64_t d2_2 = 0; d2_2 < 2; d2_2++) {
        {
          __m256 v3_0;
          v3_0 = _mm256_loadu_ps(&rhs[16 * d1_1 + 8 * d2_2]);
          _mm256_storeu_ps(&buf0[8 * d1_1 + 32 * d2_2], v3_0);
        }
      }
    }
    for (int64_t m_4 = 0; m_4 < 2; m_4++) {
      for (int64_t n_5 = 0; n_5 < 2; n_5++) {
        {
          __m256 v6_0;
          v6_0 = _mm256_setzero_ps();
          for (int64_t k_7 = 0; k_7 < 4; k_7++) {
            {
              __m256 v8_0;
              v8_0 = _mm256_loadu_ps(&buf0[32 * n_5 + 8 * k_7]);
              {
                const __m256 b9 = _mm256_set1_ps(lhs[4 * m_4 + k_7]);
                v6_0 = _mm256_fmadd_ps(v8_0, b9, v6_0);
              }
            }
          }
          _mm256_storeu_ps(&out[16 * m_4 + 8 * n_5], v6_0);
        }
      }
    }
  }
}
