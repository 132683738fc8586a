//! The C of a planned module: `NAME.c` (helpers, the searched kernels as `morello-codegen`
//! emits them, constant tables, reducer functions, then the entry function) and `NAME.h`.
//!
//! ```c
//! void NAME(const float *restrict x, ..., float *restrict result0, ...) {
//!   unsigned char *m_arena = aligned_alloc(64, NAME_ARENA_BYTES);   /* the intermediates */
//!   float *m_b4 = (float *)(m_arena + 0);
//!   /* dot.2: searched Matmul(...) */
//!   NAME_k4(x + 0, w + 0, m_b4);
//!   /* reduce.7: loops (no spec computes a reduction alone) */
//!   for (int64_t i0 = 0; i0 < 3; i0++) { ... }
//!   free(m_arena);
//! }
//! ```
//!
//! Steps run in node order (a topological order). Parameters and results are the caller's
//! buffers in the layouts the module gives them (its parameters' and root's `minor_to_major`).

mod ctype;
mod expr;
mod loops;
mod scalar;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use morello_codegen::emit::compile_features;
use morello_codegen::{
    CType, EmitConfig, ImplComment, KernelParam, KernelSignature, OpenMp, ParamRole, emit_kernel,
};
use morello_core::imp::Impl;
use morello_core::target::{IsaFeature, Target};
use morello_xla::hlo::{ComputationId, HloOp};
use morello_xla::xla::ElementType;

use crate::arena::ALIGNMENT;
use crate::graph::{Graph, ValueId};
use crate::plan::{Buffer, Lowering, Plan};
use crate::{CompileError, CompiledModule, ModuleStep, SearchedSpec};

pub(crate) use ctype::storage;

/// `text` as a C identifier: characters outside `[A-Za-z0-9_]` become `_`, and `fallback_` is
/// put in front of an empty name, one starting with a digit, a C keyword or a reserved prefix.
pub(crate) fn identifier(text: &str, fallback: &str) -> String {
    let mut name: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    let bad_start = name.chars().next().is_none_or(|c| c.is_ascii_digit());
    if bad_start
        || name.starts_with("morello_")
        || name.starts_with("m_")
        || KEYWORDS.contains(&name.as_str())
    {
        name = format!("{fallback}_{name}");
    }
    name
}

const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "main", "argc", "argv", "free", "abort",
];

/// Checks that a module name is a C identifier the unit may use.
pub(crate) fn check_name(name: &str) -> Result<(), CompileError> {
    if identifier(name, "x") != name {
        return Err(CompileError::Options(format!(
            "`{name}` is not a C identifier the compiled module may take (letters, digits and `_`, not starting \
             with a digit, `m_` or `morello_`, not a C keyword)"
        )));
    }
    Ok(())
}

/// The state of one unit's emission.
pub(crate) struct Unit<'a> {
    pub(crate) graph: &'a Graph<'a>,
    /// The module's C name (prefix of every file-scope name).
    pub(crate) name: String,
    /// The C names of values' buffers.
    pub(crate) buffer_names: BTreeMap<ValueId, String>,
    /// The entry function's body.
    body: String,
    indent: usize,
    fresh: usize,
}

impl Unit<'_> {
    /// Appends one line of the body at the current indentation.
    pub(crate) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.body.push_str("  ");
        }
        self.body.push_str(text);
        self.body.push('\n');
    }

    /// Opens a block (`text` ends with `{`).
    pub(crate) fn open(&mut self, text: &str) {
        self.line(text);
        self.indent += 1;
    }

    /// Closes a block.
    pub(crate) fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }

    /// A fresh C name with this prefix.
    pub(crate) fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh - 1)
    }
}

/// The C element type the harness uses for an element type, if it has one.
pub(crate) fn harness_type(t: ElementType) -> Option<CType> {
    Some(match t {
        ElementType::F32 => CType::F32,
        ElementType::S32 => CType::I32,
        ElementType::U32 => CType::U32,
        ElementType::S16 => CType::I16,
        ElementType::U16 => CType::U16,
        ElementType::S8 => CType::I8,
        ElementType::U8 | ElementType::Pred => CType::U8,
        ElementType::Bf16 => CType::Bf16,
        _ => return None,
    })
}

