/* morello kernel `kernel` for target x86-avx2:
 * AddBiasGelu(2x3, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    768   0   0   0    0   0  tile 1x1  AddBiasGelu(2x3, f32 GL row-major, f32 GL row-major)
 *    128   0   0   0    0   0    kernel ValueAddBias  AddBiasGelu(1x1, f32 GL row-major, f32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_EXP_M128: tests/golden/helpers.c */
/* MORELLO_HELPER_GELU_M128: tests/golden/helpers.c */
/* MORELLO_HELPER_GELU_F32: tests/golden/helpers.c */

void kernel(const float *restrict bias, float *restrict out) {
  for (int64_t d0_0 = 0; d0_0 < 2; d0_0++) {
    for (int64_t d1_1 = 0; d1_1 < 3; d1_1++) {
      out[3 * d0_0 + d1_1] = morello_gelu_f32(out[3 * d0_0 + d1_1] + bias[d1_1]);
    }
  }
}
