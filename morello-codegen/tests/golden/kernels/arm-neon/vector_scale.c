/* morello kernel `VectorScale` by itself, as function `vector_scale` for target arm-neon:
 * SoftmaxScale(1x64, f32 RF row-major, f32 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_scale(const float *restrict sum, float *restrict y) {
  float sum_r_0 = sum[0];
  {
    float *y0 = y;
    const float r0 = 1.0f / sum_r_0;
    float32x4_t r0_v = vdupq_n_f32((float)(r0));
    int64_t i0 = 0;
    for (; i0 + 4 <= 64; i0 += 4) vst1q_f32((float *)(y0 + i0), vmulq_f32(vld1q_f32((const float *)(y0 + i0)), r0_v));
  }
}
