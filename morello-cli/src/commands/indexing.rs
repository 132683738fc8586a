//! `morello indexing FILE.hlo`: the indexing maps of one instruction (or one whole computation)
//! of an HLO module, as text or JSON, optionally with every pair of indices they relate.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use morello_xla::hlo::{ComputationId, HloComputation, HloModule, HloShape, InstrId};
use morello_xla::indexing::{
    Completeness, EnumerationLimits, IndexPair, IndexingError, IndexingMap, OperandMaps, OutputMaps,
    computation_output_to_parameters, computation_parameter_to_outputs, input_to_output, output_to_input,
    physical_input_to_output, physical_output_to_input,
};
use serde_json::json;

use crate::failure::{Failure, bad_input};
use crate::input::TextKind;
use crate::output;

/// Examples shown after `morello indexing --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello indexing module.hlo                          the entry ROOT's maps to its operands
  morello indexing module.hlo --instruction fusion.3   a fusion: composed through its computation
  morello indexing module.hlo --computation fused      a computation's root to its parameters
  morello indexing module.hlo --direction in-to-out --operand 1
  morello indexing module.hlo --json --enumerate       every (source, target) pair, as JSON
  morello indexing module.hlo --physical               between indices in memory order

The file is XLA's HLO module text (`HloModule m`, computations `name { ... }`, one marked ENTRY,
instructions `[ROOT] name = shape opcode(operands), attributes`), or a bare list of
instructions. Opcodes with maps: parameter, constant, iota, every elementwise op (add, ...,
select and clamp with scalar operands, compare, convert, copy, bitcast-convert of one width),
map, broadcast, transpose, reverse, reduce, slice, dynamic-slice, dynamic-update-slice, reshape,
bitcast, concatenate, dot, pad, reduce-window, convolution and gather (out-to-in), fusion,
tuple, get-tuple-element. Every other XLA opcode (scatter, sort, call, custom-call, ...) is read
too; the maps through it are `unknown`.
An operand a fusion never reads has the map `KNOWN EMPTY`.

A map `(d0, d1)[s0] -> (d0, s0), domain: ...` relates a source index d to the target indices
f(d, s) for every value of the symbols s in the domain. Out-to-in maps go from an output of the
instruction to an operand (what one output element reads); in-to-out maps from an operand to an
output (which output elements read one operand element). Reduce and reduce-window inits and the
padding value of a pad are read by every output element. A value read in several ways has one
map per way.

JSON (--json): an array with one object per map:
  {\"from\": ENDPOINT, \"to\": ENDPOINT, \"map\": \"(d0) -> (d0), domain: d0 in [0, 9]\",
   \"pairs\": [[SOURCE, TARGET], ...]}           (\"pairs\" only with --enumerate)
ENDPOINT is {\"kind\", \"index\", \"name\", \"shape\"} and, for an array inside a tuple-shaped
operand or parameter, \"tuple_index\":
  kind \"output\":    index = which output (the tuple element of a tuple result, else 0),
                     name = the instruction (or the computation's root);
  kind \"operand\":   index = the operand's position (for a fusion, also its parameter number),
                     name = the operand's instruction;
  kind \"parameter\": index = the parameter number (with --computation), name = the parameter.
SOURCE and TARGET are indices (arrays of integers; [] for a scalar): SOURCE in `from`, TARGET in
`to`. With --physical, indices and shapes are in memory order: each array's dimensions most
major first, the reverse of its layout's minor_to_major (XLA's use_physical_layout). Pairs are sorted and unique within a map; the union over a (from, to) pair's maps is
everything it relates. --enumerate refuses a map that relates more than 1000000 pairs.";

/// Which way the maps go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Direction {
    /// From an output to the operand elements it reads.
    OutToIn,
    /// From an operand to the output elements that read it.
    InToOut,
}

/// Arguments of `morello indexing`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO module's text file (`-` reads standard input).
    file: PathBuf,
    /// The instruction (default: the entry computation's ROOT). Looked up in --computation if
    /// given, else in the entry computation, else in the one computation that defines it.
    #[arg(long, value_name = "NAME")]
    instruction: Option<String>,
    /// The computation. Without --instruction: the maps of the whole computation, from its
    /// root to its parameters, as a fusion calling it has them.
    #[arg(long, value_name = "NAME")]
    computation: Option<String>,
    /// Out-to-in: from each output to each operand. In-to-out: from each operand to each output.
    #[arg(long, value_enum, default_value = "out-to-in")]
    direction: Direction,
    /// Only the maps to (out-to-in) or from (in-to-out) this operand or parameter: a position
    /// or a name. Default: every one.
    #[arg(long, value_name = "N|NAME")]
    operand: Option<String>,
    /// Print a JSON array with one object per map instead of text (format below).
    #[arg(long)]
    json: bool,
    /// Also list every (source index, target index) pair each map relates.
    #[arg(long)]
    enumerate: bool,
    /// Maps between indices in memory order (each array's dimensions most major first, as its
    /// layout stores them) instead of logical indices, as XLA's use_physical_layout. Needs one
    /// instruction (not --computation alone).
    #[arg(long)]
    physical: bool,
}

