/* morello kernel `kernel` for target x86-avx2:
 * FillNegInf(2x8, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    124   0   0   0    2   0  move operand 0 to f32 VRF row-major v8  FillNegInf(2x8, f32 GL row-major)
 *      2   0   0   0    0   0    kernel VectorFill  FillNegInf(2x8, f32 VRF row-major v8, serial)
 *     62   0   0   0    0   0    [out] kernel VectorAssign  Move(2x8, f32 VRF row-major v8, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

void kernel(float *restrict out) {
  {
    __m256 v0_0, v0_1;
    v0_0 = _mm256_set1_ps(-INFINITY);
    v0_1 = _mm256_set1_ps(-INFINITY);
    _mm256_storeu_ps(out, v0_0);
    _mm256_storeu_ps(&out[8], v0_1);
  }
}
