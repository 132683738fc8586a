/* morello kernel `BroadcastQuadDotAvx` by itself, as function `broadcast_quad_dot_avx` for target x86-avx2-vnni:
 * MatmulAccum(1x1x4x8, u8 L1 row-major, i8 VRF col-major v32, i32 VRF row-major v8, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavxvnni -c kernel.c
 * helpers (emit/helpers.rs): DpbusdM256
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_quad_dot_avx(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  __m256i rhs_r_0 = _mm256_loadu_si256((const __m256i *)(rhs));
  __m256i out_r_0 = _mm256_loadu_si256((const __m256i *)(out));
  {
    const __m256i q0 = _mm256_broadcastd_epi32(_mm_loadu_si32((const void *)(lhs)));
    out_r_0 = morello_dpbusd_m256(out_r_0, q0, rhs_r_0);
  }
  _mm256_storeu_si256((__m256i *)(out), out_r_0);
}
