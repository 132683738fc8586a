/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x16x2x1, i32 GL col-major, i32 GL row-major, i32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    494   0   0   0    4   0  move operand 2 to i32 VRF row-major v16  Matmul(1x16x2x1, i32 GL col-major, i32 GL row-major, i32 GL row-major)
 *    373   0   0   0    3   0    block  Matmul(1x16x2x1, i32 GL col-major, i32 GL row-major, i32 VRF row-major v16, serial)
 *      1   0   0   0    0   0      kernel VectorFill  FillZero(1x16x1, i32 VRF row-major v16, serial)
 *    372   0   0   0    3   0      tile 1x16x1x1  MatmulAccum(1x16x2x1, i32 GL col-major, i32 GL row-major, i32 VRF row-major v16, serial)
 *    186   0   0   0    3   0        move operand 0 to i32 VRF row-major v16  MatmulAccum(1x16x1x1, i32 GL row-major, i32 GL row-major, i32 VRF row-major v16, serial)
 *     61   0   0   0    0   0          [in] kernel VectorAssign  Move(1x16x1, i32 GL row-major, i32 VRF row-major v16, serial)
 *     65   0   0   0    2   0          kernel BroadcastVecMultAdd  MatmulAccum(1x16x1x1, i32 VRF row-major v16, i32 GL row-major, i32 VRF row-major v16, serial)
 *     61   0   0   0    0   0    [out] kernel VectorAssign  Move(1x16x1, i32 VRF row-major v16, i32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const int32_t *restrict lhs, const int32_t *restrict rhs, int32_t *restrict out) {
  {
    __m512i v0_0;
    v0_0 = _mm512_setzero_si512();
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      {
        __m512i v2_0;
        v2_0 = _mm512_loadu_si512((const void *)(&lhs[16 * k_1]));
        {
          const __m512i b3 = _mm512_set1_epi32((int)(rhs[k_1]));
          v0_0 = _mm512_add_epi32(v0_0, _mm512_mullo_epi32(v2_0, b3));
        }
      }
    }
    _mm512_storeu_si512((void *)(out), v0_0);
  }
}
