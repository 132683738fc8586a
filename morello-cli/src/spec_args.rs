//! The arguments that name a spec and a target, shared by `search`, `run` and `bench`.
//!
//! A spec is either its full text (`'Matmul(1x64x64x64, f32 GL row-major, ...)'`) or a shorthand,
//! which [`SpecBuilder`] (in `morello-core`) turns into the spec; the flags here set what the
//! shorthand leaves open:
//!
//! ```text
//! matmul MxKxN [--batch B] [--accum]        lhs MxK, rhs KxN, out MxN, all row-major in the home level
//! move SHAPE --from LAYOUT --to LAYOUT       a copy that changes the layout
//! zero SHAPE                                 fill with zeros
//! softmax MxN                                softmax along the rows
//! conv IMAGE FILTERS [--layout nchw|nhwc] [--filter-layout oihw|hwio|ohwi|vnni]
//!      [--stride N|HxW] [--pad N|T,B,L,R|valid|same] [--dilation N|HxW] [--accum]
//!                                            a 2-D convolution, shapes in the layouts' order
//! ```
//!
//! The target is `x86` (the best the host supports), `x86-avx2`, `x86-avx512`, `arm-neon`, or a
//! TOML/JSON file; [`DEFAULT_TARGET`] when none is named.

use anyhow::Result;
use morello_codegen::Compiler;
use morello_codegen::host::host_caches;
use morello_core::dtype::OperandDtypes;
use morello_core::spec::{
    CanonicalSpec, ConvLayout, ConvOptions, FilterLayout, Padding, SpecBuilder, parse_epilogue, parse_limits,
    parse_pair, parse_requant,
};
use morello_core::target::{Architecture, MemVec, Target, resolve_target_on_host};

use crate::failure::{Failure, bad_input};
use crate::input::TextKind;

/// Help text listing the spec forms, shown after a command's options.
pub const SPEC_FORMS: &str = "\
Specs:
  matmul MxKxN [--batch B] [--accum]     lhs MxK times rhs KxN into out MxN, row-major
  matmul MxKxN --epilogue bias,relu      ... then out = act(out + bias[column]): bias, bias,relu, bias,gelu
  matmul MxKxN --dtype u8s8s32           u8 lhs, i8 rhs, exact i32 out (s8s8s32: i8 lhs); K at most 65793 (131071)
  matmul MxKxN --dtype u8s8s32 --epilogue requant   ... out u8 = saturate(round(acc * scale[column]) + zero_point[column]) (requant-i8: i8 out)
  matmul MxKxN --dtype u8s8s32 --epilogue bias,relu,requant   ... acc + bias[column] (i32; K at most 32896), ReLU after the scale
  matmul MxKxN --rhs-layout vnni         rhs packed [K/4][N][4] (what the AVX-512 VNNI kernel reads)
  move SHAPE --from LAYOUT --to LAYOUT   a copy that changes the layout (row-major, col-major, [1, 0, 1 p(4)], ...)
  zero SHAPE                             fill with zeros
  softmax MxN                            softmax along each row of an MxN f32 tensor (max, exp, sum, divide)
  conv IMAGE FILTERS [--layout L] [--filter-layout F] [--stride S] [--pad P] [--dilation D] [--accum]
                                         2-D convolution, the shapes in the order of the layouts:
                                         NxCxHxW FxCxFHxFW (nchw, oihw: the default),
                                         NxHxWxC FHxFWxCxF (--layout nhwc, hwio by default) or
                                         FxFHxFWxC (--filter-layout ohwi), FHxFWxCxF packed
                                         [FH][FW][C/4][F][4] (--filter-layout vnni); --stride 2 or 2x1,
                                         --pad 1, 0,1,0,1 (top,bottom,left,right), valid or same,
                                         --dilation 2. E.g. conv 1x56x56x64 3x3x64x64 --layout nhwc --pad same
  'Matmul(1x64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)'   the full spec text

