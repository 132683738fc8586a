//! Tests of the table format, validation, durability and merging, on small tables.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use morello_core::spec::{CanonicalSpec, LogicalSpec};
use morello_core::target::{MemVec, Target};

use super::file::write_atomically_with;
use super::format::FORMAT_VERSION;
use super::reader::StoredEntry;
use super::*;
use crate::{ActionConfig, Entry, Memo, Search, SearchError, TileSizes};

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

/// A new directory and the table `t.mdb` in it, holding a 4x4x4 matmul's search.
fn saved_matmul_table() -> (tempfile::TempDir, PathBuf) {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    search_and_save(&table_path, &matmul(4, 4, 4));
    (dir, table_path)
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
    assert!(stats.frontiers < stats.specs, "many specs share a frontier");
    assert_eq!((stats.runs, stats.commits, stats.dead_bytes), (1, 1, 0));
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
    let good = load(bytes).unwrap();
    let inactive = format::SLOT_OFFSETS[1] as usize..format::SLOT_OFFSETS[1] as usize + format::SLOT_BYTES;
    for at in 0..bytes.len() {
        let mut damaged = bytes.to_vec();
        damaged[at] ^= 0x10;
        if inactive.contains(&at) {
            // The slot the next commit writes: a torn write there leaves the committed state.
            assert_eq!(load(&damaged).unwrap().entries(), good.entries(), "flipping byte {at}");
            continue;
        }
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

/// The stored (key, entries) of a table's bytes, in key order.
fn stored(bytes: &[u8]) -> Vec<StoredEntry> {
    reader::Reader::open(Box::new(bytes.to_vec()), path(), target().levels().len()).unwrap().scan().unwrap()
}

/// A file with this metadata and these stored entries, written as they are (a buggy writer).
fn file_of(metadata: &format::Metadata, entries: &[StoredEntry]) -> Vec<u8> {
    let borrowed: Vec<(Vec<u8>, &[Entry])> = entries.iter().map(|(k, e)| (k.clone(), e.as_slice())).collect();
    let mut out = Vec::new();
    writer::write_fresh(&mut out, metadata, &borrowed, &[], target().levels().len()).unwrap();
    out
}

fn metadata_of(bytes: &[u8]) -> format::Metadata {
    format::read_header(&bytes.to_vec(), path()).unwrap().metadata
}

/// Rewrites a table with a different identity (a valid file from another build or target).
fn with_identity(identity: TableIdentity) -> Vec<u8> {
    let metadata = format::Metadata { identity, ..metadata_of(small_bytes()) };
    file_of(&metadata, &stored(small_bytes()))
}

/// `target` with its L1 cut to `ways` ways of the same capacity (more sets).
fn with_l1_ways(target: &Target, ways: u32) -> Target {
    let text = target.description_value().to_toml().unwrap();
    let (before, l1) = text.split_at(text.find("name = \"L1\"").unwrap());
    let field = |name: &str| -> u32 {
        let start = l1.find(&format!("{name} = ")).unwrap() + name.len() + 3;
        l1[start..].lines().next().unwrap().trim().parse().unwrap()
    };
    let (old_ways, old_sets) = (field("ways"), field("sets"));
    let l1 = l1.replacen(&format!("ways = {old_ways}"), &format!("ways = {ways}"), 1).replacen(
        &format!("sets = {old_sets}"),
        &format!("sets = {}", old_sets * old_ways / ways),
        1,
    );
    Target::from_toml(&format!("{before}{l1}")).unwrap()
}

#[test]
fn the_probe_sees_set_conflicts_that_its_small_search_does_not() {
    // A forgotten version bump after a change to how tiles crowd cache sets (which only tiles
    // with a pitch and more lines than a cache has ways can show) must still change the probe:
    // its wide part sees a change of the L1's ways where its small search does not.
    let avx512 = Target::builtin("x86-avx512", 1).unwrap();
    let narrow = with_l1_ways(&avx512, 2);
    assert_ne!(narrow, avx512);
    let config = ActionConfig::default();
    assert_eq!(
        identity::small_probe_bytes(&avx512, &config).unwrap(),
        identity::small_probe_bytes(&narrow, &config).unwrap()
    );
    let (wide, wide_narrow) =
        (identity::wide_probe_bytes(&avx512, &config), identity::wide_probe_bytes(&narrow, &config));
    assert!(!wide.is_empty());
    assert_ne!(wide, wide_narrow);
}

/// The wide probe hashes each action's linear form and reaches a register-block step, so a change
/// to what a loop's bodies share (a credit no frontier of the small search holds) changes it: on
/// `x86-avx512` the step's split into four 16-wide columns shares 3 * 6 broadcasts at 2.
#[test]
fn the_probe_sees_the_broadcasts_a_steps_columns_share() {
    let avx512 = Target::builtin("x86-avx512", 1).unwrap();
    let wide = identity::wide_probe_bytes(&avx512, &ActionConfig::default());
    let text = String::from_utf8_lossy(&wide);
    assert!(text.contains("credit: 36"), "no shared broadcasts in the probe");
}

#[test]
fn other_versions_targets_and_configurations_are_refused_with_the_reason() {
    let mine = schema().identity();
    let other_sources = TableIdentity { sources: mine.sources ^ 1, ..mine.clone() };
    let cases = [
        (
            TableIdentity { model_version: MODEL_VERSION + 1, ..mine.clone() },
            &*format!("model version {}", MODEL_VERSION + 1),
        ),
        (
            TableIdentity { model_probe: mine.model_probe ^ 1, ..other_sources.clone() },
            "actions or cost model differ",
        ),
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
    // The same probe from other sources (another build of an equivalent model) is fine.
    assert!(load(&with_identity(other_sources)).is_ok());
    let mut future = small_bytes().to_vec();
    future[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let err = load(&future).unwrap_err();
    assert!(err.to_string().contains(&format!("format version {}", FORMAT_VERSION + 1)), "{err}");
    // A table of the previous format is refused with the same message.
    let mut old = small_bytes().to_vec();
    old[8..12].copy_from_slice(&(FORMAT_VERSION - 1).to_le_bytes());
    let err = load(&old).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "has table format version {}, and this morello reads version {FORMAT_VERSION}",
            FORMAT_VERSION - 1
        )),
        "{err}"
    );
    // Another real target.
    let avx512 = Target::builtin("x86-avx512", 1).unwrap();
    let other = Schema::new(&avx512, ActionConfig::default());
    let err = Table::from_bytes(small_bytes(), path(), &other, Validation::Structure).unwrap_err();
    assert!(err.to_string().contains("not x86-avx512"), "{err}");
}

/// A table whose stored entries were changed, behind good checksums (a buggy writer).
fn tampered(change: impl FnOnce(&mut Vec<StoredEntry>)) -> Vec<u8> {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    let base = BASE.get_or_init(|| Table::from_memo(&solved(&[matmul(4, 2, 4)]), schema()).to_bytes());
    let mut entries = stored(base);
    change(&mut entries);
    file_of(&metadata_of(base), &entries)
}

/// A change to stored entries.
type Tamper = dyn FnOnce(&mut Vec<StoredEntry>);

/// Changes every entry of every frontier.
fn each_entry(f: impl Fn(&mut Entry) + 'static) -> Box<Tamper> {
    Box::new(move |entries| entries.iter_mut().flat_map(|(_, e)| e.iter_mut()).for_each(&f))
}

#[test]
fn validation_refuses_wrong_content_behind_a_good_checksum() {
    let checks: [(&str, Box<Tamper>, Validation); 6] = [
        ("action #", each_entry(|e| e.action = 999), Validation::Full),
        (
            "combines its sub-specs",
            Box::new(|e: &mut Vec<StoredEntry>| raise_first_cost(e)),
            Validation::Full,
        ),
        (
            "exceed the target's capacities",
            each_entry(|e| e.peaks.0 = 0x7878_7878_7800_0000),
            Validation::Structure,
        ),
        (
            "not in canonical form",
            Box::new(|e: &mut Vec<StoredEntry>| make_non_canonical(e)),
            Validation::Structure,
        ),
        ("depth 0", each_entry(|e| e.depth = 0), Validation::Structure),
        ("does not decode", Box::new(|entries| entries[0].0.push(0)), Validation::Structure),
    ];
    for (message, change, validation) in checks {
        let bytes = tampered(change);
        let err = Table::from_bytes(&bytes, path(), schema(), validation).unwrap_err();
        assert!(matches!(err, DbError::Invalid { .. }), "{message}: {err}");
        assert!(err.to_string().contains(message), "expected `{message}` in: {err}");
    }
    // Keys out of order are damage to the file's structure.
    let bytes = tampered(|entries| entries.swap(0, 1));
    let err = Table::from_bytes(&bytes, path(), schema(), Validation::Structure).unwrap_err();
    assert!(err.to_string().contains("strictly ascending"), "{err}");
}

/// Raises the cost of the last (cheapest in memory) entry of the first solved spec: still a
/// frontier, and wrong.
fn raise_first_cost(entries: &mut [StoredEntry]) {
    let (_, frontier) = entries.iter_mut().find(|(_, f)| !f.is_empty()).expect("something is solved");
    frontier.last_mut().expect("not empty").cost += 1;
}

/// Clears `serial_only` of a stored spec with an operand from which no parallel level is
/// reachable (its key re-encoded, so only validation can tell).
fn make_non_canonical(entries: &mut [StoredEntry]) {
    let (key, _) = entries
        .iter_mut()
        .find(|(k, _)| {
            let spec = format::logical_of_key(k).unwrap();
            spec.operands.iter().any(|o| !target().can_reach_parallel(o.level))
        })
        .expect("some spec lives in registers");
    let mut spec = format::logical_of_key(key).unwrap();
    assert!(spec.serial_only);
    spec.serial_only = false;
    *key = bincode::Options::serialize(format::bincode_options(u64::MAX), &spec).unwrap();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
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
    let err = write_atomically_with(&table_path, &mut |f| std::io::Write::write_all(f, &bigger), &mut |_| {
        Err(std::io::Error::other("crash"))
    })
    .unwrap_err();
    assert!(matches!(err, DbError::Io { .. }));
    assert_eq!(std::fs::read(&table_path).unwrap(), small_bytes(), "the old table survives");
    // A writer killed there leaves its temp file; the next save under the lock removes it.
    let stale = dir.path().join(".t.mdb.tmp.99999.0");
    std::fs::write(&stale, b"partial").unwrap();
    let mut file = TableFile::new(&table_path);
    let more = Table::from_memo(&solved(&[matmul(2, 1, 2)]), schema());
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
        let good = a.to_bytes();
        let mut entries = stored(&good);
        raise_first_cost(&mut entries);
        file_of(&metadata_of(&good), &entries)
    };
    let bad = Table::from_bytes(&bad_bytes, path(), schema(), Validation::Structure).unwrap();
    let mut target_table = a.clone();
    let err = target_table.merge(&bad, target()).unwrap_err();
    assert!(matches!(err, DbError::Disagree { count: 1.., .. }), "{err}");
    assert_eq!(target_table.entries(), a.entries(), "a refused merge changes nothing");
}

