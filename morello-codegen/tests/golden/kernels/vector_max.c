/* morello kernel `VectorMax` by itself, as function `vector_max` for target x86-avx2:
 * Max(1x64, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

void vector_max(const float *restrict x, float *restrict out) {
  float out_r_0 = out[0];
  {
    const float *x0 = x;
    __m256 m0_0 = _mm256_set1_ps(-INFINITY), m0_1 = m0_0, m0_2 = m0_0, m0_3 = m0_0;
    int64_t i0 = 0;
    for (; i0 + 32 <= 64; i0 += 32) {
      m0_0 = _mm256_max_ps(m0_0, _mm256_loadu_ps(x0 + i0 + 0));
      m0_1 = _mm256_max_ps(m0_1, _mm256_loadu_ps(x0 + i0 + 8));
      m0_2 = _mm256_max_ps(m0_2, _mm256_loadu_ps(x0 + i0 + 16));
      m0_3 = _mm256_max_ps(m0_3, _mm256_loadu_ps(x0 + i0 + 24));
    }
    for (; i0 + 8 <= 64; i0 += 8) m0_0 = _mm256_max_ps(m0_0, _mm256_loadu_ps(x0 + i0));
    m0_0 = _mm256_max_ps(_mm256_max_ps(m0_0, m0_1), _mm256_max_ps(m0_2, m0_3));
    float r0_lanes[8];
    _mm256_storeu_ps(r0_lanes, m0_0);
    float r0 = r0_lanes[0];
    for (int r0_j = 1; r0_j < 8; r0_j++) r0 = r0_lanes[r0_j] > r0 ? r0_lanes[r0_j] : r0;
    for (; i0 < 64; i0++) r0 = x0[i0] > r0 ? x0[i0] : r0;
    out_r_0 = r0;
  }
  out[0] = out_r_0;
}
