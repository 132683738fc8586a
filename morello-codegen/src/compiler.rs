//! The C compiler driver: find a compiler, compile C translation units with the target's flags,
//! link them into a binary in a build directory, and surface the compiler's own message on
//! failure.
//!
//! The compiler is `$CC` if set, else the first of `cc`, `gcc`, `clang` that runs and builds OpenMP
//! programs (else the first that runs). Every unit is compiled with
//!
//! ```text
//! -O3 -std=gnu11 -Wall -Wextra [-Werror] <target -m flags> [-fopenmp] <unit flags> -c
//! ```
//!
//! and linked with `[-fopenmp] <objects> <link args> -lm`. Units compile in parallel. This module
//! knows nothing about kernels or harnesses.
//!
//! Code for another architecture than the host's (an `arm-neon` target on x86) is built by a cross
//! compiler, the first of `aarch64-linux-gnu-gcc` and `clang --target=aarch64-linux-gnu` that
//! answers (`$MORELLO_AARCH64_CC` if set), and run under `qemu-aarch64 -L /usr/aarch64-linux-gnu`
//! (Debian's `gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user`): [`Compiler::for_target`]
//! picks it, and every [`Build`] knows its [`Runner`]. An emulated run checks results, never
//! speed.
//!
//! OpenMP is probed, not assumed: a compiler may exist without its OpenMP runtime (Debian's `clang`
//! without `libomp-dev` fails to link with `cannot find -lomp`). [`Compiler::openmp`] compiles,
//! links and runs a tiny `-fopenmp` program once per compiler and process; a program asking for
//! OpenMP from a compiler without it is built serially instead (`#pragma omp` lines are then
//! ignored, which computes the same result on one thread) and [`Build::openmp`] says so.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;

use crate::error::CodegenError;
use morello_core::target::{Architecture, IsaFeature, Target};

use crate::isa::compiler_flags;

/// Why a compiler cannot build OpenMP programs: the probe's failure, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{compiler} cannot build OpenMP programs here ({reason})")]
pub struct OpenMpUnavailable {
    /// The compiler's command.
    pub compiler: String,
    /// What failed: the compiler's first error line, or how the probe ended.
    pub reason: String,
}

/// The OpenMP probes run so far, by compiler command.
type OpenMpProbes = HashMap<Vec<String>, Result<(), OpenMpUnavailable>>;

/// The compilers tried, in order, when `$CC` is not set.
pub const DEFAULT_COMPILERS: [&str; 3] = ["cc", "gcc", "clang"];

/// Flags every unit is compiled with, before target and unit flags.
pub const BASE_FLAGS: [&str; 4] = ["-O3", "-std=gnu11", "-Wall", "-Wextra"];

/// Flags a unit that asked for OpenMP is compiled with when the compiler has none: its `#pragma
/// omp` lines are ignored without gcc's `-Wunknown-pragmas` warning (clang 14 gives none), so
/// `-Werror` builds still pass.
pub const SERIAL_OPENMP_FLAGS: [&str; 1] = ["-Wno-unknown-pragmas"];

/// The program [`Compiler::openmp`] builds and runs: a parallel region that uses the runtime.
const OPENMP_PROBE: &str = "int omp_get_max_threads(void);\nint main(void) {\n  int threads = 0;\n\
                            #pragma omp parallel reduction(+ : threads)\n  threads += 1;\n\
                            return threads >= 1 && omp_get_max_threads() >= 1 ? 0 : 1;\n}\n";

/// Which compiler a [`Compiler`] is, as far as flags and messages go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CompilerFamily {
    /// GNU gcc.
    Gcc,
    /// LLVM clang.
    Clang,
    /// Something else that answered `--version`; treated like gcc.
    Other,
}

/// The cross compilers tried for AArch64 code on another host, in order.
pub const AARCH64_CROSS_COMPILERS: [&str; 2] = ["aarch64-linux-gnu-gcc", "clang --target=aarch64-linux-gnu"];

/// The emulator that runs AArch64 programs on another host, with the root of the AArch64 C
/// library (Debian's `libc6-dev-arm64-cross`) for its dynamic loader.
pub const AARCH64_EMULATOR: [&str; 3] = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"];

/// The Debian packages of the AArch64 cross tools.
pub const AARCH64_CROSS_PACKAGES: &str = "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user";

