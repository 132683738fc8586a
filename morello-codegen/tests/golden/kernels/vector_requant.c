/* morello kernel `VectorRequant` by itself, as function `vector_requant` for target x86-avx2:
 * Requant(1x8, i32 VRF row-major v8, f32 L1 row-major, u8 L1 row-major, u8 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_requant(const int32_t *restrict acc, const float *restrict scale, const uint8_t *restrict zero_point, uint8_t *restrict out) {
  __m256i acc_r_0 = _mm256_loadu_si256((const __m256i *)(acc));
  {
    __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(acc_r_0), _mm256_loadu_ps(scale));
    const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(zero_point)));
    const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
    rq_y = _mm256_max_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(0.0f), rq_f));
    rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
    const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
    const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
    _mm_storel_epi64((__m128i *)(out), _mm_packus_epi16(rq_w, rq_w));
  }
}
