/* morello kernel `VectorSoftmaxExp` by itself, as function `vector_softmax_exp` for target arm-neon:
 * SoftmaxExp(1x64, f32 L1 row-major, f32 RF row-major, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 * helpers (emit/helpers.rs): ExpF32x4
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_softmax_exp(const float *restrict x, const float *restrict max, float *restrict y, float *restrict sum) {
  float max_r_0 = max[0];
  float sum_r_0 = sum[0];
  {
    const float *x0 = x;
    float *y0 = y;
    const float mx0_s = max_r_0;
    float32x4_t mx0 = vdupq_n_f32((float)(mx0_s)), s0_0 = vdupq_n_f32((float)0), s0_1 = s0_0;
    int64_t i0 = 0;
    for (; i0 + 8 <= 64; i0 += 8) {
      float32x4_t t0_0 = morello_exp_f32x4(vsubq_f32(vld1q_f32((const float *)(x0 + i0 + 0)), mx0));
      vst1q_f32((float *)(y0 + i0 + 0), t0_0);
      s0_0 = vaddq_f32(s0_0, t0_0);
      float32x4_t t0_1 = morello_exp_f32x4(vsubq_f32(vld1q_f32((const float *)(x0 + i0 + 4)), mx0));
      vst1q_f32((float *)(y0 + i0 + 4), t0_1);
      s0_1 = vaddq_f32(s0_1, t0_1);
    }
    for (; i0 + 4 <= 64; i0 += 4) {
      float32x4_t t0_0 = morello_exp_f32x4(vsubq_f32(vld1q_f32((const float *)(x0 + i0 + 0)), mx0));
      vst1q_f32((float *)(y0 + i0 + 0), t0_0);
      s0_0 = vaddq_f32(s0_0, t0_0);
    }
    float t0 = vaddvq_f32(vaddq_f32(s0_0, s0_1));
    for (; i0 < 64; i0++) {
      float t0_e = vgetq_lane_f32(morello_exp_f32x4(vdupq_n_f32(x0[i0] - mx0_s)), 0);
      y0[i0] = t0_e;
      t0 += t0_e;
    }
    sum_r_0 = t0;
  }
  sum[0] = sum_r_0;
}
