/* morello kernel `BroadcastVecMultAdd` by itself, as function `broadcast_vec_mult_add` for target arm-neon:
 * MatmulAccum(1x1x1x4, f32 L1 row-major, f32 VRF row-major v4, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_vec_mult_add(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  float32x4_t rhs_r_0 = vld1q_f32((const float *)(rhs));
  float32x4_t out_r_0 = vld1q_f32((const float *)(out));
  {
    const float32x4_t b0 = vdupq_n_f32((float)(lhs[0]));
    out_r_0 = vfmaq_f32(out_r_0, rhs_r_0, b0);
  }
  vst1q_f32((float *)(out), out_r_0);
}