/// The most pairs `--enumerate` lists for one map.
const MAX_PAIRS: usize = 1_000_000;

/// What the maps are of.
#[derive(Debug, Clone, Copy)]
enum Subject {
    /// One instruction: its outputs and operands.
    Instruction(ComputationId, InstrId),
    /// A whole computation: its root's outputs and its parameters.
    Computation(ComputationId),
}

/// One end of a map.
#[derive(Debug, Clone)]
struct Endpoint {
    kind: &'static str,
    index: usize,
    name: String,
    shape: Vec<i64>,
    tuple_index: Option<usize>,
}

impl Endpoint {
    /// The endpoint's JSON object, keys in a fixed, readable order.
    fn json(&self) -> String {
        let tuple = self.tuple_index.map(|t| format!(", \"tuple_index\": {t}")).unwrap_or_default();
        format!(
            "{{\"kind\": {}, \"index\": {}, \"name\": {}, \"shape\": {}{tuple}}}",
            json!(self.kind),
            self.index,
            json!(self.name),
            json!(self.shape)
        )
    }

    fn text(&self) -> String {
        let tuple = self.tuple_index.map(|t| format!(" element {t}")).unwrap_or_default();
        format!("{} {} `{}`{tuple} [{}]", self.kind, self.index, self.name, join(&self.shape))
    }
}

/// What is known of one (from, to) pair of ends.
enum Relation {
    /// One map of the pair.
    Map(IndexingMap),
    /// Nothing is related: XLA's `KNOWN EMPTY` (a fusion operand that is never read).
    KnownEmpty,
    /// An op on the way has no map: what is related is unknown.
    Unknown,
}

impl std::fmt::Display for Relation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Relation::Map(map) if f.alternate() => write!(f, "{map:#}"),
            Relation::Map(map) => write!(f, "{map}"),
            Relation::KnownEmpty => f.write_str("KNOWN EMPTY"),
            Relation::Unknown => f.write_str("unknown"),
        }
    }
}

/// The entries of one (from, to) pair: one per map, `unknown` first if the maps are not all,
/// `KNOWN EMPTY` if there are none.
fn relations(maps: Vec<IndexingMap>, completeness: Completeness) -> Vec<Relation> {
    let mut out = Vec::new();
    if completeness == Completeness::Unknown {
        out.push(Relation::Unknown);
    } else if maps.is_empty() {
        out.push(Relation::KnownEmpty);
    }
    out.extend(maps.into_iter().map(Relation::Map));
    out
}

/// One map (or what stands for it) with its ends.
struct Entry {
    from: Endpoint,
    to: Endpoint,
    map: Relation,
}

