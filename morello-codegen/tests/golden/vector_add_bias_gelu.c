/* morello kernel `kernel` for target x86-avx2:
 * AddBiasGelu(2x8, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    261   0   0   0    6   0  move operand 1 to f32 VRF row-major v8  AddBiasGelu(2x8, f32 GL row-major, f32 GL row-major)
 *     62   0   0   0    0   0    [in] kernel VectorAssign  Move(2x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *     77   0   0   0    4   0    kernel VectorAddBias  AddBiasGelu(2x8, f32 GL row-major, f32 VRF row-major v8, serial)
 *     62   0   0   0    0   0    [out] kernel VectorAssign  Move(2x8, f32 VRF row-major v8, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_EXP_M256: tests/golden/helpers.c */
/* MORELLO_HELPER_GELU_M256: tests/golden/helpers.c */

void kernel(const float *restrict bias, float *restrict out) {
  {
    __m256 v0_0, v0_1;
    v0_0 = _mm256_loadu_ps(out);
    v0_1 = _mm256_loadu_ps(&out[8]);
    v0_0 = morello_gelu_m256(_mm256_add_ps(v0_0, _mm256_loadu_ps(bias)));
    v0_1 = morello_gelu_m256(_mm256_add_ps(v0_1, _mm256_loadu_ps(bias)));
    _mm256_storeu_ps(out, v0_0);
    _mm256_storeu_ps(&out[8], v0_1);
  }
}
