/* morello kernel `BroadcastLaneMultAdd` by itself, as function `broadcast_lane_mult_add` for target arm-neon:
 * MatmulAccum(1x1x4x4, f32 VRF row-major v4, f32 VRF row-major v4, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_lane_mult_add(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  float32x4_t lhs_r_0 = vld1q_f32((const float *)(lhs));
  float32x4_t rhs_r_0 = vld1q_f32((const float *)(rhs));
  float32x4_t rhs_r_1 = vld1q_f32((const float *)(rhs + 4));
  float32x4_t rhs_r_2 = vld1q_f32((const float *)(rhs + 8));
  float32x4_t rhs_r_3 = vld1q_f32((const float *)(rhs + 12));
  float32x4_t out_r_0 = vld1q_f32((const float *)(out));
  out_r_0 = vfmaq_laneq_f32(out_r_0, rhs_r_0, lhs_r_0, 0);
  out_r_0 = vfmaq_laneq_f32(out_r_0, rhs_r_1, lhs_r_0, 1);
  out_r_0 = vfmaq_laneq_f32(out_r_0, rhs_r_2, lhs_r_0, 2);
  out_r_0 = vfmaq_laneq_f32(out_r_0, rhs_r_3, lhs_r_0, 3);
  vst1q_f32((float *)(out), out_r_0);
}
