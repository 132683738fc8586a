//! The arguments that name a spec and a target, shared by `search`, `run` and `bench`.
//!
//! A spec is either its full text (`'Matmul(1x64x64x64, f32 GL row-major, ...)'`) or a shorthand:
//!
//! ```text
//! matmul MxKxN [--batch B] [--accum]        lhs MxK, rhs KxN, out MxN, all row-major in the home level
//! move SHAPE --from LAYOUT --to LAYOUT       a copy that changes the layout
//! zero SHAPE                                 fill with zeros
//! conv NxCxHxW FxCxFHxFW [--accum]           NCHW image, FCHW filters, valid padding
//! ```
//!
//! The target is `x86` (the best the host supports), `x86-avx2`, `x86-avx512`, or a TOML/JSON file.

use anyhow::{Context, Result};
use morello_core::dtype::Dtype;
use morello_core::layout::Layout;
use morello_core::shape::Shape;
use morello_core::spec::{CanonicalSpec, FillValue, LogicalSpec, PrimitiveKind, TensorSpec, parse_limits};
use morello_core::target::{MemVec, Target, resolve_target};

use crate::failure::{Failure, bad_input};

/// Help text listing the spec forms, shown after a command's options.
pub const SPEC_FORMS: &str = "\
Specs:
  matmul MxKxN [--batch B] [--accum]     lhs MxK times rhs KxN into out MxN, row-major
  move SHAPE --from LAYOUT --to LAYOUT   a copy that changes the layout (row-major, col-major, [1, 0, 1 p(4)], ...)
  zero SHAPE                             fill with zeros
  conv NxCxHxW FxCxFHxFW [--accum]       NCHW image, FCHW filters, valid padding
  'Matmul(1x64x64x64, f32 GL row-major, f32 GL row-major, f32 GL row-major)'   the full spec text

Targets: x86 (the best of the two below that this CPU runs), x86-avx2, x86-avx512, or a target file
(TOML or JSON; see docs/targets.md).";

