//! What a table is for: the target, the action configuration, and the version of the model.
//!
//! A stored frontier is only right for the exact target description, action list and cost model
//! that computed it: its actions are indices into `actions(spec)`. A table therefore records
//!
//! ```text
//! target name + fingerprint   Target::fingerprint, a hash of the full description
//! MODEL_VERSION               bumped by hand when actions or the cost model change
//! model probe                 a hash of the frontiers of one small search, and of the actions
//!                             and costs of a larger spec two levels deep
//! action configuration        tile sizes and pruning, which change the action lists
//! sources                     a hash of the sources of morello-core and morello-search
//! ```
//!
//! The probe is a safety net for a forgotten [`MODEL_VERSION`] bump: a change to the actions, the
//! kernels or the cost model almost always changes some frontier of a small matmul, and then the
//! probe, so the old table is refused instead of answering with stale decisions. Computing it is
//! a small search (milliseconds), so it runs only when needed: a table written by a build of the
//! same sources ([`MODEL_SOURCES`]) has this build's probe (the search is deterministic), and
//! the probe is computed only for a table from other sources, or to write a new table.
use std::fmt;
use std::sync::OnceLock;

use morello_core::cost::{memory_units, move_cost};
use morello_core::dtype::Dtype;
use morello_core::kernels::CalibrationSites;
use morello_core::spec::{CanonicalSpec, LogicalSpec, SpecBuilder};
use morello_core::target::{Target, fnv1a};
use serde::{Deserialize, Serialize};

use crate::actions::{ActionConfig, actions};
use crate::feasible::Feasibility;
use crate::memo::Memo;
use crate::search::Search;

/// The version of the actions and the cost model that stored decisions refer to.
///
/// Bump it in the same commit as any change that can alter a stored frontier or what an action
/// index means:
///
/// - which actions [`crate::actions::actions`] lists for a spec, or their order (a new rewrite, a
///   new layout or vector size for moves, a different tile-size rule, a change to pruning);
/// - what an action does (its sub-specs, its [`crate::actions::Plan`]);
/// - the cost model or peak accounting (`morello_core::cost`, a kernel's cost or memory,
///   [`crate::peaks`]), or the solver's frontier rules ([`crate::frontier`]);
/// - the canonical form of specs (`CanonicalSpec`), which keys the table.
///
/// A changed target description needs no bump: the target's fingerprint is part of the identity.
/// Tables with another version are refused (a user deletes them or keeps them for the old
/// binary); the default table's file name carries the version, so upgrading starts a new one.
///
/// 21 is never a model version: tables exist that a build with another model wrote as version 21,
/// so no build may read them as its own.
pub const MODEL_VERSION: u32 = 31;

/// A hash of the sources of `morello-core` and `morello-search` this build was compiled from
/// (0 if unknown): two builds with the same value compute the same frontiers.
pub const MODEL_SOURCES: u64 = match u64::from_str_radix(env!("MORELLO_MODEL_SOURCES"), 16) {
    Ok(v) => v,
    Err(_) => 0,
};

/// Everything a table must match to be used by a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableIdentity {
    /// The target's name.
    pub target_name: String,
    /// [`Target::fingerprint`]: a hash of the target's full description.
    pub target_fingerprint: u64,
    /// [`MODEL_VERSION`] of the morello that wrote the table.
    pub model_version: u32,
    /// [`model_probe`] of the morello that wrote the table.
    pub model_probe: u64,
    /// The action configuration the frontiers were computed with.
    pub actions: ActionConfig,
    /// [`MODEL_SOURCES`] of the morello that wrote the table (not compared: it only tells
    /// whether the probe needs computing).
    pub sources: u64,
}

impl TableIdentity {
    /// The identity of tables for `target` and `config` written by this build.
    pub fn new(target: &Target, config: &ActionConfig) -> Self {
        TableIdentity {
            target_name: target.name().to_string(),
            target_fingerprint: target.fingerprint(),
            model_version: MODEL_VERSION,
            model_probe: model_probe(target, config),
            actions: *config,
            sources: MODEL_SOURCES,
        }
    }
}

impl fmt::Display for TableIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "target {} ({:016x}), model version {} (probe {:016x}), {}",
            self.target_name, self.target_fingerprint, self.model_version, self.model_probe, self.actions
        )
    }
}

/// A hash of every frontier of one small search (a `1x2x2x2` f32 matmul in the home level), which
/// changes when the actions, kernels or cost model change for small specs, and of what the
/// actions and the cost model make of two larger specs (a `6x256x40` matmul and a register-block
/// step, two levels of actions deep, without a search).
///
/// It is a check against forgetting to bump [`MODEL_VERSION`], not a replacement: a change that
/// only affects specs neither part reaches goes unnoticed. It costs about 20 ms.
pub fn model_probe(target: &Target, config: &ActionConfig) -> u64 {
    let Some(mut bytes) = small_probe_bytes(target, config) else {
        // A target without f32 in its home level: only the version guards its tables.
        return 0;
    };
    bytes.extend(wide_probe_bytes(target, config));
    fnv1a(&bytes)
}

