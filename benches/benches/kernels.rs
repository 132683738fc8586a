//! Benches of emitted kernels: the search's best f32 matmul at 16^3 and 64^3 for this machine's
//! `x86` target, emitted as C, verified against the reference, compiled with the benchmark harness
//! and timed. Run with `cargo bench -p morello-benches --bench kernels`.
//!
//! How it is timed: the harness (`morello_codegen::harness`, serve mode) runs pinned to one CPU in
//! its own process with `OMP_NUM_THREADS=1`. For each criterion sample of `iters` iterations
//! (`iter_custom`), the bench asks it for `run 0 <iters>`; the harness times exactly those
//! back-to-back calls with `clock_gettime` and answers with the time per call, which the bench
//! multiplies back into the total criterion expects. The pipe round trip is outside the timed
//! region; every call goes through the harness's function pointer, as in `morello run` and the
//! baselines table. Throughput is reported in elements per second with `2 M K N` elements per
//! call, so criterion's "elem/s" reads as FLOP/s.
//!
//! Without a C compiler, or on a host that runs neither x86 target, the bench prints why and
//! measures nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use morello_benches::square_matmul;
use morello_codegen::harness::parse_sample_line;
use morello_codegen::{
    BenchEntry, CProgram, CompileOptions, Compiler, EmitConfig, SourceUnit, VerifyOptions,
    bench_program_source, emit_kernel, verify_impl,
};
use morello_core::target::resolve_target;
use morello_measure::BenchConfig;
use morello_search::Search;

/// A benchmark program in serve mode, timing entry 0 on request.
struct Served {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Served {
    fn start(binary: &Path, cpu: Option<usize>) -> Served {
        let mut args = vec!["--serve".to_string(), "--seed".into(), "1".into()];
        args.extend(cpu.map(|cpu| ["--cpu".to_string(), cpu.to_string()]).into_iter().flatten());
        let mut child = Command::new(binary)
            .args(&args)
            .env("OMP_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the benchmark program starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut served = Served { child, stdin, stdout };
        let ready = served.line();
        assert!(ready.starts_with("ready"), "the harness said `{ready}`");
        served
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the harness answers");
        line
    }

    /// Seconds per call over `reps` back-to-back calls, as the harness measured them.
    fn seconds_per_call(&mut self, reps: u64) -> f64 {
        writeln!(self.stdin, "run 0 {reps}").and_then(|()| self.stdin.flush()).expect("the harness reads");
        let line = self.line();
        let sample = parse_sample_line(&line).expect("a sample line");
        assert_eq!((sample.candidate, sample.reps), (0, reps), "{line}");
        sample.seconds_per_call
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|()| self.stdin.flush());
        let _ = self.child.wait();
    }
}

#[allow(clippy::print_stderr)]
fn skip(reason: &str) {
    eprintln!("kernels bench skipped: {reason}");
}

fn kernels(c: &mut Criterion) {
    let compiler = match Compiler::find() {
        Ok(compiler) => compiler,
        Err(e) => return skip(&e.to_string()),
    };
    let target = match resolve_target("x86") {
        Ok(resolved) => resolved.target,
        Err(e) => return skip(&e.to_string()),
    };
    let cpu = BenchConfig::default().cpu();
    let mut group = c.benchmark_group("kernels");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for n in [16u32, 64] {
        let spec = square_matmul(n, "f32", &target);
        let imp = Search::new(&target).solve(&spec).expect("solves").imp;
        let verified = verify_impl(&imp, &target, &compiler, &VerifyOptions::default()).expect("runs");
        assert!(verified.verification.verified, "{:?}", verified.verification.mismatch);
        let kernel = emit_kernel(&imp, &target, &EmitConfig::default()).expect("emits");
        let entries = [BenchEntry::new("morello", kernel.signature.name.clone())];
        let main = bench_program_source(&kernel.signature, &kernel.source, &entries).expect("a harness");
        let program = CProgram { units: vec![SourceUnit::new("bench", main)], link_args: Vec::new() };
        let options =
            CompileOptions { features: kernel.features.clone(), openmp: kernel.openmp, ..Default::default() };
        let build = compiler.build(&program, &options).expect("compiles");
        let mut served = Served::start(build.binary(), cpu);
        group.throughput(Throughput::Elements(2 * u64::from(n).pow(3)));
        group.bench_function(format!("matmul_{n}_f32_{}", target.name()), |b| {
            b.iter_custom(|iters| Duration::from_secs_f64(served.seconds_per_call(iters) * iters as f64))
        });
    }
    group.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
