//! Conformance with XLA's own indexing-analysis tests: every case of
//! `fixtures/xla-tests/indexing_analysis_test.txt` (one per `TEST_F` of XLA's
//! `indexing_analysis_test.cc`, with XLA's expected maps) is read, asked of morello, and
//! compared with XLA's answer as a relation: a set of (source index, target index) pairs.
//!
//! Fixture format: `== NAME` starts a case; `source:` and `note:` lines document it; `hlo:` is
//! followed by the module, up to the first `query:` line. Each query is followed by what XLA
//! answers: blocks `operand N:` (out-to-in), `output N:` (in-to-out), `value NAME:` (grouped)
//! or `map:` (epilogue), each holding one map in XLA's printed form (a target read in several
//! ways has several blocks), `KNOWN EMPTY` or `unknown`; `none` says the query has no maps.
//!
//! Queries (XLA's function in brackets):
//!
//! ```text
//! out-to-in [output K]                      the entry ROOT's maps  (GetOutputToInputIndexing)
//! in-to-out operand K                       from operand K         (GetInputToOutputIndexing)
//! grouped from NAME [computation C]         from NAME to every value it reads
//!                                                                  (ComputeGroupedOutputToInputIndexing)
//! epilogue from A to B computation C        from A to the root B   (ComputeEpilogueInputToOutputIndexing)
//! physical out-to-in | physical in-to-out operand K                (use_physical_layout = true)
//! ```
//!
//! XLA's run-time variables `{rt0, ...}` become symbols after the range symbols: as a relation
//! they range over their bounds the same way.
//!
//! Two relations are compared exactly: first as maps (equal after simplification), else by
//! enumerating both when that is small, else point by point on every corner of the source box
//! and a fixed pseudo-random sample of source points, comparing the full set of targets of each
//! point (every symbol value). Each case then *agrees*, is *refused* (morello answers unknown
//! where XLA has a map, or cannot ask the question), gives *more than XLA* (a map where XLA
//! says unknown; such maps are checked against the reference evaluator elsewhere), or is
//! *wrong*. No case may be wrong, and every refusal must be listed in [`KNOWN_REFUSALS`] with
//! its reason (as `docs/indexing-maps.md` gives it).

use std::collections::BTreeSet;
use std::path::PathBuf;

use morello_core::expr::Interval;

use super::super::simplify::advance;
use crate::hlo::{HloModule, InstrId};
use crate::indexing::{
    Completeness, EnumerationLimits, IndexingMap, computation_output_to_values, computation_value_to_outputs,
    input_to_output, output_to_input, physical_input_to_output, physical_output_to_input,
};

/// Cases morello refuses, by case name, with the reason.
const KNOWN_REFUSALS: &[(&str, &str)] = &[];

/// Cases where XLA's own answer is not what the op reads, and morello answers with the op's
/// semantics instead (checked against the reference evaluator in `conformance.rs`).
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[(
    "FusionWithRTVarsSimplification_Iota",
    "XLA folds the iota start indices 0..41 into the map without the clamp that keeps a gather's \
     slice inside the 33-row operand, so its map reads rows 33..41, which do not exist, and misses \
     row 32, which outputs 33..41 read; morello's two maps give rows 0..32 and the clamped row 32",
)];

/// Where morello answers with a map and XLA says unknown (by case name).
const BEYOND_XLA: &[(&str, &str)] = &[];

/// What XLA answers for one target.
#[derive(Debug, Clone)]
enum Expected {
    Maps(Vec<String>),
    KnownEmpty,
    Unknown,
}

#[derive(Debug, Clone)]
struct Query {
    text: String,
    /// (target key, answer): the key is `operand N`, `output N`, `value NAME` or `map`.
    expected: Vec<(String, Expected)>,
    none: bool,
}

#[derive(Debug)]
struct Case {
    name: String,
    hlo: String,
    queries: Vec<Query>,
}

