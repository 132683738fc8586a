/* morello kernel `BroadcastVecMultAddBf16` by itself, as function `broadcast_vec_mult_add_bf16` for target x86-avx2:
 * MatmulAccum(1x1x1x8, bf16 L1 row-major, bf16 L1 row-major, f32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 * helpers (emit/helpers.rs): Bf16ToF32
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_vec_mult_add_bf16(const uint16_t *restrict lhs, const uint16_t *restrict rhs, float *restrict out) {
  __m256 out_r_0 = _mm256_loadu_ps(out);
  {
    const __m256 b0 = _mm256_set1_ps(morello_bf16_to_f32(lhs[0]));
    out_r_0 = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(rhs))), 16)), b0, out_r_0);
  }
  _mm256_storeu_ps(out, out_r_0);
}