/// Runs `morello indexing`.
pub fn run(args: &Args) -> Result<()> {
    let text = read(&args.file)?;
    let module: HloModule =
        text.parse().bad_input(|| format!("invalid HLO module `{}`", args.file.display()))?;
    let subject = subject(&module, args)?;
    let entries = entries(&module, subject, args)?;
    let pairs =
        if args.enumerate { Some(entries.iter().map(enumerate).collect::<Result<Vec<_>>>()?) } else { None };
    if args.json {
        output::print(&json_text(&entries, pairs.as_deref()))
    } else {
        output::print(&plain_text(&module, subject, args, &entries, pairs.as_deref()))
    }
}

fn read(path: &Path) -> Result<String> {
    crate::input::read_text(path, TextKind::Hlo, true)
}

/// The instruction or computation the arguments name.
fn subject(module: &HloModule, args: &Args) -> Result<Subject> {
    let names =
        || module.computations().iter().map(|c| format!("`{}`", c.name)).collect::<Vec<_>>().join(", ");
    let computation = match &args.computation {
        Some(name) => Some(module.computation_by_name(strip(name)).ok_or_else(|| {
            bad_input(format!("no computation `{name}` in the module; its computations are {}", names()))
        })?),
        None => None,
    };
    let Some(name) = &args.instruction else {
        return Ok(match computation {
            Some(id) => Subject::Computation(id),
            None => Subject::Instruction(module.entry_id(), module.entry().root),
        });
    };
    let name = strip(name);
    let find = |id: ComputationId| {
        module.computation(id).and_then(|c| c.instruction_by_name(name)).map(|i| Subject::Instruction(id, i))
    };
    if let Some(id) = computation {
        let computation_name = &module.computations()[id.0].name;
        return find(id).ok_or_else(|| {
            bad_input(format!("no instruction `{name}` in computation `{computation_name}`"))
        });
    }
    if let Some(found) = find(module.entry_id()) {
        return Ok(found);
    }
    let found: Vec<Subject> =
        (0..module.computations().len()).filter_map(|c| find(ComputationId(c))).collect();
    match found[..] {
        [one] => Ok(one),
        [] => Err(bad_input(format!("no instruction `{name}` in the module"))),
        _ => {
            let holders: Vec<String> = found
                .iter()
                .filter_map(|s| match s {
                    Subject::Instruction(c, _) => Some(format!("`{}`", module.computations()[c.0].name)),
                    Subject::Computation(_) => None,
                })
                .collect();
            Err(bad_input(format!(
                "instruction `{name}` is defined in computations {}; choose one with --computation",
                holders.join(", ")
            )))
        }
    }
}

