//! Hand-built implementation trees for the emitter's tests: small, stable (independent of the
//! search), and together using every kernel, node kind, storage kind and layout feature.

use morello_core::imp::{AllocKind, AllocParts, Boundary, Impl, Parallelism, Stage};
use morello_core::kernels::KernelKind;
use morello_core::layout::{Layout, LayoutView};
use morello_core::spec::{CanonicalSpec, FillValue, LogicalSpec, TensorSpec};
use morello_core::target::Target;

use KernelKind as K;

/// A tree and the name of its golden file (if it has one).
pub(super) struct Case {
    pub name: &'static str,
    pub target: &'static str,
    pub golden: bool,
    pub imp: Impl,
}

/// Helpers to build trees on one target.
pub(super) struct Builder {
    pub t: Target,
}

impl Builder {
    pub fn new(target: &str) -> Self {
        Builder { t: Target::builtin(target, 2).expect("a built-in target") }
    }

    pub fn spec(&self, text: &str) -> CanonicalSpec {
        LogicalSpec::parse(text, &self.t).expect("parses").canonicalize(&self.t).expect("valid")
    }

    pub fn kernel(&self, s: CanonicalSpec, k: KernelKind) -> Impl {
        assert!(k.applies(&s, &self.t), "{k} does not apply to {}", s.display(&self.t));
        Impl::kernel(s, k, &self.t)
    }

    /// A loop over full tiles of `tile` (which must divide the shape).
    pub fn tiles(
        &self,
        s: &CanonicalSpec,
        tile: &[u32],
        parallelism: Parallelism,
        body: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let inner = s.tile(tile, parallelism == Parallelism::Parallel, &self.t).expect("tile fits");
        Impl::looped(s.clone(), tile.to_vec(), parallelism, body(inner), vec![], &self.t)
    }

    /// A kernel on every element (a loop of unit tiles, or the kernel itself for one element).
    pub fn each(&self, s: &CanonicalSpec, k: KernelKind) -> Impl {
        if s.shape.volume() == 1 {
            return self.kernel(s.clone(), k);
        }
        let ones = vec![1; s.shape.rank()];
        self.tiles(s, &ones, Parallelism::Serial, |unit| self.kernel(unit, k))
    }

    /// Zero the output, then accumulate.
    pub fn zero_then(
        &self,
        s: &CanonicalSpec,
        zero: impl FnOnce(CanonicalSpec) -> Impl,
        accum: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let z = CanonicalSpec::fill(FillValue::Zero, s.output(), s.serial_only, &self.t).expect("fill");
        let a = s.as_accum(&self.t).expect("a reduction").expect("valid");
        let all: Vec<usize> = (0..s.operands.len()).collect();
        Impl::block(
            s.clone(),
            vec![
                Stage { origins: None, operands: vec![s.output_index()], body: zero(z) },
                Stage { origins: None, operands: all, body: accum(a) },
            ],
            &self.t,
        )
    }

    /// A matmul's epilogue split off: the matmul on `lhs, rhs, out`, then the epilogue on `bias, out`.
    pub fn epilogue(
        &self,
        s: &CanonicalSpec,
        matmul: impl FnOnce(CanonicalSpec) -> Impl,
        epilogue: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let (plain, bias) = s.split_epilogue(&self.t).expect("an epilogue").expect("valid");
        Impl::block(
            s.clone(),
            vec![
                Stage { origins: None, operands: vec![0, 1, 3], body: matmul(plain) },
                Stage { origins: None, operands: vec![2, 3], body: epilogue(bias) },
            ],
            &self.t,
        )
    }

    /// `o` moved to `level` as a whole, dense tensor (in `layout`, default its own), with a vector
    /// size in vector registers.
    pub fn dest(&self, o: &TensorSpec, level: &str, layout: Option<&str>, vector: Option<u32>) -> TensorSpec {
        let layout = match layout {
            Some(text) => Layout::parse_for_rank(text, o.shape.rank()).expect("layout"),
            None => o.layout.clone(),
        };
        let view = LayoutView::dense(&layout, &o.shape).expect("layout fits");
        TensorSpec {
            level: self.t.level_id(level).expect("level"),
            layout: view.layout,
            contiguous_dims: view.contiguous_dims,
            vector_size: vector,
            ..o.clone()
        }
    }

