//! Tests of the table format, validation, durability and merging, on small tables.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::Target;

use super::file::write_atomically_with;
use super::format::FORMAT_VERSION;
use super::*;
use crate::{ActionConfig, Memo, Search, TileSizes};

fn target() -> &'static Target {
    static T: OnceLock<Target> = OnceLock::new();
    T.get_or_init(|| Target::builtin("x86-avx2", 1).unwrap())
}

fn schema() -> &'static Schema<'static> {
    static S: OnceLock<Schema<'static>> = OnceLock::new();
    S.get_or_init(|| Schema::new(target(), ActionConfig::default()))
}

fn spec(text: &str) -> CanonicalSpec {
    LogicalSpec::parse(text, target()).unwrap().canonicalize(target()).unwrap()
}

fn matmul(m: u32, k: u32, n: u32) -> CanonicalSpec {
    spec(&format!("Matmul(1x{m}x{k}x{n}, u32 GL row-major, u32 GL row-major, u32 GL row-major)"))
}

/// A memo with the sub-specs of the given goals solved.
fn solved(goals: &[CanonicalSpec]) -> Arc<Memo> {
    let memo = Arc::new(Memo::new());
    for g in goals {
        Search::new(target()).threads(1).memo(Arc::clone(&memo)).fill(g).unwrap();
    }
    memo
}

/// A small table's bytes (a 1x1x2 matmul: a few hundred specs).
fn small_bytes() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| Table::from_memo(&solved(&[matmul(1, 1, 2)]), schema()).to_bytes())
}

fn path() -> &'static Path {
    Path::new("t.mdb")
}

