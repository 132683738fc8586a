/* morello kernel `ValueAddBias` by itself, as function `value_add_bias` for target arm-neon:
 * AddBiasRelu(1, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void value_add_bias(const float *restrict bias, float *restrict out) {
  float out_r_0 = out[0];
  { float s = out_r_0 + bias[0]; out_r_0 = s > 0.0f ? s : 0.0f; }
  out[0] = out_r_0;
}