    /// Operand `operand` of `s` moved into a whole vector-register buffer of `lanes` lanes (copied
    /// with `VectorAssign`), and `body` on what remains.
    pub fn in_vector_register(
        &self,
        s: &CanonicalSpec,
        operand: usize,
        lanes: u32,
        body: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let destination = self.dest(&s.operands[operand], "VRF", None, Some(lanes));
        self.alloc(s, operand, destination, |m| self.kernel(m, K::VectorAssign), body)
    }

    /// A matmul whose output is in a vector register: zeroed with `VectorFill`, then accumulated
    /// in tiles of `step` by `BroadcastVecMultAdd`, operand `operand` (the vector one, the other
    /// input is broadcast) moved into a `lanes`-lane register at each step.
    pub fn vector_fma(&self, s: &CanonicalSpec, step: &[u32], operand: usize, lanes: u32) -> Impl {
        self.zero_then(
            s,
            |z| self.kernel(z, K::VectorFill),
            |a| {
                self.tiles(&a, step, Parallelism::Serial, |step| {
                    self.in_vector_register(&step, operand, lanes, |fma| {
                        self.kernel(fma, K::BroadcastVecMultAdd)
                    })
                })
            },
        )
    }

    /// The same tensor seen in a cache level.
    pub fn cache(
        &self,
        s: &CanonicalSpec,
        operand: usize,
        level: &str,
        body: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let destination =
            TensorSpec { level: self.t.level_id(level).expect("level"), ..s.operands[operand].clone() };
        let inner = s.with_operand(operand, destination.clone(), &self.t).expect("valid");
        Impl::alloc(
            s.clone(),
            AllocParts {
                operand,
                kind: AllocKind::CacheView,
                destination,
                prologue: None,
                body: body(inner),
                epilogue: None,
            },
            &self.t,
        )
    }

    /// Operand `operand` moved into a new buffer `destination`, copied in if read and out if
    /// written, with `mv` implementing those moves.
    pub fn alloc(
        &self,
        s: &CanonicalSpec,
        operand: usize,
        destination: TensorSpec,
        mv: impl Fn(CanonicalSpec) -> Impl,
        body: impl FnOnce(CanonicalSpec) -> Impl,
    ) -> Impl {
        let old = s.operands[operand].clone();
        let direction = s.kind.directions()[operand];
        let copy = |from: &TensorSpec, to: &TensorSpec| {
            CanonicalSpec::move_between(from, to, s.serial_only, &self.t).expect("a valid move")
        };
        let prologue = direction.reads().then(|| mv(copy(&old, &destination)));
        let epilogue = direction.writes().then(|| mv(copy(&destination, &old)));
        let inner = s.with_operand(operand, destination.clone(), &self.t).expect("valid");
        Impl::alloc(
            s.clone(),
            AllocParts {
                operand,
                kind: AllocKind::Buffer,
                destination,
                prologue,
                body: body(inner),
                epilogue,
            },
            &self.t,
        )
    }
}

/// Every test tree.
pub(super) fn all() -> Vec<Case> {
    let mut cases = avx2_cases();
    cases.extend(avx2_vnni_cases());
    cases.extend(avx512_cases());
    cases
}

fn case(name: &'static str, target: &'static str, golden: bool, imp: Impl) -> Case {
    Case { name, target, golden, imp }
}