/// Arguments naming a spec and a target.
#[derive(Debug, Clone, clap::Args)]
pub struct SpecArgs {
    /// The spec: a shorthand (`matmul 64x64x64`, `move 8x8 --from row-major --to col-major`,
    /// `zero 8x8`, `conv 1x4x8x8 8x4x3x3`) or the full spec text.
    #[arg(required = true, num_args = 1.., value_name = "SPEC")]
    pub spec: Vec<String>,
    /// Target: x86, x86-avx2, x86-avx512, or a TOML/JSON target file.
    #[arg(long, default_value = "x86", value_name = "TARGET")]
    pub target: String,
    /// Element type of the operands (bf16 matmuls accumulate into f32).
    #[arg(long, default_value = "f32", value_name = "DTYPE")]
    pub dtype: String,
    /// Batch size of a matmul.
    #[arg(long, default_value_t = 1, value_name = "B")]
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
    /// Memory limits per level, e.g. `L1=16KiB,VRF=8` (registers for VRF and RF, bytes otherwise);
    /// levels not named keep the target's capacity.
    #[arg(long, value_name = "LEVEL=SIZE,...")]
    pub memory: Option<String>,
    /// Processors the cost model gives parallel loops (default: the target's; for the built-in
    /// x86 targets, this machine's cores). `--processors 1` finds the best single-thread kernel.
    #[arg(long, value_name = "N")]
    pub processors: Option<u32>,
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
fn with_processors(target: Target, processors: u32) -> Result<Target> {
    if processors == 0 {
        return Err(bad_input("--processors must be at least 1"));
    }
    if processors == target.processors() {
        return Ok(target);
    }
    let mut description = target.description_value();
    description.processors = processors;
    Target::new(description).bad_input(|| format!("--processors {processors}"))
}

/// Loads a built-in target or a target file.
pub fn load_target(name: &str) -> Result<(Target, Option<String>)> {
    if matches!(name, "x86" | "x86-avx2" | "x86-avx512") {
        let resolved = resolve_target(name).bad_input(|| format!("target `{name}`"))?;
        return Ok((resolved.target, resolved.note));
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(bad_input(format!(
            "unknown target `{name}`: use x86, x86-avx2, x86-avx512 or the path of a target file"
        )));
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read target file {name}"))?;
    let is_json = path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
    let target = if is_json { Target::from_json(&text) } else { Target::from_toml(&text) }
        .bad_input(|| format!("target file {name}"))?;
    Ok((target, None))
}

fn shape(text: &str, what: &str) -> Result<Shape> {
    text.parse::<Shape>().bad_input(|| format!("invalid {what} `{text}`"))
}

fn operand(shape: Shape, dtype: Dtype, layout: Layout, target: &Target) -> TensorSpec {
    TensorSpec {
        contiguous_dims: layout.len() as u8,
        shape,
        dtype,
        level: target.home_level(),
        layout,
        vector_size: None,
    }
}

fn build_spec(args: &SpecArgs, target: &Target) -> Result<CanonicalSpec> {
    let words: Vec<&str> = args.spec.iter().map(String::as_str).collect();
    let joined = words.join(" ");
    let dtype: Dtype = args.dtype.parse().bad_input(|| "invalid --dtype".to_string())?;
    let out_dtype = if dtype == Dtype::Bf16 { Dtype::F32 } else { dtype };
    let row = |rank: usize| Layout::row_major(rank as u8);
    let no_extra = |n: usize| -> Result<()> {
        if words.len() > n {
            return Err(bad_input(format!("unexpected `{}` after the spec", words[n..].join(" "))));
        }
        Ok(())
    };
    let logical = match words[0].to_ascii_lowercase().as_str() {
        "matmul" => {
            let dims_text = words
                .get(1)
                .ok_or_else(|| bad_input("matmul needs its size, e.g. `matmul 64x64x64` (MxKxN)"))?;
            no_extra(2)?;
            let dims = shape(dims_text, "matmul size")?;
            let [m, k, n] = dims.dims() else {
                return Err(bad_input(format!("matmul size `{dims_text}` must be MxKxN, e.g. 64x64x64")));
            };
            let b = args.batch;
            let s = |d: &[u32]| Shape::new(d.to_vec()).bad_input(|| format!("matmul {b}x{dims_text}"));
            LogicalSpec {
                kind: PrimitiveKind::Matmul { accum: args.accum },
                shape: s(&[b, *m, *k, *n])?,
                operands: vec![
                    operand(s(&[b, *m, *k])?, dtype, row(3), target),
                    operand(s(&[b, *k, *n])?, dtype, row(3), target),
                    operand(s(&[b, *m, *n])?, out_dtype, row(3), target),
                ],
                serial_only: false,
            }
        }
        "move" => {
            let shape_text = words.get(1).ok_or_else(|| {
                bad_input("move needs a shape, e.g. `move 8x8 --from row-major --to col-major`")
            })?;
            no_extra(2)?;
            let s = shape(shape_text, "move shape")?;
            let layout = |text: &Option<String>, flag: &str| -> Result<Layout> {
                let text = text.as_deref().unwrap_or("row-major");
                Layout::parse_for_rank(text, s.rank()).bad_input(|| format!("invalid {flag} layout `{text}`"))
            };
            let (from, to) = (layout(&args.from, "--from")?, layout(&args.to, "--to")?);
            LogicalSpec {
                kind: PrimitiveKind::Move,
                shape: s.clone(),
                operands: vec![operand(s.clone(), dtype, from, target), operand(s, dtype, to, target)],
                serial_only: false,
            }
        }
        "zero" => {
            let shape_text =
                words.get(1).ok_or_else(|| bad_input("zero needs a shape, e.g. `zero 64x64`"))?;
            no_extra(2)?;
            let s = shape(shape_text, "shape")?;
            LogicalSpec {
                kind: PrimitiveKind::Fill { value: FillValue::Zero },
                shape: s.clone(),
                operands: vec![operand(s.clone(), dtype, row(s.rank()), target)],
                serial_only: false,
            }
        }
        "conv" => {
            let (Some(image), Some(filters)) = (words.get(1), words.get(2)) else {
                return Err(bad_input(
                    "conv needs an image and filters, e.g. `conv 1x4x8x8 8x4x3x3` (NxCxHxW FxCxFHxFW)",
                ));
            };
            no_extra(3)?;
            let (image, filters) = (shape(image, "conv image")?, shape(filters, "conv filters")?);
            let ([n, c, h, w], [f, fc, fh, fw]) = (image.dims(), filters.dims()) else {
                return Err(bad_input("conv image and filters must both have four dims: NxCxHxW FxCxFHxFW"));
            };
            if c != fc || fh > h || fw > w {
                return Err(bad_input(format!(
                    "conv filters {filters} do not fit image {image}: channels must agree and filters be no larger"
                )));
            }
            let (oh, ow) = (h - fh + 1, w - fw + 1);
            let s = |d: &[u32]| Shape::new(d.to_vec()).bad_input(|| "conv shape".to_string());
            LogicalSpec {
                kind: PrimitiveKind::Conv { accum: args.accum },
                shape: s(&[*n, *f, *c, oh, ow, *fh, *fw])?,
                operands: vec![
                    operand(image.clone(), dtype, row(4), target),
                    operand(filters.clone(), dtype, row(4), target),
                    operand(s(&[*n, *f, oh, ow])?, out_dtype, row(4), target),
                ],
                serial_only: false,
            }
        }
        _ if joined.contains('(') => {
            LogicalSpec::parse(&joined, target).bad_input(|| "invalid spec".to_string())?
        }
        other => {
            return Err(bad_input(format!(
                "unknown spec `{other}`: use matmul, move, zero, conv, or the full spec text (see --help)"
            )));
        }
    };
    logical.canonicalize(target).bad_input(|| format!("invalid spec {}", logical.display(target)))
}
