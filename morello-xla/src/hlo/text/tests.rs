//! The reader on seed 003's examples, on XLA-dump-style text, and on bad input (one message
//! per case, with its line, column and instruction).

use crate::hlo::{
    ArrayShape, ComparisonDirection, ComputationBuilder, ComputationId, DotDimensions, ElementwiseOp,
    HloModule, HloOp, HloShape, InstrId, PadDim, SliceDim, WindowDim,
};

fn read(text: &str) -> HloModule {
    match text.parse::<HloModule>() {
        Ok(module) => module,
        Err(e) => panic!("{e}\n{text}"),
    }
}

fn error(text: &str) -> String {
    match text.parse::<HloModule>() {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that each text of `cases` is refused with exactly its message.
fn assert_errors(cases: &[(&str, &str)]) {
    for (text, expected) in cases {
        assert_eq!(error(text), *expected, "\n{text}");
    }
}

fn root_op(module: &HloModule) -> &HloOp {
    &module.entry().root_instruction().unwrap().op
}

const MIN: &str =
    "min {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] minimum(a, b)\n}\n";

#[test]
fn a_bare_list_of_instructions_is_one_computation() {
    let module = read("p0 = f32[20] parameter(0)\nbc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}");
    assert_eq!(module.name(), "main");
    assert_eq!(module.entry().name, "main");
    assert_eq!(module.entry().root, InstrId(1));
    assert_eq!(root_op(&module), &HloOp::Broadcast { dimensions: vec![1] });
    assert_eq!(module.entry().instructions[1].shape, HloShape::array(&[10, 20, 30]));
}

#[test]
fn the_module_equals_the_one_built_by_hand() {
    let text = "HloModule m\nENTRY f {\n  p0 = f32[4, 4] parameter(0)\n  v = f32[] parameter(1)\n  \
                pad = f32[12, 16] pad(p0, v), padding=1_4_1x4_8_0\n  \
                ROOT s = f32[6, 4] slice(pad), slice={[1:12:2], [4:8:1]}\n}\n";
    let mut f = ComputationBuilder::new("f");
    let p0 = f.add("p0", HloShape::array(&[4, 4]), HloOp::Parameter { number: 0 }, &[]);
    let v = f.add("v", HloShape::array(&[]), HloOp::Parameter { number: 1 }, &[]);
    let dims = vec![PadDim { low: 1, high: 4, interior: 1 }, PadDim { low: 4, high: 8, interior: 0 }];
    let pad = f.add("pad", HloShape::array(&[12, 16]), HloOp::Pad { dims }, &[p0, v]);
    let dims = vec![SliceDim { start: 1, limit: 12, stride: 2 }, SliceDim { start: 4, limit: 8, stride: 1 }];
    let s = f.add("s", HloShape::array(&[6, 4]), HloOp::Slice { dims }, &[pad]);
    let expected = HloModule::new("m", vec![f.finish(s)], ComputationId(0)).unwrap();
    assert_eq!(read(text), expected);
}

#[test]
fn seed_examples() {
    // Elementwise, transpose, reverse, slice with written operand shapes, reshape, concatenate.
    read("p0 = f32[10, 20] parameter(0)\np1 = f32[10, 20] parameter(1)\nadd = f32[10, 20] add(p0, p1)");
    let t = read(
        "p0 = f32[3, 12288, 6, 128] parameter(0)\n\
         transpose = f32[3, 6, 128, 12288] transpose(p0), dimensions={0, 2, 3, 1}",
    );
    assert_eq!(root_op(&t), &HloOp::Transpose { dimensions: vec![0, 2, 3, 1] });
    read("p0 = f32[1, 17, 9, 9] parameter(0)\nreverse = f32[1, 17, 9, 9] reverse(p0), dimensions={1, 2}");
    let s = read(
        "p0 = f32[10, 20, 50] parameter(0)\nslice = f32[5, 3, 25] slice(f32[10, 20, 50] p0),\n  \
         slice={[5:10:1], [3:20:7], [0:50:2]}",
    );
    assert_eq!(
        root_op(&s),
        &HloOp::Slice {
            dims: vec![
                SliceDim { start: 5, limit: 10, stride: 1 },
                SliceDim { start: 3, limit: 20, stride: 7 },
                SliceDim { start: 0, limit: 50, stride: 2 },
            ]
        }
    );
    read("p0 = f32[4,8] parameter(0)\nreshape = f32[2, 4, 4] reshape(p0)");
    let c = read(
        "p0 = f32[3,50] parameter(0)\np1 = f32[3,30] parameter(1)\n\
         concat = f32[3,80] concatenate(f32[3,50] p0, f32[3,30] p1),\n  dimensions={1}",
    );
    assert_eq!(root_op(&c), &HloOp::Concatenate { dimension: 1 });
    // Dot.
    let d = read(
        "p0 = f32[4, 128, 256] parameter(0)\np1 = f32[4, 256, 64] parameter(1)\n\
         dot = f32[4, 128, 64] dot(p0, p1),\n  lhs_batch_dims={0}, rhs_batch_dims={0},\n  \
         lhs_contracting_dims={2}, rhs_contracting_dims={1}",
    );
    let dims = DotDimensions {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contracting: vec![2],
        rhs_contracting: vec![1],
    };
    assert_eq!(root_op(&d), &HloOp::Dot(dims));
    // Pad.
    read(
        "p0 = f32[4, 4] parameter(0)\np1 = f32[] parameter(1)\npad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0",
    );
    // The fusion examples, as computations without ENTRY.
    let f = read(
        "f {\n  p0 = f32[1000, 1000] parameter(0)\n  \
         transpose_p0 = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}\n  \
         ROOT a0 = f32[1000, 1000] add(p0, transpose_p0)\n}",
    );
    assert_eq!(
        f.entry().instructions[1].shape,
        HloShape::Array(ArrayShape::with_layout(&[1000, 1000], &[0, 1]))
    );
    assert_eq!(f.entry().root, InstrId(2));
}

#[test]
fn seed_reduce_and_reduce_window_with_their_reducers() {
    let reduce = format!(
        "{MIN}tuple_min {{\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  \
         d = s32[] parameter(3)\n  m = f32[] minimum(a, c)\n  n = s32[] minimum(b, d)\n  \
         ROOT t = (f32[], s32[]) tuple(m, n)\n}}\n\
         ENTRY e {{\n  p0 = f32[256,10] parameter(0)\n  p0_init = f32[] constant(-inf)\n  \
         p1 = s32[256,10] parameter(1)\n  p1_init = s32[] constant(0)\n  \
         ROOT reduce = (f32[10], s32[10]) reduce(p0, p1, p0_init, p1_init),\n    dimensions={{0}}, to_apply=tuple_min\n}}"
    );
    let module = read(&reduce);
    assert_eq!(module.entry().name, "e");
    assert_eq!(root_op(&module), &HloOp::Reduce { dimensions: vec![0], to_apply: ComputationId(1) });
    let window = format!(
        "{MIN}ENTRY e {{\n  c_inf = f32[] constant(-inf)\n  p0 = f32[1024, 514] parameter(0)\n  \
         reduce-window = f32[1024, 3] reduce-window(p0, c_inf),\n    window={{size=1x512 pad=0_0x0_0}}, to_apply=min\n}}"
    );
    let module = read(&window);
    assert_eq!(
        root_op(&module),
        &HloOp::ReduceWindow {
            window: vec![WindowDim::new(1, 1), WindowDim::new(512, 1)],
            to_apply: ComputationId(0)
        }
    );
}

#[test]
fn xla_dump_style_text() {
    let text = r#"HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,4]{1,0}, f32[8]{0})->f32[4,8]{1,0}}

/* A fused computation, called below; comments are ignored. */
%fused_computation (param_0.1: f32[8,4], param_1.2: f32[8]) -> f32[4,8] {
  %param_0.1 = f32[8,4]{1,0} parameter(0)
  %transpose.3 = f32[4,8]{1,0} transpose(f32[8,4]{1,0} %param_0.1), dimensions={1,0}, metadata={op_name="jit(f)/transpose" source_file="/a//b.py" source_line=3}
  %param_1.2 = f32[8]{0} parameter(1) // the bias
  %broadcast.4 = f32[4,8]{1,0} broadcast(f32[8]{0} %param_1.2), dimensions={1}
  %compare.5 = pred[4,8]{1,0} compare(%transpose.3, %broadcast.4), direction=GT, type=TOTALORDER
  ROOT %select.6 = f32[4,8]{1,0} select(%compare.5, %transpose.3, %broadcast.4)
}

ENTRY %main.7 (Arg_0.1: f32[8,4], Arg_1.2: f32[8]) -> f32[4,8], execution_thread="main" {
  %Arg_0.1 = f32[8,4]{1,0} parameter(0), sharding={replicated}
  %Arg_1.2 = f32[8]{0} parameter(1)
  %c = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  %s = f32[] constant("a (string) with } and // inside")
  ROOT %fusion = f32[4,8]{1,0} fusion(f32[8,4]{1,0} %Arg_0.1, f32[8]{0} %Arg_1.2), kind=kLoop, calls=%fused_computation, backend_config={"a":[1,{"b":2}]}
}
"#;
    let module = read(text);
    assert_eq!(module.name(), "jit_f");
    assert_eq!(module.entry().name, "main.7");
    assert_eq!(root_op(&module), &HloOp::Fusion { calls: ComputationId(0) });
    let fused = &module.computations()[0];
    assert_eq!(fused.name, "fused_computation");
    assert_eq!(fused.instructions[4].op, HloOp::Elementwise(ElementwiseOp::Compare(ComparisonDirection::Gt)));
    assert_eq!(fused.instructions[4].operands, vec![InstrId(1), InstrId(3)]);
}

/// One instruction, on `a` (and `b`), of every elementwise opcode of one or two operands in
/// the reader's own list ([`SUPPORTED_OPCODES`](super::SUPPORTED_OPCODES)).
fn every_elementwise() -> String {
    let mut text = String::new();
    for (i, opcode) in super::SUPPORTED_OPCODES.iter().enumerate() {
        let operands = match ElementwiseOp::from_opcode(opcode).map(ElementwiseOp::arity) {
            Some(1) => "a",
            Some(2) => "a, b",
            _ => continue,
        };
        text += &format!("e{i} = f32[2,3] {opcode}({operands})\n  ");
    }
    text
}

#[test]
fn every_opcode_reads() {
    let text = format!(
        "{MIN}fused {{\n  x = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(x)\n}}\n\
         ENTRY e {{\n  a = f32[2,3] parameter(0)\n  b = f32[2,3] parameter(1)\n  i = s32[2,3] iota(), iota_dimension=1\n  \
         k = f32[] constant(1.5e-3)\n  \
         u1 = f32[2,3] add(a, b)\n  u2 = f32[2,3] subtract(a, b)\n  u3 = f32[2,3] multiply(a, b)\n  \
         u4 = f32[2,3] divide(a, b)\n  u5 = f32[2,3] maximum(a, b)\n  u6 = f32[2,3] minimum(a, b)\n  \
         u7 = f32[2,3] exponential(a)\n  u8 = f32[2,3] log(a)\n  u9 = f32[2,3] negate(a)\n  u10 = f32[2,3] tanh(a)\n  \
         u11 = s32[2,3] convert(a)\n  c = pred[2,3] compare(a, b), direction=LT\n  u12 = f32[2,3] select(c, a, b)\n  \
         r = f32[2,3] reverse(a), dimensions={{0}}\n  br = f32[4,2,3] broadcast(a), dimensions={{1,2}}\n  red = f32[3] reduce(a, k), dimensions={{0}}, to_apply=min\n  \
         sl = f32[1,3] slice(a), slice={{[1:2], [0:3]}}\n  rs = f32[6] reshape(a)\n  bc = f32[3,2]{{0,1}} bitcast(a)\n  \
         cc = f32[4,3] concatenate(a, b), dimensions={{0}}\n  \
         d = f32[2,2] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}\n  \
         p = f32[2,5] pad(a, k), padding=0_0x1_1\n  \
         rw = f32[2,2] reduce-window(a, k), window={{size=1x2 stride=1x1}}, to_apply=min\n  \
         fu = f32[2,3] fusion(a), kind=kLoop, calls=fused\n  t = (f32[2,3], f32[3]) tuple(a, red)\n  \
         g = f32[3] get-tuple-element(t), index=1\n  \
         {}\
         pr = pred[] constant(true)\n  sc = f32[2,3] select(pr, a, b)\n  cl = f32[2,3] clamp(k, a, k)\n  \
         mp = f32[2,3] map(a, b), dimensions={{0,1}}, to_apply=min\n  \
         o = s32[] constant(1)\n  ds = f32[1,2] dynamic-slice(a, o, o), dynamic_slice_sizes={{1,2}}\n  \
         dus = f32[2,3] dynamic-update-slice(a, ds, o, o)\n  \
         ga = f32[2,3] gather(a, o), offset_dims={{0,1}}, start_index_map={{0}}, index_vector_dim=0, slice_sizes={{2,3}}\n  \
         cv = f32[2,2] convolution(a, b), dim_labels=bf_oi->bf\n  \
         ROOT tr = f32[3,2] transpose(a), dimensions={{1,0}}\n}}",
        every_elementwise()
    );
    let module = read(&text);
    let opcodes: Vec<&str> = module.entry().instructions.iter().map(|i| i.op.opcode()).collect();
    for opcode in super::SUPPORTED_OPCODES {
        assert!(opcodes.contains(opcode), "{opcode} missing from the test");
    }
    let bc = &module.entry().instructions[module.entry().instruction_by_name("bc").unwrap().0];
    assert_eq!(bc.shape, HloShape::Array(ArrayShape::with_layout(&[3, 2], &[0, 1])));
}

#[test]
fn malformed_modules() {
    let cases = [
        ("", "line 1, column 1: the module has no computations"),
        ("HloModule m\n", "line 2, column 1: the module has no computations"),
        (
            "p0 = f32[2] parameter(0)\nx = f32[2] negate(p0",
            "line 2, column 21, instruction `x` in computation `main`: expected `,` or `)` after an operand, found the end of the text",
        ),
        (
            "p0 = f32[2] parameter(0)\nx f32[2] negate(p0)",
            "line 2, column 3, instruction `x` in computation `main`: expected `=` after the instruction name, found `f32`",
        ),
        (
            "HloModule m\nf f32[2] negate(p0)",
            "line 2, column 3, computation `f`: expected `{` starting the computation's instructions, found `f32`",
        ),
        (
            "ENTRY e {\n  p0 = f32[2] parameter(0)\n",
            "line 3, column 1, computation `e`: expected `}` closing the computation, found the end of the text",
        ),
        (
            "ENTRY e {\n  p0 = f32[2 parameter(0)\n}",
            "line 2, column 14, instruction `p0` in computation `e`: expected `,` or `]` in the dimensions of a shape, found `parameter`",
        ),
        (
            "ENTRY e {\n  p0 = f32[2]{0,0} parameter(0)\n}",
            "line 2, column 8, instruction `p0` in computation `e`: invalid shape `f32[2]{0,0}`: `0,0` at column 8: minor_to_major [0, 0] is not a permutation of the shape's dim 0",
        ),
        (
            "ENTRY e {\n  p0 = f32[2] parameter(0)\n  x = f32[2] negate(p0), dimensions={0\n}",
            "line 4, column 2, computation `e`: expected `}` closing the computation, found the end of the text",
        ),
        ("e {\n}", "line 1, column 1, computation `e`: the computation has no instructions"),
        (
            "a {\n  p = f32[] parameter(0)\n}\na {\n  p = f32[] parameter(0)\n}",
            "line 4, column 1, computation `a`: the name `a` is already defined on line 1",
        ),
        (
            "ENTRY a {\n  p = f32[] parameter(0)\n}\nENTRY b {\n  p = f32[] parameter(0)\n}",
            "line 4, column 1, computation `b`: a second `ENTRY` computation (the first is on line 1)",
        ),
        (
            "p = f32[] parameter(0)\nROOT q = f32[] negate(p)\nROOT r = f32[] negate(p)",
            "line 3, column 1, instruction `r` in computation `main`: a second `ROOT` (the first is on line 2)",
        ),
        (
            "p = f32[] parameter(0)\np = f32[] negate(p)",
            "line 2, column 1, instruction `p` in computation `main`: the name `p` is already defined on line 1",
        ),
        (
            "a {\n  p = f32[] parameter(0)\n}\nq = f32[] parameter(0)",
            "line 4, column 1: expected a computation (`name {`): instructions belong inside one, found `q`",
        ),
        (
            "p = f32[2] parameter(-1)",
            "line 1, column 22, instruction `p` in computation `main`: expected a parameter number of at least 0, found `-1`",
        ),
        (
            "p = (f32[2], (s32[])) parameter(0)",
            "line 1, column 5, instruction `p` in computation `main`: nested tuple shapes such as `(f32[2]{0}, (s32[]))` are not supported",
        ),
        (
            "p = f32[?] parameter(0)",
            "line 1, column 5, instruction `p` in computation `main`: `f32[?]{0}`: dimension 0 is unbounded (`?`): its size is known only at run time",
        ),
        (
            "p = f32[4]{0:D(C)} parameter(0)",
            "line 1, column 5, instruction `p` in computation `main`: `f32[4]{0:D(C)}`: the layout's D(..) makes this a sparse array, which has no dense buffer or offsets",
        ),
    ];
    assert_errors(&cases);
}

#[test]
fn unknown_opcodes_and_names() {
    let unknown = error("p = f32[2] parameter(0)\ng = f32[2] gatherr(p, p), offset_dims={0}");
    assert!(
        unknown.starts_with("line 2, column 12, instruction `g` in computation `main`: unknown opcode `gatherr`: XLA has no such opcode"),
        "{unknown}"
    );
    // An XLA opcode without a map is read, and kept as such.
    let module = read("p = f32[2] parameter(0)\ng = f32[2] scatter(p, p), to_apply=f");
    assert_eq!(root_op(&module), &HloOp::Unknown { opcode: "scatter" });
    let cases = [
        (
            "p = f32[2] parameter(0)\nx = f32[2] add(p, y)\ny = f32[2] negate(p)",
            "line 2, column 19, instruction `x` in computation `main`: operand `y` is used before it is defined (on line 3)",
        ),
        (
            "p = f32[2] parameter(0)\nx = f32[2] add(p, %q)",
            "line 2, column 19, instruction `x` in computation `main`: operand `q` is not defined in this computation",
        ),
        (
            "p = f32[2] parameter(0)\nx = f32[2] negate(f32[3] p)",
            "line 2, column 19, instruction `x` in computation `main`: operand `p` is written with shape f32[3]{0} but is defined with shape f32[2]{0}",
        ),
        (
            "p = f32[2] parameter(0)\nk = f32[] constant(0)\nr = f32[] reduce(p, k), dimensions={0}, to_apply=add",
            "line 3, column 50, instruction `r` in computation `main`: `to_apply` names computation `add`, which is not defined in the module",
        ),
        (
            "p = f32[2] parameter(0)\nf = f32[2] fusion(p), kind=kLoop",
            "line 2, column 12, instruction `f` in computation `main`: `fusion` needs the attribute `calls=`",
        ),
        (
            "p = f32[2] parameter(0)\nb = f32[3,2] broadcast(p), dimensions={1}, dimensions={1}",
            "line 2, column 44, instruction `b` in computation `main`: the attribute `dimensions=` is given twice",
        ),
        (
            "p = f32[2] parameter(0)\nb = f32[3,2] broadcast(p), dimensions={a}",
            "line 2, column 39, instruction `b` in computation `main`: invalid `dimensions={a}`: expected an integer at `a`",
        ),
        (
            "p = f32[2] parameter(0)\nc = pred[2] compare(p, p), direction=XX",
            "line 2, column 38, instruction `c` in computation `main`: invalid `direction=XX`: expected a direction: EQ, NE, LT, LE, GT or GE",
        ),
        (
            "p = f32[2,2] parameter(0)\nc = f32[4,2] concatenate(p, p), dimensions={0,1}",
            "line 2, column 44, instruction `c` in computation `main`: invalid `dimensions={0,1}`: a concatenate names exactly one dimension",
        ),
    ];
    assert_errors(&cases);
}

#[test]
fn shapes_that_disagree_with_attributes() {
    let cases = [
        (
            "p0 = f32[2,3] parameter(0)\nt = f32[3,2] transpose(p0), dimensions={0,0}",
            "line 2, column 40, instruction `t` in computation `main`: dimensions={0, 0} is not a permutation of 0..2",
        ),
        (
            "p0 = f32[10] parameter(0)\ns = f32[5] slice(p0),\n  slice={[6:11]}",
            "line 3, column 9, instruction `s` in computation `main`: slice [6:11] of dimension 0 is outside [0, 10]",
        ),
        (
            "p0 = f32[2,3] parameter(0)\np1 = f32[4,5] parameter(1)\nd = f32[2,5] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            "line 3, column 1, instruction `d` in computation `main`: contracting dimension 1 of the lhs has size 3 but contracting dimension 0 of the rhs has size 4",
        ),
        (
            "p0 = f32[2,3] parameter(0)\nr = f32[7] reshape(p0)",
            "line 2, column 1, instruction `r` in computation `main`: the operand has 6 elements but the result has 7",
        ),
        (
            "p0 = f32[2] parameter(0)\np1 = f32[2] parameter(0)",
            "line 2, column 1, instruction `p1` in computation `main`: parameter number 0 is repeated or leaves a gap (parameters are numbered 0, 1, ...)",
        ),
        (
            "f {\n  p = f32[2] parameter(0)\n  ROOT x = f32[2] fusion(p), calls=f\n}",
            "line 3, column 8, instruction `x` in computation `f`: calls `f`, which leads back to this computation (calls must not recurse)",
        ),
        (
            "p0 = f32[4,4]{1,0:T(2,2)} parameter(0)\nb = f32[16] bitcast(p0)",
            "line 2, column 13, instruction `b` in computation `main`: a bitcast whose operand has a tiled or padded layout (`f32[4,4]{1,0:T(2,2)}`) is not supported",
        ),
        (
            "p0 = f32[4] parameter(0)\nb = f16[8] bitcast(p0)",
            "line 2, column 12, instruction `b` in computation `main`: a bitcast between element types of different sizes is not supported",
        ),
    ];
    assert_errors(&cases);
}

#[test]
fn tiled_layouts_elsewhere_are_read_and_their_tiles_ignored() {
    let module =
        read("p0 = f32[16,256]{1,0:T(8,128)S(1)} parameter(0)\nn = f32[16,256]{0,1:T(8,128)} negate(p0)");
    assert_eq!(module.entry().instructions[0].shape, HloShape::array(&[16, 256]));
    assert_eq!(
        module.entry().instructions[1].shape,
        HloShape::Array(ArrayShape::with_layout(&[16, 256], &[0, 1]))
    );
}
