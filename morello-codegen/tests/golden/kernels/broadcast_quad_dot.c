/* morello kernel `BroadcastQuadDot` by itself, as function `broadcast_quad_dot` for target x86-avx512:
 * MatmulAccum(1x1x4x16, u8 L1 row-major, i8 L1 col-major, i32 VRF row-major v16, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 * helpers (emit/helpers.rs): DpbusdM512
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void broadcast_quad_dot(const uint8_t *restrict lhs, const int8_t *restrict rhs, int32_t *restrict out) {
  __m512i out_r_0 = _mm512_loadu_si512((const void *)(out));
  {
    const __m512i q0 = _mm512_broadcastd_epi32(_mm_loadu_si32((const void *)(lhs)));
    out_r_0 = morello_dpbusd_m512(out_r_0, q0, _mm512_loadu_si512((const void *)(rhs)));
  }
  _mm512_storeu_si512((void *)(out), out_r_0);
}
