/* morello kernel `VectorInterleave` by itself, as function `vector_interleave` for target x86-avx2:
 * Move(4x16, i8 L1 row-major, i8 L1 col-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_interleave(const int8_t *restrict src, int8_t *restrict dst) {
  {
    const __m128i q0_0 = _mm_loadu_si128((const __m128i *)(src));
    const __m128i q0_1 = _mm_loadu_si128((const __m128i *)(&src[16]));
    const __m128i q0_2 = _mm_loadu_si128((const __m128i *)(&src[32]));
    const __m128i q0_3 = _mm_loadu_si128((const __m128i *)(&src[48]));
    const __m128i q0_4 = _mm_unpacklo_epi8(q0_0, q0_1);
    const __m128i q0_5 = _mm_unpackhi_epi8(q0_0, q0_1);
    const __m128i q0_6 = _mm_unpacklo_epi8(q0_2, q0_3);
    const __m128i q0_7 = _mm_unpackhi_epi8(q0_2, q0_3);
    _mm_storeu_si128((__m128i *)(dst), _mm_unpacklo_epi16(q0_4, q0_6));
    _mm_storeu_si128((__m128i *)(&dst[16]), _mm_unpackhi_epi16(q0_4, q0_6));
    _mm_storeu_si128((__m128i *)(&dst[32]), _mm_unpacklo_epi16(q0_5, q0_7));
    _mm_storeu_si128((__m128i *)(&dst[48]), _mm_unpackhi_epi16(q0_5, q0_7));
  }
}
