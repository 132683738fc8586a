/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    438   0   0  64    3   0  cache operand 2 to f32 L1 row-major  Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    376   0   0   0    3   0    move operand 2 to f32 VRF row-major v8  Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 L1 row-major)
 *    371   0   0   0    2   0      block  Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 VRF row-major v8, serial)
 *      1   0   0   0    0   0        kernel VectorFill  FillZero(1x1x8, f32 VRF row-major v8, serial)
 *    366   0   0   0    2   0        tile 1x1x1x8  MatmulAccum(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 VRF row-major v8, serial)
 *    183   0   0   0    2   0          move operand 1 to f32 VRF row-major v8  MatmulAccum(1x1x1x8, f32 GL row-major, f32 GL row-major, f32 VRF row-major v8, serial)
 *     61   0   0   0    0   0            [in] kernel VectorAssign  Move(1x1x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *     62   0   0   0    1   0            kernel BroadcastVecMultAdd  MatmulAccum(1x1x1x8, f32 GL row-major, f32 VRF row-major v8, f32 VRF row-major v8, serial)
 *      3   0   0   0    0   0      [out] kernel VectorAssign  Move(1x1x8, f32 VRF row-major v8, f32 L1 row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  {
    __m256 v0_0;
    v0_0 = _mm256_setzero_ps();
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      {
        __m256 v2_0;
        v2_0 = _mm256_loadu_ps(&rhs[8 * k_1]);
        {
          const __m256 b3 = _mm256_set1_ps(lhs[k_1]);
          v0_0 = _mm256_fmadd_ps(v2_0, b3, v0_0);
        }
      }
    }
    _mm256_storeu_ps(out, v0_0);
  }
}