/// Every frontier of the small search of [`model_probe`], or `None` where the target cannot
/// express its spec or the search fails.
pub(crate) fn small_probe_bytes(target: &Target, config: &ActionConfig) -> Option<Vec<u8>> {
    let spec = probe_spec(target)?;
    let memo = std::sync::Arc::new(Memo::new());
    let search = Search::new(target).configure_actions(*config).memo(std::sync::Arc::clone(&memo));
    search.fill(&spec).ok()?;
    let mut bytes = Vec::new();
    for (spec, frontier) in memo.entries() {
        // Serialising a spec cannot fail; an empty key would only weaken the probe.
        bytes.extend(bincode::serialize(&spec).unwrap_or_default());
        for e in frontier.entries() {
            bytes.extend_from_slice(&e.cost.to_le_bytes());
            bytes.extend_from_slice(&e.peaks.0.to_le_bytes());
            bytes.extend_from_slice(&e.depth.to_le_bytes());
            bytes.extend_from_slice(&e.action.to_le_bytes());
        }
        bytes.push(b'\n');
    }
    Some(bytes)
}

/// What the actions and the cost model make of specs the small search never reaches: a `6x256x40`
/// f32 matmul in the home level (`k` long enough to be peeled and tiled by every chunk, rows of
/// 160 bytes, off the cache-line grid), and one step of a register block (`MatmulAccum 1x6x1xn`,
/// `n` four of the widest vectors, its output in them and its inputs in the nearest cache, where
/// loops share broadcasts). Every action of each spec and of each of its actions' sub-specs (two
/// levels deep, no search), with the action's linear form (its constant cost, weights, memory
/// and credit), each sub-spec, and each operand's memory units and move cost at its level (so
/// set conflicts and line counts at the caches it moves into count).
pub(crate) fn wide_probe_bytes(target: &Target, config: &ActionConfig) -> Vec<u8> {
    let feasibility = Feasibility::new(target);
    let mut bytes = Vec::new();
    let record = |spec: &CanonicalSpec, bytes: &mut Vec<u8>| {
        let listed = actions(spec, target, config, &feasibility);
        for (action, plan) in &listed {
            bytes.extend(bincode::serialize(action).unwrap_or_default());
            let linear = plan.combine.linear(plan.children.len(), target);
            bytes.extend(format!("{linear:?}").into_bytes());
            for child in &plan.children {
                bytes.extend(bincode::serialize(child).unwrap_or_default());
                for operand in &child.operands {
                    bytes.extend_from_slice(&memory_units(operand, target).to_le_bytes());
                    bytes.extend_from_slice(&move_cost(operand, target).to_le_bytes());
                }
            }
            bytes.push(b'\n');
        }
        listed
    };
    let matmul = SpecBuilder::matmul(6, 256, 40).dtype(Dtype::F32).build(target).ok();
    for root in matmul.into_iter().chain(register_step(target)) {
        for (_, plan) in record(&root, &mut bytes) {
            for child in &plan.children {
                record(child, &mut bytes);
            }
        }
    }
    bytes
}

/// A 6-row step of a register block four of the target's widest f32 vectors wide, its inputs in
/// the nearest cache, if the target has such levels.
fn register_step(target: &Target) -> Option<CanonicalSpec> {
    let sites = CalibrationSites::of(target).ok()?;
    let (lanes, l1, vrf) = (sites.lanes(), &sites.l1, &sites.vrf);
    let text = format!(
        "MatmulAccum(1x6x1x{}, f32 {l1} row-major, f32 {l1} row-major, f32 {vrf} row-major v{lanes})",
        4 * lanes
    );
    LogicalSpec::parse(&text, target).ok()?.canonicalize(target).ok()
}

/// The probe's goal, if the target can express it.
fn probe_spec(target: &Target) -> Option<CanonicalSpec> {
    SpecBuilder::matmul(2, 2, 2).dtype(Dtype::F32).build(target).ok()
}

/// What a table must match, with what validating it needs: the target and the action
/// configuration; the identity's probe is computed on first need (see the module docs).
#[derive(Debug, Clone)]
pub struct Schema<'t> {
    /// The target.
    pub target: &'t Target,
    /// The action configuration.
    pub actions: ActionConfig,
    probe: OnceLock<u64>,
}

impl<'t> Schema<'t> {
    /// The schema of tables for `target` and `actions` written by this build.
    pub fn new(target: &'t Target, actions: ActionConfig) -> Self {
        Schema { target, actions, probe: OnceLock::new() }
    }

    /// This build's model probe for the target and actions (computed once).
    pub fn probe(&self) -> u64 {
        *self.probe.get_or_init(|| model_probe(self.target, &self.actions))
    }

    /// The identity tables written by this build have.
    pub fn identity(&self) -> TableIdentity {
        TableIdentity {
            target_name: self.target.name().to_string(),
            target_fingerprint: self.target.fingerprint(),
            model_version: MODEL_VERSION,
            model_probe: self.probe(),
            actions: self.actions,
            sources: MODEL_SOURCES,
        }
    }

