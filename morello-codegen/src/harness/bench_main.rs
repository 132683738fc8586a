//! The benchmark harness: a `main` that times one or more candidate functions with the kernel's
//! call shape on the same seeded inputs, alternating them sample by sample.
//!
//! Command line of the generated program:
//!
//! ```text
//! program [--seed N] [--samples N] [--min-seconds S] [--cpu K] [--bind K,L,...] [--serve] [--cold]
//! ```
//!
//! Defaults: seed 0, 5 samples, 0.2 s per sample, no pinning. It pins itself to CPU `K` with
//! `sched_setaffinity`, places every buffer in pages it maps ([`buffer_places`]: the same page
//! offsets in every program), fills read parameters from the seed, runs each candidate's setup
//! function, then either
//!
//! - **standalone**: for each candidate, one warm-up call, then calibrates repetitions (starting
//!   at 1, growing at most 100x at a time) until one sample of `reps` back-to-back calls takes at
//!   least the minimum time (twice in a row, so one preempted timing cannot stop it early); then takes `samples` rounds, each timing every candidate once in a
//!   rotated order (round `s` starts at candidate `s mod n`); or
//! - **serve** (`--serve`): prints `ready\t<n>` and answers commands on stdin, one per line:
//!   `run <candidate> <reps>` times that many calls, `quit` exits. The Rust driver
//!   ([`crate::bench`]) uses this to interleave candidates timed in Rust.
//!
//! Either way each sample is one line on stdout (see [`parse_sample_line`]):
//!
//! ```text
//! sample\t<candidate index>\t<label>\t<reps>\t<seconds per call>
//! ```
//!
//! Time is `clock_gettime(CLOCK_MONOTONIC)` around `reps` calls. With `--cold`, each call is timed
//! alone, after every parameter's buffer was evicted from the caches (`clflush`; other hosts than
//! x86-64 refuse it): the call starts with its operands in main memory, as the cost model's specs
//! place them, and the clock's own overhead (tens of nanoseconds) is in every call's time.
//! Candidates are called through a function pointer read from a `volatile` slot, so the compiler
//! can neither inline a kernel into the timing loop nor merge repeated calls; every candidate pays
//! the same indirect call. The loops that make the calls are functions of their own aligned to 64
//! bytes, so that they sit at the same offset from a 64-byte boundary in every program: where the
//! linker placed the loop otherwise changed a small kernel's time by up to a fifth
//! (`docs/benchmarking.md`, "Where the timing loop sits").

use std::fmt::Write as _;

use super::prelude::{BUFFER_ALIGNMENT, fill_function, prelude};
use super::{KernelSignature, check_identifier};
use crate::error::CodegenError;

/// The first word of the line a serving harness prints once it is ready.
pub const SERVE_READY_PREFIX: &str = "ready";

/// Buffers of at least this many bytes get a mapping of their own ([`buffer_places`]): glibc's
/// default `M_MMAP_THRESHOLD`.
const OWN_MAPPING_BYTES: usize = 128 << 10;

/// The page size the placement assumes.
const PAGE_BYTES: usize = 4096;

/// Where a benchmark puts one parameter's buffer ([`buffer_places`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BufferPlace {
    /// In the mapping the small buffers share, `offset` bytes from its start.
    Shared { offset: usize },
    /// In a mapping of its own of `mapping` bytes, `offset` bytes from its start.
    Own { mapping: usize, offset: usize },
}

