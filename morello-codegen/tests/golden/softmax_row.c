/* morello kernel `kernel` for target x86-avx2:
 * Softmax(1x12, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    276   0   0   0    6   2  block with 1 f32 RF row-major, 1 f32 RF row-major  Softmax(1x12, f32 GL row-major, f32 GL row-major)
 *     66   0   0   0    5   0    kernel VectorMax  Max(1x12, f32 GL row-major, f32 RF row-major, serial)
 *    144   0   0   0    6   0    kernel VectorSoftmaxExp  SoftmaxExp(1x12, f32 GL row-major, f32 RF row-major, f32 GL row-major, f32 RF row-major, serial)
 *     66   0   0   0    2   0    kernel VectorScale  SoftmaxScale(1x12, f32 RF row-major, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* MORELLO_HELPER_HSUM_M128: tests/golden/helpers.c */
/* MORELLO_HELPER_HSUM_M256: tests/golden/helpers.c */
/* MORELLO_HELPER_EXP_M128: tests/golden/helpers.c */
/* MORELLO_HELPER_EXP_M256: tests/golden/helpers.c */

void kernel(const float *restrict x, float *restrict y) {
  {
    float r0_0;
    float r1_0;
    {
      const float *x2 = x;
      __m256 m2_0 = _mm256_set1_ps(-INFINITY), m2_1 = m2_0, m2_2 = m2_0, m2_3 = m2_0;
      int64_t i2 = 0;
      for (; i2 + 32 <= 12; i2 += 32) {
        m2_0 = _mm256_max_ps(m2_0, _mm256_loadu_ps(x2 + i2 + 0));
        m2_1 = _mm256_max_ps(m2_1, _mm256_loadu_ps(x2 + i2 + 8));
        m2_2 = _mm256_max_ps(m2_2, _mm256_loadu_ps(x2 + i2 + 16));
        m2_3 = _mm256_max_ps(m2_3, _mm256_loadu_ps(x2 + i2 + 24));
      }
      for (; i2 + 8 <= 12; i2 += 8) m2_0 = _mm256_max_ps(m2_0, _mm256_loadu_ps(x2 + i2));
      m2_0 = _mm256_max_ps(_mm256_max_ps(m2_0, m2_1), _mm256_max_ps(m2_2, m2_3));
      float r2_lanes[8];
      _mm256_storeu_ps(r2_lanes, m2_0);
      float r2 = r2_lanes[0];
      for (int r2_j = 1; r2_j < 8; r2_j++) r2 = r2_lanes[r2_j] > r2 ? r2_lanes[r2_j] : r2;
      for (; i2 < 12; i2++) r2 = x2[i2] > r2 ? x2[i2] : r2;
      r0_0 = r2;
    }
    {
      const float *x3 = x;
      float *y3 = y;
      const float mx3_s = r0_0;
      __m256 mx3 = _mm256_set1_ps(mx3_s), s3_0 = _mm256_setzero_ps(), s3_1 = s3_0;
      int64_t i3 = 0;
      for (; i3 + 16 <= 12; i3 += 16) {
        __m256 t3_0 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x3 + i3 + 0), mx3));
        _mm256_storeu_ps(y3 + i3 + 0, t3_0);
        s3_0 = _mm256_add_ps(s3_0, t3_0);
        __m256 t3_1 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x3 + i3 + 8), mx3));
        _mm256_storeu_ps(y3 + i3 + 8, t3_1);
        s3_1 = _mm256_add_ps(s3_1, t3_1);
      }
      for (; i3 + 8 <= 12; i3 += 8) {
        __m256 t3_0 = morello_exp_m256(_mm256_sub_ps(_mm256_loadu_ps(x3 + i3 + 0), mx3));
        _mm256_storeu_ps(y3 + i3 + 0, t3_0);
        s3_0 = _mm256_add_ps(s3_0, t3_0);
      }
      float t3 = morello_hsum_m256(_mm256_add_ps(s3_0, s3_1));
      for (; i3 < 12; i3++) {
        float t3_e = _mm_cvtss_f32(morello_exp_m128(_mm_set_ss(x3[i3] - mx3_s)));
        y3[i3] = t3_e;
        t3 += t3_e;
      }
      r1_0 = t3;
    }
    {
      float *y4 = y;
      const float r4 = 1.0f / r1_0;
      __m256 r4_v = _mm256_set1_ps(r4);
      int64_t i4 = 0;
      for (; i4 + 8 <= 12; i4 += 8) _mm256_storeu_ps(y4 + i4, _mm256_mul_ps(_mm256_loadu_ps(y4 + i4), r4_v));
      for (; i4 < 12; i4++) y4[i4] *= r4;
    }
  }
}