fn cases() -> Vec<Case> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/xla-tests/indexing_analysis_test.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cases: Vec<Case> = Vec::new();
    let mut in_hlo = false;
    let mut block: Option<(String, String)> = None;
    let flush = |cases: &mut Vec<Case>, block: &mut Option<(String, String)>| {
        if let Some((key, text)) = block.take() {
            let query = cases.last_mut().and_then(|c| c.queries.last_mut()).expect("a block inside a query");
            let text = text.trim();
            let answer = match text {
                "KNOWN EMPTY" => Expected::KnownEmpty,
                "unknown" => Expected::Unknown,
                _ => Expected::Maps(vec![text.to_string()]),
            };
            match (query.expected.iter_mut().find(|(k, _)| *k == key), answer) {
                (Some((_, Expected::Maps(maps))), Expected::Maps(more)) => maps.extend(more),
                (Some(_), _) => panic!("`{key}` given twice"),
                (None, answer) => query.expected.push((key, answer)),
            }
        }
    };
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("== ") {
            flush(&mut cases, &mut block);
            cases.push(Case { name: name.trim().to_string(), hlo: String::new(), queries: Vec::new() });
            in_hlo = false;
            continue;
        }
        let Some(case) = cases.last_mut() else { continue };
        if line.starts_with("source:") || line.starts_with("note:") {
            continue;
        }
        if line == "hlo:" {
            in_hlo = true;
            continue;
        }
        if let Some(query) = line.strip_prefix("query:") {
            flush(&mut cases, &mut block);
            in_hlo = false;
            let case = cases.last_mut().expect("a case");
            case.queries.push(Query { text: query.trim().to_string(), expected: Vec::new(), none: false });
            continue;
        }
        if in_hlo {
            case.hlo.push_str(line);
            case.hlo.push('\n');
            continue;
        }
        let key_line = line.trim_end();
        let is_key = key_line.ends_with(':')
            && (key_line.starts_with("operand ")
                || key_line.starts_with("output ")
                || key_line.starts_with("value ")
                || key_line == "map:");
        if is_key {
            flush(&mut cases, &mut block);
            block = Some((key_line.trim_end_matches(':').to_string(), String::new()));
        } else if key_line.trim() == "none" && block.is_none() {
            case.queries.last_mut().expect("a query").none = true;
        } else if let Some((_, text)) = block.as_mut() {
            text.push_str(line.trim());
            text.push(' ');
        } else if !key_line.trim().is_empty() {
            panic!("case `{}`: unexpected line `{line}`", case.name);
        }
    }
    flush(&mut cases, &mut block);
    cases
}

/// XLA's printed map as a morello map: run-time variables `{rt0, ...}` become symbols after the
/// range symbols.
fn xla_map(text: &str) -> IndexingMap {
    let text = text.trim().trim_end_matches(',');
    let arrow = text.find("->").unwrap_or_else(|| panic!("no `->` in `{text}`"));
    let (header, rest) = text.split_at(arrow);
    let (header, runtime) = match (header.find('{'), header.find('}')) {
        (Some(open), Some(close)) => (
            format!("{}{}", &header[..open], &header[close + 1..]),
            header[open + 1..close].split(',').map(|v| v.trim().to_string()).collect::<Vec<_>>(),
        ),
        _ => (header.to_string(), Vec::new()),
    };
    let range_symbols = match (header.find('['), header.find(']')) {
        (Some(open), Some(close)) => {
            header[open + 1..close].split(',').filter(|v| !v.trim().is_empty()).count()
        }
        _ => 0,
    };
    let mut rest = rest.to_string();
    let mut header = header.trim().to_string();
    if !runtime.is_empty() {
        let names: Vec<String> = (0..range_symbols + runtime.len()).map(|j| format!("s{j}")).collect();
        let dims_end = header.find(')').expect("a dim list") + 1;
        header = format!("{}[{}]", &header[..dims_end], names.join(", "));
        // Longest names first so that `rt1` is not replaced inside `rt10`.
        let mut order: Vec<(usize, &String)> = runtime.iter().enumerate().collect();
        order.sort_by_key(|(_, name)| std::cmp::Reverse(name.len()));
        for (k, name) in order {
            rest = rest.replace(name.as_str(), &format!("s{}", range_symbols + k));
        }
    }
    let text = format!("{header} {rest}");
    let map: IndexingMap = text.parse().unwrap_or_else(|e| panic!("XLA's map `{text}`: {e}"));
    map.simplify().unwrap_or_else(|e| panic!("`{text}`: {e}"))
}