/// How a built program is started.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Runner {
    /// Directly: the program is for the host's architecture.
    #[default]
    Native,
    /// Under an emulator for its architecture: this command, then the program and its arguments.
    Emulated {
        /// The emulator and its arguments, e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu`.
        command: Vec<String>,
        /// The architecture it emulates.
        architecture: Architecture,
    },
}

impl Runner {
    /// The command that runs `program` with `args`.
    pub fn command(&self, program: &Path) -> Command {
        match self {
            Runner::Native => Command::new(program),
            Runner::Emulated { command, .. } => {
                let (emulator, leading) =
                    command.split_first().expect("an emulator's command is never empty (a constant)");
                let mut c = Command::new(emulator);
                c.args(leading).arg(program);
                c
            }
        }
    }

    /// Whether programs run emulated (their time means nothing).
    pub fn is_emulated(&self) -> bool {
        matches!(self, Runner::Emulated { .. })
    }
}

impl fmt::Display for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Runner::Native => f.write_str("natively"),
            Runner::Emulated { command, architecture } => {
                write!(f, "emulating {architecture} with `{}`", command.join(" "))
            }
        }
    }
}

/// A C compiler that was found and answered `--version`, and how the programs it builds run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    /// The program and any leading arguments (from `$CC`, e.g. `ccache gcc`).
    command: Vec<String>,
    family: CompilerFamily,
    version: String,
    runner: Runner,
}

/// Whether the program uses OpenMP (`#pragma omp`), which adds `-fopenmp` to compile and link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenMp {
    /// No OpenMP.
    #[default]
    Disabled,
    /// Compile and link with `-fopenmp`.
    Enabled,
}

/// What to do with compiler warnings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Warnings {
    /// Keep them in [`Build::diagnostics`] and succeed.
    #[default]
    Report,
    /// Fail the build (`-Werror`); tests use this so emitted C stays warning-free.
    Deny,
}

/// Options that apply to every unit of a program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Instruction-set features the code may use; each becomes its `-m` flag.
    pub features: Vec<IsaFeature>,
    /// Whether to compile and link with OpenMP.
    pub openmp: OpenMp,
    /// Whether warnings fail the build.
    pub warnings: Warnings,
}

/// One C translation unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceUnit {
    /// The file stem (`[A-Za-z0-9_]+`, unique within a program); the file is `<name>.c`.
    pub name: String,
    /// The C source text.
    pub source: String,
    /// Extra flags for this unit only, after the common ones (e.g. `-march=native`).
    pub flags: Vec<String>,
}

impl SourceUnit {
    /// A unit with no extra flags.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        SourceUnit { name: name.into(), source: source.into(), flags: Vec::new() }
    }
}

/// A whole program: translation units and what to link them with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CProgram {
    /// The units; exactly one defines `main`.
    pub units: Vec<SourceUnit>,
    /// Linker arguments after the objects, e.g. `-lopenblas`, in order, duplicates dropped.
    pub link_args: Vec<String>,
}

/// Where a build's files go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BuildDir {
    /// A fresh temporary directory, removed when the [`Build`] is dropped.
    #[default]
    Temporary,
    /// This directory (created if needed), kept for inspection.
    Keep(PathBuf),
}

/// What a build links: an executable, or a shared library to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Artifact {
    /// `<dir>/program`, with a `main`.
    Program,
    /// `<dir>/libkernel.so`, position-independent, without a `main`.
    SharedLibrary,
}

/// A linked program (or shared library) and the directory holding its sources, objects and binary.
#[derive(Debug)]
pub struct Build {
    /// Keeps a temporary directory alive; `None` for a kept directory.
    _temporary: Option<tempfile::TempDir>,
    dir: PathBuf,
    binary: PathBuf,
    diagnostics: String,
    commands: Vec<String>,
    features: Vec<IsaFeature>,
    openmp: OpenMp,
    runner: Runner,
}

