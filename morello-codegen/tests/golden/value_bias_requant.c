/* morello kernel `kernel` for target x86-avx2:
 * BiasRequant(2x3, i32 GL row-major, i32 GL row-major, f32 GL row-major, i8 GL row-major, i8 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *   1824   0   0   0    0   0  tile 1x1  BiasRequant(2x3, i32 GL row-major, i32 GL row-major, f32 GL row-major, i8 GL row-major, i8 GL row-major)
 *    304   0   0   0    0   0    kernel ValueRequant  BiasRequant(1x1, i32 GL row-major, i32 GL row-major, f32 GL row-major, i8 GL row-major, i8 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

void kernel(const int32_t *restrict acc, const int32_t *restrict bias, const float *restrict scale, const int8_t *restrict zero_point, int8_t *restrict out) {
  for (int64_t d0_0 = 0; d0_0 < 2; d0_0++) {
    for (int64_t d1_1 = 0; d1_1 < 3; d1_1++) {
      {
        float rq_y = (float)(int32_t)((uint32_t)acc[3 * d0_0 + d1_1] + (uint32_t)bias[d1_1]) * scale[d1_1];
        const float rq_lo = (float)(-128 - (int32_t)zero_point[d1_1]), rq_hi = (float)(127 - (int32_t)zero_point[d1_1]);
        rq_y = rq_y > rq_lo ? rq_y : rq_lo;
        rq_y = rq_y < rq_hi ? rq_y : rq_hi;
        out[3 * d0_0 + d1_1] = (int8_t)((int32_t)nearbyintf(rq_y) + (int32_t)zero_point[d1_1]);
      }
    }
  }
}