    /// How a table's identity differs from this build's, if it does. The probe is computed only
    /// if the table was written from other sources; otherwise the table's is this build's.
    pub fn mismatch(&self, found: &TableIdentity) -> Option<Mismatch> {
        let same_sources = found.sources == MODEL_SOURCES && MODEL_SOURCES != 0;
        let base = TableIdentity {
            target_name: self.target.name().to_string(),
            target_fingerprint: self.target.fingerprint(),
            model_version: MODEL_VERSION,
            model_probe: found.model_probe,
            actions: self.actions,
            sources: MODEL_SOURCES,
        };
        if let Some(m) = Mismatch::between(found, &base) {
            return Some(m);
        }
        if same_sources {
            let _ = self.probe.set(found.model_probe);
            return None;
        }
        Mismatch::between(found, &TableIdentity { model_probe: self.probe(), ..base })
    }
}

/// How a table's identity differs from the one wanted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// Another target (or the same name with another description: other capacities, processors, costs).
    #[error(
        "was written for target {found_name} (fingerprint {found_fingerprint:016x}), not {expected_name} (fingerprint {expected_fingerprint:016x}){}",
        difference.as_ref().map(|d| format!(": {d}")).unwrap_or_default()
    )]
    Target {
        /// The target in the file.
        found_name: String,
        /// Its fingerprint.
        found_fingerprint: u64,
        /// The target of this search.
        expected_name: String,
        /// Its fingerprint.
        expected_fingerprint: u64,
        /// The first field in which the two descriptions differ (`processors is 1 in the table,
        /// 2 here`), where the table's description was at hand.
        difference: Option<String>,
    },
    /// Another model version.
    #[error("was written with model version {found}, and this morello has model version {expected}")]
    ModelVersion {
        /// The version in the file.
        found: u32,
        /// This build's version.
        expected: u32,
    },
    /// The same model version but a different model probe: the actions or the cost model changed
    /// without a version bump (a bug in the build that wrote the table, or in this one).
    #[error(
        "was written by a morello whose actions or cost model differ from this one's (model version {version} in both, probe {found:016x} versus {expected:016x})"
    )]
    ModelProbe {
        /// The shared model version.
        version: u32,
        /// The probe in the file.
        found: u64,
        /// This build's probe.
        expected: u64,
    },
    /// Another action configuration (such as all tile sizes instead of powers of two).
    #[error("was written with {found}, not {expected}")]
    Actions {
        /// The configuration in the file.
        found: ActionConfig,
        /// The configuration of this search.
        expected: ActionConfig,
    },
}

impl Mismatch {
    /// The first difference between a table's identity and the wanted one, if any.
    pub fn between(found: &TableIdentity, expected: &TableIdentity) -> Option<Mismatch> {
        if found.target_name != expected.target_name
            || found.target_fingerprint != expected.target_fingerprint
        {
            return Some(Mismatch::Target {
                found_name: found.target_name.clone(),
                found_fingerprint: found.target_fingerprint,
                expected_name: expected.target_name.clone(),
                expected_fingerprint: expected.target_fingerprint,
                difference: None,
            });
        }
        if found.model_version != expected.model_version {
            return Some(Mismatch::ModelVersion {
                found: found.model_version,
                expected: expected.model_version,
            });
        }
        if found.model_probe != expected.model_probe {
            return Some(Mismatch::ModelProbe {
                version: found.model_version,
                found: found.model_probe,
                expected: expected.model_probe,
            });
        }
        if found.actions != expected.actions {
            return Some(Mismatch::Actions { found: found.actions, expected: expected.actions });
        }
        None
    }
}

impl Mismatch {
    /// Names, in a target mismatch, the first field in which the table's stored target description
    /// (`stored`, its JSON) differs from `expected`'s, so that two targets of the same name (for
    /// instance the host's built-in target searched for another processor count) are told apart.
    pub fn with_target_difference(self, stored: &str, expected: &Target) -> Mismatch {
        match self {
            Mismatch::Target {
                found_name, found_fingerprint, expected_name, expected_fingerprint, ..
            } => {
                let difference = serde_json::from_str::<serde_json::Value>(stored).ok().and_then(|found| {
                    let wanted = serde_json::to_value(expected.description_value()).ok()?;
                    first_difference(&found, &wanted, "")
                });
                Mismatch::Target {
                    found_name,
                    found_fingerprint,
                    expected_name,
                    expected_fingerprint,
                    difference,
                }
            }
            other => other,
        }
    }
}

/// The first leaf (in key order) at which two JSON values differ: `path is A in the table, B here`.
fn first_difference(found: &serde_json::Value, wanted: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    let join = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    match (found, wanted) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (x, y) = (a.get(k).unwrap_or(&Value::Null), b.get(k).unwrap_or(&Value::Null));
                first_difference(x, y, &join(k))
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]"))),
        _ if found == wanted => None,
        _ => {
            let what = if path.is_empty() { "the description" } else { path };
            Some(format!("{what} is {found} in the table, {wanted} here"))
        }
    }
}
