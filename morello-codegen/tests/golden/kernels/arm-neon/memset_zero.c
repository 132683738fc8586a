/* morello kernel `MemsetZero` by itself, as function `memset_zero` for target arm-neon:
 * FillZero(16, f32 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void memset_zero(float *restrict out) {
  memset(out, 0, 64);
}
