/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x1x2x32, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2   L1  VRF  RF  implementation
 *    322   0   0  256    4   0  tile 1x1x2x32  Matmul(1x1x2x32, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 *    322   0   0  256    4   0    cache operand 1 to bf16 L1 row-major  Matmul(1x1x2x32, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 *    238   0   0  128    4   0      cache operand 2 to f32 L1 row-major  Matmul(1x1x2x32, bf16 GL row-major, bf16 L1 row-major, f32 GL row-major)
 *    154   0   0    0    4   0        move operand 2 to f32 VRF row-major v16  Matmul(1x1x2x32, bf16 GL row-major, bf16 L1 row-major, f32 L1 row-major)
 *    144   0   0    0    2   0          block  Matmul(1x1x2x32, bf16 GL row-major, bf16 L1 row-major, f32 VRF row-major v16, serial)
 *      2   0   0    0    0   0            kernel VectorFill  FillZero(1x1x32, f32 VRF row-major v16, serial)
 *    138   0   0    0    2   0            tile 1x1x1x32  MatmulAccum(1x1x2x32, bf16 GL row-major, bf16 L1 row-major, f32 VRF row-major v16, serial)
 *     69   0   0    0    2   0              kernel BroadcastVecMultAddBf16  MatmulAccum(1x1x1x32, bf16 GL row-major, bf16 L1 row-major, f32 VRF row-major v16, serial)
 *      6   0   0    0    0   0          [out] kernel VectorAssign  Move(1x1x32, f32 VRF row-major v16, f32 L1 row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_BF16_TO_F32: tests/golden/helpers.c */

void kernel(const uint16_t *restrict lhs, const uint16_t *restrict rhs, float *restrict out) {
  {
    __m512 v0_0, v0_1;
    v0_0 = _mm512_setzero_ps();
    v0_1 = _mm512_setzero_ps();
    for (int64_t k_1 = 0; k_1 < 2; k_1++) {
      {
        const __m512 b2 = _mm512_set1_ps(morello_bf16_to_f32(lhs[k_1]));
        v0_0 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(&rhs[32 * k_1]))), 16)), b2, v0_0);
        v0_1 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(&rhs[32 * k_1 + 16]))), 16)), b2, v0_1);
      }
    }
    _mm512_storeu_ps(out, v0_0);
    _mm512_storeu_ps(&out[16], v0_1);
  }
}