Targets: x86 (the best of the three below that this CPU runs), x86-avx2, x86-avx2-vnni (AVX2 with
AVX-VNNI), x86-avx512, arm-neon (AArch64,
a Neoverse-N1-like core; on another host its kernels are cross-compiled and run under qemu-aarch64),
or a target file (TOML or JSON; see docs/targets.md). The default is x86, or arm-neon on an AArch64 host.";

/// The target of commands that name none: `arm-neon` on an AArch64 host, `x86` elsewhere.
pub const DEFAULT_TARGET: &str = if cfg!(target_arch = "aarch64") { "arm-neon" } else { "x86" };

/// Arguments naming a spec and a target.
#[derive(Debug, Clone, clap::Args)]
pub struct SpecArgs {
    /// The spec: a shorthand (`matmul 64x64x64`, `move 8x8 --from row-major --to col-major`,
    /// `zero 8x8`, `conv 1x4x8x8 8x4x3x3`) or the full spec text.
    #[arg(required = true, num_args = 1.., value_name = "SPEC")]
    pub spec: Vec<String>,
    /// Target: x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon, or a TOML/JSON target file.
    #[arg(long, default_value = DEFAULT_TARGET, value_name = "TARGET")]
    pub target: String,
    /// Element type of the operands (bf16 matmuls accumulate into f32), or a matmul's or
    /// convolution's quantized dtypes: u8s8s32 (u8 lhs, i8 rhs, i32 output) or s8s8s32.
    #[arg(long, default_value = "f32", value_name = "DTYPE")]
    pub dtype: String,
    /// Batch size of a matmul.
    #[arg(long, default_value_t = 1, value_name = "B", value_parser = crate::numbers::parse_count_u32)]
    pub batch: u32,
    /// Accumulate into the output instead of overwriting it (matmul, conv).
    #[arg(long)]
    pub accum: bool,
    /// Source layout of a move.
    #[arg(long, value_name = "LAYOUT")]
    pub from: Option<String>,
    /// Destination layout of a move.
    #[arg(long, value_name = "LAYOUT")]
    pub to: Option<String>,
    /// Layout of a matmul's rhs [b, k, n]: row-major (default), a layout such as `[0, 2, 1]`, or
    /// vnni (`[0, 1, 2, 1 p(4)]`: four values of k side by side in each column, weights packed
    /// for the int8 kernels).
    #[arg(long, value_name = "LAYOUT")]
    pub rhs_layout: Option<String>,
    /// A matmul's epilogue: bias, bias,relu or bias,gelu (the tanh form), applied to the output
    /// (fused into the output's register blocks when the search finds that cheaper); or, for an
    /// int8 matmul (u8s8s32, s8s8s32), requant (a u8 output) or requant-i8 (an i8 output): the i32
    /// sums times a per-column f32 scale, rounded half to even, plus a per-column zero point,
    /// saturated; bias,requant and bias,relu,requant (and their -i8 forms) add a per-column i32
    /// bias to the sums first, and the second applies ReLU after the scale.
    #[arg(long, value_name = "bias[,relu|gelu]|[bias[,relu],]requant[-i8]")]
    pub epilogue: Option<String>,
    /// Convolution image and output layout: nchw (default) or nhwc.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// Convolution filter layout: oihw (default with nchw), hwio (default with nhwc) or ohwi.
    #[arg(long, value_name = "LAYOUT")]
    pub filter_layout: Option<String>,
    /// Convolution stride: N or HxW (default 1).
    #[arg(long, value_name = "N|HxW")]
    pub stride: Option<String>,
    /// Convolution zero padding: N, TOP,BOTTOM,LEFT,RIGHT, valid (default) or same.
    #[arg(long, value_name = "N|T,B,L,R|valid|same")]
    pub pad: Option<String>,
    /// Convolution dilation: N or HxW (default 1).
    #[arg(long, value_name = "N|HxW")]
    pub dilation: Option<String>,
    /// Memory limits per level, e.g. `L1=16KiB,VRF=8` (registers for VRF and RF, bytes otherwise);
    /// levels not named keep the target's capacity.
    #[arg(long, value_name = "LEVEL=SIZE,...")]
    pub memory: Option<String>,
    /// Processors the cost model gives parallel loops (default: the target's; for the built-in
    /// x86 targets, this machine's cores). `--processors 1` finds the best single-thread kernel.
    #[arg(long, value_name = "N", value_parser = crate::numbers::parse_count_u32)]
    pub processors: Option<u32>,
}

