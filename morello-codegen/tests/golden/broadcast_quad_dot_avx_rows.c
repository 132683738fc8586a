/* morello kernel `kernel` for target x86-avx2-vnni:
 * Matmul(1x2x8x16, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavxvnni -c kernel.c
 *
 *   cost  GL  L2   L1  VRF  RF  implementation
 *    520   0   0  128    7   0  move operand 2 to i32 VRF row-major v8  Matmul(1x2x8x16, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 GL row-major)
 *    356   0   0  128    3   0    cache operand 1 to i8 L1 [1, 2, 1 p(4)]  Matmul(1x2x8x16, u8 GL row-major, i8 GL [1, 2, 1 p(4)], i32 VRF row-major v8, serial)
 *    272   0   0    0    3   0      block  Matmul(1x2x8x16, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v8, serial)
 *      4   0   0    0    0   0        kernel VectorFill  FillZero(1x2x16, i32 VRF row-major v8, serial)
 *    268   0   0    0    3   0        tile 1x2x4x16  MatmulAccum(1x2x8x16, u8 GL row-major, i8 L1 [1, 2, 1 p(4)], i32 VRF row-major v8, serial)
 *    134   0   0    0    3   0          move operand 1 to i8 VRF col-major v32  MatmulAccum(1x2x4x16, u8 GL row-major c1, i8 L1 col-major, i32 VRF row-major v8, serial)
 *      4   0   0    0    0   0            [in] kernel VectorAssign  Move(1x4x16, i8 L1 col-major, i8 VRF col-major v32, serial)
 *    128   0   0    0    1   0            tile 1x1x4x16  MatmulAccum(1x2x4x16, u8 GL row-major c1, i8 VRF col-major v32, i32 VRF row-major v8, serial)
 *     64   0   0    0    1   0              kernel BroadcastQuadDotAvx  MatmulAccum(1x1x4x16, u8 GL row-major, i8 VRF col-major v32, i32 VRF row-major v8, serial)
 *     84   0   0    0    0   0    [out] kernel VectorAssign  Move(1x2x16, i32 VRF row-major v8, i32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_DPBUSD_M256: tests/golden/helpers.c */

void kernel(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  {
    __m256i v0_0, v0_1, v0_2, v0_3;
    v0_0 = _mm256_setzero_si256();
    v0_1 = _mm256_setzero_si256();
    v0_2 = _mm256_setzero_si256();
    v0_3 = _mm256_setzero_si256();
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      {
        __m256i v2_0, v2_1;
        v2_0 = _mm256_loadu_si256((const __m256i *)(&rhs[64 * k_1]));
        v2_1 = _mm256_loadu_si256((const __m256i *)(&rhs[64 * k_1 + 32]));
        {
          const __m256i q3 = _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_1])));
          v0_0 = morello_dpbusd_m256(v0_0, q3, v2_0);
          v0_1 = morello_dpbusd_m256(v0_1, q3, v2_1);
        }
        {
          const __m256i q4 = _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(&lhs[4 * k_1 + 8])));
          v0_2 = morello_dpbusd_m256(v0_2, q4, v2_0);
          v0_3 = morello_dpbusd_m256(v0_3, q4, v2_1);
        }
      }
    }
    _mm256_storeu_si256((__m256i *)(out), v0_0);
    _mm256_storeu_si256((__m256i *)(&out[8]), v0_1);
    _mm256_storeu_si256((__m256i *)(&out[16]), v0_2);
    _mm256_storeu_si256((__m256i *)(&out[24]), v0_3);
  }
}
