/* morello kernel `VectorAssign` by itself, as function `vector_assign` for target arm-neon:
 * Move(4, f32 L1 row-major, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -c kernel.c
 *   (AArch64 code: on another host, aarch64-linux-gnu-gcc, run under qemu-aarch64)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_assign(const float *restrict src, float *restrict dst) {
  float32x4_t dst_r_0 = vld1q_f32((const float *)(dst));
  dst_r_0 = vld1q_f32((const float *)(src));
  vst1q_f32((float *)(dst), dst_r_0);
}
