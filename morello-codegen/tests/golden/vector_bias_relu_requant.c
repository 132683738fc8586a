/* morello kernel `kernel` for target x86-avx2:
 * BiasReluRequant(2x16, i32 GL row-major, i32 GL row-major, f32 GL row-major, u8 GL row-major, u8 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    413   0   0   0    7   0  move operand 0 to i32 VRF row-major v8  BiasReluRequant(2x16, i32 GL row-major, i32 GL row-major, f32 GL row-major, u8 GL row-major, u8 GL row-major)
 *     84   0   0   0    0   0    [in] kernel VectorAssign  Move(2x16, i32 GL row-major, i32 VRF row-major v8, serial)
 *    249   0   0   0    3   0    kernel VectorRequant  BiasReluRequant(2x16, i32 VRF row-major v8, i32 GL row-major, f32 GL row-major, u8 GL row-major, u8 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const int32_t *restrict acc, const int32_t *restrict bias, const float *restrict scale, const uint8_t *restrict zero_point, uint8_t *restrict out) {
  {
    __m256i v0_0, v0_1, v0_2, v0_3;
    v0_0 = _mm256_loadu_si256((const __m256i *)(acc));
    v0_1 = _mm256_loadu_si256((const __m256i *)(&acc[8]));
    v0_2 = _mm256_loadu_si256((const __m256i *)(&acc[16]));
    v0_3 = _mm256_loadu_si256((const __m256i *)(&acc[24]));
    {
      __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v0_0, _mm256_loadu_si256((const void *)(bias)))), _mm256_loadu_ps(scale));
      const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(zero_point)));
      const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
      rq_y = _mm256_max_ps(rq_y, _mm256_setzero_ps());
      rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
      const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
      const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
      _mm_storel_epi64((__m128i *)(out), _mm_packus_epi16(rq_w, rq_w));
    }
    {
      __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v0_1, _mm256_loadu_si256((const void *)(&bias[8])))), _mm256_loadu_ps(&scale[8]));
      const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(&zero_point[8])));
      const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
      rq_y = _mm256_max_ps(rq_y, _mm256_setzero_ps());
      rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
      const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
      const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
      _mm_storel_epi64((__m128i *)(&out[8]), _mm_packus_epi16(rq_w, rq_w));
    }
    {
      __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v0_2, _mm256_loadu_si256((const void *)(bias)))), _mm256_loadu_ps(scale));
      const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(zero_point)));
      const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
      rq_y = _mm256_max_ps(rq_y, _mm256_setzero_ps());
      rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
      const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
      const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
      _mm_storel_epi64((__m128i *)(&out[16]), _mm_packus_epi16(rq_w, rq_w));
    }
    {
      __m256 rq_y = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v0_3, _mm256_loadu_si256((const void *)(&bias[8])))), _mm256_loadu_ps(&scale[8]));
      const __m256i rq_z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(&zero_point[8])));
      const __m256 rq_f = _mm256_cvtepi32_ps(rq_z);
      rq_y = _mm256_max_ps(rq_y, _mm256_setzero_ps());
      rq_y = _mm256_min_ps(rq_y, _mm256_sub_ps(_mm256_set1_ps(255.0f), rq_f));
      const __m256i rq_r = _mm256_add_epi32(_mm256_cvtps_epi32(rq_y), rq_z);
      const __m128i rq_w = _mm_packs_epi32(_mm256_castsi256_si128(rq_r), _mm256_extracti128_si256(rq_r, 1));
      _mm_storel_epi64((__m128i *)(&out[24]), _mm_packus_epi16(rq_w, rq_w));
    }
  }
}
