/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x2x8x32, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2   L1  VRF  RF  implementation
 *    652   0   0  256    7   0  move operand 2 to i32 VRF row-major v16  Matmul(1x2x8x32, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 GL row-major)
 *    408   0   0  256    3   0    cache operand 1 to i8 L1 [1, 2, 1 p(4)]  Matmul(1x2x8x32, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *    280   0   0    0    3   0      block  Matmul(1x2x8x32, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *      4   0   0    0    0   0        kernel VectorFill  FillZero(1x2x32, i32 VRF row-major v16, serial)
 *    276   0   0    0    3   0        tile 1x2x4x32  MatmulAccum(1x2x8x32, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v16, serial)
 *    138   0   0    0    3   0          move operand 1 to i8 VRF col-major v64  MatmulAccum(1x2x4x32, u8 GL row-major c1, i8 L1 col-major, i32 VRF row-major v16, serial)
 *      6   0   0    0    0   0            [in] kernel VectorAssign  Move(1x4x32, i8 L1 col-major, i8 VRF col-major v64, serial)
 *    128   0   0    0    1   0            tile 1x1x4x32  MatmulAccum(1x2x4x32, u8 GL row-major c1, i8 VRF col-major v64, i32 VRF row-major v16, serial)
 *     64   0   0    0    1   0              kernel BroadcastQuadDot  MatmulAccum(1x1x4x32, u8 GL row-major, i8 VRF col-major v64, i32 VRF row-major v16, serial)
 *    124   0   0    0    0   0    [out] kernel VectorAssign  Move(1x2x32, i32 VRF row-major v16, i32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_DPBUSD_M512: tests/golden/helpers.c */

void kernel(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  {
    __m512i v0_0, v0_1, v0_2, v0_3;
    v0_0 = _mm512_setzero_si512();
    v0_1 = _mm512_setzero_si512();
    v0_2 = _mm512_setzero_si512();
    v0_3 = _mm512_setzero_si512();
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      {
        __m512i v2_0, v2_1;
        v2_0 = _mm512_loadu_si512((const void *)(&rhs[128 * k_1]));
        v2_1 = _mm512_loadu_si512((const void *)(&rhs[128 * k_1 + 64]));
        {
          const __m512i q3 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_1])));
          v0_0 = morello_dpbusd_m512(v0_0, q3, v2_0);
          v0_1 = morello_dpbusd_m512(v0_1, q3, v2_1);
        }
        {
          const __m512i q4 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_1 + 8])));
          v0_2 = morello_dpbusd_m512(v0_2, q4, v2_0);
          v0_3 = morello_dpbusd_m512(v0_3, q4, v2_1);
        }
      }
    }
    _mm512_storeu_si512((void *)(out), v0_0);
    _mm512_storeu_si512((void *)(&out[16]), v0_1);
    _mm512_storeu_si512((void *)(&out[32]), v0_2);
    _mm512_storeu_si512((void *)(&out[48]), v0_3);
  }
}
