/* morello kernel `kernel` for target x86-avx512:
 * Matmul(1x1x64x1, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512bf16 -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    287   0   0   0    5   0  block  Matmul(1x1x64x1, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 *     61   0   0   0    0   0    kernel MemsetZero  FillZero(1x1x1, f32 GL row-major)
 *    226   0   0   0    5   0    kernel DotProductBf16  MatmulAccum(1x1x64x1, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const uint16_t *restrict lhs, const uint16_t *restrict rhs, float *restrict out) {
  memset(out, 0, 4);
  {
    const uint16_t *a0 = lhs;
    const uint16_t *b0 = rhs;
    __m512 acc0_0 = _mm512_setzero_ps(), acc0_1 = _mm512_setzero_ps();
    acc0_0 = _mm512_dpbf16_ps(acc0_0, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 0)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 0)));
    acc0_1 = _mm512_dpbf16_ps(acc0_1, (__m512bh)_mm512_loadu_si512((const void *)(a0 + 32)), (__m512bh)_mm512_loadu_si512((const void *)(b0 + 32)));
    acc0_0 = _mm512_add_ps(acc0_0, acc0_1);
    out[0] += _mm512_reduce_add_ps(acc0_0);
  }
}