/// Morello's answer for one target.
#[derive(Debug)]
struct Answer {
    maps: Vec<IndexingMap>,
    completeness: Completeness,
    /// The sizes of the target tensor: pairs whose target lies outside are not elements (XLA's
    /// maps may relate them, e.g. a dynamic-update-slice's update index `d0 - rt0` below 0).
    target: Vec<i64>,
}

enum Outcome {
    Agrees,
    Refused(String),
    Beyond,
    Wrong(String),
}

/// How two relations were found equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Method {
    SameMaps,
    SymbolsRenamed,
    Enumerated,
    Sampled,
}

const MAX_ENUMERATED_POINTS: u128 = 4_000_000;
const MAX_POINTS_PER_SOURCE: u128 = 2_000_000;
const SAMPLES: usize = 100;

fn box_points(map: &IndexingMap) -> u128 {
    map.dim_ranges()
        .iter()
        .chain(map.symbol_ranges())
        .map(|r| u128::try_from((r.hi - r.lo + 1).max(0)).unwrap_or(0))
        .product()
}

/// Whether two unions of maps relate the same pairs whose target lies in `target` (a box of
/// sizes), and how that was decided.
fn same_relation(ours: &[IndexingMap], xla: &[IndexingMap], target: &[i64]) -> Result<Method, String> {
    let as_set = |maps: &[IndexingMap]| maps.iter().map(ToString::to_string).collect::<BTreeSet<_>>();
    if as_set(ours) == as_set(xla) {
        return Ok(Method::SameMaps);
    }
    if equal_up_to_symbol_order(ours, xla) {
        return Ok(Method::SymbolsRenamed);
    }
    let inside =
        |t: &Vec<i64>| t.len() == target.len() && t.iter().zip(target).all(|(&v, &n)| (0..n).contains(&v));
    let total: u128 = ours.iter().chain(xla).map(box_points).sum();
    if total <= MAX_ENUMERATED_POINTS {
        let limits = EnumerationLimits { max_pairs: 4_000_000, max_points: 4_000_000 };
        let pairs = |maps: &[IndexingMap]| -> Result<super::reference::Relation, String> {
            let mut out = BTreeSet::new();
            for map in maps {
                for pair in map.enumerate(&limits).map_err(|e| format!("{map}: {e}"))? {
                    if inside(&pair.target) {
                        out.insert((pair.source, pair.target));
                    }
                }
            }
            Ok(out)
        };
        let (a, b) = (pairs(ours)?, pairs(xla)?);
        if a == b {
            return Ok(Method::Enumerated);
        }
        let only_ours = a.difference(&b).next();
        let only_xla = b.difference(&a).next();
        return Err(format!("pairs differ: only morello {only_ours:?}, only XLA {only_xla:?}"));
    }
    // Too many pairs to list: compare the targets of corner and sampled source points.
    let rank = ours.iter().chain(xla).map(IndexingMap::num_dims).max().unwrap_or(0);
    let hull: Vec<Interval> = (0..rank)
        .map(|k| {
            let ranges = ours.iter().chain(xla).filter_map(|m| m.dim_ranges().get(k));
            let lo = ranges.clone().map(|r| r.lo).min().unwrap_or(0);
            let hi = ranges.map(|r| r.hi).max().unwrap_or(-1);
            Interval::new(lo, hi)
        })
        .collect();
    let mut points: Vec<Vec<i64>> = Vec::new();
    for corner in 0..(1u64 << rank.min(12)) {
        points.push(
            hull.iter().enumerate().map(|(k, r)| if corner >> k & 1 == 1 { r.hi } else { r.lo }).collect(),
        );
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..SAMPLES {
        points.push(
            hull.iter()
                .map(|r| {
                    state =
                        state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    let width = u64::try_from(r.hi - r.lo + 1).unwrap_or(1).max(1);
                    r.lo + i64::try_from((state >> 33) % width).unwrap_or(0)
                })
                .collect(),
        );
    }
    for point in &points {
        let (mut a, mut b) = (targets(ours, point)?, targets(xla, point)?);
        a.retain(|t| inside(t));
        b.retain(|t| inside(t));
        if a != b {
            return Err(format!(
                "targets of {point:?} differ: only morello {:?}, only XLA {:?}",
                a.difference(&b).next(),
                b.difference(&a).next()
            ));
        }
    }
    Ok(Method::Sampled)
}

/// Whether every map of one list is a map of the other with its symbols renumbered (XLA and
/// morello number the symbols of a composed map differently).
fn equal_up_to_symbol_order(ours: &[IndexingMap], xla: &[IndexingMap]) -> bool {
    if ours.len() != xla.len() {
        return false;
    }
    let ours: BTreeSet<String> = ours.iter().map(ToString::to_string).collect();
    let mut matched = BTreeSet::new();
    for map in xla {
        let n = map.num_symbols();
        if n > 6 {
            return false;
        }
        let found = permutations(n).into_iter().find_map(|perm| {
            let renamed = rename_symbols(map, &perm)?.to_string();
            (ours.contains(&renamed) && !matched.contains(&renamed)).then_some(renamed)
        });
        match found {
            Some(text) => matched.insert(text),
            None => return false,
        };
    }
    true
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            out.push(p);
        }
    }
    out
}