/// Opens the table at `path` for a search.
fn open_table(path: &Path) -> OpenTable<'static> {
    OpenTable::open(&TableLocation::File(path.to_path_buf()), target(), ActionConfig::default()).unwrap()
}

/// Solves `goal` with the table at `path` and saves; returns the search's report and the save's.
fn search_and_save(path: &Path, goal: &CanonicalSpec) -> (crate::SearchReport, Option<SaveReport>) {
    let mut table = open_table(path);
    let report = Search::new(target()).threads(1).memo(table.memo()).solve(goal).unwrap().report;
    (report, table.save(&mut |_| {}).unwrap())
}

#[test]
fn saves_append_runs_and_a_small_save_does_not_rewrite_the_table() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    let (_, first) = search_and_save(&table_path, &matmul(8, 4, 8));
    let first = first.unwrap();
    assert!(first.rewritten && first.added > 1000, "{first:?}");
    let before = std::fs::read(&table_path).unwrap();
    // A search that adds a few specs appends them: the committed bytes stay as they were.
    let (report, second) = search_and_save(&table_path, &matmul(4, 4, 8));
    let second = second.unwrap();
    assert!(report.memo_hits > 0 && second.written && !second.rewritten, "{second:?}");
    assert!(second.added < first.added / 2, "{second:?}");
    let after = std::fs::read(&table_path).unwrap();
    assert_eq!(after[format::HEADER_BYTES..before.len()], before[format::HEADER_BYTES..], "appended only");
    let stats = TableStats::of_bytes(&after, path()).unwrap();
    assert_eq!((stats.runs, stats.commits, stats.specs), (2, 2, first.added + second.added));
    // Both runs answer a warm search, and the full table equals one computed in one go.
    let (warm, nothing) = search_and_save(&table_path, &matmul(4, 4, 8));
    assert_eq!((warm.specs_solved, warm.memo_hits, nothing), (0, 1, None));
    let table = TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    let one_go = Table::from_memo(&solved(&[matmul(8, 4, 8), matmul(4, 4, 8)]), schema());
    assert_eq!(table.entries(), one_go.entries());
    // Runs merge as they grow: many small saves keep few runs, and the content stays the same.
    for goal in [matmul(8, 4, 4), matmul(4, 8, 4), matmul(8, 8, 4), matmul(4, 8, 8)] {
        search_and_save(&table_path, &goal);
    }
    let stats = TableStats::of_file(&table_path).unwrap();
    assert!(stats.runs <= 4, "{stats:?}");
    let table = TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    assert_eq!(table.len() as u64, stats.specs);
}

