/* morello kernel `VectorAddBias` by itself, as function `vector_add_bias` for target x86-avx2:
 * AddBiasRelu(1x8, f32 L1 row-major, f32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_add_bias(const float *restrict bias, float *restrict out) {
  __m256 out_r_0 = _mm256_loadu_ps(out);
  out_r_0 = _mm256_max_ps(_mm256_add_ps(out_r_0, _mm256_loadu_ps(bias)), _mm256_setzero_ps());
  _mm256_storeu_ps(out, out_r_0);
}