/// The map with symbol `s_j` renamed `s_{perm[j]}`, simplified.
fn rename_symbols(map: &IndexingMap, perm: &[usize]) -> Option<IndexingMap> {
    use morello_core::expr::{IndexExpr, Var};
    let mut rename = |v: Var| {
        Ok(match v {
            Var::Symbol(j) => Some(IndexExpr::symbol(u32::try_from(perm[j as usize]).expect("few symbols"))),
            Var::Dim(_) => None,
        })
    };
    let mut ranges = vec![Interval::point(0); perm.len()];
    for (j, &to) in perm.iter().enumerate() {
        ranges[to] = map.symbol_ranges()[j];
    }
    let results =
        map.results().iter().map(|r| r.substitute(&mut rename)).collect::<Result<Vec<_>, _>>().ok()?;
    let constraints = map
        .constraints()
        .iter()
        .map(|c| c.expr.substitute(&mut rename).map(|e| crate::indexing::Constraint::new(e, c.range)))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    IndexingMap::new(map.dim_ranges().to_vec(), ranges, results, constraints).ok()?.simplify().ok()
}

/// Every target the maps relate to one source point.
fn targets(maps: &[IndexingMap], point: &[i64]) -> Result<BTreeSet<Vec<i64>>, String> {
    let mut out = BTreeSet::new();
    for map in maps {
        if map.num_dims() != point.len() {
            return Err(format!("{map} has {} dims, the source {}", map.num_dims(), point.len()));
        }
        let symbols = map.symbol_ranges();
        let count: u128 =
            symbols.iter().map(|r| u128::try_from((r.hi - r.lo + 1).max(0)).unwrap_or(0)).product();
        if count > MAX_POINTS_PER_SOURCE {
            return Err(format!("{map}: {count} symbol values per source point, too many to compare"));
        }
        if count == 0 {
            continue;
        }
        let mut values: Vec<i64> = symbols.iter().map(|r| r.lo).collect();
        loop {
            if let Some(target) = map.evaluate(point, &values).map_err(|e| e.to_string())? {
                out.insert(target);
            }
            if !advance(&mut values, symbols) {
                break;
            }
        }
    }
    Ok(out)
}