impl SpecArgs {
    /// The arguments a command line of words would give (`conv 1x8x8x4 3x3x4x8 --layout nhwc
    /// --pad same`), for a target and dtype: the spec words and the spec flags (`--accum`,
    /// `--epilogue`, `--from`, `--to`, `--rhs-layout`, `--layout`, `--filter-layout`, `--stride`, `--pad`,
    /// `--dilation`).
    ///
    /// # Errors
    /// A flag that is not one of those, or one without its value.
    pub fn from_words(words: &str, target: &str, dtype: &str) -> Result<SpecArgs, String> {
        let mut args = SpecArgs {
            spec: Vec::new(),
            target: target.to_string(),
            dtype: dtype.to_string(),
            batch: 1,
            accum: false,
            from: None,
            to: None,
            rhs_layout: None,
            epilogue: None,
            layout: None,
            filter_layout: None,
            stride: None,
            pad: None,
            dilation: None,
            memory: None,
            processors: None,
        };
        let mut words = words.split_whitespace();
        while let Some(word) = words.next() {
            let slot = match word {
                "--accum" => {
                    args.accum = true;
                    continue;
                }
                "--from" => &mut args.from,
                "--to" => &mut args.to,
                "--rhs-layout" => &mut args.rhs_layout,
                "--epilogue" => &mut args.epilogue,
                "--layout" => &mut args.layout,
                "--filter-layout" => &mut args.filter_layout,
                "--stride" => &mut args.stride,
                "--pad" => &mut args.pad,
                "--dilation" => &mut args.dilation,
                flag if flag.starts_with("--") => return Err(format!("`{flag}` is not a spec flag")),
                w => {
                    args.spec.push(w.to_string());
                    continue;
                }
            };
            *slot = Some(words.next().ok_or_else(|| format!("`{word}` needs a value"))?.to_string());
        }
        Ok(args)
    }
}

/// A resolved spec, target and limits.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The target.
    pub target: Target,
    /// What `x86` resolved to, for the user.
    pub note: Option<String>,
    /// The canonical spec.
    pub spec: CanonicalSpec,
    /// Memory limits.
    pub limits: MemVec,
}

/// Resolves the target, the spec and the limits.
pub fn resolve(args: &SpecArgs) -> Result<Resolved> {
    let (mut target, note) = load_target(&args.target)?;
    if let Some(processors) = args.processors {
        target = with_processors(target, processors)?;
    }
    let spec = build_spec(args, &target)?;
    let limits = match &args.memory {
        Some(text) => parse_limits(text, &target).bad_input(|| format!("invalid --memory `{text}`"))?,
        None => target.capacities(),
    };
    Ok(Resolved { target, note, spec, limits })
}

/// `target` with `processors` processors (a different target: its own fingerprint and memo table).
pub fn with_processors(target: Target, processors: u32) -> Result<Target> {
    if processors == 0 {
        return Err(bad_input("--processors must be at least 1"));
    }
    target.with_processors(processors).bad_input(|| format!("--processors {processors}"))
}

/// The compiler that builds `command`'s timing programs for `target` on this host, refused (bad
/// input) when the target's code would run emulated: an emulator's time says nothing of the
/// machine the target describes.
pub fn timing_compiler(target: &Target, command: &str) -> Result<Compiler> {
    if let Some(architecture) = target.architecture().filter(|a| Some(*a) != Architecture::host()) {
        return Err(bad_input(format!(
            "`morello {command}` times kernels on this machine, but target {} is {architecture} code, which              runs only under emulation on this {} host, and emulated time means nothing; time it on an              {architecture} host, or verify its kernels here with `morello run --target {}`",
            target.name(),
            std::env::consts::ARCH,
            target.name()
        )));
    }
    Ok(Compiler::for_target(target)?)
}

