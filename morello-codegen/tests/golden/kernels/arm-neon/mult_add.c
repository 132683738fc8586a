/* morello kernel `MultAdd` by itself, as function `mult_add` for target arm-neon:
 * MatmulAccum(1x1x1x1, f32 RF row-major, f32 RF row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void mult_add(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  float lhs_r_0 = lhs[0];
  float rhs_r_0 = rhs[0];
  float out_r_0 = out[0];
  out_r_0 += lhs_r_0 * rhs_r_0;
  out[0] = out_r_0;
}