impl Build {
    /// How the program is started (natively, or under an emulator).
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Checks that this host can run the program: always under an emulator (it emulates every
    /// feature of its architecture), else the host must have every feature it was compiled for.
    ///
    /// # Errors
    /// [`CodegenError::MissingHostFeatures`] naming what the host lacks.
    pub fn check_runnable(&self) -> Result<(), CodegenError> {
        if self.runner.is_emulated() { Ok(()) } else { crate::host::require_features(&self.features) }
    }

    /// Whether the program was built with OpenMP: [`OpenMp::Disabled`] when it did not ask for it,
    /// or asked a compiler without it (see [`Compiler::openmp`]) and was built serially.
    pub fn openmp(&self) -> OpenMp {
        self.openmp
    }

    /// The instruction-set features the program was compiled for (the host must have them to
    /// run it).
    pub fn features(&self) -> &[IsaFeature] {
        &self.features
    }

    /// The directory with the `.c` files, objects and binary.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The linked executable.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Everything the compiler printed on standard error (warnings), unit by unit.
    pub fn diagnostics(&self) -> &str {
        &self.diagnostics
    }

    /// The command lines that were run, for reproducing the build by hand.
    pub fn commands(&self) -> &[String] {
        &self.commands
    }
}

impl Compiler {
    /// The compiler for a target's code: [`Compiler::find`] when its architecture is the host's
    /// (or it names none), else a cross compiler whose programs run under an emulator
    /// ([`Compiler::cross`]).
    ///
    /// # Errors
    /// [`CodegenError::NoCompiler`], or [`CodegenError::NoCrossTools`] with the command that
    /// installs them.
    pub fn for_target(target: &Target) -> Result<Self, CodegenError> {
        match target.architecture() {
            Some(architecture) if Some(architecture) != Architecture::host() => Compiler::cross(architecture),
            _ => Compiler::find(),
        }
    }

    /// A cross compiler for `architecture` and the emulator that runs its programs: the first of
    /// `$MORELLO_AARCH64_CC` (if set) and [`AARCH64_CROSS_COMPILERS`] that answers `--version`,
    /// run under [`AARCH64_EMULATOR`].
    ///
    /// # Errors
    /// [`CodegenError::NoCrossTools`] naming what is missing and the command that installs it.
    pub fn cross(architecture: Architecture) -> Result<Self, CodegenError> {
        let chosen = std::env::var("MORELLO_AARCH64_CC").ok().filter(|cc| !cc.trim().is_empty());
        let candidates: Vec<String> = match &chosen {
            Some(cc) => vec![cc.clone()],
            None => AARCH64_CROSS_COMPILERS.map(str::to_string).to_vec(),
        };
        let mut first_error = None;
        for candidate in &candidates {
            match Compiler::cross_with(candidate, architecture) {
                Ok(compiler) => return Ok(compiler),
                Err(CodegenError::NoCrossTools { missing, .. }) if missing.contains("emulator") => {
                    return Err(no_cross_tools(architecture, missing));
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        Err(no_cross_tools(
            architecture,
            format!("no cross compiler answers (tried {})", candidates.join(", ")),
        ))
    }

    /// The cross compiler run by `command` (as [`Compiler::from_command`]) for `architecture`, its
    /// programs run under the emulator.
    ///
    /// # Errors
    /// [`CodegenError::NoCrossTools`] when the command does not run, builds for another
    /// architecture, or the emulator does not run.
    pub fn cross_with(command: &str, architecture: Architecture) -> Result<Self, CodegenError> {
        if architecture != Architecture::Aarch64 {
            return Err(no_cross_tools(
                architecture,
                format!("morello knows no cross compiler for {architecture}"),
            ));
        }
        let mut compiler =
            Compiler::from_command(command).ok().filter(|c| c.builds_for(architecture)).ok_or_else(|| {
                no_cross_tools(architecture, format!("`{command}` does not build {architecture} code"))
            })?;
        let emulator = AARCH64_EMULATOR[0];
        let answers = Command::new(emulator)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success());
        if !answers {
            return Err(no_cross_tools(architecture, format!("the emulator `{emulator}` does not run")));
        }
        compiler.runner =
            Runner::Emulated { command: AARCH64_EMULATOR.map(str::to_string).to_vec(), architecture };
        Ok(compiler)
    }

    /// Whether this compiler builds `architecture` code, by its `-dumpmachine` (`aarch64-linux-gnu`).
    fn builds_for(&self, architecture: Architecture) -> bool {
        let (program, leading) = self.command.split_first().expect("a Compiler's command is never empty");
        Command::new(program)
            .args(leading)
            .arg("-dumpmachine")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with(architecture.name()))
    }

    /// How the programs this compiler builds are started.
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Finds the C compiler: `$CC` if set and non-empty (with or without OpenMP), else the first of
    /// `cc`, `gcc`, `clang` that answers `--version` and builds OpenMP programs, else the first that
    /// answers `--version`.
    ///
    /// # Errors
    /// [`CodegenError::NoCompiler`] listing what was tried.
    pub fn find() -> Result<Self, CodegenError> {
        if let Some(cc) = std::env::var("CC").ok().filter(|cc| !cc.trim().is_empty()) {
            return Compiler::from_command(&cc);
        }
        let mut first = None;
        for command in DEFAULT_COMPILERS {
            let Ok(compiler) = Compiler::from_command(command) else { continue };
            if compiler.openmp().is_ok() {
                return Ok(compiler);
            }
            first.get_or_insert(compiler);
        }
        first
            .ok_or_else(|| CodegenError::NoCompiler { tried: DEFAULT_COMPILERS.map(str::to_string).to_vec() })
    }

    /// Whether this compiler builds and runs OpenMP programs here: probed once per compiler and
    /// process (a tiny `-fopenmp` program compiled, linked and run), then remembered.
    ///
    /// # Errors
    /// [`OpenMpUnavailable`] with the reason (for example `cannot find -lomp`).
    pub fn openmp(&self) -> Result<(), OpenMpUnavailable> {
        static PROBED: OnceLock<Mutex<OpenMpProbes>> = OnceLock::new();
        let probed = PROBED.get_or_init(Mutex::default);
        // A poisoned lock only means another probe panicked; its map is still usable.
        let mut probed = probed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        probed.entry(self.command.clone()).or_insert_with(|| self.probe_openmp()).clone()
    }

    fn probe_openmp(&self) -> Result<(), OpenMpUnavailable> {
        let unavailable = |reason: String| OpenMpUnavailable { compiler: self.command(), reason };
        let program =
            CProgram { units: vec![SourceUnit::new("openmp_probe", OPENMP_PROBE)], link_args: vec![] };
        let options = CompileOptions { openmp: OpenMp::Enabled, ..CompileOptions::default() };
        let build = self.build_exactly(&program, &options, &BuildDir::Temporary).map_err(|e| {
            unavailable(match e {
                CodegenError::CompileFailed { stderr, .. } => first_error_line(&stderr),
                other => other.to_string(),
            })
        })?;
        let output = build
            .runner()
            .command(build.binary())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| unavailable(format!("the probe does not start: {e}")))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(unavailable(format!("the probe program failed: {}", output.status)))
        }
    }