/// Where a benchmark program puts buffers of these sizes, in order, and the size of the mapping
/// the small ones share (0 if none). The layout is fixed, and follows what glibc's `malloc` does
/// in a fresh process (`docs/benchmarking.md`, "Where the buffers sit"):
///
/// - A buffer of at least [`OWN_MAPPING_BYTES`] gets pages of its own, its data
///   [`BUFFER_ALIGNMENT`] bytes in, as `malloc` maps it. Each mapping is a page longer than its
///   buffer, so large buffers whose sizes are powers of two do not all start at one offset from a
///   large power of two.
/// - Smaller ones share one mapping, packed: the first [`BUFFER_ALIGNMENT`] bytes in, each next
///   one at the first multiple of it at least 16 bytes (`malloc`'s chunk header) past the end of
///   the one before. Three buffers of 1 KiB sit where a fresh `malloc` puts them, at page offsets
///   `0x080`, `0x500` and `0x980`.
///
/// Each size is first rounded up to a multiple of [`BUFFER_ALIGNMENT`], as `morello_alloc` does.
/// No buffer starts in the first bytes of a page, where the harness keeps its pointers to them (8
/// bytes each: past [`BUFFER_ALIGNMENT`] bytes with over 16 parameters, and the first offset moves
/// up with them). Placed by `malloc` after the libraries have loaded, a buffer's offset within its
/// page would depend on what they allocated first, and where the output covers the page offsets
/// of those pointers, the loop's loads of them wait for its stores (4K aliasing): on an AMD Zen 5
/// a 16^3 kernel runs 4% slower so and an 8^3 one 18% (`docs/benchmarking.md`, "Where the buffers
/// sit").
pub(crate) fn buffer_places(bytes: &[usize]) -> (usize, Vec<BufferPlace>) {
    let round = |n: usize, to: usize| n.div_ceil(to).max(1) * to;
    let first = round(8 * bytes.len(), BUFFER_ALIGNMENT);
    let mut end = 0;
    let places = bytes
        .iter()
        .map(|&b| {
            let rounded = round(b, BUFFER_ALIGNMENT);
            if rounded >= OWN_MAPPING_BYTES {
                return BufferPlace::Own { mapping: round(rounded + first, PAGE_BYTES), offset: first };
            }
            let offset = if end == 0 { first } else { round(end + 16, BUFFER_ALIGNMENT) };
            end = offset + rounded;
            BufferPlace::Shared { offset }
        })
        .collect();
    (if end == 0 { 0 } else { round(end, PAGE_BYTES) }, places)
}

/// One candidate of a benchmark program: a C function with the kernel's signature (defined in
/// the inline source or in another unit of the program).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchEntry {
    /// The label printed with its samples, e.g. `morello` or `openblas` (`[A-Za-z0-9_.+-]+`).
    pub label: String,
    /// The C function called with the kernel's arguments.
    pub function: String,
    /// An optional `int setup(void)` run once before timing (non-zero means failure), e.g. to
    /// JIT a libxsmm kernel.
    pub setup: Option<String>,
}

impl BenchEntry {
    /// An entry without a setup function.
    pub fn new(label: impl Into<String>, function: impl Into<String>) -> Self {
        BenchEntry { label: label.into(), function: function.into(), setup: None }
    }
}

/// One parsed `sample` line.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleLine {
    /// The candidate's index in the program's entry list.
    pub candidate: usize,
    /// Its label.
    pub label: String,
    /// Calls timed together.
    pub reps: u64,
    /// Elapsed time divided by `reps`.
    pub seconds_per_call: f64,
}

/// Parses `sample\t<index>\t<label>\t<reps>\t<seconds per call>`; `None` for any other line.
pub fn parse_sample_line(line: &str) -> Option<SampleLine> {
    let mut fields = line.trim_end().split('\t');
    if fields.next()? != "sample" {
        return None;
    }
    let candidate = fields.next()?.parse().ok()?;
    let label = fields.next()?.to_string();
    let reps = fields.next()?.parse().ok()?;
    let seconds_per_call: f64 = fields.next()?.parse().ok()?;
    if fields.next().is_some() || !seconds_per_call.is_finite() || seconds_per_call < 0.0 {
        return None;
    }
    Some(SampleLine { candidate, label, reps, seconds_per_call })
}