fn compare(name: &str, key: &str, expected: &Expected, answer: Option<&Answer>) -> (Outcome, Option<Method>) {
    let empty = |a: &Answer| {
        a.maps.iter().all(|m| {
            m.is_known_empty()
                || m.enumerate(&EnumerationLimits::default()).map(|pairs| pairs.is_empty()).unwrap_or(false)
        })
    };
    match (expected, answer) {
        (Expected::Unknown, Some(a)) if a.completeness == Completeness::Unknown => (Outcome::Agrees, None),
        (Expected::Unknown, None) => {
            (Outcome::Wrong(format!("{key}: XLA says unknown, morello says nothing")), None)
        }
        (Expected::Unknown, Some(_)) => (Outcome::Beyond, None),
        (_, Some(a)) if a.completeness == Completeness::Unknown => {
            (Outcome::Refused(format!("{key}: morello says unknown")), None)
        }
        (Expected::KnownEmpty, None) => (Outcome::Agrees, None),
        (Expected::KnownEmpty, Some(a)) if empty(a) => (Outcome::Agrees, None),
        (Expected::KnownEmpty, Some(a)) => {
            (Outcome::Wrong(format!("{key}: XLA says KNOWN EMPTY, morello {:?}", strings(&a.maps))), None)
        }
        (Expected::Maps(_), None) => (Outcome::Wrong(format!("{key}: morello has no maps")), None),
        (Expected::Maps(texts), Some(a)) => {
            let xla: Vec<IndexingMap> = texts.iter().map(|t| xla_map(t)).collect();
            let ours: Vec<IndexingMap> = a.maps.iter().filter(|m| !m.is_known_empty()).cloned().collect();
            match same_relation(&ours, &xla, &a.target) {
                Ok(method) => (Outcome::Agrees, Some(method)),
                Err(why) => (
                    Outcome::Wrong(format!(
                        "{name} {key}: {why}\n    morello: {:?}\n    XLA:     {:?}",
                        strings(&ours),
                        strings(&xla)
                    )),
                    None,
                ),
            }
        }
    }
}

fn strings(maps: &[IndexingMap]) -> Vec<String> {
    maps.iter().map(ToString::to_string).collect()
}

/// The words of a query after `keyword`, as a number or a name.
fn word_after<'a>(query: &'a str, keyword: &str) -> Option<&'a str> {
    let mut words = query.split_whitespace();
    while let Some(word) = words.next() {
        if word == keyword {
            return words.next();
        }
    }
    None
}

fn number_after(query: &str, keyword: &str) -> Option<usize> {
    word_after(query, keyword).map(|n| n.parse().unwrap_or_else(|e| panic!("`{query}`: {e}")))
}