#[test]
fn a_warm_search_reads_only_what_it_needs() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    search_and_save(&table_path, &matmul(16, 16, 16));
    let table = open_table(&table_path);
    let stored = table.opened();
    let solution = Search::new(target()).threads(1).memo(table.memo()).solve(&matmul(16, 16, 16)).unwrap();
    assert_eq!((solution.report.specs_solved, solution.report.memo_hits), (0, 1));
    let read = table.memo().len() as u64;
    assert!(read * 20 < stored, "the search read {read} of {stored} specs");
    let mut nodes = 0;
    solution.imp.visit(&mut |_| nodes += 1);
    assert!(read <= nodes, "{read} specs for a tree of {nodes} nodes");
}

/// The stored bytes of every block of a table file.
fn all_blocks(bytes: &[u8]) -> Vec<format::FrameRef> {
    let reader = reader::Reader::open(Box::new(bytes.to_vec()), path(), target().levels().len()).unwrap();
    reader.blocks().unwrap().iter().map(|b| b.frame).collect()
}

#[test]
fn a_corrupt_block_stops_the_search_names_the_block_and_is_never_written() {
    let (_dir, table_path) = saved_matmul_table();
    let mut bytes = std::fs::read(&table_path).unwrap();
    // Every block damaged: whichever a search reads first is named.
    for block in all_blocks(&bytes) {
        bytes[block.offset as usize + 3] ^= 0x40;
    }
    std::fs::write(&table_path, &bytes).unwrap();
    let mut table = open_table(&table_path);
    // A search that needs stored specs reads a damaged block.
    let err = Search::new(target()).threads(1).memo(table.memo()).solve(&matmul(4, 4, 8)).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, SearchError::Table { .. }), "{err}");
    assert!(
        message.contains("t.mdb is corrupt (block ")
            && message.contains(" of run 0 at byte")
            && message.contains("checksum"),
        "{message}"
    );
    assert!(matches!(table.save(&mut |_| {}), Err(DbError::Damaged { .. })));
    assert_eq!(std::fs::read(&table_path).unwrap(), bytes, "the damaged table is left as it is");
    let err = TableFile::new(&table_path).load(schema(), Validation::Structure).unwrap_err();
    assert!(err.to_string().contains("block 0 of run 0"), "{err}");
}