    /// The compiler run by `command` (a program name or path, optionally with leading arguments
    /// separated by spaces, like `$CC`).
    ///
    /// # Errors
    /// [`CodegenError::NoCompiler`] when it does not run or `--version` fails.
    pub fn from_command(command: &str) -> Result<Self, CodegenError> {
        let parts: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        let not_found = || CodegenError::NoCompiler { tried: vec![command.to_string()] };
        let (program, leading) = parts.split_first().ok_or_else(not_found)?;
        let output = Command::new(program)
            .args(leading)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|_| not_found())?;
        if !output.status.success() {
            return Err(not_found());
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let version = text.lines().next().unwrap_or_default().trim().to_string();
        let family = if text.contains("clang") {
            CompilerFamily::Clang
        } else if text.contains("gcc") || text.contains("Free Software Foundation") {
            CompilerFamily::Gcc
        } else {
            CompilerFamily::Other
        };
        Ok(Compiler { command: parts, family, version, runner: Runner::Native })
    }

    /// The command as given, e.g. `gcc` or `ccache clang`.
    pub fn command(&self) -> String {
        self.command.join(" ")
    }

    /// Which compiler this is.
    pub fn family(&self) -> CompilerFamily {
        self.family
    }

    /// The first line of `--version`, e.g. `gcc (Debian 12.2.0-14) 12.2.0`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The flags a unit is compiled with, before its own flags and `-c`.
    pub fn unit_flags(options: &CompileOptions) -> Vec<String> {
        let mut flags: Vec<String> = BASE_FLAGS.iter().map(|f| (*f).to_string()).collect();
        if options.warnings == Warnings::Deny {
            flags.push("-Werror".into());
        }
        flags.extend(compiler_flags(&options.features).into_iter().map(str::to_string));
        if options.openmp == OpenMp::Enabled {
            flags.push("-fopenmp".into());
        }
        flags
    }

    /// Writes, compiles and links `program` in a fresh temporary directory.
    ///
    /// # Errors
    /// See [`Compiler::build_in`].
    pub fn build(&self, program: &CProgram, options: &CompileOptions) -> Result<Build, CodegenError> {
        self.build_in(program, options, &BuildDir::Temporary)
    }

