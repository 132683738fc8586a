/* morello kernel `BroadcastSdot` by itself, as function `broadcast_sdot` for target arm-neon:
 * MatmulAccum(1x1x4x4, i8 L1 row-major, i8 L1 col-major, i32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -march=armv8.2-a+dotprod -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_sdot(const int8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  int32x4_t out_r_0 = vld1q_s32((const int32_t *)(out));
  {
    const int8x16_t q0 = vreinterpretq_s8_u32(vdupq_n_u32((uint32_t)(uint8_t)lhs[0] | ((uint32_t)(uint8_t)lhs[1] << 8) | ((uint32_t)(uint8_t)lhs[2] << 16) | ((uint32_t)(uint8_t)lhs[3] << 24)));
    out_r_0 = vdotq_s32(out_r_0, vld1q_s8(rhs), q0);
  }
  vst1q_s32((int32_t *)(out), out_r_0);
}
