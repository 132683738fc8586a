/* morello kernel `VectorFill` by itself, as function `vector_fill` for target x86-avx2:
 * FillZero(8, f32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_fill(float *restrict out) {
  __m256 out_r_0 = _mm256_loadu_ps(out);
  out_r_0 = _mm256_setzero_ps();
  _mm256_storeu_ps(out, out_r_0);
}
