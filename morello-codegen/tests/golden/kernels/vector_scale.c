/* morello kernel `VectorScale` by itself, as function `vector_scale` for target x86-avx2:
 * SoftmaxScale(1x64, f32 RF row-major, f32 L1 row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_scale(const float *restrict sum, float *restrict y) {
  float sum_r_0 = sum[0];
  {
    float *y0 = y;
    const float r0 = 1.0f / sum_r_0;
    __m256 r0_v = _mm256_set1_ps(r0);
    int64_t i0 = 0;
    for (; i0 + 8 <= 64; i0 += 8) _mm256_storeu_ps(y0 + i0, _mm256_mul_ps(_mm256_loadu_ps(y0 + i0), r0_v));
  }
}
