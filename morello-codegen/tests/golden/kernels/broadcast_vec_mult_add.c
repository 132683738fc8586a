/* morello kernel `BroadcastVecMultAdd` by itself, as function `broadcast_vec_mult_add` for target x86-avx2:
 * MatmulAccum(1x1x1x8, f32 L1 row-major, f32 VRF row-major v8, f32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_vec_mult_add(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  __m256 rhs_r_0 = _mm256_loadu_ps(rhs);
  __m256 out_r_0 = _mm256_loadu_ps(out);
  {
    const __m256 b0 = _mm256_set1_ps(lhs[0]);
    out_r_0 = _mm256_fmadd_ps(rhs_r_0, b0, out_r_0);
  }
  _mm256_storeu_ps(out, out_r_0);
}