fn avx2_cases() -> Vec<Case> {
    let b = Builder::new("x86-avx2");
    let t = "x86-avx2";
    let mut cases = Vec::new();

    // 1x1x1: memset the output, one multiply-add.
    let s = b.spec("Matmul(1x1x1x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp = b
        .cache(&s, 2, "L2", |s| b.zero_then(&s, |z| b.kernel(z, K::MemsetZero), |a| b.kernel(a, K::MultAdd)));
    cases.push(case("matmul_1x1x1", t, true, imp));

    // 2x2x2: scalar loops over memory.
    let s = b.spec("Matmul(1x2x2x2, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp = b.zero_then(&s, |z| b.kernel(z, K::MemsetZero), |a| b.each(&a, K::MultAdd));
    cases.push(case("matmul_2x2x2", t, true, imp));

    // 2x2x2 in scalar registers: value copies in and out, a value fill, multiply-adds.
    let s = b.spec("Matmul(1x2x2x2, u32 GL row-major, u32 GL row-major, u32 GL row-major)");
    let rf = |o: &TensorSpec| b.dest(o, "RF", None, None);
    let copy = |m: CanonicalSpec| b.each(&m, K::ValueAssign);
    let imp = b.alloc(&s, 0, rf(&s.operands[0]), copy, |s| {
        b.alloc(&s, 1, rf(&s.operands[1]), copy, |s| {
            b.alloc(&s, 2, rf(&s.operands[2]), copy, |s| {
                b.zero_then(&s, |z| b.each(&z, K::ValueFill), |a| b.each(&a, K::MultAdd))
            })
        })
    });
    cases.push(case("matmul_2x2x2_u32_registers", t, true, imp));

    // A register tile: the output row in one AVX2 register, broadcast lhs times rhs rows.
    let s = b.spec("Matmul(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp =
        b.cache(&s, 2, "L1", |s| b.in_vector_register(&s, 2, 8, |s| b.vector_fma(&s, &[1, 1, 1, 8], 1, 8)));
    // Its C is the fused epilogue's below without the epilogue (no golden file of its own: see
    // `a_fused_epilogue_adds_one_statement_to_the_register_tile`).
    cases.push(case("broadcast_vec_mult_add_row", t, false, imp));

    // A fused epilogue: the output row in a register, the matmul, then bias and relu on the
    // register before it is stored.
    let s = b.spec(
        "MatmulBiasRelu(1x1x2x8, f32 GL row-major, f32 GL row-major, f32 GL row-major, f32 GL row-major)",
    );
    let imp = b.in_vector_register(&s, 3, 8, |s| {
        b.epilogue(&s, |m| b.vector_fma(&m, &[1, 1, 1, 8], 1, 8), |e| b.kernel(e, K::VectorAddBias))
    });
    cases.push(case("vector_add_bias_relu_fused", t, true, imp));

    // Gelu on registers (the polynomial exp helper) and on scalars (the helper on one lane).
    let s = b.spec("AddBiasGelu(2x8, f32 GL row-major, f32 GL row-major)");
    let imp = b.in_vector_register(&s, 1, 8, |s| b.kernel(s, K::VectorAddBias));
    cases.push(case("vector_add_bias_gelu", t, true, imp));
    let s = b.spec("AddBiasGelu(2x3, f32 GL row-major, f32 GL row-major)");
    cases.push(case("value_add_bias_gelu", t, true, b.each(&s, K::ValueAddBias)));

    // Requantization with a bias and ReLU from registers (the accumulator loaded into them), and
    // with a bias per value into i8.
    let s = b.spec(
        "BiasReluRequant(2x16, i32 GL row-major, i32 GL row-major, f32 GL row-major, u8 GL row-major, \
         u8 GL row-major)",
    );
    let imp = b.in_vector_register(&s, 0, 8, |s| b.kernel(s, K::VectorRequant));
    cases.push(case("vector_bias_relu_requant", t, true, imp));
    let s = b.spec(
        "BiasRequant(2x3, i32 GL row-major, i32 GL row-major, f32 GL row-major, i8 GL row-major, i8 GL row-major)",
    );
    cases.push(case("value_bias_requant", t, true, b.each(&s, K::ValueRequant)));

    // Softmax of one row of 12 (a vector and a tail): the maximum and the sum in scalar registers,
    // the three passes.
    let s = b.spec("Softmax(1x12, f32 GL row-major, f32 GL row-major)");
    let temporary = b.dest(&b.spec("FillZero(1, f32 GL row-major)").operands[0], "RF", None, None);
    let stages = vec![
        Stage {
            origins: None,
            operands: vec![0, 2],
            body: b.kernel(b.spec("Max(1x12, f32 GL row-major, f32 RF row-major)"), K::VectorMax),
        },
        Stage {
            origins: None,
            operands: vec![0, 2, 1, 3],
            body: b.kernel(
                b.spec("SoftmaxExp(1x12, f32 GL row-major, f32 RF row-major, f32 GL row-major, f32 RF row-major)"),
                K::VectorSoftmaxExp,
            ),
        },
        Stage {
            origins: None,
            operands: vec![3, 1],
            body: b.kernel(b.spec("SoftmaxScale(1x12, f32 RF row-major, f32 GL row-major)"), K::VectorScale),
        },
    ];
    let imp = Impl::block_with(s, vec![temporary.clone(), temporary], stages, &b.t);
    cases.push(case("softmax_row", t, true, imp));

    // A dot product with four accumulators and a loop, into a scalar register.
    let s = b.spec("Matmul(1x1x64x1, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp = b.alloc(
        &s,
        2,
        rf(&s.operands[2]),
        |m| b.kernel(m, K::ValueAssign),
        |s| b.zero_then(&s, |z| b.kernel(z, K::ValueFill), |a| b.kernel(a, K::DotProductLoop)),
    );
    cases.push(case("dot_product_loop", t, true, imp));

    // A transposing move: full tiles of 4x3, then the boundary row at 4.
    let s = b.spec("Move(5x3, u32 GL row-major, u32 GL col-major)");
    let full = s.tile(&[4, 3], false, &b.t).expect("tile");
    let rest = s.tile_at(&[1, 3], &[4, 0], false, &b.t).expect("boundary");
    let imp = Impl::looped(
        s.clone(),
        vec![4, 3],
        Parallelism::Serial,
        b.each(&full, K::ValueAssign),
        vec![Boundary { origin: vec![4, 0], body: b.each(&rest, K::ValueAssign) }],
        &b.t,
    );
    cases.push(case("move_transpose_with_boundary", t, true, imp));

    // Fills of vector registers with negative infinity, stored to memory.
    let s = b.spec("FillNegInf(2x8, f32 GL row-major)");
    let imp = b.in_vector_register(&s, 0, 8, |s| b.kernel(s, K::VectorFill));
    cases.push(case("vector_fill_neg_inf", t, true, imp));

    // A value fill of the minimum of i32 and a widening bf16 -> f32 copy.
    let s = b.spec("FillMin(3, i32 GL row-major)");
    cases.push(case("value_fill_min_i32", t, true, b.each(&s, K::ValueFill)));
    let s = b.spec("Move(4, bf16 GL row-major, f32 GL row-major)");
    cases.push(case("value_assign_bf16_to_f32", t, true, b.each(&s, K::ValueAssign)));

    // A packed buffer: rhs repacked into [0, 1, 0 p(2)]... as strips of 4 columns, then scalar
    // multiply-adds reading it through floordiv and mod.
    let s = b.spec("Matmul(1x3x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let packed = b.dest(&s.operands[1], "GL", Some("[0, 2, 1, 2 p(4)]"), None);
    let imp = b.alloc(
        &s,
        1,
        packed,
        |m| b.each(&m, K::ValueAssign),
        |s| {
            b.zero_then(
                &s,
                |z| b.kernel(z, K::MemsetZero),
                |a| b.tiles(&a, &[1, 1, 4, 4], Parallelism::Serial, |tile| b.each(&tile, K::MultAdd)),
            )
        },
    );
    cases.push(case("matmul_packed_rhs", t, false, imp));

    // rhs packed into L2 panels one vector wide (`[b, n / 8, k, 8]`, the layout a register block
    // streams), copied with vector loads and stores; the register block then reads each 4 x 8
    // panel as one contiguous run.
    let s = b.spec("Matmul(1x2x4x16, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let panels = b.dest(&s.operands[1], "L2", Some("[0, 2, 1, 2 p(8)]"), None);
    let pack = |m: CanonicalSpec| {
        b.tiles(&m, &[1, 1, 8], Parallelism::Serial, |row| {
            b.in_vector_register(&row, 0, 8, |r| b.kernel(r, K::VectorAssign))
        })
    };
    let imp = b.alloc(&s, 1, panels, pack, |s| {
        b.tiles(&s, &[1, 1, 4, 8], Parallelism::Serial, |block| {
            b.in_vector_register(&block, 2, 8, |block| b.vector_fma(&block, &[1, 1, 1, 8], 1, 8))
        })
    });
    cases.push(case("matmul_rhs_packed_panels", t, true, imp));

    // A parallel loop over rows, each tile zeroed and accumulated with scalar loops.
    let s = b.spec("Matmul(1x8x4x8, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp = b.tiles(&s, &[1, 2, 4, 4], Parallelism::Parallel, |tile| {
        b.zero_then(&tile, |z| b.each(&z, K::ValueFill), |a| b.each(&a, K::MultAdd))
    });
    cases.push(case("matmul_parallel", t, true, imp));

    // A convolution with scalar multiply-adds (sliding windows).
    let s = b.spec("Conv(1x2x2x3x3x2x2, i32 GL row-major, i32 GL row-major, i32 GL row-major)");
    let imp = b.zero_then(&s, |z| b.kernel(z, K::MemsetZero), |a| b.each(&a, K::MultAdd));
    cases.push(case("conv_i32", t, false, imp));

    // A bf16 matmul accumulating into f32, scalar.
    let s = b.spec("Matmul(1x2x3x2, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
    let imp = b.zero_then(&s, |z| b.kernel(z, K::MemsetZero), |a| b.each(&a, K::MultAdd));
    cases.push(case("matmul_bf16_f32_scalar", t, false, imp));

    // bf16 rows widened into two 8-lane f32 registers, over two rows of the output and two of k.
    let s = b.spec("Matmul(1x2x2x16, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
    let imp = bf16_rows(&b, &s, 8);
    cases.push(case("broadcast_vec_mult_add_bf16_avx2", t, false, imp));

    // A large heap-allocated copy of the output (more than 64 KiB).
    let s = b.spec("FillZero(128x256, f32 GL row-major)");
    let imp = b.alloc(
        &s,
        0,
        b.dest(&s.operands[0], "L2", Some("col-major"), None),
        |m| b.tiles(&m, &[128, 1], Parallelism::Serial, |column| b.each(&column, K::ValueAssign)),
        |s| b.kernel(s, K::MemsetZero),
    );
    cases.push(case("heap_buffer", t, false, imp));
    cases
}

fn avx2_vnni_cases() -> Vec<Case> {
    let b = Builder::new("x86-avx2-vnni");
    // A 2-row int8 register block of 8-lane vectors, AVX-VNNI's `vpdpbusd` (`quad_dot_rows`).
    let imp = quad_dot_rows(&b, 8, K::BroadcastQuadDotAvx);
    vec![case("broadcast_quad_dot_avx_rows", "x86-avx2-vnni", true, imp)]
}

/// A 2-row int8 register block of two output vectors of `lanes` i32 per row: each step of four
/// values of `k` moves the `rhs` quads (VNNI layout, seen in L1) into registers of `4 * lanes` i8
/// once, and both rows' `kernel`s read them from there.
fn quad_dot_rows(b: &Builder, lanes: u32, kernel: K) -> Impl {
    let n = 2 * lanes;
    let s = b.spec(&format!("Matmul(1x2x8x{n}, u8 GL row-major, i8 GL [0, 1, 2, 1 p(4)], i32 GL row-major)"));
    b.in_vector_register(&s, 2, lanes, |s| {
        b.cache(&s, 1, "L1", |s| {
            b.zero_then(
                &s,
                |z| b.kernel(z, K::VectorFill),
                |a| {
                    b.tiles(&a, &[1, 2, 4, n], Parallelism::Serial, |step| {
                        b.in_vector_register(&step, 1, 4 * lanes, |step| {
                            b.tiles(&step, &[1, 1, 4, n], Parallelism::Serial, |row| b.kernel(row, kernel))
                        })
                    })
                },
            )
        })
    })
}

fn avx512_cases() -> Vec<Case> {
    let b = Builder::new("x86-avx512");
    let t = "x86-avx512";
    let mut cases = Vec::new();

    // The column form in i32 with 16-lane registers: lhs columns (col-major lhs) times rhs scalars.
    let s = b.spec("Matmul(1x16x2x1, i32 GL col-major, i32 GL row-major, i32 GL row-major)");
    let imp = b.in_vector_register(&s, 2, 16, |s| b.vector_fma(&s, &[1, 16, 1, 1], 0, 16));
    cases.push(case("broadcast_vec_mult_add_column_i32", t, true, imp));

    // A 1 x 32 register block over 8 steps of `k`: the loop over the steps asks the compiler to
    // unroll it by 4.
    let s = b.spec("Matmul(1x1x8x32, f32 GL row-major, f32 GL row-major, f32 GL row-major)");
    let imp = b.in_vector_register(&s, 2, 16, |s| b.vector_fma(&s, &[1, 1, 1, 16], 1, 16));
    cases.push(case("register_block_steps_unrolled", t, true, imp));

    // The AVX-512 BF16 dot product (two steps of 32 pairs) into memory.
    let s = b.spec("Matmul(1x1x64x1, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
    let imp = b.zero_then(&s, |z| b.kernel(z, K::MemsetZero), |a| b.kernel(a, K::DotProductBf16));
    cases.push(case("dot_product_bf16", t, true, imp));

    // bf16 rows widened into two 16-lane f32 registers: a vector-matrix product.
    let s = b.spec("Matmul(1x1x2x32, bf16 GL row-major, bf16 GL row-major, f32 GL row-major)");
    cases.push(case("broadcast_vec_mult_add_bf16", t, true, bf16_rows(&b, &s, 16)));

    // A 2-row int8 register block of 16-lane vectors (`quad_dot_rows`).
    cases.push(case("broadcast_quad_dot_rows", t, true, quad_dot_rows(&b, 16, K::BroadcastQuadDot)));

    // The same block over an rhs in the strip panel `[0, 2, 1, 2 p(16), 1 p(4)]` (the search's
    // panels are 64 columns wide): one 16-column block per panel, its quads one run over `k`.
    let s = b.spec("Matmul(1x2x8x32, u8 GL row-major, i8 GL [0, 2, 1, 2 p(16), 1 p(4)], i32 GL row-major)");
    let imp = b.tiles(&s, &[1, 2, 8, 16], Parallelism::Serial, |panel| {
        b.in_vector_register(&panel, 2, 16, |s| {
            b.cache(&s, 1, "L1", |s| {
                b.zero_then(
                    &s,
                    |z| b.kernel(z, K::VectorFill),
                    |a| {
                        b.tiles(&a, &[1, 2, 4, 16], Parallelism::Serial, |step| {
                            b.in_vector_register(&step, 1, 64, |step| {
                                b.tiles(&step, &[1, 1, 4, 16], Parallelism::Serial, |row| {
                                    b.kernel(row, K::BroadcastQuadDot)
                                })
                            })
                        })
                    },
                )
            })
        })
    });
    cases.push(case("broadcast_quad_dot_strip_panel", t, true, imp));

    // A 512-bit register copy between two register buffers.
    let s = b.spec("Move(1x16, f32 GL row-major, f32 GL row-major)");
    let imp = b
        .in_vector_register(&s, 0, 16, |s| b.in_vector_register(&s, 1, 16, |s| b.kernel(s, K::VectorAssign)));
    cases.push(case("vector_assign_register_copy", t, true, imp));
    cases
}

/// A bf16 x bf16 -> f32 matmul with rows of the output in `lanes`-lane registers: `rhs` and the
/// output seen in L1, the output row loaded, zeroed and accumulated one step of `k` at a time by
/// `BroadcastVecMultAddBf16`, and stored.
fn bf16_rows(b: &Builder, s: &CanonicalSpec, lanes: u32) -> Impl {
    let n = s.shape.dims()[3];
    b.tiles(s, &[1, 1, s.shape.dims()[2], n], Parallelism::Serial, |row| {
        b.cache(&row, 1, "L1", |row| {
            b.cache(&row, 2, "L1", |row| {
                b.in_vector_register(&row, 2, lanes, |row| {
                    b.zero_then(
                        &row,
                        |z| b.kernel(z, K::VectorFill),
                        |a| {
                            b.tiles(&a, &[1, 1, 1, n], Parallelism::Serial, |step| {
                                b.kernel(step, K::BroadcastVecMultAddBf16)
                            })
                        },
                    )
                })
            })
        })
    })
}
