/* morello kernel `DotProductBf16` by itself, as function `dot_product_bf16` for target x86-avx512:
 * MatmulAccum(1x1x128x1, bf16 L1 row-major, bf16 L1 row-major, f32 RF row-major, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512bf16 -mavx512vnni -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void dot_product_bf16(const uint16_t *restrict lhs, const uint16_t *restrict rhs, float *restrict out) {
  float out_r_0 = out[0];
  {
    const uint16_t *a0 = lhs;
    const uint16_t *b0 = rhs;
    __m512 acc0_0 = _mm512_setzero_ps(), acc0_1 = _mm512_setzero_ps(), acc0_2 = _mm512_setzero_ps(), acc0_3 = _mm512_setzero_ps();
    acc0_0 = _mm512_dpbf16_ps(acc0_0, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 0)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 0)));
    acc0_1 = _mm512_dpbf16_ps(acc0_1, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 32)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 32)));
    acc0_2 = _mm512_dpbf16_ps(acc0_2, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 64)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 64)));
    acc0_3 = _mm512_dpbf16_ps(acc0_3, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 96)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 96)));
    acc0_0 = _mm512_add_ps(acc0_0, acc0_1);
    acc0_2 = _mm512_add_ps(acc0_2, acc0_3);
    acc0_0 = _mm512_add_ps(acc0_0, acc0_2);
    out_r_0 += _mm512_reduce_add_ps(acc0_0);
  }
  out[0] = out_r_0;
}
