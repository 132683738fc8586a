/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x2x8x32, u8 GL row-major, i8 GL [2, 1, 2 p(16), 1 p(4)], i32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2   L1  VRF  RF  implementation
 *   1180   0   0  128    4   0  tile 1x2x8x16  Matmul(1x2x8x32, u8 GL row-major, i8 GL [2, 1, 2 p(16), 1 p(4)], i32 GL row-major)
 *    590   0   0  128    4   0    move operand 2 to i32 VRF row-major v16  Matmul(1x2x8x16, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 GL row-major c1)
 *    348   0   0  128    2   0      cache operand 1 to i8 L1 [1, 2, 1 p(4)]  Matmul(1x2x8x16, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *    264   0   0    0    2   0        block  Matmul(1x2x8x16, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *      2   0   0    0    0   0          kernel VectorFill  FillZero(1x2x16, i32 VRF row-major v16, serial)
 *    258   0   0    0    2   0          tile 1x2x4x16  MatmulAccum(1x2x8x16, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *    129   0   0    0    2   0            move operand 1 to i8 VRF col-major v64  MatmulAccum(1x2x4x16, u8 GL row-major c1, i8 L1 col-major, i32 VRF row-major v16, serial)
 *      3   0   0    0    0   0              [in] kernel VectorAssign  Move(1x4x16, i8 L1 col-major, i8 VRF col-major v64, serial)
 *    124   0   0    0    1   0              tile 1x1x4x16  MatmulAccum(1x2x4x16, u8 GL row-major c1, i8 VRF col-major v64, i32 VRF row-major v16, serial)
 *     62   0   0    0    1   0                kernel BroadcastQuadDot  MatmulAccum(1x1x4x16, u8 GL row-major, i8 VRF col-major v64, i32 VRF row-major v16, serial)
 *    122   0   0    0    0   0      [out] kernel VectorAssign  Move(1x2x16, i32 VRF row-major v16, i32 GL row-major c1, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_DPBUSD_M512: tests/golden/helpers.c */

void kernel(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  for (int64_t n_0 = 0; n_0 < 2; n_0++) {
    {
      __m512i v1_0, v1_1;
      v1_0 = _mm512_setzero_si512();
      v1_1 = _mm512_setzero_si512();
      for (int64_t k_2 = 0; k_2 < 2; k_2++) {
        {
          __m512i v3_0;
          v3_0 = _mm512_loadu_si512((const void *)(&rhs[128 * n_0 + 64 * k_2]));
          {
            const __m512i q4 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_2])));
            v1_0 = morello_dpbusd_m512(v1_0, q4, v3_0);
          }
          {
            const __m512i q5 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_2 + 8])));
            v1_1 = morello_dpbusd_m512(v1_1, q5, v3_0);
          }
        }
      }
      _mm512_storeu_si512((void *)(&out[16 * n_0]), v1_0);
      _mm512_storeu_si512((void *)(&out[16 * n_0 + 32]), v1_1);
    }
  }
}
