//! What loading checks about every stored spec and frontier, and the deeper check of `db verify`.
//!
//! ```text
//! spec       its key (the spec's serialisation) decodes to a valid spec for the target, already
//!            in canonical form, whose serialisation is exactly the key; keys strictly ascend in
//!            every block and run and no key is in two runs (so every spec is stored once)
//! frontier   sorted by rank and free of dominated entries (Frontier::from_candidates keeps it as
//!            is); every peak byte below 128 and within the target's capacities; depth >= 1
//! action     (full) every entry's action exists in actions(spec) for the target and
//!            configuration; the table holds every sub-spec it needs (a table is closed under
//!            sub-specs); and combining each sub-spec's best entry within the entry's own peaks
//!            (less what the action holds) gives exactly the stored cost. By induction over the
//!            sub-spec graph, every implementation then rebuilds with its stored cost.
//! rebuild    (verify) for chosen specs, every entry's whole implementation is rebuilt with
//!            `Rebuild::best` under the entry's own peaks and must be that entry, with its cost
//! ```
//!
//! The action checks enumerate the actions of every spec, as a search's exploration does (about a
//! second for the 29,101 specs of a 64^3 matmul on two cores), so searches load with
//! [`Validation::Structure`] and leave stored actions to reconstruction, which re-applies every
//! action it uses and compares costs; `morello db verify` and `merge` load with
//! [`Validation::Full`]. Checks run in parallel; the error reported is the first in stored order,
//! so it is the same on every run.

use std::path::Path;
use std::sync::Arc;

use morello_core::spec::CanonicalSpec;
use morello_core::target::Target;
use rayon::prelude::*;
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;

use crate::actions::{ActionConfig, actions};
use crate::db::error::DbError;
use crate::db::format::{logical_of_key, spec_key};
use crate::db::reader::StoredEntry;
use crate::feasible::Feasibility;
use crate::frontier::{Entry, Frontier};
use crate::memo::Memo;
use crate::peaks::{PeakCodec, Peaks};
use crate::reconstruct::Rebuild;

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// How much loading checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// The container, the identity, and every spec and frontier (canonical, sorted, non-dominated,
    /// within the target's capacities). Stored actions are checked when reconstruction uses them.
    Structure,
    /// Also every stored action: it exists for its spec, the table holds the sub-specs it needs,
    /// and their best entries within the entry's peaks combine to exactly the stored cost.
    Full,
}

/// Decodes and validates stored entries (key, frontier entries), sorted by key, for `target` and
/// `config`; returns them sorted by spec.
///
/// # Errors
/// [`DbError::Invalid`] for the first entry (in key order) that breaks a rule.
pub(crate) fn entries(
    stored: Vec<StoredEntry>,
    target: &Target,
    config: &ActionConfig,
    validation: Validation,
    path: &Path,
) -> Result<Vec<(CanonicalSpec, Arc<Frontier>)>, DbError> {
    let invalid = |spec: String, reason: String| DbError::Invalid { path: path.into(), spec, reason };
    let capacities = PeakCodec::new(target).encode_limits(&target.capacities());
    let checked: Vec<Result<(CanonicalSpec, Arc<Frontier>), DbError>> = stored
        .into_par_iter()
        .map(|(key, frontier)| {
            let spec = spec_of_key(&key, target).map_err(|(spec, reason)| invalid(spec, reason))?;
            let frontier = check_frontier(frontier, capacities, FrontierCheck::Full)
                .map_err(|reason| invalid(spec.display(target).to_string(), reason))?;
            Ok((spec, frontier))
        })
        .collect();
    let mut out = checked.into_iter().collect::<Result<Vec<_>, _>>()?;
    out.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if validation == Validation::Full {
        check_actions(&out, target, config).map_err(|(spec, reason)| invalid(spec, reason))?;
    }
    Ok(out)
}

/// The spec a stored key encodes, if it is a valid spec for `target` in canonical form whose key
/// is exactly `key` (so each spec has one key, and strictly ascending keys store it once).
///
/// # Errors
/// The spec (text, or the key's bytes when it does not decode) and the rule it breaks.
pub(crate) fn spec_of_key(key: &[u8], target: &Target) -> Result<CanonicalSpec, (String, String)> {
    let logical =
        logical_of_key(key).map_err(|e| (format!("key {key:02x?}"), format!("it does not decode: {e}")))?;
    let canonical = logical.canonicalize(target).map_err(|e| {
        (logical.display(target).to_string(), format!("not a valid spec for {}: {e}", target.name()))
    })?;
    if *canonical.logical() != logical {
        return Err((
            logical.display(target).to_string(),
            format!("not in canonical form (canonical: {})", canonical.display(target)),
        ));
    }
    if spec_key(&canonical) != key {
        return Err((logical.display(target).to_string(), "its key is not its canonical encoding".into()));
    }
    Ok(canonical)
}

/// How thoroughly a stored frontier is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrontierCheck {
    /// Sorted by rank, peaks within capacities, depth at least 1: linear, for lookups. A dominated
    /// entry (only a tampered table has one) costs space, never a wrong answer: the best entry
    /// under any limits is still the cheapest that fits.
    Ordered,
    /// Also free of dominated entries (quadratic in the frontier's size): whole-table reads.
    Full,
}

