/* morello kernel `kernel` for target x86-avx512:
 * Move(1x16, f32 GL row-major, f32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    243   0   0   0    2   0  move operand 0 to f32 VRF row-major v16  Move(1x16, f32 GL row-major, f32 GL row-major)
 *     61   0   0   0    0   0    [in] kernel VectorAssign  Move(1x16, f32 GL row-major, f32 VRF row-major v16, serial)
 *    122   0   0   0    1   0    move operand 1 to f32 VRF row-major v16  Move(1x16, f32 VRF row-major v16, f32 GL row-major, serial)
 *      1   0   0   0    0   0      kernel VectorAssign  Move(1x16, f32 VRF row-major v16, f32 VRF row-major v16, serial)
 *     61   0   0   0    0   0      [out] kernel VectorAssign  Move(1x16, f32 VRF row-major v16, f32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const float *restrict src, float *restrict dst) {
  {
    __m512 v0_0;
    v0_0 = _mm512_loadu_ps(src);
    {
      __m512 v1_0;
      v1_0 = v0_0;
      _mm512_storeu_ps(dst, v1_0);
    }
  }
}