fn strip(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

/// The operand (or parameter) positions the maps are restricted to, given their names.
fn selected(filter: Option<&str>, names: &[&str], owner: &str, noun: &str) -> Result<Vec<usize>> {
    let Some(filter) = filter else { return Ok((0..names.len()).collect()) };
    let list = || names.iter().enumerate().map(|(i, n)| format!("{i} `{n}`")).collect::<Vec<_>>().join(", ");
    if let Ok(position) = filter.parse::<usize>() {
        if position < names.len() {
            return Ok(vec![position]);
        }
        let count = names.len();
        let plural = if count == 1 { "" } else { "s" };
        return Err(bad_input(format!(
            "--operand {position}: {owner} has {count} {noun}{plural} (numbered from 0): {}",
            list()
        )));
    }
    let positions: Vec<usize> = (0..names.len()).filter(|&i| names[i] == strip(filter)).collect();
    if positions.is_empty() {
        let known = if names.is_empty() { "none".to_string() } else { list() };
        return Err(bad_input(format!(
            "--operand {filter}: no {noun} of {owner} has that name; it has {known}"
        )));
    }
    Ok(positions)
}

/// Every map of the subject in the chosen direction, in a fixed order.
fn entries(module: &HloModule, subject: Subject, args: &Args) -> Result<Vec<Entry>> {
    let (computation_id, computation) = match subject {
        Subject::Instruction(c, _) | Subject::Computation(c) => (c, &module.computations()[c.0]),
    };
    let analysis = |e: IndexingError| analysis_error(e, &computation.name);
    let (result_id, sources, source_kind, owner) = match subject {
        Subject::Instruction(_, id) => {
            let instr = &computation.instructions[id.0];
            (id, instr.operands.clone(), "operand", format!("`{}`", instr.name))
        }
        Subject::Computation(_) => (
            computation.root,
            computation.parameters(),
            "parameter",
            format!("computation `{}`", computation.name),
        ),
    };
    let result = &computation.instructions[result_id.0];
    let source_names: Vec<&str> =
        sources.iter().map(|id| computation.instructions[id.0].name.as_str()).collect();
    let positions = selected(args.operand.as_deref(), &source_names, &owner, source_kind)?;
    if args.physical && matches!(subject, Subject::Computation(_)) {
        return Err(bad_input("--physical needs one instruction: add --instruction NAME"));
    }
    let output = |index: usize| Endpoint {
        kind: "output",
        index,
        name: result.name.clone(),
        shape: array_dims(&result.shape, index, args.physical),
        tuple_index: None,
    };
    let source = |position: usize, element: usize| {
        let instr = &computation.instructions[sources[position].0];
        Endpoint {
            kind: source_kind,
            index: position,
            name: instr.name.clone(),
            shape: array_dims(&instr.shape, element, args.physical),
            tuple_index: matches!(instr.shape, HloShape::Tuple(_)).then_some(element),
        }
    };
    let mut entries = Vec::new();
    match args.direction {
        Direction::OutToIn => {
            for index in 0..result.shape.arrays().len() {
                let maps: Vec<OperandMaps> = match subject {
                    Subject::Instruction(_, id) if args.physical => {
                        physical_output_to_input(module, computation_id, id, index)
                    }
                    Subject::Instruction(_, id) => output_to_input(module, computation_id, id, index),
                    Subject::Computation(c) => computation_output_to_parameters(module, c, index),
                }
                .map_err(analysis)?;
                for operand_maps in maps.into_iter().filter(|m| positions.contains(&m.operand)) {
                    let to = || source(operand_maps.operand, operand_maps.operand_output);
                    for map in relations(operand_maps.maps.clone(), operand_maps.completeness) {
                        entries.push(Entry { from: output(index), to: to(), map });
                    }
                }
            }
        }
        Direction::InToOut => {
            for &position in &positions {
                let maps: Vec<OutputMaps> = match subject {
                    Subject::Instruction(_, id) if args.physical => {
                        physical_input_to_output(module, computation_id, id, position)
                    }
                    Subject::Instruction(_, id) => input_to_output(module, computation_id, id, position),
                    Subject::Computation(c) => {
                        let arrays = computation.instructions[sources[position].0].shape.arrays().len();
                        let mut all = Vec::new();
                        for element in 0..arrays {
                            all.extend(
                                computation_parameter_to_outputs(module, c, position, element)
                                    .map_err(analysis)?,
                            );
                        }
                        Ok(all)
                    }
                }
                .map_err(analysis)?;
                for output_maps in maps {
                    for map in relations(output_maps.maps, output_maps.completeness) {
                        let from = source(position, output_maps.operand_output);
                        entries.push(Entry { from, to: output(output_maps.output), map });
                    }
                }
            }
        }
    }
    Ok(entries)
}

/// The dims of one array of a shape, in dimension-number order or (`physical`) in memory order
/// (empty if there is no such array, which a validated module never asks for).
fn array_dims(shape: &HloShape, element: usize, physical: bool) -> Vec<i64> {
    match shape.arrays().get(element) {
        Some(a) if physical => a.major_to_minor().iter().map(|&k| a.dims[k]).collect(),
        Some(a) => a.dims.clone(),
        None => Vec::new(),
    }
}

fn analysis_error(error: IndexingError, computation: &str) -> anyhow::Error {
    let message = format!("cannot compute the maps in computation `{computation}`: {error}");
    match error {
        IndexingError::Arithmetic(_) => bad_input(message),
        _ => anyhow::anyhow!(message),
    }
}

/// Every pair a map relates (none for `KNOWN EMPTY`), `None` when unknown, or a refusal naming
/// the map.
fn enumerate(entry: &Entry) -> Result<Option<Vec<IndexPair>>> {
    let map = match &entry.map {
        Relation::Map(map) => map,
        Relation::KnownEmpty => return Ok(Some(Vec::new())),
        Relation::Unknown => return Ok(None),
    };
    let limits = EnumerationLimits { max_pairs: MAX_PAIRS, ..EnumerationLimits::default() };
    let which = || format!("the map from {} to {}", entry.from.text(), entry.to.text());
    map.enumerate(&limits).map(Some).map_err(|e| match e {
        IndexingError::TooManyPairs { limit } => bad_input(format!(
            "--enumerate: {} relates more than {limit} pairs, the most it lists for one map (leave out --enumerate to see the map)",
            which()
        )),
        IndexingError::TooManyPoints { points, limit } => bad_input(format!(
            "--enumerate: {} has {points} candidate points in its domain, more than the {limit} it visits for one map (leave out --enumerate to see the map)",
            which()
        )),
        other => bad_input(format!("--enumerate: {}: {other}", which())),
    })
}

/// The JSON array, one object per map, each pair on its own line.
fn json_text(entries: &[Entry], pairs: Option<&[Option<Vec<IndexPair>>]>) -> String {
    let mut out = String::from("[");
    for (i, entry) in entries.iter().enumerate() {
        out += if i == 0 { "\n" } else { ",\n" };
        let _ = write!(
            out,
            "  {{\n    \"from\": {},\n    \"to\": {},\n    \"map\": {}",
            entry.from.json(),
            entry.to.json(),
            json!(entry.map.to_string())
        );
        if let Some(pairs) = pairs.and_then(|p| p.get(i)).and_then(Option::as_ref) {
            out += ",\n    \"pairs\": [";
            for (k, pair) in pairs.iter().enumerate() {
                out += if k == 0 { "\n      " } else { ",\n      " };
                let _ = write!(out, "{}", json!([pair.source, pair.target]));
            }
            out += if pairs.is_empty() { "]" } else { "\n    ]" };
        }
        out += "\n  }";
    }
    out += if entries.is_empty() { "]\n" } else { "\n]\n" };
    out
}

/// The text report: a heading, then each map in its multi-line form.
fn plain_text(
    module: &HloModule,
    subject: Subject,
    args: &Args,
    entries: &[Entry],
    pairs: Option<&[Option<Vec<IndexPair>>]>,
) -> String {
    let direction = args.direction;
    let way = match (direction, args.physical) {
        (Direction::OutToIn, false) => "output-to-input",
        (Direction::InToOut, false) => "input-to-output",
        (Direction::OutToIn, true) => "physical output-to-input",
        (Direction::InToOut, true) => "physical input-to-output",
    };
    let mut out = match subject {
        Subject::Instruction(c, id) => {
            let computation: &HloComputation = &module.computations()[c.0];
            let instr = &computation.instructions[id.0];
            format!(
                "{way} maps of `{}` ({}) in computation `{}`\n",
                instr.name,
                instr.op.opcode(),
                computation.name
            )
        }
        Subject::Computation(c) => {
            let ends = match direction {
                Direction::OutToIn => "from its root to its parameters",
                Direction::InToOut => "from its parameters to its root",
            };
            format!("{way} maps of computation `{}`, {ends}\n", module.computations()[c.0].name)
        }
    };
    if entries.is_empty() {
        out += "\nno maps: nothing is read\n";
    }
    for (i, entry) in entries.iter().enumerate() {
        let _ = write!(out, "\n{} -> {}:\n", entry.from.text(), entry.to.text());
        for line in format!("{:#}", entry.map).lines() {
            let _ = writeln!(out, "  {line}");
        }
        if let Some(pairs) = pairs.and_then(|p| p.get(i)).and_then(Option::as_ref) {
            let _ = writeln!(out, "  pairs ({}):", pairs.len());
            for pair in pairs {
                let _ = writeln!(out, "    ({}) -> ({})", join(&pair.source), join(&pair.target));
            }
        }
    }
    out
}

fn join(values: &[i64]) -> String {
    values.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}
