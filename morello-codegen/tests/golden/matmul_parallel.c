/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x8x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -fopenmp -c kernel.c
 *   (its parallel loops use OpenMP: link with -fopenmp too; without it they run serially)
 *
 *    cost  GL  L2  L1  VRF  RF  implementation
 *   45360   0   0   0    0   0  parallel tile 1x2x4x4  Matmul(1x8x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    6280   0   0   0    0   0    block  Matmul(1x2x4x4, f32 GL row-major, f32 GL row-major c1, f32 GL row-major c1, serial)
 *     488   0   0   0    0   0      tile 1x1x1  FillZero(1x2x4, f32 GL row-major c1, serial)
 *      61   0   0   0    0   0        kernel ValueFill  FillZero(1x1x1, f32 GL row-major, serial)
 *    5792   0   0   0    0   0      tile 1x1x1x1  MatmulAccum(1x2x4x4, f32 GL row-major, f32 GL row-major c1, f32 GL row-major c1, serial)
 *     181   0   0   0    0   0        kernel MultAdd  MatmulAccum(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  #pragma omp parallel for collapse(2) schedule(static)
  for (int64_t m_0 = 0; m_0 < 4; m_0++) {
    for (int64_t n_1 = 0; n_1 < 2; n_1++) {
      for (int64_t d1_2 = 0; d1_2 < 2; d1_2++) {
        for (int64_t d2_3 = 0; d2_3 < 4; d2_3++) {
          out[16 * m_0 + 4 * n_1 + 8 * d1_2 + d2_3] = 0.0f;
        }
      }
      for (int64_t m_4 = 0; m_4 < 2; m_4++) {
        for (int64_t k_5 = 0; k_5 < 4; k_5++) {
          for (int64_t n_6 = 0; n_6 < 4; n_6++) {
            out[16 * m_0 + 4 * n_1 + 8 * m_4 + n_6] += lhs[8 * m_0 + 4 * m_4 + k_5] * rhs[4 * n_1 + 8 * k_5 + n_6];
          }
        }
      }
    }
  }
}