/// Emits the unit and the header of a planned module whose searched nodes have `kernels`.
pub(crate) fn module(
    graph: &Graph<'_>,
    plan: Plan,
    kernels: Vec<(usize, Vec<Impl>)>,
    target: &Target,
    name: &str,
    searched: Vec<SearchedSpec>,
) -> Result<CompiledModule, CompileError> {
    let at = |node: usize, reason: String| CompileError::Unsupported {
        computation: graph.nodes[node].computation.clone(),
        instruction: graph.nodes[node].instruction.clone(),
        reason,
    };
    // Every value with a buffer is stored in a type C holds here.
    for &value in plan.buffers.keys() {
        let t = graph.shape(value).element_type;
        if storage(t).is_none() {
            return Err(at(
                value.node,
                format!("{t} values are not compiled (f32, f64, bf16, integers and pred are)"),
            ));
        }
    }
    // Names: parameters and results, then arena buffers and constant tables.
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut unique = |base: String| {
        let mut candidate = base.clone();
        let mut k = 1;
        while !taken.insert(candidate.clone()) || candidate == name {
            candidate = format!("{base}_{k}");
            k += 1;
        }
        candidate
    };
    let param_names: Vec<String> = graph.parameters.iter().map(|(n, _)| unique(identifier(n, "p"))).collect();
    let result_names: Vec<String> = (0..graph.results.len())
        .map(|k| unique(if graph.results.len() == 1 { "result".to_string() } else { format!("result{k}") }))
        .collect();
    let mut buffer_names = BTreeMap::new();
    for (&value, buffer) in &plan.buffers {
        let c = match buffer {
            Buffer::Parameter(i) => param_names[*i].clone(),
            Buffer::Result(k) => result_names[*k].clone(),
            Buffer::Arena(_) => format!("m_b{}_{}", value.node, value.output),
            Buffer::Constant => format!("{name}_c{}", value.node),
        };
        buffer_names.insert(value, c);
    }
    let mut unit =
        Unit { graph, name: name.to_string(), buffer_names, body: String::new(), indent: 1, fresh: 0 };

    // Searched kernels.
    let mut kernel_source = String::new();
    let mut features: BTreeSet<IsaFeature> = compile_features(target, &BTreeSet::new()).into_iter().collect();
    let mut openmp = OpenMp::Disabled;
    let mut kernel_names = BTreeMap::new();
    for (node, imps) in &kernels {
        // The kernel, then the copies of its inputs (`_c` and the input's position).
        let copies: Vec<usize> = match &plan.lowering[*node] {
            Lowering::Searched { copies, .. } => copies.iter().map(|c| c.input).collect(),
            _ => Vec::new(),
        };
        let names = std::iter::once(format!("{name}_k{node}"))
            .chain(copies.iter().map(|i| format!("{name}_k{node}_c{i}")));
        for (imp, kernel_name) in imps.iter().zip(names) {
            let config = EmitConfig { name: kernel_name, comment: ImplComment::Include };
            let emitted = emit_kernel(imp, target, &config).map_err(|source| CompileError::Codegen {
                instruction: graph.nodes[*node].name.clone(),
                source,
            })?;
            kernel_source += &emitted.source;
            kernel_source.push('\n');
            features.extend(emitted.features);
            if emitted.openmp == OpenMp::Enabled {
                openmp = OpenMp::Enabled;
            }
        }
        kernel_names.insert(*node, format!("{name}_k{node}"));
    }

    // Constant tables.
    let mut tables = String::new();
    for (&value, buffer) in &plan.buffers {
        if *buffer == Buffer::Constant {
            tables += &unit.table(value).map_err(|reason| at(value.node, reason))?;
        }
    }
    // Functions of reducers and maps.
    let mut applied: Vec<ComputationId> = Vec::new();
    for (id, node) in graph.nodes.iter().enumerate() {
        if matches!(plan.lowering[id], Lowering::Dead | Lowering::Absorbed { .. } | Lowering::Searched { .. })
        {
            continue;
        }
        if let Some(
            HloOp::Reduce { to_apply, .. } | HloOp::ReduceWindow { to_apply, .. } | HloOp::Map { to_apply },
        ) = node.op()
        {
            if !applied.contains(to_apply) {
                applied.push(*to_apply);
            }
        }
    }
    let functions = unit.functions(&applied).map_err(|reason| CompileError::Unsupported {
        computation: graph.module.entry().name.clone(),
        instruction: String::new(),
        reason,
    })?;

    // The entry function's body, node by node.
    let arena_bytes = plan.arena_bytes;
    if arena_bytes > 0 {
        unit.line(&format!("unsigned char *m_arena = aligned_alloc({ALIGNMENT}, {arena_bytes}u);"));
        unit.line("if (m_arena == NULL) abort();");
    }
    for (&value, buffer) in &plan.buffers {
        if let Buffer::Arena(offset) = buffer {
            let t = storage(graph.shape(value).element_type).expect("checked above");
            let c = &unit.buffer_names[&value];
            let line = format!("{t} *{c} = ({t} *)(m_arena + {offset});");
            unit.line(&line);
        }
    }
    let mut steps: Vec<ModuleStep> = Vec::new();
    for id in 0..graph.nodes.len() {
        let node = &graph.nodes[id];
        match &plan.lowering[id] {
            Lowering::Searched { spec, inputs, copies, what } => {
                let step = steps.len();
                steps.push(ModuleStep {
                    instruction: node.name.clone(),
                    what: match copies.as_slice() {
                        [] => format!("searched {what}"),
                        [one] => format!("searched {what}, input {} copied first", one.input),
                        many => {
                            let inputs: Vec<String> = many.iter().map(|c| c.input.to_string()).collect();
                            format!("searched {what}, inputs {} copied first", inputs.join(" and "))
                        }
                    },
                });
                unit.line(&format!("MORELLO_STEP_BEGIN({step});"));
                let mut args = Vec::new();
                for input in inputs {
                    let base = unit
                        .buffer_names
                        .get(&input.base)
                        .ok_or_else(|| at(id, "an input without a buffer".into()))?;
                    args.push(if input.offset == 0 {
                        base.clone()
                    } else {
                        format!("{base} + {}", input.offset)
                    });
                }
                for copy in copies {
                    let t = storage(graph.shape(copy.from.base).element_type).expect("checked above");
                    let scratch = format!("(({t} *)(m_arena + {}))", copy.offset);
                    unit.line(&format!(
                        "/* {}: input {} copied first: {} */",
                        comment(&node.name),
                        copy.input,
                        comment(&copy.spec.display(target).to_string())
                    ));
                    unit.line(&format!("{name}_k{id}_c{}({}, {scratch});", copy.input, args[copy.input]));
                    args[copy.input] = scratch;
                }
                args.push(unit.buffer_names[&ValueId::of(id)].clone());
                unit.line(&format!(
                    "/* {}: searched {what}: {} */",
                    comment(&node.name),
                    comment(&spec.display(target).to_string())
                ));
                let kernel = kernel_names
                    .get(&id)
                    .ok_or_else(|| at(id, "a searched node without its kernel".into()))?;
                unit.line(&format!("{kernel}({});", args.join(", ")));
                unit.line(&format!("MORELLO_STEP_END({step});"));
            }
            Lowering::Loops { reason } => {
                let step = steps.len();
                steps.push(ModuleStep {
                    instruction: node.name.clone(),
                    what: format!("loops ({})", node.op().map_or("", |o| o.opcode())),
                });
                unit.line(&format!("MORELLO_STEP_BEGIN({step});"));
                unit.line(&format!(
                    "/* {} ({}): loops: {} */",
                    comment(&node.name),
                    node.op().map_or("", |o| o.opcode()),
                    comment(reason)
                ));
                unit.loops(id).map_err(|reason| at(id, reason))?;
                unit.line(&format!("MORELLO_STEP_END({step});"));
            }
            _ => {}
        }
    }
    for &(k, value) in &plan.copies {
        let shape = graph.result_shapes[k].clone();
        let target_name = result_names[k].clone();
        let step = steps.len();
        steps.push(ModuleStep {
            instruction: graph.node(value).name.clone(),
            what: format!("copied to result {k}"),
        });
        unit.line(&format!("/* result {k}: a copy of {} */", comment(&graph.node(value).name)));
        unit.line(&format!("MORELLO_STEP_BEGIN({step});"));
        unit.copy(value, &shape, &target_name).map_err(|reason| at(value.node, reason))?;
        unit.line(&format!("MORELLO_STEP_END({step});"));
    }
    if arena_bytes > 0 {
        unit.line("free(m_arena);");
    }

    // The signature and the files.
    // The harness reads and writes every parameter and result, so there is one only when each
    // has a harness type.
    let harness_param = |name: &String, shape: &morello_xla::hlo::ArrayShape, role| {
        harness_type(shape.element_type)
            .map(|c| KernelParam::new(name.clone(), c, element_count(shape), role))
    };
    let mut params = Vec::new();
    let mut declarations = Vec::new();
    for (k, (_, value)) in graph.parameters.iter().enumerate() {
        let shape = graph.shape(*value);
        let t = storage(shape.element_type)
            .ok_or_else(|| at(value.node, format!("{} parameters are not compiled", shape.element_type)))?;
        declarations.push(format!("const {t} *restrict {}", param_names[k]));
        params.push(harness_param(&param_names[k], shape, ParamRole::Input));
    }
    for (k, shape) in graph.result_shapes.iter().enumerate() {
        let t = storage(shape.element_type).ok_or_else(|| {
            at(graph.results[k].node, format!("{} results are not compiled", shape.element_type))
        })?;
        declarations.push(format!("{t} *restrict {}", result_names[k]));
        params.push(harness_param(&result_names[k], shape, ParamRole::Output));
    }
    let prototype = format!("void {name}({})", declarations.join(", "));
    let signature =
        params.into_iter().collect::<Option<Vec<_>>>().map(|params| KernelSignature::new(name, params));
    let module_name = graph.module.name();
    let mut source = format!(
        "/* {name}.c: HLO module `{}` compiled by morello for target {}.\n *\n",
        comment(module_name),
        target.name()
    );
    source += &report_comment(graph, &plan, target);
    source += " */\n";
    source += ctype::HELPERS;
    source += "\n/* ---- searched kernels ---- */\n";
    source += &kernel_source;
    if !tables.is_empty() {
        source += "\n/* ---- constants ---- */\n";
        source += &tables;
    }
    if !functions.is_empty() {
        source += "\n/* ---- reducers and mapped computations ---- */\n";
        // A loop may inline what a function computes; clang warns of an unused one (gcc does not).
        source += "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n";
        source += &functions;
        source += "#pragma GCC diagnostic pop\n";
    }
    source += &profile_macros(name, steps.len());
    source += "\n/* ---- the module ---- */\n";
    let _ = writeln!(source, "{prototype};");
    let _ = writeln!(source, "{prototype} {{");
    source += &unit.body;
    source += "}\n";
    let header =
        header(name, module_name, target, &prototype, arena_bytes, graph, &param_names, &result_names);
    let features: Vec<IsaFeature> = IsaFeature::ALL.into_iter().filter(|f| features.contains(f)).collect();
    let result_instructions = graph.results.iter().map(|r| graph.node(*r).name.clone()).collect();
    Ok(CompiledModule {
        name: name.to_string(),
        source,
        header,
        signature,
        result_instructions,
        node_names: graph.nodes.iter().map(|n| n.name.clone()).collect(),
        features,
        openmp,
        arena_bytes,
        plan,
        searched,
        steps,
    })
}