/// A frontier's entries as a [`Frontier`], if they are one (as far as `check` looks).
pub(crate) fn check_frontier(
    entries: Vec<Entry>,
    capacities: Peaks,
    check: FrontierCheck,
) -> Result<Arc<Frontier>, String> {
    for e in &entries {
        if e.peaks.0 & HIGH_BITS != 0 || !e.peaks.fits(capacities) {
            return Err(format!("peaks {:016x} exceed the target's capacities", e.peaks.0));
        }
        if e.depth == 0 {
            return Err("an implementation of depth 0".into());
        }
    }
    if entries.windows(2).any(|pair| pair[0].rank() >= pair[1].rank()) {
        return Err("the frontier is not sorted".into());
    }
    match check {
        FrontierCheck::Ordered => Ok(Arc::new(Frontier::from_sorted(entries))),
        FrontierCheck::Full => {
            let frontier = Frontier::from_candidates(entries.clone());
            if frontier.entries() != entries.as_slice() {
                return Err("the frontier holds dominated entries".into());
            }
            Ok(Arc::new(frontier))
        }
    }
}

/// Checks that every entry's action exists, that the table holds its sub-specs, and that they
/// combine to the stored cost.
///
/// # Errors
/// The first offending spec (text) and why.
fn check_actions(
    table: &[(CanonicalSpec, Arc<Frontier>)],
    target: &Target,
    config: &ActionConfig,
) -> Result<(), (String, String)> {
    let held: FxHashMap<&CanonicalSpec, &Frontier> = table.iter().map(|(s, f)| (s, f.as_ref())).collect();
    let feasibility = Feasibility::new(target);
    let failure = table.par_iter().find_map_first(|(spec, frontier)| {
        first_bad_action(spec, frontier, &held, target, config, &feasibility)
            .map(|reason| (spec.display(target).to_string(), reason))
    });
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// Why one of a spec's entries names an action that does not exist, needs a spec not held, or
/// does not combine to its stored cost.
fn first_bad_action(
    spec: &CanonicalSpec,
    frontier: &Frontier,
    held: &FxHashMap<&CanonicalSpec, &Frontier>,
    target: &Target,
    config: &ActionConfig,
    feasibility: &Feasibility<'_>,
) -> Option<String> {
    if frontier.is_empty() {
        return None;
    }
    let codec = PeakCodec::new(target);
    let all = actions(spec, target, config, feasibility);
    for e in frontier.entries() {
        let Some((action, plan)) = all.get(usize::from(e.action)) else {
            return Some(format!("action #{} does not exist ({} actions)", e.action, all.len()));
        };
        let linear = plan.combine.linear(plan.children.len(), target);
        let Some(budget) = codec.decode(e.peaks).checked_sub(&linear.own) else {
            return Some(format!(
                "action #{} ({action:?}) holds more memory than the entry's peaks",
                e.action
            ));
        };
        let limits = codec.encode_limits(&budget);
        let mut children: u64 = 0;
        for (child, &weight) in plan.children.iter().zip(&linear.weights) {
            let Some(child_frontier) = held.get(child) else {
                return Some(format!(
                    "action #{} ({action:?}) needs {}, which the table does not hold",
                    e.action,
                    child.display(target)
                ));
            };
            let Some(best) = child_frontier.best(limits) else {
                return Some(format!(
                    "action #{} ({action:?}) needs {} within {}, and nothing stored for it fits",
                    e.action,
                    child.display(target),
                    budget.display(target)
                ));
            };
            children = children.saturating_add(weight.saturating_mul(best.cost));
        }
        let cost = linear.cost(children);
        if cost != e.cost {
            return Some(format!(
                "action #{} ({action:?}) combines its sub-specs to cost {cost}, and the entry says {}",
                e.action, e.cost
            ));
        }
    }
    None
}

/// What a deep verification did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifyReport {
    /// Specs whose frontiers were rebuilt.
    pub specs: u64,
    /// Frontier entries rebuilt (each an implementation).
    pub implementations: u64,
    /// Implementation-tree nodes built.
    pub nodes: u64,
}

/// Rebuilds every entry of the chosen specs and compares it with what is stored.
///
/// # Errors
/// [`DbError::Rebuild`] for the first entry (in table order) that does not rebuild as stored.
pub(crate) fn rebuild(
    table: &[(CanonicalSpec, Arc<Frontier>)],
    chosen: &[usize],
    target: &Target,
    config: &ActionConfig,
    path: &Path,
) -> Result<VerifyReport, DbError> {
    let memo = Memo::new();
    for (spec, frontier) in table {
        memo.insert(spec.clone(), Arc::clone(frontier));
    }
    let feasibility = Feasibility::new(target);
    let rebuild = Rebuild::new(&memo, target, config, &feasibility);
    let codec = rebuild.codec();
    let results: Vec<Result<(u64, u64), (String, String)>> = chosen
        .par_iter()
        .map(|&i| {
            let (spec, frontier) = &table[i];
            let name = || spec.display(target).to_string();
            let mut nodes = 0u64;
            for e in frontier.entries() {
                let limits = codec.decode(e.peaks);
                let (imp, found) = rebuild.best(spec, &limits).map_err(|err| (name(), err.to_string()))?;
                if found != *e {
                    return Err((name(), format!("under its own peaks, entry {e:?} rebuilds as {found:?}")));
                }
                if imp.cost != e.cost {
                    return Err((name(), format!("stored cost {} rebuilds as {}", e.cost, imp.cost)));
                }
                imp.visit(&mut |_| nodes += 1);
            }
            Ok((frontier.entries().len() as u64, nodes))
        })
        .collect();
    let mut report = VerifyReport::default();
    for r in results {
        let (implementations, nodes) =
            r.map_err(|(spec, reason)| DbError::Rebuild { path: path.into(), spec, reason })?;
        report.specs += 1;
        report.implementations += implementations;
        report.nodes += nodes;
    }
    Ok(report)
}