#[test]
fn a_crashed_append_leaves_the_committed_table_and_the_next_save_cuts_its_tail() {
    let (_dir, table_path) = saved_matmul_table();
    let committed = std::fs::read(&table_path).unwrap();
    let specs = load(&committed).unwrap().len();
    // A writer died after appending part of a run (no slot written).
    let mut torn = committed.clone();
    torn.extend_from_slice(&[0xab; 5000]);
    std::fs::write(&table_path, &torn).unwrap();
    assert_eq!(TableFile::new(&table_path).load(schema(), Validation::Full).unwrap().len(), specs);
    // Or died while writing the slot: half of it is new, and the other slot still holds the state.
    let mut half_slot = torn.clone();
    let inactive = format::SLOT_OFFSETS[1] as usize;
    half_slot[inactive..inactive + 20].copy_from_slice(&[0x5a; 20]);
    std::fs::write(&table_path, &half_slot).unwrap();
    assert_eq!(TableFile::new(&table_path).load(schema(), Validation::Full).unwrap().len(), specs);
    // The next save cuts the tail off and commits after the committed state.
    let (_, saved) = search_and_save(&table_path, &matmul(4, 4, 8));
    assert!(saved.unwrap().written);
    let after = std::fs::read(&table_path).unwrap();
    assert!(after.len() < torn.len() + 1000 || !after[committed.len()..].starts_with(&[0xab; 16]));
    let table = TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    assert_eq!(
        table.entries(),
        Table::from_memo(&solved(&[matmul(4, 4, 4), matmul(4, 4, 8)]), schema()).entries()
    );
}