/// The step macros: nothing, unless the unit is compiled with `MORELLO_PROFILE` defined, when
/// each step adds its wall time to `NAME_profile_seconds[step]` (what [`crate::profile`] reads).
fn profile_macros(name: &str, steps: usize) -> String {
    format!(
        "\n/* ---- step timing (only with MORELLO_PROFILE defined) ---- */\n\
         #ifdef MORELLO_PROFILE\n\
         #include <time.h>\n\
         double {name}_profile_seconds[{count}];\n\
         static inline double m_profile_now(void) {{\n\
         \x20 struct timespec t;\n\
         \x20 clock_gettime(CLOCK_MONOTONIC, &t);\n\
         \x20 return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n\
         }}\n\
         #define MORELLO_STEP_BEGIN(k) double m_step_start##k = m_profile_now()\n\
         #define MORELLO_STEP_END(k) {name}_profile_seconds[k] += m_profile_now() - m_step_start##k\n\
         #else\n\
         #define MORELLO_STEP_BEGIN(k) (void)0\n\
         #define MORELLO_STEP_END(k) (void)0\n\
         #endif\n",
        count = steps.max(1)
    )
}

/// The number of elements of an array (at least 1, as harness buffers are).
fn element_count(shape: &morello_xla::hlo::ArrayShape) -> usize {
    usize::try_from(shape.volume()).unwrap_or(0).max(1)
}

