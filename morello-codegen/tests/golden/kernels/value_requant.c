/* morello kernel `ValueRequant` by itself, as function `value_requant` for target x86-avx2:
 * Requant(1, i32 RF row-major, f32 L1 row-major, u8 L1 row-major, u8 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

void value_requant(const int32_t *restrict acc, const float *restrict scale, const uint8_t *restrict zero_point, uint8_t *restrict out) {
  int32_t acc_r_0 = acc[0];
  {
    float rq_y = (float)acc_r_0 * scale[0];
    const float rq_lo = (float)(0 - (int32_t)zero_point[0]), rq_hi = (float)(255 - (int32_t)zero_point[0]);
    rq_y = rq_y > rq_lo ? rq_y : rq_lo;
    rq_y = rq_y < rq_hi ? rq_y : rq_hi;
    out[0] = (uint8_t)((int32_t)nearbyintf(rq_y) + (int32_t)zero_point[0]);
  }
}