#[test]
fn a_reader_never_writes_the_table() {
    let (_dir, table_path) = saved_matmul_table();
    let before = std::fs::read(&table_path).unwrap();
    let modified = std::fs::metadata(&table_path).unwrap().modified().unwrap();
    let (warm, saved) = search_and_save(&table_path, &matmul(4, 4, 4));
    assert_eq!((warm.specs_solved, saved), (0, None));
    TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    TableStats::of_file(&table_path).unwrap();
    assert_eq!(std::fs::read(&table_path).unwrap(), before);
    assert_eq!(std::fs::metadata(&table_path).unwrap().modified().unwrap(), modified);
}

/// Stored keys are the specs' serde form: a spec of every kind (and a convolution's geometry)
/// keeps its bytes, so tables written by earlier builds still answer. The first byte is the kind's
/// variant number, its operator's ordinal (`morello-core/src/operators/`).
#[test]
fn keys_of_every_kind_are_unchanged() {
    let f = "f32 GL row-major";
    let cases = [
        (
            format!("Matmul(1x2x2x2, {f}, {f}, {f})"),
            "000004010202020303010202060002010002000200000301020206000201000200020000030102020600020100020002000000",
        ),
        (
            format!("MatmulAccum(1x2x2x2, {f}, {f}, f32 L1 col-major)"),
            "000104010202020303010202060002010002000200000301020206000201000200020000030102020602020200010002000000",
        ),
        (
            format!("Move(4x4, {f}, f32 L1 col-major)"),
            "0702040402020404060002000001000200000204040602020100000002000000",
        ),
        (format!("FillZero(4x4, {f})"), "0800020404010204040600020000010002000000"),
        (format!("FillNegInf(8, {f})"), "08010108010108060001000001000000"),
        ("FillMin(4x4, u32 GL row-major)".to_string(), "0802020404010204040400020000010002000000"),
        (
            format!("Conv(1x2x2x3x3x2x2, {f}, {f}, {f})"),
            "09000101010100000000070102020303020203040102040406000301000200030003000004020202020600040000010002000300040000040102030306000301000200030003000000",
        ),
        (
            format!("ConvAccum(1x2x2x3x3x2x2, {f}, {f}, {f})"),
            "09010101010100000000070102020303020203040102040406000301000200030003000004020202020600040000010002000300040000040102030306000301000200030003000000",
        ),
        (
            format!("Conv:s2x2:d1x2:p0x1x0x1(1x2x2x2x2x2x2, {f}, {f}, {f})"),
            "09000202010200010001070102020202020203040102030406000301000200030003000004020202020600040000010002000300040000040102020206000301000200030003000000",
        ),
        (
            format!("MatmulBias(1x2x2x4, {f}, {f}, {f}, {f})"),
            "01000401020204040301020206000201000200020000030102040600020100020002000001040600010000010000030102040600020100020002000000",
        ),
        (
            format!("MatmulBiasRelu(1x2x2x4, {f}, {f}, {f}, {f})"),
            "01010401020204040301020206000201000200020000030102040600020100020002000001040600010000010000030102040600020100020002000000",
        ),
        (
            format!("MatmulBiasGelu(1x2x2x4, {f}, {f}, {f}, {f})"),
            "01020401020204040301020206000201000200020000030102040600020100020002000001040600010000010000030102040600020100020002000000",
        ),
        (format!("AddBias(2x4, {f}, {f})"), "020002020402010406000100000100000202040600020000010002000000"),
        (
            format!("AddBiasRelu(2x4, {f}, {f})"),
            "020102020402010406000100000100000202040600020000010002000000",
        ),
        (
            format!("AddBiasGelu(2x4, {f}, {f})"),
            "020202020402010406000100000100000202040600020000010002000000",
        ),
        (
            format!("Softmax(2x8, {f}, {f})"),
            "0302020802020208060002000001000200000202080600020000010002000000",
        ),
        (format!("Max(2x8, {f}, {f})"), "040002020802020208060002000001000200000102060001000001000000"),
        (
            format!("MaxAccum(2x8, {f}, {f}, serial)"),
            "040102020802020208060002000001000200000102060001000001000001",
        ),
        (
            format!("SoftmaxExp(2x8, {f}, {f}, {f}, {f})"),
            "0500020208040202080600020000010002000001020600010000010000020208060002000001000200000102060001000001000000",
        ),
        (
            format!("SoftmaxExpAccum(2x8, {f}, {f}, {f}, {f})"),
            "0501020208040202080600020000010002000001020600010000010000020208060002000001000200000102060001000001000000",
        ),
        (
            format!("SoftmaxScale(2x8, {f}, {f})"),
            "0602020802010206000100000100000202080600020000010002000000",
        ),
    ];
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut wrong = Vec::new();
    for (text, expected) in &cases {
        let got = hex(&spec_key(&spec(text)));
        if got != *expected {
            wrong.push(format!("{text}: {got}"));
        }
    }
    assert!(wrong.is_empty(), "keys changed:\n{}", wrong.join("\n"));
}

