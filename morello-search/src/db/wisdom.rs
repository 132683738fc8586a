//! Wisdom: the implementation that measured fastest among the model's near-best candidates for a
//! spec on one host, kept in the table beside the model's answer (`morello search --plan measure`).
//!
//! ```text
//! key     the spec's key, the memory limits of the search, the host's fingerprint
//! value   the winner's decisions (action indices, parents first: `crate::decisions_of`), its
//!         predicted cost, its median seconds per call, the model's best's, the candidates timed
//! stored  in every commit's index record (a few entries per measured spec), so it is read when
//!         the table is opened; a save writes the entries it adds with its commit
//! save    one entry per key: what this process measured replaces the file's (a new
//!         measurement, or one that replaces an entry that no longer rebuilds)
//! merge   one entry per key: a key both tables hold keeps the faster entry
//! ```
//!
//! The table never times anything and never trusts an entry: a search re-applies the decisions
//! ([`crate::rebuild_decisions`]) and compares the rebuilt cost with the stored one, and an entry
//! that does not rebuild is ignored (the caller warns and measures again).

use morello_core::target::{MemVec, Target};
use serde::{Deserialize, Serialize};

/// Memory limits as a wisdom entry keeps them: one number per level of `target`.
pub fn wisdom_limits(limits: &MemVec, target: &Target) -> Vec<u64> {
    limits.0.iter().take(target.levels().len()).copied().collect()
}

/// The machine a measurement was taken on: a hash of what makes timings differ (the CPU's model,
/// the instruction-set features the target uses, the caches), and the text it hashes, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WisdomHost {
    /// The hash of `description`.
    pub fingerprint: u64,
    /// The CPU, its features and caches, one line.
    pub description: String,
}

/// One measured winner (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WisdomEntry {
    /// The spec's key in the table ([`crate::db::spec_key`]).
    pub spec: Vec<u8>,
    /// The memory limits the search ran under, per level.
    pub limits: Vec<u64>,
    /// Where it was measured.
    pub host: WisdomHost,
    /// The winner's action indices, parents first ([`crate::decisions_of`]).
    pub decisions: Vec<u32>,
    /// The winner's predicted cost (a rebuild must give exactly this).
    pub cost: u64,
    /// The winner's median seconds per call.
    pub seconds: f64,
    /// The model's best's median seconds per call in the same run.
    pub model_seconds: f64,
    /// How many candidates were timed.
    pub candidates: u32,
}

impl WisdomEntry {
    /// Whether `self` answers the same question as `other`: same spec, limits and host.
    pub fn same_key(&self, other: &WisdomEntry) -> bool {
        self.spec == other.spec
            && self.limits == other.limits
            && self.host.fingerprint == other.host.fingerprint
    }

    /// Whether `self` is for `spec` (a key) under `limits` on the host with `fingerprint`.
    pub fn answers(&self, spec: &[u8], limits: &[u64], fingerprint: u64) -> bool {
        self.spec == spec && self.limits == limits && self.host.fingerprint == fingerprint
    }

    fn sort_key(&self) -> (&[u8], &[u64], u64) {
        (&self.spec, &self.limits, self.host.fingerprint)
    }
}

/// `base` with `added` folded in: one entry per key, a key both hold keeping the entry with the
/// lower time (`base`'s on a tie), sorted by key so that equal inputs give equal bytes.
pub fn merge_wisdom(base: &[WisdomEntry], added: &[WisdomEntry]) -> Vec<WisdomEntry> {
    let mut out: Vec<WisdomEntry> = base.to_vec();
    for entry in added {
        match out.iter_mut().find(|e| e.same_key(entry)) {
            Some(held) if entry.seconds < held.seconds => *held = entry.clone(),
            Some(_) => {}
            None => out.push(entry.clone()),
        }
    }
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

/// `base` with `added` folded in: one entry per key, `added`'s replacing `base`'s, sorted by key.
pub fn replace_wisdom(base: &[WisdomEntry], added: &[WisdomEntry]) -> Vec<WisdomEntry> {
    let mut out: Vec<WisdomEntry> =
        base.iter().filter(|b| !added.iter().any(|a| a.same_key(b))).cloned().collect();
    out.extend(added.iter().cloned());
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(host: u64, seconds: f64) -> WisdomEntry {
        WisdomEntry {
            spec: vec![1, 2, 3],
            limits: vec![0; 3],
            host: WisdomHost { fingerprint: host, description: format!("cpu {host}") },
            decisions: vec![0, 1],
            cost: 10,
            seconds,
            model_seconds: seconds * 1.1,
            candidates: 3,
        }
    }

    #[test]
    fn merging_keeps_one_entry_per_host_and_the_faster_of_two_for_one() {
        let a = [entry(1, 2.0), entry(2, 5.0)];
        let b = [entry(2, 4.0), entry(3, 1.0), entry(1, 3.0)];
        let merged = merge_wisdom(&a, &b);
        let hosts: Vec<(u64, f64)> = merged.iter().map(|e| (e.host.fingerprint, e.seconds)).collect();
        assert_eq!(hosts, vec![(1, 2.0), (2, 4.0), (3, 1.0)]);
        assert_eq!(merge_wisdom(&b, &a), merged, "the order of the inputs does not matter");
        let replaced = replace_wisdom(&a, &[entry(1, 3.0)]);
        let hosts: Vec<(u64, f64)> = replaced.iter().map(|e| (e.host.fingerprint, e.seconds)).collect();
        assert_eq!(hosts, vec![(1, 3.0), (2, 5.0)], "a new measurement replaces the old one");
    }
}
