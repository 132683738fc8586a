/* morello kernel `kernel` for target x86-avx2:
 * Move(4, bf16 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    484   0   0   0    0   0  tile 1  Move(4, bf16 GL row-major, f32 GL row-major)
 *    121   0   0   0    0   0    kernel ValueAssign  Move(1, bf16 GL row-major, f32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* MORELLO_HELPER_BF16_TO_F32: tests/golden/helpers.c */

void kernel(const uint16_t *restrict src, float *restrict dst) {
  for (int64_t d0_0 = 0; d0_0 < 4; d0_0++) {
    dst[d0_0] = morello_bf16_to_f32(src[d0_0]);
  }
}
