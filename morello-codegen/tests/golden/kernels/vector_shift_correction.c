/* morello kernel `VectorShiftCorrection` by itself, as function `vector_shift_correction` for target x86-avx2:
 * ShiftCorrection(1x16x8, i8 L1 row-major, i32 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_shift_correction(const int8_t *restrict rhs, int32_t *restrict out) {
  {
    const int8_t *r0 = rhs;
    __m256i s0_0 = _mm256_setzero_si256(), s0_1 = _mm256_setzero_si256(), s0_2 = _mm256_setzero_si256(), s0_3 = _mm256_setzero_si256();
    for (int64_t k0 = 0; k0 < 16; k0 += 4) {
      s0_0 = _mm256_add_epi32(s0_0, _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(r0 + (k0) * 8))));
      s0_1 = _mm256_add_epi32(s0_1, _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(r0 + (k0 + 1) * 8))));
      s0_2 = _mm256_add_epi32(s0_2, _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(r0 + (k0 + 2) * 8))));
      s0_3 = _mm256_add_epi32(s0_3, _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(r0 + (k0 + 3) * 8))));
    }
    s0_0 = _mm256_add_epi32(s0_0, s0_1);
    s0_2 = _mm256_add_epi32(s0_2, s0_3);
    s0_0 = _mm256_add_epi32(s0_0, s0_2);
    s0_0 = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(s0_0, 7));
    _mm256_storeu_si256((__m256i *)(out), s0_0);
  }
}
