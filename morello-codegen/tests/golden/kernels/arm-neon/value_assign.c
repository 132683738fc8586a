/* morello kernel `ValueAssign` by itself, as function `value_assign` for target arm-neon:
 * Move(1, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void value_assign(const float *restrict src, float *restrict dst) {
  float dst_r_0 = dst[0];
  dst_r_0 = src[0];
  dst[0] = dst_r_0;
}