/// Text that cannot end a C comment.
pub(crate) fn comment(text: &str) -> String {
    text.replace("*/", "* /").replace('\n', " ")
}

/// The plan as the unit's header comment: each node with code and what it became.
fn report_comment(graph: &Graph<'_>, plan: &Plan, target: &Target) -> String {
    let mut text = String::new();
    for (id, node) in graph.nodes.iter().enumerate() {
        let line = match &plan.lowering[id] {
            Lowering::Searched { spec, what, .. } => format!("searched {what}: {}", spec.display(target)),
            Lowering::Loops { reason } => format!("loops: {reason}"),
            _ => continue,
        };
        let _ = writeln!(text, " * {}: {}", comment(&node.name), comment(&line));
    }
    text
}

#[allow(clippy::too_many_arguments)]
fn header(
    name: &str,
    module_name: &str,
    target: &Target,
    prototype: &str,
    arena_bytes: u64,
    graph: &Graph<'_>,
    params: &[String],
    results: &[String],
) -> String {
    let guard = format!("{}_H", name.to_ascii_uppercase());
    let mut text = format!(
        "/* {name}.h: HLO module `{}` compiled by morello for target {}.\n *\n",
        comment(module_name),
        target.name()
    );
    text += " * Every pointer is a whole array in the layout the module gives it (minor_to_major):\n";
    for (k, (_, value)) in graph.parameters.iter().enumerate() {
        let _ = writeln!(text, " *   {:<12} parameter {k}, {}", params[k], describe(graph.shape(*value)));
    }
    for (k, shape) in graph.result_shapes.iter().enumerate() {
        let _ = writeln!(text, " *   {:<12} result {k}, {}", results[k], describe(shape));
    }
    let _ = writeln!(
        text,
        " * The intermediates take {arena_bytes} bytes, allocated and freed by each call (aligned_alloc).\n */"
    );
    let _ = writeln!(text, "#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n");
    let _ = writeln!(text, "#define {}_ARENA_BYTES {arena_bytes}u\n", name.to_ascii_uppercase());
    let _ = writeln!(text, "{prototype};\n\n#endif");
    text
}

/// `f32[3,4]{1,0}`.
fn describe(shape: &morello_xla::hlo::ArrayShape) -> String {
    let dims: Vec<String> = shape.dims.iter().map(ToString::to_string).collect();
    let order: Vec<String> = shape.minor_to_major_or_default().iter().map(ToString::to_string).collect();
    format!("{}[{}]{{{}}}", shape.element_type, dims.join(","), order.join(","))
}