#[test]
fn only_regular_files_and_new_paths_are_tables() {
    use std::os::unix::fs::symlink;
    let dir = temp_dir();
    let file = dir.path().join("t.mdb");
    write(&file, small_bytes());
    assert_eq!(table_file_path(&file).unwrap(), file);
    let new = dir.path().join("new.mdb");
    assert_eq!(table_file_path(&new).unwrap(), new, "a new path");
    let link = dir.path().join("link.mdb");
    symlink(&file, &link).unwrap();
    assert_eq!(table_file_path(&link).unwrap(), std::fs::canonicalize(&file).unwrap(), "the linked file");
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    let dangling = dir.path().join("dangling.mdb");
    symlink(dir.path().join("missing"), &dangling).unwrap();
    let device_link = dir.path().join("null.mdb");
    symlink("/dev/null", &device_link).unwrap();
    let mut refused = vec![
        (dir.path().to_path_buf(), "is a directory, not a table file"),
        (dangling, "is a symbolic link to nothing, not a table file"),
        (device_link, "is a character device, not a table file"),
    ];
    if made {
        refused.push((fifo, "is a FIFO (named pipe), not a table file"));
    }
    for (path, says) in refused {
        let err = table_file_path(&path).unwrap_err();
        assert!(matches!(err, DbError::NotAFile { .. }), "{}: {err}", path.display());
        assert!(err.to_string().contains(says), "{err}");
        // Nothing opens it (a FIFO would block) and nothing replaces it.
        let opened = OpenTable::open(&TableLocation::File(path.clone()), target(), ActionConfig::default());
        assert!(matches!(opened, Err(DbError::NotAFile { .. })), "{}", path.display());
        assert!(matches!(TableFile::new(&path).read(), Err(DbError::NotAFile { .. })));
        assert!(matches!(
            TableFile::new(&path).lock_for_replacement(&mut |_| {}),
            Err(DbError::NotAFile { .. })
        ));
        let table =
            Table::from_bytes(small_bytes(), path.as_path(), schema(), Validation::Structure).unwrap();
        assert!(matches!(
            TableFile::new(&path).save(&table, schema(), &mut |_| {}),
            Err(DbError::NotAFile { .. })
        ));
    }
    assert!(Path::new("/dev/null").exists(), "the device is still there");
}