/// A translation unit: the harness prelude, `kernel_source` (may be empty), prototypes of every
/// entry's function (with the signature's parameters) and setup, and a benchmark `main` timing
/// the entries in order.
///
/// # Errors
/// [`CodegenError::InvalidSignature`] for a bad signature, an entry that is not a C identifier
/// or label, or no entry.
pub fn bench_program_source(
    signature: &KernelSignature,
    kernel_source: &str,
    entries: &[BenchEntry],
) -> Result<String, CodegenError> {
    signature.validate()?;
    check_entries(entries)?;
    let n = signature.params.len();
    let mut c = prelude();
    c.push_str("\n/* ---- kernel ---- */\n");
    c.push_str(kernel_source);
    if !kernel_source.ends_with('\n') {
        c.push('\n');
    }
    c.push_str("\n/* ---- morello benchmark harness ---- */\n");
    let mut declared: Vec<&str> = Vec::new();
    for entry in entries {
        if !declared.contains(&entry.function.as_str()) {
            declared.push(&entry.function);
            let _ = writeln!(c, "{};", signature.renamed(entry.function.clone()).c_prototype());
        }
        if let Some(setup) = entry.setup.as_deref().filter(|s| !declared.contains(s)) {
            declared.push(setup);
            let _ = writeln!(c, "int {setup}(void);");
        }
    }
    let _ = write!(
        c,
        r#"
typedef void (*morello_candidate_fn)({pointer_params});
typedef int (*morello_setup_fn)(void);
struct morello_candidate {{
  const char *label;
  morello_candidate_fn function;
  morello_setup_fn setup;
}};
static const struct morello_candidate morello_candidates[] = {{
"#,
        pointer_params = signature.c_pointer_params()
    );
    for entry in entries {
        let setup = entry.setup.as_deref().unwrap_or("NULL");
        let _ = writeln!(c, "  {{\"{}\", {}, {}}},", entry.label, entry.function, setup);
    }
    let _ = writeln!(c, "}};\n#define MORELLO_CANDIDATES {}u\n", entries.len());
    c.push_str(
        "/* The parameters' buffers. The timing loops read these pointers before every call, just after the\n   \
         previous call's last stores, and a load at the page offset of a recent store waits for it (4K\n   \
         aliasing). So the block starts a page, at offsets the buffers never take in the page they\n   \
         start in: docs/benchmarking.md, \"Where the buffers sit\". */\nstatic struct {\n",
    );
    for (i, p) in signature.params.iter().enumerate() {
        let _ = writeln!(c, "  {} *p{i};", p.c_type.c_name());
    }
    c.push_str("} morello_args __attribute__((aligned(4096)));\n");
    for i in 0..n {
        let _ = writeln!(c, "#define morello_p{i} (morello_args.p{i})");
    }
    let args: Vec<String> = (0..n).map(|i| format!("morello_p{i}")).collect();
    let _ = write!(
        c,
        r#"
/* The slot the timed function pointer is read from: volatile, so no call can be inlined. */
static morello_candidate_fn volatile morello_selected;

/* Whether calls are timed cold (`--cold`): each one alone, after every parameter was evicted. */
static int morello_cold;

/* Evicts every parameter's buffer from the caches. */
static void morello_evict_all(void) {{
{evictions}}}

/* The loops that make the timed calls are functions of their own, aligned to 64 bytes, so each
   sits at the same offset from a 64-byte boundary in every program this harness builds, whatever
   code the linker places before it (`main` among it, which grows with the candidates). Where the
   call loop falls changes a 16^3 kernel's time by up to a fifth on an AMD Zen 5:
   docs/benchmarking.md, "Where the timing loop sits". */

/* `reps` calls of `function`, back to back. */
__attribute__((noinline, aligned(64))) static void morello_repeat(morello_candidate_fn function, long reps) {{
  for (long r = 0; r < reps; r++) {{
    function({args});
  }}
}}

/* Seconds taken by `reps` calls of `function`, each timed alone after morello_evict_all. */
__attribute__((noinline, aligned(64))) static double morello_repeat_cold(morello_candidate_fn function,
                                                                         long reps) {{
  double total = 0.0;
  for (long r = 0; r < reps; r++) {{
    morello_evict_all();
    double start = morello_now();
    function({args});
    total += morello_now() - start;
  }}
  return total;
}}

/* Seconds taken by `reps` calls of candidate `which`: back to back, or with `--cold` each timed
   alone after morello_evict_all. */
static double morello_time(size_t which, long reps) {{
  morello_selected = morello_candidates[which].function;
  morello_candidate_fn function = morello_selected;
  if (morello_cold) return morello_repeat_cold(function, reps);
  double start = morello_now();
  morello_repeat(function, reps);
  return morello_now() - start;
}}

static void morello_print_sample(size_t which, long reps, double seconds) {{
  printf("sample\t%zu\t%s\t%ld\t%.9e\n", which, morello_candidates[which].label, reps,
         seconds / (double)reps);
  fflush(stdout);
}}

/* One warm-up call, then repetitions grown until one sample takes at least min_seconds. A sample
   that reaches it is timed again and the shorter time counts: a preemption or page faults during
   one timing would otherwise fix a count of repetitions far too small for the samples that follow. */
static long morello_calibrate(size_t which, double min_seconds) {{
  long reps = 1;
  (void)morello_time(which, 1);
  for (;;) {{
    double seconds = morello_time(which, reps);
    if (seconds >= min_seconds) {{
      double again = morello_time(which, reps);
      if (again < seconds) seconds = again;
    }}
    if (seconds >= min_seconds || reps >= (1L << 40)) return reps;
    double scale = seconds > 0.0 ? 1.2 * min_seconds / seconds : 100.0;
    if (scale > 100.0) scale = 100.0;
    if (scale < 2.0) scale = 2.0;
    reps = (long)((double)reps * scale);
  }}
}}

static int morello_serve(void) {{
  char line[256];
  printf("ready\t%u\n", MORELLO_CANDIDATES);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin) != NULL) {{
    size_t which;
    long reps;
    if (strncmp(line, "quit", 4) == 0) return 0;
    if (sscanf(line, "run %zu %ld", &which, &reps) == 2 && which < MORELLO_CANDIDATES && reps > 0) {{
      morello_print_sample(which, reps, morello_time(which, reps));
    }} else {{
      fprintf(stderr, "morello: bad command: %s", line);
      return 2;
    }}
  }}
  return 0;
}}

int main(int argc, char **argv) {{
  uint64_t seed = 0;
  long samples = 5;
  double min_seconds = 0.2;
  int cpu = -1;
  int bind[CPU_SETSIZE];
  int bound = 0;
  int serve = 0;
  for (int i = 1; i < argc; i++) {{
    if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {{
      seed = strtoull(argv[++i], NULL, 0);
    }} else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {{
      samples = strtol(argv[++i], NULL, 0);
    }} else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {{
      min_seconds = strtod(argv[++i], NULL);
    }} else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {{
      cpu = atoi(argv[++i]);
    }} else if (strcmp(argv[i], "--bind") == 0 && i + 1 < argc) {{
      for (char *next = argv[++i]; *next != '\0';) {{
        char *end = next;
        long id = strtol(next, &end, 10);
        if (end == next || id < 0 || id >= CPU_SETSIZE || bound == CPU_SETSIZE) {{
          fprintf(stderr, "morello: --bind takes CPU numbers separated by commas, got %s\n", argv[i]);
          return 2;
        }}
        bind[bound++] = (int)id;
        next = end + (*end == ',');
      }}
    }} else if (strcmp(argv[i], "--serve") == 0) {{
      serve = 1;
    }} else if (strcmp(argv[i], "--cold") == 0) {{
      if (!MORELLO_CAN_EVICT) {{
        fprintf(stderr, "morello: --cold evicts buffers with clflush, which needs an x86-64 host\n");
        return 2;
      }}
      morello_cold = 1;
    }} else {{
      fprintf(stderr, "usage: %s [--seed N] [--samples N] [--min-seconds S] [--cpu K] [--bind K,L,...] "
                      "[--serve] [--cold]\n",
              argv[0]);
      return 2;
    }}
  }}
  if (samples < 1 || !(min_seconds >= 0.0)) {{
    fprintf(stderr, "morello: --samples must be at least 1 and --min-seconds non-negative\n");
    return 2;
  }}
  if (cpu >= 0 && morello_pin_to_cpu(cpu) != 0) return 3;
  if (bound > 0 && morello_bind_openmp_threads(bind, bound) != 0) return 3;
"#,
        args = args.join(", "),
        evictions = (0..n)
            .map(|i| format!("  morello_evict(morello_p{i}, {}u);\n", signature.params[i].bytes()))
            .collect::<String>(),
    );
    let (arena, places) = buffer_places(&signature.params.iter().map(|p| p.bytes()).collect::<Vec<_>>());
    if arena > 0 {
        let _ = writeln!(c, "  unsigned char *morello_arena = morello_map({arena}u);");
    }
    for (i, p) in signature.params.iter().enumerate() {
        let ty = p.c_type.c_name();
        let _ = match places[i] {
            BufferPlace::Shared { offset } => {
                writeln!(c, "  morello_p{i} = ({ty} *)(morello_arena + {offset}u);")
            }
            BufferPlace::Own { mapping, offset } => {
                writeln!(c, "  morello_p{i} = ({ty} *)(morello_map({mapping}u) + {offset}u);")
            }
        };
        if p.role.is_read() {
            let _ = writeln!(c, "  {}(morello_p{i}, {}u, seed, {i});", fill_function(p.c_type), p.elements);
        }
    }
    let _ = write!(
        c,
        r#"  for (size_t which = 0; which < MORELLO_CANDIDATES; which++) {{
    if (morello_candidates[which].setup != NULL && morello_candidates[which].setup() != 0) {{
      fprintf(stderr, "morello: the setup of %s failed\n", morello_candidates[which].label);
      return 3;
    }}
  }}
  if (serve) return morello_serve();
  long reps[MORELLO_CANDIDATES];
  for (size_t which = 0; which < MORELLO_CANDIDATES; which++) {{
    reps[which] = morello_calibrate(which, min_seconds);
  }}
  for (long s = 0; s < samples; s++) {{
    for (size_t j = 0; j < MORELLO_CANDIDATES; j++) {{
      size_t which = ((size_t)s + j) % MORELLO_CANDIDATES;
      morello_print_sample(which, reps[which], morello_time(which, reps[which]));
    }}
  }}
  return 0;
}}
"#
    );
    Ok(c)
}

fn check_entries(entries: &[BenchEntry]) -> Result<(), CodegenError> {
    if entries.is_empty() {
        return Err(CodegenError::InvalidSignature {
            reason: "a benchmark needs at least one candidate".into(),
        });
    }
    for (index, entry) in entries.iter().enumerate() {
        check_identifier(&entry.function, "candidate function")?;
        if let Some(setup) = &entry.setup {
            check_identifier(setup, "setup function")?;
        }
        let label_ok = !entry.label.is_empty()
            && entry.label.chars().all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c));
        if !label_ok {
            return Err(CodegenError::InvalidSignature {
                reason: format!("candidate label `{}` must be [A-Za-z0-9_.+-]+", entry.label),
            });
        }
        if entries[..index].iter().any(|e| e.label == entry.label) {
            return Err(CodegenError::InvalidSignature {
                reason: format!("two candidates are labelled `{}`", entry.label),
            });
        }
    }
    Ok(())
}