    /// Writes each unit to `<dir>/<name>.c`, compiles the units in parallel, and links
    /// `<dir>/program`.
    ///
    /// # Errors
    /// [`CodegenError::CompileFailed`] with the compiler's message for the first unit (in
    /// program order) that fails, or for the link; [`CodegenError::InvalidProgram`] for a bad
    /// unit name or no unit; [`CodegenError::Io`] for file-system failures.
    pub fn build_in(
        &self,
        program: &CProgram,
        options: &CompileOptions,
        dir: &BuildDir,
    ) -> Result<Build, CodegenError> {
        if options.openmp == OpenMp::Enabled && self.openmp().is_err() {
            let serial = CompileOptions { openmp: OpenMp::Disabled, ..options.clone() };
            let mut program = program.clone();
            for unit in &mut program.units {
                unit.flags.extend(SERIAL_OPENMP_FLAGS.map(str::to_string));
            }
            return self.build_exactly(&program, &serial, dir);
        }
        self.build_exactly(program, options, dir)
    }

    /// Writes each unit to `<dir>/<name>.c`, compiles the units as position-independent code and
    /// links them into the shared library `<dir>/libkernel.so` (a program without `main`, for a
    /// host language to load: the Python package loads it with ctypes). [`Build::binary`] is the
    /// library. With OpenMP asked of a compiler without it, the library is built serially, as
    /// [`Compiler::build_in`] builds programs.
    ///
    /// # Errors
    /// As [`Compiler::build_in`]; [`CodegenError::InvalidProgram`] when the compiler's programs
    /// run under an emulator (a library of another architecture cannot be loaded here).
    pub fn build_shared_library(
        &self,
        program: &CProgram,
        options: &CompileOptions,
        dir: &BuildDir,
    ) -> Result<Build, CodegenError> {
        if self.runner.is_emulated() {
            return Err(CodegenError::InvalidProgram {
                reason: format!(
                    "a shared library built {} cannot be loaded by this process; build it on a host of its architecture",
                    self.runner
                ),
            });
        }
        let mut program = program.clone();
        let mut options = options.clone();
        if options.openmp == OpenMp::Enabled && self.openmp().is_err() {
            options.openmp = OpenMp::Disabled;
            for unit in &mut program.units {
                unit.flags.extend(SERIAL_OPENMP_FLAGS.map(str::to_string));
            }
        }
        for unit in &mut program.units {
            unit.flags.push("-fPIC".into());
        }
        self.build_artifact(&program, &options, dir, Artifact::SharedLibrary)
    }

    /// [`Compiler::build_in`] with exactly these options (no OpenMP fallback).
    fn build_exactly(
        &self,
        program: &CProgram,
        options: &CompileOptions,
        dir: &BuildDir,
    ) -> Result<Build, CodegenError> {
        self.build_artifact(program, options, dir, Artifact::Program)
    }

    /// Compiles the units and links them into `artifact`, with exactly these options.
    fn build_artifact(
        &self,
        program: &CProgram,
        options: &CompileOptions,
        dir: &BuildDir,
        artifact: Artifact,
    ) -> Result<Build, CodegenError> {
        check_units(&program.units)?;
        let (temporary, dir) = match dir {
            BuildDir::Temporary => {
                let temp = tempfile::Builder::new()
                    .prefix("morello-build-")
                    .tempdir()
                    .map_err(|e| CodegenError::io("creating a temporary build directory", e))?;
                let path = temp.path().to_path_buf();
                (Some(temp), path)
            }
            BuildDir::Keep(path) => {
                fs::create_dir_all(path)
                    .map_err(|e| CodegenError::io(format!("creating {}", path.display()), e))?;
                (None, path.clone())
            }
        };
        let common = Compiler::unit_flags(options);
        let mut jobs = Vec::new();
        for unit in &program.units {
            let source = dir.join(format!("{}.c", unit.name));
            fs::write(&source, &unit.source)
                .map_err(|e| CodegenError::io(format!("writing {}", source.display()), e))?;
            let mut args = common.clone();
            args.extend(unit.flags.iter().cloned());
            args.extend(["-c".to_string(), path_arg(&source), "-o".into()]);
            args.push(path_arg(&dir.join(format!("{}.o", unit.name))));
            let child = self.spawn(&args)?;
            jobs.push((unit.name.clone(), self.command_line(&args), child));
        }
        let mut diagnostics = String::new();
        let mut commands = Vec::new();
        let mut first_failure = None;
        for (unit, command, child) in jobs {
            let result = self.finish(child, &unit, &command);
            commands.push(command);
            match result {
                Ok(stderr) => append_diagnostics(&mut diagnostics, &unit, &stderr),
                Err(error) => {
                    first_failure.get_or_insert(error);
                }
            }
        }
        if let Some(error) = first_failure {
            return Err(error);
        }
        let mut args = Vec::new();
        let binary = match artifact {
            Artifact::Program => dir.join("program"),
            Artifact::SharedLibrary => {
                args.push("-shared".to_string());
                dir.join("libkernel.so")
            }
        };
        if options.openmp == OpenMp::Enabled {
            args.push("-fopenmp".to_string());
        }
        args.extend(program.units.iter().map(|u| path_arg(&dir.join(format!("{}.o", u.name)))));
        args.extend(["-o".to_string(), path_arg(&binary)]);
        // Each argument once, at its last place: a library one unit needs early (`-lm`) may also
        // be needed by a static library linked after it.
        let mut link_args: Vec<String> = Vec::new();
        for arg in program.link_args.iter().chain(std::iter::once(&"-lm".to_string())).rev() {
            if !link_args.contains(arg) {
                link_args.push(arg.clone());
            }
        }
        args.extend(link_args.into_iter().rev());
        let command = self.command_line(&args);
        let child = self.spawn(&args)?;
        let stderr = self.finish(child, "link", &command)?;
        append_diagnostics(&mut diagnostics, "link", &stderr);
        commands.push(command);
        Ok(Build {
            _temporary: temporary,
            dir,
            binary,
            diagnostics,
            commands,
            features: options.features.clone(),
            openmp: options.openmp,
            runner: self.runner.clone(),
        })
    }

