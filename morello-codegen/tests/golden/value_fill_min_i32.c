/* morello kernel `kernel` for target x86-avx2:
 * FillMin(3, i32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    183   0   0   0    0   0  tile 1  FillMin(3, i32 GL row-major)
 *     61   0   0   0    0   0    kernel ValueFill  FillMin(1, i32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(int32_t *restrict out) {
  for (int64_t d0_0 = 0; d0_0 < 3; d0_0++) {
    out[d0_0] = INT32_MIN;
  }
}
