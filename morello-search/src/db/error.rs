//! Why a table could not be read, written or merged, and whose fault it is.
//!
//! Every message names the file and says what to do. The library does not know the command line,
//! so it says "use another table"; the CLI adds its flags.

use std::path::PathBuf;

use crate::db::identity::TableIdentity;

/// A table problem. Nothing here is a panic: a damaged or foreign file is an error value.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Reading, writing, renaming or locking failed (the system: permissions, a full disk, ...).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`read`, `write`, `lock`, ...).
        action: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// The default table was asked for, but there is no cache directory to hold it.
    #[error(
        "no cache directory for the default table: set XDG_CACHE_HOME or HOME to an absolute path, or use another table"
    )]
    NoCacheDirectory,
    /// The file does not start like a table (the user pointed at another kind of file).
    #[error("{} is not a morello table (it does not start with the table magic bytes): use another path for the table", path.display())]
    NotATable {
        /// The file.
        path: PathBuf,
    },
    /// The file ends early (an interrupted copy or download; morello's own writes are atomic).
    #[error("{} is truncated ({found} of {} bytes): delete it or use another table", path.display(), expected.map_or_else(|| "at least 32".to_string(), |e| e.to_string()))]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Its length.
        found: u64,
        /// The length its header gives, if the header is complete.
        expected: Option<u64>,
    },
    /// The content does not match its checksum or does not decode (the file was damaged).
    #[error("{} is corrupt ({detail}): delete it or use another table", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The file was written in another container format (an older or newer morello).
    #[error("{} has table format version {found}, and this morello reads version {supported}: delete it (or use the morello that wrote it) or use another table", path.display())]
    FormatVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The table is intact but for another target, model version or action configuration.
    #[error("{} {mismatch}: delete it or use another table", path.display())]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        mismatch: Box<Mismatch>,
    },
    /// The file is intact but a stored result is wrong for this target and model (written by a
    /// buggy or modified morello): its checksum cannot catch that, validation does.
    #[error("{} holds an invalid entry for {spec}: {reason}; delete it or use another table", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The spec (text form, or its stored fields when it is not a valid spec).
        spec: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A search found part of the table damaged (a block that fails its checksum, an invalid
    /// entry): the process that found it never writes to the file.
    #[error("{message}; nothing was saved to it")]
    Damaged {
        /// What the search found (it names the file and the block).
        message: String,
    },
    /// A stored implementation does not rebuild as stored (found by a deep verification: the table
    /// is wrong, or reconstruction has a bug).
    #[error("{} does not rebuild {spec}: {reason}", path.display())]
    Rebuild {
        /// The file.
        path: PathBuf,
        /// The spec.
        spec: String,
        /// What differs.
        reason: String,
    },
    /// Two tables give different frontiers for the same spec. The search is deterministic, so one
    /// of them is wrong (a bug, or a change that should have bumped the model version); nothing is
    /// written.
    #[error("the tables disagree on {count} spec(s), for example {example}: merge refused, nothing written")]
    Disagree {
        /// How many specs differ.
        count: usize,
        /// The first one (text form).
        example: String,
    },
    /// Two tables with different identities cannot be merged (the user's choice of files).
    #[error("cannot merge tables for different targets or models: {first} versus {second}")]
    MergeIdentity {
        /// The first table's identity.
        first: Box<TableIdentity>,
        /// The second table's identity.
        second: Box<TableIdentity>,
    },
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
        found: crate::actions::ActionConfig,
        /// The configuration of this search.
        expected: crate::actions::ActionConfig,
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
    pub fn with_target_difference(self, stored: &str, expected: &morello_core::target::Target) -> Mismatch {
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

impl DbError {
    /// An I/O error on `path`.
    pub(super) fn io(path: impl Into<PathBuf>, action: &'static str, source: std::io::Error) -> Self {
        DbError::Io { path: path.into(), action, source }
    }

    /// Whether the file itself is at fault (unreadable as a table, or for another target or
    /// model), as opposed to the system ([`DbError::Io`]) or a merge conflict.
    pub fn is_bad_file(&self) -> bool {
        matches!(
            self,
            DbError::NotATable { .. }
                | DbError::Truncated { .. }
                | DbError::Corrupt { .. }
                | DbError::FormatVersion { .. }
                | DbError::Mismatch { .. }
                | DbError::Invalid { .. }
                | DbError::Damaged { .. }
        )
    }
}
