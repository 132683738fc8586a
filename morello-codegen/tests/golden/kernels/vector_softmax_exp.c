/* morello kernel `VectorSoftmaxExp` by itself, as function `vector_softmax_exp` for target x86-avx2:
 * SoftmaxExp(1x64, f32 L1 row-major, f32 RF row-major, f32 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 * helpers (emit/helpers.rs): HsumM256, ExpM128, ExpM256
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_softmax_exp(const float *restrict x, const float *restrict max, float *restrict y, float *restrict sum) {
  float max_r_0 = max[0];
  float sum_r_0 = sum[0];
  {
    const float *x0 = x;
    float *y0 = y;
    const float mx0_s = max_r_0;
    __m256 mx0 = _mm256_set1_ps(mx0_s), s0_0 = _mm256_setzero_ps(), s0_1 = s0_0;
    int64_t i0 = 0;
    for (; i0 + 16 <= 64; i0 += 16) {
      __m256 t0_0 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x0 + i0 + 0), mx0));
      _mm256_storeu_ps(y0 + i0 + 0, t0_0);
      s0_0 = _mm256_add_ps(s0_0, t0_0);
      __m256 t0_1 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x0 + i0 + 8), mx0));
      _mm256_storeu_ps(y0 + i0 + 8, t0_1);
      s0_1 = _mm256_add_ps(s0_1, t0_1);
    }
    for (; i0 + 8 <= 64; i0 += 8) {
      __m256 t0_0 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x0 + i0 + 0), mx0));
      _mm256_storeu_ps(y0 + i0 + 0, t0_0);
      s0_0 = _mm256_add_ps(s0_0, t0_0);
    }
    float t0 = morello_hsum_m256(_mm256_add_ps(s0_0, s0_1));
    for (; i0 < 64; i0++) {
      float t0_e = _mm_cvtss_f32(morello_exp_m128(_mm_set_ss(x0[i0] - mx0_s)));
      y0[i0] = t0_e;
      t0 += t0_e;
    }
    sum_r_0 = t0;
  }
  sum[0] = sum_r_0;
}