fn load(bytes: &[u8]) -> Result<Table, DbError> {
    Table::from_bytes(bytes, path(), schema(), Validation::Full)
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn round_trip_keeps_every_entry_and_is_deterministic() {
    let memo = solved(&[matmul(2, 2, 2)]);
    let table = Table::from_memo(&memo, schema());
    let bytes = table.to_bytes();
    let back = load(&bytes).unwrap();
    assert_eq!(back.len(), memo.len());
    assert_eq!(back.entries(), memo.entries().as_slice());
    assert_eq!(back.to_bytes(), bytes, "encoding is deterministic");
    // A search with the loaded table solves nothing new.
    let warm = Search::new(target()).memo(Arc::new(back.to_memo())).solve(&matmul(2, 2, 2)).unwrap();
    assert_eq!((warm.report.specs_solved, warm.report.memo_hits), (0, 1));
    let stats = TableStats::of_bytes(&bytes, path()).unwrap();
    assert_eq!(stats.specs, memo.len() as u64);
    assert!(stats.frontiers < stats.specs, "identical frontiers are stored once");
    assert_eq!(back.verify(schema(), None, path()).unwrap().specs, memo.len() as u64);
}

#[test]
fn an_empty_table_round_trips() {
    let bytes = Table::new(schema()).to_bytes();
    assert!(load(&bytes).unwrap().is_empty());
}

#[test]
fn every_truncation_is_refused_as_truncated() {
    let bytes = small_bytes();
    assert!(bytes.len() < 20_000, "the small table has {} bytes", bytes.len());
    for len in 0..bytes.len() {
        match load(&bytes[..len]) {
            Err(DbError::Truncated { found, .. }) => assert_eq!(found, len as u64),
            other => panic!("a table cut to {len} bytes gave {other:?}"),
        }
    }
    assert!(load(bytes).is_ok());
}

#[test]
fn every_flipped_byte_is_refused() {
    let bytes = small_bytes();
    for at in 0..bytes.len() {
        let mut damaged = bytes.to_vec();
        damaged[at] ^= 0x10;
        let err = load(&damaged).expect_err("a damaged table loads");
        let expected = match at {
            0..8 => matches!(err, DbError::NotATable { .. }),
            8..12 => matches!(err, DbError::FormatVersion { .. }),
            _ => matches!(err, DbError::Corrupt { .. } | DbError::Truncated { .. }),
        };
        assert!(expected, "flipping byte {at} gave {err}");
    }
}

#[test]
fn foreign_files_are_not_tables() {
    for bytes in [&b"hello, world\n"[..], b"", b"\x89MOR", b"PK\x03\x04 a zip file, not a table at all"] {
        let err = load(bytes).unwrap_err();
        assert!(matches!(err, DbError::NotATable { .. } | DbError::Truncated { .. }), "{err}");
    }
}

/// Rewrites a table with a different identity (a valid file from another build or target).
fn with_identity(identity: TableIdentity) -> Vec<u8> {
    let container = format::read(small_bytes(), path()).unwrap();
    let metadata = format::Metadata { identity, ..container.metadata };
    format::write(&metadata, &container.payload)
}

#[test]
fn other_versions_targets_and_configurations_are_refused_with_the_reason() {
    let mine = schema().identity.clone();
    let cases = [
        (
            TableIdentity { model_version: MODEL_VERSION + 1, ..mine.clone() },
            &*format!("model version {}", MODEL_VERSION + 1),
        ),
        (TableIdentity { model_probe: mine.model_probe ^ 1, ..mine.clone() }, "actions or cost model differ"),
        (TableIdentity { target_name: "x86-avx512".into(), ..mine.clone() }, "written for target x86-avx512"),
        (TableIdentity { target_fingerprint: 7, ..mine.clone() }, "fingerprint 0000000000000007"),
        (
            TableIdentity {
                actions: ActionConfig { tile_sizes: TileSizes::All, ..mine.actions },
                ..mine.clone()
            },
            "all tile sizes",
        ),
    ];
    for (identity, message) in cases {
        let err = load(&with_identity(identity)).unwrap_err();
        assert!(matches!(err, DbError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains(message) && err.to_string().contains("delete it"), "{err}");
    }
    let mut future = small_bytes().to_vec();
    future[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = load(&future).unwrap_err();
    assert!(err.to_string().contains("format version 2"), "{err}");
    // Another real target.
    let avx512 = Target::builtin("x86-avx512", 1).unwrap();
    let other = Schema::new(&avx512, ActionConfig::default());
    let err = Table::from_bytes(small_bytes(), path(), &other, Validation::Structure).unwrap_err();
    assert!(err.to_string().contains("not x86-avx512"), "{err}");
}

/// A table whose payload was changed after encoding, with a fresh checksum (a buggy writer).
fn tampered(change: impl FnOnce(&mut payload::Payload)) -> Vec<u8> {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    let base = BASE.get_or_init(|| Table::from_memo(&solved(&[matmul(4, 2, 4)]), schema()).to_bytes());
    let container = format::read(base, path()).unwrap();
    let mut payload = payload::Payload::from_bytes(&container.payload).unwrap();
    change(&mut payload);
    let raw = payload.to_bytes();
    format::write(&format::Metadata { payload_bytes: raw.len() as u64, ..container.metadata }, &raw)
}

/// A change to a payload.
type Tamper = dyn FnOnce(&mut payload::Payload);

#[test]
fn validation_refuses_wrong_content_behind_a_good_checksum() {
    let checks: [(&str, Box<Tamper>, Validation); 6] = [
        ("action #", Box::new(|p| p.actions.iter_mut().for_each(|a| *a = 999)), Validation::Full),
        ("combines its sub-specs", Box::new(|p| p.costs[0] += 1), Validation::Full),
        (
            "exceed the target's capacities",
            Box::new(|p| p.peaks.iter_mut().for_each(|b| *b = 120)),
            Validation::Structure,
        ),
        ("not in canonical form", Box::new(make_non_canonical), Validation::Structure),
        ("depth 0", Box::new(|p| p.depths[0] = 0), Validation::Structure),
        ("shapes are not in strictly ascending order", Box::new(swap_two_shapes), Validation::Structure),
    ];
    for (message, change, validation) in checks {
        let bytes = tampered(change);
        let err = Table::from_bytes(&bytes, path(), schema(), validation).unwrap_err();
        assert!(matches!(err, DbError::Invalid { .. }), "{message}: {err}");
        assert!(err.to_string().contains(message), "expected `{message}` in: {err}");
    }
}

/// Clears `serial_only` of a family with an operand from which no parallel level is reachable.
fn make_non_canonical(p: &mut payload::Payload) {
    let family = p
        .families
        .iter_mut()
        .find(|f| f.operands.iter().any(|o| !target().can_reach_parallel(o.level)))
        .expect("some spec lives in registers");
    assert!(family.serial_only);
    family.serial_only = false;
}

/// Swaps the shapes of the first two specs of a family that has two.
fn swap_two_shapes(p: &mut payload::Payload) {
    let mut at = 0;
    for (family, &size) in p.families.iter().zip(&p.family_sizes) {
        let rank = usize::from(family.rank);
        if size >= 2 && p.dims[at..at + rank] != p.dims[at + rank..at + 2 * rank] {
            for i in 0..rank {
                p.dims.swap(at + i, at + rank + i);
            }
            return;
        }
        at += rank * size as usize;
    }
    panic!("no family has two specs");
}

fn write(path: &Path, bytes: &[u8]) {
    write_atomically(path, bytes).unwrap();
}

#[test]
fn a_save_interrupted_before_the_rename_leaves_the_old_table() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    write(&table_path, small_bytes());
    let bigger = Table::from_memo(&solved(&[matmul(2, 1, 2)]), schema()).to_bytes();
    let err = write_atomically_with(&table_path, &bigger, &mut |_| Err(std::io::Error::other("crash")))
        .unwrap_err();
    assert!(matches!(err, DbError::Io { .. }));
    assert_eq!(std::fs::read(&table_path).unwrap(), small_bytes(), "the old table survives");
    // A writer killed there leaves its temp file; the next save under the lock removes it.
    let stale = dir.path().join(".t.mdb.tmp.99999.0");
    std::fs::write(&stale, b"partial").unwrap();
    let mut file = TableFile::new(&table_path);
    let loaded = file.load(schema(), Validation::Structure).unwrap();
    let mut more = Table::from_memo(&solved(&[matmul(2, 1, 2)]), schema());
    more.merge(&loaded, target()).unwrap();
    let report = file.save(&more, schema(), &mut |_| {}).unwrap();
    assert!(report.written);
    assert!(!stale.exists(), "the stale temp file is removed");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert_eq!(names.len(), 2, "only the table and its lock remain: {names:?}");
}

#[test]
fn a_bad_table_on_disk_is_never_overwritten_by_a_save() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    let damaged = &small_bytes()[..100];
    std::fs::write(&table_path, damaged).unwrap();
    let mut file = TableFile::new(&table_path);
    assert!(file.load(schema(), Validation::Structure).is_err());
    let table = Table::from_memo(&solved(&[matmul(1, 1, 2)]), schema());
    assert!(matches!(file.save(&table, schema(), &mut |_| {}), Err(DbError::Truncated { .. })));
    assert_eq!(std::fs::read(&table_path).unwrap(), damaged);
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let dir = temp_dir();
    let table_path: PathBuf = dir.path().join("t.mdb");
    let goals = [[matmul(1, 1, 2), matmul(2, 1, 1)], [matmul(1, 2, 1), matmul(2, 2, 1)]];
    let expected: usize =
        solved(&[goals[0][0].clone(), goals[0][1].clone(), goals[1][0].clone(), goals[1][1].clone()]).len();
    std::thread::scope(|s| {
        for pair in &goals {
            let table_path = &table_path;
            s.spawn(move || {
                let mut file = TableFile::new(table_path);
                for goal in pair {
                    let memo = solved(std::slice::from_ref(goal));
                    file.save(&Table::from_memo(&memo, schema()), schema(), &mut |_| {}).unwrap();
                }
            });
        }
    });
    let table = TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    assert_eq!(table.len(), expected, "every writer's specs are in the table");
}

#[test]
fn a_second_writer_waits_for_the_lock() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    let held = TableLock::acquire(&table_path, &mut |_| panic!("nobody holds it yet")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let table = Table::from_memo(&solved(&[matmul(1, 1, 2)]), schema());
            let mut waited = false;
            TableFile::new(&table_path)
                .save(&table, schema(), &mut |lock| {
                    waited = true;
                    assert_eq!(lock, lock_path(&table_path));
                    tx.send(()).unwrap();
                })
                .unwrap();
            assert!(waited);
        });
        rx.recv().unwrap();
        assert!(!table_path.exists(), "nothing is written while the lock is held");
        drop(held);
    });
    assert!(load(&std::fs::read(&table_path).unwrap()).is_ok());
}

