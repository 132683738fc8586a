/* morello kernel `VectorMax` by itself, as function `vector_max` for target arm-neon:
 * Max(1x64, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

void vector_max(const float *restrict x, float *restrict out) {
  float out_r_0 = out[0];
  {
    const float *x0 = x;
    float32x4_t m0_0 = vdupq_n_f32((float)(-INFINITY)), m0_1 = m0_0, m0_2 = m0_0, m0_3 = m0_0;
    int64_t i0 = 0;
    for (; i0 + 16 <= 64; i0 += 16) {
      m0_0 = vmaxq_f32(m0_0, vld1q_f32((const float *)(x0 + i0 + 0)));
      m0_1 = vmaxq_f32(m0_1, vld1q_f32((const float *)(x0 + i0 + 4)));
      m0_2 = vmaxq_f32(m0_2, vld1q_f32((const float *)(x0 + i0 + 8)));
      m0_3 = vmaxq_f32(m0_3, vld1q_f32((const float *)(x0 + i0 + 12)));
    }
    for (; i0 + 4 <= 64; i0 += 4) m0_0 = vmaxq_f32(m0_0, vld1q_f32((const float *)(x0 + i0)));
    m0_0 = vmaxq_f32(vmaxq_f32(m0_0, m0_1), vmaxq_f32(m0_2, m0_3));
    float r0_lanes[4];
    vst1q_f32((float *)(r0_lanes), m0_0);
    float r0 = r0_lanes[0];
    for (int r0_j = 1; r0_j < 4; r0_j++) r0 = r0_lanes[r0_j] > r0 ? r0_lanes[r0_j] : r0;
    for (; i0 < 64; i0++) r0 = x0[i0] > r0 ? x0[i0] : r0;
    out_r_0 = r0;
  }
  out[0] = out_r_0;
}
