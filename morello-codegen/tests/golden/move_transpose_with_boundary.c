/* morello kernel `kernel` for target x86-avx2:
 * Move(5x3, u32 GL row-major, u32 GL col-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *   1815   0   0   0    0   0  tile 4x3  Move(5x3, u32 GL row-major, u32 GL col-major)
 *   1452   0   0   0    0   0    tile 1x1  Move(4x3, u32 GL row-major, u32 GL col-major c1)
 *    121   0   0   0    0   0      kernel ValueAssign  Move(1x1, u32 GL row-major, u32 GL row-major)
 *    363   0   0   0    0   0    [at 4,0] tile 1x1  Move(1x3, u32 GL row-major, u32 GL row-major c0)
 *    121   0   0   0    0   0      kernel ValueAssign  Move(1x1, u32 GL row-major, u32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const uint32_t *restrict src, uint32_t *restrict dst) {
  for (int64_t d0_0 = 0; d0_0 < 4; d0_0++) {
    for (int64_t d1_1 = 0; d1_1 < 3; d1_1++) {
      dst[d0_0 + 5 * d1_1] = src[3 * d0_0 + d1_1];
    }
  }
  for (int64_t d1_2 = 0; d1_2 < 3; d1_2++) {
    dst[5 * d1_2 + 4] = src[d1_2 + 12];
  }
}
