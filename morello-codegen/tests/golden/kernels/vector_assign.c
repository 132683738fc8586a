/* morello kernel `VectorAssign` by itself, as function `vector_assign` for target x86-avx2:
 * Move(4, f32 L1 row-major, f32 VRF row-major v4, serial)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void vector_assign(const float *restrict src, float *restrict dst) {
  __m128 dst_r_0 = _mm_loadu_ps(dst);
  dst_r_0 = _mm_loadu_ps(src);
  _mm_storeu_ps(dst, dst_r_0);
}
