/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x2x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *   1509   0   0   0    0   0  block  Matmul(1x2x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *     61   0   0   0    0   0    kernel MemsetZero  FillZero(1x2x2, f32 GL row-major)
 *   1448   0   0   0    0   0    tile 1x1x1x1  MatmulAccum(1x2x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    181   0   0   0    0   0      kernel MultAdd  MatmulAccum(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  memset(out, 0, 16);
  for (int64_t m_0 = 0; m_0 < 2; m_0++) {
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      for (int64_t n_2 = 0; n_2 < 2; n_2++) {
        out[2 * m_0 + n_2] += lhs[2 * m_0 + k_1] * rhs[2 * k_1 + n_2];
      }
    }
  }
}
