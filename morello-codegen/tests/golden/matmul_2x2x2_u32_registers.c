/* morello kernel `kernel` for target x86-avx2:
 * Matmul(1x2x2x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)
 * compile: cc -O3 -std=gnu11 -mavx -mavx2 -mfma -c kernel.c
 *
 *   cost  GL  L2  L1  VRF  RF  implementation
 *    924   0   0   0    0  12  move operand 0 to u32 RF row-major  Matmul(1x2x2x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)
 *    244   0   0   0    0   0    [in] tile 1x1x1  Move(1x2x2, u32 GL row-major, u32 RF row-major, serial)
 *     61   0   0   0    0   0      kernel ValueAssign  Move(1x1x1, u32 GL row-major, u32 RF row-major, serial)
 *    620   0   0   0    0   8    move operand 1 to u32 RF row-major  Matmul(1x2x2x2, u32 RF row-major, u32 GL row-major, u32 GL row-major, serial)
 *    244   0   0   0    0   0      [in] tile 1x1x1  Move(1x2x2, u32 GL row-major, u32 RF row-major, serial)
 *     61   0   0   0    0   0        kernel ValueAssign  Move(1x1x1, u32 GL row-major, u32 RF row-major, serial)
 *    316   0   0   0    0   4      move operand 2 to u32 RF row-major  Matmul(1x2x2x2, u32 RF row-major, u32 RF row-major, u32 GL row-major, serial)
 *     12   0   0   0    0   0        block  Matmul(1x2x2x2, u32 RF row-major, u32 RF row-major, u32 RF row-major, serial)
 *      4   0   0   0    0   0          tile 1x1x1  FillZero(1x2x2, u32 RF row-major, serial)
 *      1   0   0   0    0   0            kernel ValueFill  FillZero(1x1x1, u32 RF row-major, serial)
 *      8   0   0   0    0   0          tile 1x1x1x1  MatmulAccum(1x2x2x2, u32 RF row-major, u32 RF row-major, u32 RF row-major, serial)
 *      1   0   0   0    0   0            kernel MultAdd  MatmulAccum(1x1x1x1, u32 RF row-major, u32 RF row-major, u32 RF row-major, serial)
 *    244   0   0   0    0   0        [out] tile 1x1x1  Move(1x2x2, u32 RF row-major, u32 GL row-major, serial)
 *     61   0   0   0    0   0          kernel ValueAssign  Move(1x1x1, u32 RF row-major, u32 GL row-major, serial)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void kernel(const uint32_t *restrict lhs, const uint32_t *restrict rhs, uint32_t *restrict out) {
  {
    uint32_t r0_0, r0_1, r0_2, r0_3;
    r0_0 = lhs[0];
    r0_1 = lhs[1];
    r0_2 = lhs[2];
    r0_3 = lhs[3];
    {
      uint32_t r1_0, r1_1, r1_2, r1_3;
      r1_0 = rhs[0];
      r1_1 = rhs[1];
      r1_2 = rhs[2];
      r1_3 = rhs[3];
      {
        uint32_t r2_0, r2_1, r2_2, r2_3;
        r2_0 = 0u;
        r2_1 = 0u;
        r2_2 = 0u;
        r2_3 = 0u;
        r2_0 += r0_0 * r1_0;
        r2_1 += r0_0 * r1_1;
        r2_0 += r0_1 * r1_2;
        r2_1 += r0_1 * r1_3;
        r2_2 += r0_2 * r1_0;
        r2_3 += r0_2 * r1_1;
        r2_2 += r0_3 * r1_2;
        r2_3 += r0_3 * r1_3;
        out[0] = r2_0;
        out[1] = r2_1;
        out[2] = r2_2;
        out[3] = r2_3;
      }
    }
  }
}
