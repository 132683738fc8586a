/* morello kernel `BroadcastPairDot` by itself, as function `broadcast_pair_dot` for target x86-avx2:
 * MatmulAccum(1x1x2x8, u8 L1 row-major, i8 L1 col-major, i32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_pair_dot(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  __m256i out_r_0 = _mm256_loadu_si256((const __m256i *)(out));
  {
    const __m256i p0 = _mm256_set1_epi32((int)(((uint32_t)(uint16_t)(int16_t)lhs[0]) | (((uint32_t)(uint16_t)(int16_t)lhs[1]) << 16)));
    out_r_0 = _mm256_add_epi32(out_r_0, _mm256_madd_epi16(p0, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(rhs)))));
  }
  _mm256_storeu_si256((__m256i *)(out), out_r_0);
}