#[test]
fn merging_adds_missing_specs_and_refuses_disagreements() {
    let a = Table::from_memo(&solved(&[matmul(2, 1, 1)]), schema());
    let b = Table::from_memo(&solved(&[matmul(1, 1, 2)]), schema());
    let both = Table::from_memo(&solved(&[matmul(2, 1, 1), matmul(1, 1, 2)]), schema());
    let mut merged = a.clone();
    let report = merged.merge(&b, target()).unwrap();
    assert_eq!(report.total as usize, both.len());
    assert_eq!(merged.entries(), both.entries());
    assert_eq!(report.added + (a.len() as u64), report.total);
    // A table claiming another frontier for specs `a` holds (the last frontier's costs, raised).
    let bad_bytes = {
        let container = format::read(&a.to_bytes(), path()).unwrap();
        let mut p = payload::Payload::from_bytes(&container.payload).unwrap();
        let last = p.costs.len() - 1;
        p.costs[last] += 1;
        let raw = p.to_bytes();
        format::write(&format::Metadata { payload_bytes: raw.len() as u64, ..container.metadata }, &raw)
    };
    let bad = Table::from_bytes(&bad_bytes, path(), schema(), Validation::Structure).unwrap();
    let mut target_table = a.clone();
    let err = target_table.merge(&bad, target()).unwrap_err();
    assert!(matches!(err, DbError::Disagree { count: 1.., .. }), "{err}");
    assert_eq!(target_table.entries(), a.entries(), "a refused merge changes nothing");
}
