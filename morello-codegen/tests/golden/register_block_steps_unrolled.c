/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x1x8x32, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *   3108   0   0   0    4   0  move operand 2 to f32 VRF row-major v16  Matmul(1x1x8x32, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *   2946   0   0   0    2   0    block  Matmul(1x1x8x32, f32 GL row-major, f32 GL row-major, f32 VRF row-major v16, serial)
 *      2   0   0   0    0   0      kernel VectorFill  FillZero(1x1x32, f32 VRF row-major v16, serial)
 *   2928   0   0   0    2   0      tile 1x1x1x16  MatmulAccum(1x1x8x32, f32 GL row-major, f32 GL row-major, f32 VRF row-major v16, serial)
 *    183   0   0   0    2   0        move operand 1 to f32 VRF row-major v16  MatmulAccum(1x1x1x16, f32 GL row-major, f32 GL row-major, f32 VRF row-major v16, serial)
 *     61   0   0   0    0   0          [in] kernel VectorAssign  Move(1x1x16, f32 GL row-major, f32 VRF row-major v16, serial)
 *     62   0   0   0    1   0          kernel BroadcastVecMultAdd  MatmulAccum(1x1x1x16, f32 GL row-major, f32 VRF row-major v16, f32 VRF row-major v16, serial)
 *     82   0   0   0    0   0    [out] kernel VectorAssign  Move(1x1x32, f32 VRF row-major v16, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  {
    __m512 v0_0, v0_1;
    v0_0 = _mm512_setzero_ps();
    v0_1 = _mm512_setzero_ps();
    #pragma GCC unroll 4
    for (int64_t k_1 = 0; k_1 < 8; k_1++) {
      {
        __m512 v2_0;
        v2_0 = _mm512_loadu_ps(&rhs[32 * k_1]);
        {
          const __m512 b3 = _mm512_set1_ps(lhs[k_1]);
          v0_0 = _mm512_fmadd_ps(v2_0, b3, v0_0);
        }
      }
      {
        __m512 v4_0;
        v4_0 = _mm512_loadu_ps(&rhs[32 * k_1 + 16]);
        {
          const __m512 b5 = _mm512_set1_ps(lhs[k_1]);
          v0_1 = _mm512_fmadd_ps(v4_0, b5, v0_1);
        }
      }
    }
    _mm512_storeu_ps(out, v0_0);
    _mm512_storeu_ps(&out[16], v0_1);
  }
}
