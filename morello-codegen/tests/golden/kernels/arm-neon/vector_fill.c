/* morello kernel `VectorFill` by itself, as function `vector_fill` for target arm-neon:
 * FillZero(4, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_fill(float *restrict out) {
  float32x4_t out_r_0 = vld1q_f32((const float *)(out));
  out_r_0 = vdupq_n_f32((float)0);
  vst1q_f32((float *)(out), out_r_0);
}