/// Loads a built-in target or a target file.
pub fn load_target(name: &str) -> Result<(Target, Option<String>)> {
    if matches!(name, "x86" | "x86-avx2" | "x86-avx2-vnni" | "x86-avx512" | "arm-neon") {
        let resolved =
            resolve_target_on_host(name, &host_caches()).bad_input(|| format!("target `{name}`"))?;
        return Ok((resolved.target, resolved.note));
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(bad_input(format!(
            "unknown target `{name}`: use x86, x86-avx2, x86-avx2-vnni, x86-avx512, arm-neon or the path of a target file"
        )));
    }
    let text = crate::input::read_text(path, TextKind::TargetFile, false)?;
    let is_json = path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
    let target = if is_json { Target::from_json(&text) } else { Target::from_toml(&text) }
        .bad_input(|| format!("target file {name}"))?;
    Ok((target, None))
}

/// The convolution flags (they apply only to `conv`, and are refused with another spec).
fn conv_options(args: &SpecArgs) -> Result<ConvOptions> {
    let given = [&args.layout, &args.filter_layout, &args.stride, &args.pad, &args.dilation];
    if given.iter().any(|o| o.is_some()) && !matches!(args.spec.first().map(String::as_str), Some("conv")) {
        return Err(bad_input(
            "--layout, --filter-layout, --stride, --pad and --dilation apply only to conv".to_string(),
        ));
    }
    let bad = |e: morello_core::spec::ShorthandError| bad_input(e.to_string());
    let mut options = ConvOptions::default();
    if let Some(text) = &args.layout {
        options.layout = text.parse::<ConvLayout>().map_err(bad)?;
    }
    if let Some(text) = &args.filter_layout {
        options.filter_layout = Some(text.parse::<FilterLayout>().map_err(bad)?);
    }
    if let Some(text) = &args.stride {
        options.stride = parse_pair(text, "stride").map_err(bad)?;
    }
    if let Some(text) = &args.dilation {
        options.dilation = parse_pair(text, "dilation").map_err(bad)?;
    }
    if let Some(text) = &args.pad {
        options.padding = text.parse::<Padding>().map_err(bad)?;
    }
    Ok(options)
}

/// The spec the arguments name, built for `target` (see [`SpecBuilder`]).
fn build_spec(args: &SpecArgs, target: &Target) -> Result<CanonicalSpec> {
    let dtypes: OperandDtypes = args.dtype.parse().bad_input(|| "invalid --dtype".to_string())?;
    let mut builder = SpecBuilder::parse(&args.spec.join(" "))
        .map_err(|e| bad_input(e.to_string()))?
        .dtypes(dtypes)
        .batch(args.batch);
    if args.accum {
        builder = builder.accumulate();
    }
    if let Some(from) = &args.from {
        builder = builder.from_layout(from.clone());
    }
    if let Some(to) = &args.to {
        builder = builder.to_layout(to.clone());
    }
    if let Some(layout) = &args.rhs_layout {
        if !matches!(args.spec.first().map(String::as_str), Some("matmul")) {
            return Err(bad_input("--rhs-layout applies only to matmul".to_string()));
        }
        builder = builder.rhs_layout(layout.clone());
    }
    builder = builder.conv(conv_options(args)?);
    if let Some(text) = &args.epilogue {
        if !matches!(args.spec.first().map(String::as_str), Some("matmul")) {
            return Err(bad_input("--epilogue applies only to matmul".to_string()));
        }
        builder = match parse_requant(text) {
            Some(requant) => {
                let (epilogue, out) = requant.map_err(bad_input)?;
                builder.requant(epilogue, out)
            }
            None => builder.epilogue(parse_epilogue(text).map_err(bad_input)?),
        };
    }
    builder.build(target).map_err(|e| bad_input(e.to_string()))
}
