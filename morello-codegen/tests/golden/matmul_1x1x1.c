/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    200   0  64   0    0   0  cache operand 2 to f32 L2 row-major  Matmul(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)
 *    134   0   0   0    0   0    block  Matmul(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 L2 row-major)
 *      7   0   0   0    0   0      kernel MemsetZero  FillZero(1x1x1, f32 L2 row-major)
 *    127   0   0   0    0   0      kernel MultAdd  MatmulAccum(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 L2 row-major)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict lhs, const float *restrict rhs, float *restrict out) {
  memset(out, 0, 4);
  out[0] += lhs[0] * rhs[0];
}