    fn spawn(&self, args: &[String]) -> Result<Child, CodegenError> {
        let (program, leading) = self
            .command
            .split_first()
            .expect("a Compiler's command is never empty (checked in from_command)");
        Command::new(program)
            .args(leading)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CodegenError::io(format!("starting {}", self.command()), e))
    }

    /// Waits for a compiler process; its standard error on success.
    fn finish(&self, child: Child, unit: &str, command: &str) -> Result<String, CodegenError> {
        let output = child
            .wait_with_output()
            .map_err(|e| CodegenError::io(format!("waiting for {}", self.command()), e))?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() {
            Ok(stderr)
        } else {
            Err(CodegenError::CompileFailed {
                compiler: self.command(),
                unit: unit.to_string(),
                command: command.to_string(),
                stderr,
            })
        }
    }

    fn command_line(&self, args: &[String]) -> String {
        let mut words = self.command.clone();
        words.extend(args.iter().cloned());
        words.join(" ")
    }
}

impl fmt::Display for Compiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.command(), self.version)?;
        if self.runner.is_emulated() {
            write!(f, " (run {})", self.runner)?;
        }
        Ok(())
    }
}

/// [`CodegenError::NoCrossTools`] for `architecture` on this host, with the apt command.
fn no_cross_tools(architecture: Architecture, missing: String) -> CodegenError {
    CodegenError::NoCrossTools {
        architecture,
        host: Architecture::host().map_or_else(|| std::env::consts::ARCH.to_string(), |a| a.to_string()),
        missing,
        install: format!("sudo apt-get install {AARCH64_CROSS_PACKAGES}"),
    }
}

fn check_units(units: &[SourceUnit]) -> Result<(), CodegenError> {
    if units.is_empty() {
        return Err(CodegenError::InvalidProgram { reason: "a program needs at least one unit".into() });
    }
    for (index, unit) in units.iter().enumerate() {
        let valid = !unit.name.is_empty()
            && unit.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && unit.name != "program";
        if !valid {
            return Err(CodegenError::InvalidProgram {
                reason: format!("unit name `{}` must be [A-Za-z0-9_]+ and not `program`", unit.name),
            });
        }
        if units[..index].iter().any(|u| u.name == unit.name) {
            return Err(CodegenError::InvalidProgram {
                reason: format!("two units are named `{}`", unit.name),
            });
        }
    }
    Ok(())
}

fn append_diagnostics(all: &mut String, unit: &str, stderr: &str) {
    if !stderr.trim().is_empty() {
        all.push_str(&format!("[{unit}]\n{stderr}"));
        if !stderr.ends_with('\n') {
            all.push('\n');
        }
    }
}