#[test]
fn a_replacement_refuses_read_only_tables_and_keeps_the_mode_of_others() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let set_mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    let dir = temp_dir();
    let path = dir.path().join("t.mdb");
    write(&path, small_bytes());
    let bigger = Table::from_memo(&solved(&[matmul(2, 1, 2)]), schema());
    set_mode(&path, 0o444);
    let err = TableFile::new(&path).lock_for_replacement(&mut |_| {}).unwrap_err();
    assert!(matches!(err, DbError::ReadOnly { reason: ReadOnlyReason::FileMode, .. }), "{err}");
    assert!(matches!(
        TableFile::new(&path).save(&bigger, schema(), &mut |_| {}),
        Err(DbError::ReadOnly { .. })
    ));
    assert_eq!((std::fs::read(&path).unwrap(), mode(&path)), (small_bytes().to_vec(), 0o444));
    // A writable table keeps its mode when it is replaced whole.
    set_mode(&path, 0o640);
    let replacement = TableFile::new(&path).lock_for_replacement(&mut |_| {}).unwrap();
    assert_eq!(replacement.read().unwrap().as_deref(), Some(small_bytes()));
    replacement.write(&bigger).unwrap();
    assert_eq!((mode(&path), load(&std::fs::read(&path).unwrap()).unwrap().len()), (0o640, bigger.len()));
    // A table in a read-only directory is read-only too.
    let folder = dir.path().join("ro");
    std::fs::create_dir(&folder).unwrap();
    let inside = folder.join("t.mdb");
    write(&inside, small_bytes());
    set_mode(&folder, 0o555);
    let err = TableFile::new(&inside).lock_for_replacement(&mut |_| {}).unwrap_err();
    set_mode(&folder, 0o755);
    assert!(matches!(err, DbError::ReadOnly { reason: ReadOnlyReason::DirectoryMode, .. }), "{err}");
}

/// A whole-table read waits while a precompute fills the table (and while a save is in flight),
/// so a merge never reads a table a precompute is still writing.
#[test]
fn a_settled_read_waits_for_the_precompute_filling_the_table() {
    let dir = temp_dir();
    let path = dir.path().join("t.mdb");
    write(&path, small_bytes());
    let filling = FillLock::filling(&path, &mut |_| panic!("nobody reads it")).unwrap();
    let second = FillLock::filling(&path, &mut |_| panic!("precomputes share it")).unwrap();
    drop(second);
    let (waiting, waited) = std::sync::mpsc::channel();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let bytes = TableFile::new(&path)
                .read_settled(&mut |lock| {
                    assert_eq!(lock, fill_lock_path(&path));
                    waiting.send(()).unwrap();
                })
                .unwrap();
            done.send(bytes).unwrap();
        });
        waited.recv().unwrap();
        // The precompute saves its last specs, then ends: the reader sees them.
        let more = Table::from_memo(&solved(&[matmul(2, 1, 2)]), schema());
        TableFile::new(&path).save(&more, schema(), &mut |_| {}).unwrap();
        assert!(finished.try_recv().is_err(), "nothing is read while the precompute runs");
        drop(filling);
        let bytes = finished.recv().unwrap().unwrap();
        let union = load(&bytes).unwrap();
        assert!(union.len() >= more.len(), "{} < {}", union.len(), more.len());
        assert!(more.iter().all(|(spec, _)| union.get(spec).is_some()));
    });
}

/// A measured winner of `spec` on the host with `fingerprint`: the variant `rank` of its search
/// (0 the model's best), as `morello search --plan measure` records one.
fn wisdom_of(spec: &CanonicalSpec, rank: usize, fingerprint: u64, seconds: f64) -> WisdomEntry {
    let search = Search::new(target()).threads(1);
    let variants = search.solve_variants(spec, rank + 1, crate::VariantCosts::Distinct).unwrap();
    let winner = &variants[rank].imp;
    WisdomEntry {
        spec: spec_key(spec),
        limits: wisdom_limits(&target().capacities(), target()),
        host: WisdomHost { fingerprint, description: format!("host {fingerprint}") },
        decisions: crate::decisions_of(winner, target(), search.action_config()).unwrap(),
        cost: winner.cost,
        seconds,
        model_seconds: seconds * 1.5,
        candidates: u32::try_from(rank).unwrap() + 1,
    }
}

