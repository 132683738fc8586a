/* morello kernel `VectorAddBias` by itself, as function `vector_add_bias` for target arm-neon:
 * AddBiasRelu(1x4, f32 L1 row-major, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_add_bias(const float *restrict bias, float *restrict out) {
  float32x4_t out_r_0 = vld1q_f32((const float *)(out));
  out_r_0 = vmaxq_f32(vaddq_f32(out_r_0, vld1q_f32((const float *)(bias))), vdupq_n_f32((float)0));
  vst1q_f32((float *)(out), out_r_0);
}