/// The line of a compiler's message that says why: a missing library (`cannot find -lomp`), else
/// the first that says `error`, else the first; trimmed.
fn first_error_line(stderr: &str) -> String {
    let lines = || stderr.lines();
    let line = lines()
        .find(|l| l.contains("cannot find"))
        .or_else(|| lines().find(|l| l.contains("error")))
        .or_else(|| lines().next())
        .unwrap_or_default();
    line.trim().to_string()
}

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{compiler, gcc_and_clang, one_unit, strict};

    #[test]
    fn a_missing_compiler_is_a_typed_error() {
        match Compiler::from_command("/nonexistent/cc") {
            Err(CodegenError::NoCompiler { tried }) => assert_eq!(tried, ["/nonexistent/cc"]),
            other => panic!("expected NoCompiler, got {other:?}"),
        }
        assert!(Compiler::from_command("  ").is_err());
    }

    #[test]
    fn compilers_report_their_family_and_version() {
        for compiler in gcc_and_clang() {
            let expected =
                if compiler.command() == "clang" { CompilerFamily::Clang } else { CompilerFamily::Gcc };
            assert_eq!(compiler.family(), expected);
            assert!(!compiler.version().is_empty());
        }
    }

    #[test]
    fn a_compile_error_carries_the_compiler_message() {
        let Some(compiler) = compiler() else { return };
        let source = "int main(void) {\n  return undefined_variable_xyz;\n}\n".to_string();
        match compiler.build(&one_unit(source), &CompileOptions::default()) {
            Err(CodegenError::CompileFailed { unit, stderr, command, .. }) => {
                assert_eq!(unit, "main");
                assert!(stderr.contains("undefined_variable_xyz"), "{stderr}");
                assert!(command.contains("-O3 -std=gnu11 -Wall -Wextra"), "{command}");
            }
            other => panic!("expected CompileFailed, got {other:?}"),
        }
    }

    #[test]
    fn warnings_are_captured_or_denied() {
        let Some(compiler) = compiler() else { return };
        let source = "int main(void) {\n  int unused_thing = 3;\n  return 0;\n}\n".to_string();
        let build =
            compiler.build(&one_unit(source.clone()), &CompileOptions::default()).expect("only a warning");
        assert!(build.diagnostics().contains("unused_thing"), "{}", build.diagnostics());
        assert!(build.binary().exists());
        let denied = compiler.build(&one_unit(source), &strict());
        assert!(matches!(denied, Err(CodegenError::CompileFailed { .. })), "{denied:?}");
    }

    #[test]
    fn a_link_error_is_reported_as_the_link_step() {
        let Some(compiler) = compiler() else { return };
        let source =
            "void missing_function_xyz(void);\nint main(void) {\n  missing_function_xyz();\n  return 0;\n}\n";
        match compiler.build(&one_unit(source.into()), &strict()) {
            Err(CodegenError::CompileFailed { unit, stderr, .. }) => {
                assert_eq!(unit, "link");
                assert!(stderr.contains("missing_function_xyz"), "{stderr}");
            }
            other => panic!("expected a link failure, got {other:?}"),
        }
    }

    #[test]
    fn target_and_openmp_flags_reach_every_unit_and_the_link() {
        let Some(compiler) = compiler() else { return };
        let options = CompileOptions {
            features: vec![IsaFeature::Fma, IsaFeature::Avx2],
            openmp: OpenMp::Enabled,
            warnings: Warnings::Deny,
        };
        let main = "#include <omp.h>\nint twice(int x);\nint main(void) {\n  int sum = 0;\n\
                    #pragma omp parallel for reduction(+ : sum)\n  for (int i = 0; i < 8; i++) sum += twice(i);\n\
                    return sum == 56 && omp_get_max_threads() >= 1 ? 0 : 1;\n}\n";
        let other = "#ifndef __AVX2__\n#error no avx2\n#endif\nint twice(int x) { return 2 * x; }\n";
        let program = CProgram {
            units: vec![SourceUnit::new("main", main), SourceUnit::new("other", other)],
            link_args: vec![],
        };
        if let Err(e) = compiler.openmp() {
            println!("skipped: {e}");
            return;
        }
        let build = match compiler.build(&program, &options) {
            Ok(build) => build,
            Err(CodegenError::CompileFailed { stderr, .. }) if stderr.contains("omp.h") => {
                println!("skipped: OpenMP headers are not installed for {compiler}");
                return;
            }
            Err(other) => panic!("{other}"),
        };
        assert_eq!(build.openmp(), OpenMp::Enabled);
        assert_eq!(build.commands().len(), 3);
        assert!(build.commands().iter().all(|c| c.contains("-fopenmp")));
        assert!(build.commands()[1].contains("-mavx2 -mfma"));
        assert_eq!(build.features(), [IsaFeature::Fma, IsaFeature::Avx2]);
        if crate::host::require_features(build.features()).is_ok() {
            crate::run::run_program(build.binary(), &[], &[]).expect("runs");
        }
    }

    /// A compiler that compiles `-fopenmp` units but cannot link them, as Debian's clang without
    /// `libomp-dev`: gcc behind a script that fails every link with `-fopenmp`.
    fn compiler_without_openmp_runtime(dir: &Path) -> Option<Compiler> {
        use std::os::unix::fs::PermissionsExt;
        let gcc = Compiler::from_command("gcc").ok().filter(|gcc| gcc.openmp().is_ok());
        if gcc.is_none() {
            println!("skipped: needs gcc with OpenMP to stand in for a compiler without it");
            return None;
        }
        let script = dir.join("cc-without-omp");
        fs::write(
            &script,
            "#!/bin/sh\ncase \" $* \" in *' -c '*) ;; *' -fopenmp '*) \
             echo '/usr/bin/ld: cannot find -lomp: No such file or directory' >&2; exit 1 ;; esac\n\
             exec gcc \"$@\"\n",
        )
        .expect("the script is written");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("the script is executable");
        Some(Compiler::from_command(&path_arg(&script)).expect("the script answers --version"))
    }

    #[test]
    fn a_compiler_without_openmp_builds_parallel_loops_serially() {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some(compiler) = compiler_without_openmp_runtime(dir.path()) else { return };
        let unavailable = compiler.openmp().expect_err("the probe fails to link");
        assert!(unavailable.reason.contains("cannot find -lomp"), "{unavailable}");
        let source = "int main(void) {\n  int out[64];\n#pragma omp parallel for schedule(static)\n\
                      for (int i = 0; i < 64; i++) out[i] = 2 * i;\n  int sum = 0;\n\
                      for (int i = 0; i < 64; i++) sum += out[i];\n  return sum == 4032 ? 0 : 1;\n}\n";
        let options = CompileOptions { openmp: OpenMp::Enabled, ..strict() };
        let build =
            compiler.build(&one_unit(source.into()), &options).expect("builds serially, warning-free");
        assert_eq!(build.openmp(), OpenMp::Disabled);
        assert!(build.commands().iter().all(|c| !c.contains("-fopenmp")), "{:?}", build.commands());
        crate::run::run_program(build.binary(), &[], &[]).expect("computes the same result on one thread");
    }

    #[test]
    fn bad_programs_are_refused() {
        let Some(compiler) = compiler() else { return };
        let empty = CProgram::default();
        assert!(matches!(compiler.build(&empty, &strict()), Err(CodegenError::InvalidProgram { .. })));
        let twice = CProgram {
            units: vec![SourceUnit::new("a", "int x;"), SourceUnit::new("a", "int y;")],
            link_args: vec![],
        };
        assert!(matches!(compiler.build(&twice, &strict()), Err(CodegenError::InvalidProgram { .. })));
    }

    #[test]
    fn a_kept_build_directory_stays() {
        let Some(compiler) = compiler() else { return };
        let parent = tempfile::tempdir().expect("temp dir");
        let dir = parent.path().join("kept");
        let source = "int main(void) { return 0; }\n".to_string();
        let build =
            compiler.build_in(&one_unit(source), &strict(), &BuildDir::Keep(dir.clone())).expect("compiles");
        drop(build);
        assert!(dir.join("main.c").exists() && dir.join("program").exists());
    }

    #[test]
    fn a_shared_library_is_position_independent_and_has_no_main() {
        let Some(compiler) = compiler() else { return };
        let source = "void twice(float *x) { x[0] *= 2.0f; }\n".to_string();
        let program = CProgram { units: vec![SourceUnit::new("kernel", source)], link_args: vec![] };
        let build = compiler.build_shared_library(&program, &strict(), &BuildDir::Temporary).expect("links");
        assert!(build.binary().ends_with("libkernel.so"), "{}", build.binary().display());
        let bytes = fs::read(build.binary()).expect("reads the library");
        // ELF type 3 (ET_DYN) at offset 16: a shared object.
        assert_eq!((&bytes[..4], bytes[16]), (&b"\x7fELF"[..], 3));
        assert!(build.commands().iter().any(|c| c.contains("-fPIC")), "{:?}", build.commands());
        assert!(build.commands().last().is_some_and(|c| c.contains("-shared")), "{:?}", build.commands());
    }
}