/// Morello's answers to one query, by target key; `Err` if morello cannot ask it.
fn ask(module: &HloModule, query: &str) -> Result<Vec<(String, Answer)>, String> {
    let entry = module.entry_id();
    let root = module.entry().root;
    let computation = match word_after(query, "computation") {
        Some(name) => module.computation_by_name(name).ok_or_else(|| format!("no computation `{name}`"))?,
        None => entry,
    };
    let comp = module.computation(computation).expect("looked up");
    let instruction =
        |name: &str| comp.instruction_by_name(name).ok_or_else(|| format!("no instruction `{name}`"));
    let dims_of = |comp: &crate::hlo::HloComputation, id: InstrId, output: usize, physical: bool| {
        let array = &comp.instructions[id.0].shape.arrays()[output];
        if physical {
            array.major_to_minor().iter().map(|&k| array.dims[k]).collect()
        } else {
            array.dims.clone()
        }
    };
    let operand_dims = |o: &crate::indexing::OperandMaps, physical: bool| {
        dims_of(
            module.entry(),
            module.entry().instructions[root.0].operands[o.operand],
            o.operand_output,
            physical,
        )
    };
    let physical = query.starts_with("physical");
    let words: Vec<&str> = query.split_whitespace().filter(|w| *w != "physical").collect();
    let err = |e: crate::indexing::IndexingError| e.to_string();
    match words.first().copied() {
        Some("out-to-in") => {
            let output = number_after(query, "output").unwrap_or(0);
            let maps = if physical { physical_output_to_input } else { output_to_input };
            Ok(maps(module, entry, root, output)
                .map_err(err)?
                .into_iter()
                .map(|o| {
                    let target = operand_dims(&o, physical);
                    (
                        format!("operand {}", o.operand),
                        Answer { maps: o.maps, completeness: o.completeness, target },
                    )
                })
                .collect())
        }
        Some("in-to-out") => {
            let operand = number_after(query, "operand").expect("an operand");
            let maps = if physical { physical_input_to_output } else { input_to_output };
            Ok(maps(module, entry, root, operand)
                .map_err(err)?
                .into_iter()
                .map(|o| {
                    let target = dims_of(module.entry(), root, o.output, physical);
                    (
                        format!("output {}", o.output),
                        Answer { maps: o.maps, completeness: o.completeness, target },
                    )
                })
                .collect())
        }
        Some("grouped") => {
            let start = instruction(word_after(query, "from").expect("a start"))?;
            let output = number_after(query, "output").unwrap_or(0);
            let maps = computation_output_to_values(module, computation, start, output).map_err(err)?;
            Ok(maps
                .into_iter()
                .map(|v| {
                    let target = dims_of(comp, v.instruction, v.output, false);
                    let key = format!("value {}", comp.instructions[v.instruction.0].name);
                    (key, Answer { maps: v.maps, completeness: v.completeness, target })
                })
                .collect())
        }
        Some("epilogue") => {
            let start = instruction(word_after(query, "from").expect("a start"))?;
            let end = instruction(word_after(query, "to").expect("an end"))?;
            assert_eq!(end, comp.root, "`{query}`: the epilogue ends at the root");
            let maps = computation_value_to_outputs(module, computation, start, 0).map_err(err)?;
            Ok(maps
                .into_iter()
                .map(|o| {
                    let target = dims_of(comp, comp.root, o.output, false);
                    ("map".to_string(), Answer { maps: o.maps, completeness: o.completeness, target })
                })
                .collect())
        }
        Some(other) => Err(format!("morello has no `{other}` query")),
        None => panic!("an empty query"),
    }
}

#[derive(Default)]
struct Tally {
    agree: Vec<String>,
    refused: Vec<(String, String)>,
    beyond: Vec<String>,
    wrong: Vec<(String, String)>,
    methods: std::collections::BTreeMap<Method, usize>,
}