#[test]
fn a_table_answers_each_host_with_its_own_measured_winner() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    let goal = matmul(4, 4, 4);
    search_and_save(&table_path, &goal);
    let before = std::fs::read(&table_path).unwrap();
    let (first, second) = (wisdom_of(&goal, 1, 11, 2e-6), wisdom_of(&goal, 0, 22, 3e-6));
    assert_ne!(first.decisions, second.decisions);
    let mut table = open_table(&table_path);
    table.record_wisdom(first.clone());
    table.record_wisdom(second.clone());
    assert!(table.has_unsaved());
    let report = table.save(&mut |_| {}).unwrap().unwrap();
    assert_eq!((report.added, report.wisdom_added, report.written, report.rewritten), (0, 2, true, false));
    let after = std::fs::read(&table_path).unwrap();
    assert_eq!(after[format::HEADER_BYTES..before.len()], before[format::HEADER_BYTES..], "appended only");
    // Read back: each host gets its own winner; another host or other limits get none.
    let table = open_table(&table_path);
    let limits = target().capacities();
    assert_eq!(table.wisdom_for(&goal, &limits, 11), Some(&first));
    assert_eq!(table.wisdom_for(&goal, &limits, 22), Some(&second));
    assert_eq!(table.wisdom_for(&goal, &limits, 33), None);
    assert_eq!(table.wisdom_for(&goal, &MemVec::ZERO, 11), None);
    assert_eq!(table.wisdom_for(&matmul(4, 4, 2), &limits, 11), None);
    for entry in [&first, &second] {
        let rebuilt =
            crate::rebuild_decisions(&goal, &entry.decisions, target(), &ActionConfig::default()).unwrap();
        assert_eq!(rebuilt.cost, entry.cost);
    }
    let stats = TableStats::of_file(&table_path).unwrap();
    let listed: Vec<(u64, u32)> = stats.wisdom.iter().map(|w| (w.host.fingerprint, w.candidates)).collect();
    assert_eq!(listed, vec![(11, 2), (22, 1)]);
    assert!(stats.wisdom[0].spec.starts_with("Matmul(1x4x4x4"), "{}", stats.wisdom[0].spec);
    // A whole-table load, a compaction-style rewrite and a later search keep the wisdom.
    let whole = TableFile::new(&table_path).load(schema(), Validation::Full).unwrap();
    assert_eq!(whole.wisdom(), [first.clone(), second.clone()]);
    assert_eq!(whole.verify_wisdom(schema(), path()).unwrap(), 2);
    let mut tampered = whole.clone();
    tampered.add_wisdom(&[WisdomEntry {
        cost: first.cost + 1,
        host: WisdomHost { fingerprint: 33, ..first.host.clone() },
        ..first.clone()
    }]);
    let err = tampered.verify_wisdom(schema(), path()).unwrap_err();
    assert!(err.to_string().contains("not the stored"), "{err}");
    let copy = Table::from_bytes(&whole.to_bytes(), path(), schema(), Validation::Full).unwrap();
    assert_eq!(copy.wisdom(), whole.wisdom());
    search_and_save(&table_path, &matmul(8, 4, 4));
    assert_eq!(open_table(&table_path).wisdom(), vec![first, second]);
}

#[test]
fn merging_keeps_wisdom_per_host() {
    let goal = matmul(2, 2, 2);
    let mut a = Table::from_memo(&solved(std::slice::from_ref(&goal)), schema());
    let mut b = a.clone();
    let (on_a, on_b) = (wisdom_of(&goal, 1, 1, 1e-6), wisdom_of(&goal, 0, 2, 1e-6));
    a.add_wisdom(std::slice::from_ref(&on_a));
    b.add_wisdom(&[on_b.clone(), WisdomEntry { seconds: 9e-6, ..on_a.clone() }]);
    a.merge(&b, target()).unwrap();
    assert_eq!(a.wisdom(), [on_a, on_b], "both hosts, and host 1's faster entry");
    let merged = Table::from_bytes(&a.to_bytes(), path(), schema(), Validation::Full).unwrap();
    assert_eq!(merged.wisdom(), a.wisdom());
}

#[test]
fn a_new_measurement_replaces_the_stored_one_for_its_host() {
    let dir = temp_dir();
    let table_path = dir.path().join("t.mdb");
    let goal = matmul(2, 2, 2);
    search_and_save(&table_path, &goal);
    let (old, other_host) = (wisdom_of(&goal, 0, 1, 1e-6), wisdom_of(&goal, 0, 2, 1e-6));
    let mut table = open_table(&table_path);
    table.record_wisdom(old);
    table.record_wisdom(other_host.clone());
    table.save(&mut |_| {}).unwrap();
    let new = wisdom_of(&goal, 1, 1, 5e-6);
    let mut table = open_table(&table_path);
    table.record_wisdom(new.clone());
    assert_eq!(table.save(&mut |_| {}).unwrap().unwrap().wisdom_added, 1);
    assert_eq!(open_table(&table_path).wisdom(), vec![new, other_host]);
}
