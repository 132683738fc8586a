/* morello kernel `ValueShiftCorrection` by itself, as function `value_shift_correction` for target x86-avx2:
 * ShiftCorrection(1x16x1, i8 L1 row-major, i32 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void value_shift_correction(const int8_t *restrict rhs, int32_t *restrict out) {
  {
    const int8_t *r0 = rhs;
    uint32_t s0 = 0;
    for (int64_t q0 = 0; q0 < 16; q0++) {
      s0 += (uint32_t)r0[q0 * 1 + 0];
    }
    s0 = 0u - (s0 << 7);
    out[0] = (int32_t)s0;
  }
}