fn run(case: &Case, tally: &mut Tally) {
    let module: HloModule = match case.hlo.parse() {
        Ok(module) => module,
        Err(e) => {
            tally.refused.push((case.name.clone(), format!("the module does not read: {e}")));
            return;
        }
    };
    let mut outcome = Outcome::Agrees;
    for query in &case.queries {
        let answers = match ask(&module, &query.text) {
            Ok(answers) => answers,
            Err(why) => {
                outcome = worse(outcome, Outcome::Refused(format!("`{}`: {why}", query.text)));
                continue;
            }
        };
        if query.none {
            if !answers.is_empty() {
                outcome = worse(outcome, Outcome::Wrong(format!("`{}`: XLA has no maps", query.text)));
            }
            continue;
        }
        for (key, expected) in &query.expected {
            let mut merged: Option<Answer> = None;
            for (k, a) in &answers {
                if k == key {
                    let m = merged.get_or_insert(Answer {
                        maps: Vec::new(),
                        completeness: Completeness::Complete,
                        target: a.target.clone(),
                    });
                    m.maps.extend(a.maps.iter().cloned());
                    if a.completeness == Completeness::Unknown {
                        m.completeness = Completeness::Unknown;
                    }
                }
            }
            let (o, method) =
                compare(&case.name, &format!("`{}` {key}", query.text), expected, merged.as_ref());
            if let Some(method) = method {
                *tally.methods.entry(method).or_default() += 1;
            }
            outcome = worse(outcome, o);
        }
        for (key, answer) in &answers {
            let listed = query.expected.iter().any(|(k, _)| k == key);
            let trivial = answer.completeness == Completeness::Complete
                && answer.maps.iter().all(IndexingMap::is_known_empty);
            if !listed && !trivial {
                outcome = worse(
                    outcome,
                    Outcome::Wrong(format!("`{}`: morello has maps for {key}, XLA none", query.text)),
                );
            }
        }
    }
    match outcome {
        Outcome::Agrees => tally.agree.push(case.name.clone()),
        Outcome::Beyond => tally.beyond.push(case.name.clone()),
        Outcome::Refused(why) => tally.refused.push((case.name.clone(), why)),
        Outcome::Wrong(why) => tally.wrong.push((case.name.clone(), why)),
    }
}

/// The worse of two outcomes: wrong, then refused, then more than XLA, then agrees.
fn worse(a: Outcome, b: Outcome) -> Outcome {
    let rank = |o: &Outcome| match o {
        Outcome::Agrees => 0,
        Outcome::Beyond => 1,
        Outcome::Refused(_) => 2,
        Outcome::Wrong(_) => 3,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

#[test]
fn every_case_of_xla_indexing_analysis_test() {
    let cases = cases();
    assert!(cases.len() >= 70, "expected XLA's indexing-analysis cases, found {}", cases.len());
    let mut tally = Tally::default();
    for case in &cases {
        assert!(!case.queries.is_empty(), "case `{}` asks nothing", case.name);
        run(case, &mut tally);
    }
    println!(
        "XLA indexing corpus: {} cases, {} agree, {} refused, {} more than XLA, {} differ (XLA's answer is \
         not the op's; see KNOWN_DIFFERENCES); relations compared: {:?}",
        cases.len(),
        tally.agree.len(),
        tally.refused.len(),
        tally.beyond.len(),
        tally.wrong.len(),
        tally.methods
    );
    for (name, why) in &tally.refused {
        println!("  refused  {name}: {why}");
    }
    for name in &tally.beyond {
        println!("  beyond   {name}");
    }
    for (name, why) in &tally.wrong {
        let label = if KNOWN_DIFFERENCES.iter().any(|(k, _)| k == name) { "differs" } else { "WRONG" };
        println!("  {label:8} {name}: {why}");
    }
    let (differ, wrong): (Vec<_>, Vec<_>) =
        tally.wrong.iter().partition(|(name, _)| KNOWN_DIFFERENCES.iter().any(|(k, _)| k == name));
    assert!(wrong.is_empty(), "{} cases answer differently from XLA", wrong.len());
    for (known, _) in KNOWN_DIFFERENCES {
        assert!(differ.iter().any(|(n, _)| n == known), "`{known}` is listed as differing but now agrees");
    }
    for (name, why) in &tally.refused {
        assert!(
            KNOWN_REFUSALS.iter().any(|(k, _)| k == name),
            "`{name}` is refused without a documented reason: {why}"
        );
    }
    for (known, _) in KNOWN_REFUSALS {
        assert!(
            tally.refused.iter().any(|(n, _)| n == known),
            "`{known}` is listed as refused but now agrees"
        );
    }
    for name in &tally.beyond {
        assert!(BEYOND_XLA.iter().any(|(k, _)| k == name), "`{name}` answers a map where XLA says unknown");
    }
}
