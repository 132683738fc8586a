/* morello kernel `ValueFill` by itself, as function `value_fill` for target arm-neon:
 * FillZero(1, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void value_fill(float *restrict out) {
  float out_r_0 = out[0];
  out_r_0 = 0.0f;
  out[0] = out_r_0;
}
