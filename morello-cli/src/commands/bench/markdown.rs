//! The kernel suite as Markdown: the table of GFLOP/s per size and implementation, the machine,
//! the command, and the section of `docs/PERFORMANCE.md` between two marker comments that
//! `morello bench-suite` replaces (everything outside the markers is left as it is).
//!
//! ```text
//! ## Kernel suite
//! <!-- bench-suite:begin -->      SUITE_MARKERS.begin
//! ...generated...
//! <!-- bench-suite:end -->        SUITE_MARKERS.end
//! ```
//!
//! `bench-suite --regret` fills its own section the same way ([`REGRET_MARKERS`]).
//!
//! A document without markers gets the heading and the markers appended at its end.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The marker comments around a generated section, and the heading added with them when a
/// document has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    /// The comment that opens the generated section.
    pub begin: &'static str,
    /// The comment that closes it.
    pub end: &'static str,
    /// The heading added with the markers when a document has none.
    pub heading: &'static str,
}

/// The kernel suite's section (`morello bench-suite`).
pub const SUITE_MARKERS: Markers = Markers {
    begin: "<!-- bench-suite:begin -->",
    end: "<!-- bench-suite:end -->",
    heading: "## Kernel suite",
};

/// The regret suite's section (`morello bench-suite --regret`).
pub const REGRET_MARKERS: Markers = Markers {
    begin: "<!-- bench-suite-regret:begin -->",
    end: "<!-- bench-suite-regret:end -->",
    heading: "## Regret of the model's pick",
};

/// The measured figures of one implementation at one size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// GFLOP/s at the median time (GB/s in a row that is `bytes_only`).
    pub gflops: f64,
    /// The same figure for the slowest sample.
    pub slowest: f64,
    /// The same figure for the fastest sample.
    pub fastest: f64,
    /// GB/s at the median time, for memory-bound rows.
    pub gbytes_per_second: Option<f64>,
}

/// One size of the suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What it is, e.g. `f32 64x64x64`.
    pub label: String,
    /// Whether GB/s is shown beside GFLOP/s.
    pub memory_bound: bool,
    /// Whether the cells' figures are GB/s rather than GFLOP/s (a kernel without a flop count,
    /// such as softmax).
    pub bytes_only: bool,
    /// One cell per implementation column; `None` where it was not timed.
    pub cells: Vec<Option<Cell>>,
    /// Why the size failed, if it did (its morello cell then says `failed`).
    pub failure: Option<String>,
}

/// The whole table: implementation names (morello first) and the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names.
    pub implementations: Vec<String>,
    /// Rows in suite order.
    pub rows: Vec<Row>,
}

/// Implementations that count as a library for the ratio column (everything but morello and the
/// naive loop).
fn is_library(name: &str) -> bool {
    name != "morello" && name != "naive"
}

impl Table {
    /// The best library cell of a row: its name and GFLOP/s.
    pub fn best_library(&self, row: &Row) -> Option<(&str, f64)> {
        self.implementations
            .iter()
            .zip(&row.cells)
            .filter(|(name, _)| is_library(name))
            .filter_map(|(name, cell)| Some((name.as_str(), cell.as_ref()?.gflops)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// morello's GFLOP/s divided by the best library's.
    pub fn ratio(&self, row: &Row) -> Option<(f64, &str)> {
        let morello = self.implementations.iter().position(|n| n == "morello")?;
        let ours = row.cells.get(morello)?.as_ref()?.gflops;
        let (name, best) = self.best_library(row)?;
        (best > 0.0).then(|| (ours / best, name))
    }

    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("| kernel |");
        for name in &self.implementations {
            let _ = write!(out, " {name} |");
        }
        out.push_str(" morello / best library |\n| --- |");
        out.push_str(&" ---: |".repeat(self.implementations.len() + 1));
        out.push('\n');
        for row in &self.rows {
            let _ = write!(out, "| {} |", row.label);
            for (name, cell) in self.implementations.iter().zip(&row.cells) {
                let text = match cell {
                    Some(c) => {
                        let unit = if row.bytes_only { " GB/s" } else { "" };
                        let mut text = format!("{:.1}{unit} ({:.1}-{:.1})", c.gflops, c.slowest, c.fastest);
                        if let Some(gb) = c.gbytes_per_second.filter(|_| row.memory_bound && !row.bytes_only)
                        {
                            let _ = write!(text, ", {gb:.1} GB/s");
                        }
                        text
                    }
                    None if name == "morello" && row.failure.is_some() => "failed".to_string(),
                    None => "n/a".to_string(),
                };
                let _ = write!(out, " {text} |");
            }
            let ratio =
                self.ratio(row).map_or_else(|| "-".to_string(), |(r, name)| format!("{r:.2}x ({name})"));
            let _ = writeln!(out, " {ratio} |");
        }
        out
    }
}

/// The machine and the run, for the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The date of the run, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The command line.
    pub command: String,
    /// CPU model and count.
    pub cpu: String,
    /// Operating system.
    pub os: String,
    /// Instruction-set features the host runs.
    pub features: String,
    /// The C compiler.
    pub compiler: String,
    /// The measured peak.
    pub peak: String,
    /// Threads, pinning and sampling.
    pub protocol: String,
    /// The target searched for.
    pub target: String,
}

impl Machine {
    /// The command in a code block, then a two-column table of the machine.
    pub fn markdown(&self) -> String {
        let mut out = format!("```sh\n{}\n```\n\n| machine | |\n| --- | --- |\n", self.command);
        for (key, value) in [
            ("CPU", &self.cpu),
            ("OS", &self.os),
            ("ISA", &self.features),
            ("compiler", &self.compiler),
            ("target", &self.target),
            ("peak", &self.peak),
            ("protocol", &self.protocol),
        ] {
            let _ = writeln!(out, "| {key} | {} |", value.replace('|', "\\|"));
        }
        out
    }
}

/// The generated section (what goes between the markers): machine, command, table, plot, notes.
pub fn section(table: &Table, machine: &Machine, notes: &[String], plot_link: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Generated by `morello bench-suite` on {}; run it again to refresh this section (the text between \
         the marker comments is replaced).\n",
        machine.date
    );
    out.push_str(&machine.markdown());
    out.push_str(
        "\nGFLOP/s (2 M K N per call) at the median time, with the slowest and fastest samples in brackets; \
         vector-matrix rows also give GB/s (every operand's bytes once per call); u32 rows count integer \
         multiply-adds the same way, and the quantized rows (u8s8s32: u8 activations, s8 weights, s32 sums, or \
         requantized to u8) give GOPS, the same count on 8-bit integers, against the int8 peak of the \
         target's int8 instruction; rows without a flop count (softmax) give GB/s instead. The last column \
         is morello's median figure divided by the best library's (any baseline but the naive loop). n/a: \
         not timed (see the notes).\n\n",
    );
    out.push_str(&table.markdown());
    let _ = writeln!(
        out,
        "\n![GFLOP/s against size: morello, each baseline, and the measured peak]({plot_link})"
    );
    if !notes.is_empty() {
        out.push_str("\nNotes:\n\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// Why the markers of a document cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerError(String);

impl std::fmt::Display for MarkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for MarkerError {}

/// `document` with `body` between `markers`, or with a new section at its end if it has none.
///
/// # Errors
/// A marker without its partner, a repeated marker, or the end before the beginning.
pub fn insert_section(document: &str, body: &str, markers: Markers) -> Result<String, MarkerError> {
    let Markers { begin: open, end: close, heading } = markers;
    let fail = |why: String| {
        MarkerError(format!("{why}; fix the markers (`{open}` then `{close}`, once each) or remove both"))
    };
    let body = if body.ends_with('\n') { body.to_string() } else { format!("{body}\n") };
    match (document.matches(open).count(), document.matches(close).count()) {
        (0, 0) => {
            let head = document.trim_end();
            let separator = if head.is_empty() { "" } else { "\n\n" };
            Ok(format!("{head}{separator}{heading}\n\n{open}\n{body}{close}\n"))
        }
        (1, 1) => match (document.find(open), document.find(close)) {
            (Some(begin), Some(end)) if begin < end => {
                let before = &document[..begin + open.len()];
                Ok(format!("{before}\n{body}{}", &document[end..]))
            }
            _ => Err(fail("the end marker comes before the begin marker".into())),
        },
        (begins, ends) => Err(fail(format!("the document has {begins} begin and {ends} end markers"))),
    }
}

/// The calendar date `YYYY-MM-DD` (UTC) of a moment; a clock outside 1970-9999 (what RFC 3339 can
/// write) is clamped to that range.
pub fn utc_date(time: SystemTime) -> String {
    /// The last second of the year 9999, the latest moment RFC 3339 can write.
    const LAST_RFC3339_SECOND: u64 = 253_402_300_799;
    let latest = UNIX_EPOCH + Duration::from_secs(LAST_RFC3339_SECOND);
    let mut text = humantime::format_rfc3339_seconds(time.clamp(UNIX_EPOCH, latest)).to_string();
    text.truncate("YYYY-MM-DD".len());
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = SUITE_MARKERS.begin;
    const END: &str = SUITE_MARKERS.end;
    const HEADING: &str = SUITE_MARKERS.heading;

    fn cell(gflops: f64) -> Option<Cell> {
        Some(Cell {
            gflops,
            slowest: gflops - 1.0,
            fastest: gflops + 1.0,
            gbytes_per_second: Some(2.0 * gflops),
        })
    }

    fn table() -> Table {
        Table {
            implementations: ["morello", "naive", "openblas", "libxsmm"].map(String::from).to_vec(),
            rows: vec![
                Row {
                    label: "f32 8x8x8".into(),
                    memory_bound: false,
                    bytes_only: false,
                    cells: vec![cell(40.0), cell(60.0), cell(25.0), cell(50.0)],
                    failure: None,
                },
                Row {
                    label: "f32 1x2048x16384".into(),
                    memory_bound: true,
                    bytes_only: false,
                    cells: vec![cell(10.0), cell(5.0), cell(10.0), None],
                    failure: None,
                },
                Row {
                    label: "bf16 1x2048x16384".into(),
                    memory_bound: true,
                    bytes_only: false,
                    cells: vec![None, None, None, None],
                    failure: Some("cannot run".into()),
                },
            ],
        }
    }

    #[test]
    fn the_table_has_medians_spreads_gbs_and_the_ratio_to_the_best_library() {
        let expected = "\
| kernel | morello | naive | openblas | libxsmm | morello / best library |
| --- | ---: | ---: | ---: | ---: | ---: |
| f32 8x8x8 | 40.0 (39.0-41.0) | 60.0 (59.0-61.0) | 25.0 (24.0-26.0) | 50.0 (49.0-51.0) | 0.80x (libxsmm) |
| f32 1x2048x16384 | 10.0 (9.0-11.0), 20.0 GB/s | 5.0 (4.0-6.0), 10.0 GB/s | 10.0 (9.0-11.0), 20.0 GB/s | n/a | 1.00x (openblas) |
| bf16 1x2048x16384 | failed | n/a | n/a | n/a | - |
";
        assert_eq!(table().markdown(), expected);
    }

    fn machine() -> Machine {
        Machine {
            date: "2024-01-01".into(),
            command: "morello bench-suite --sizes 8".into(),
            cpu: "Test CPU, 2 logical CPUs".into(),
            os: "Linux 6.1".into(),
            features: "avx2 fma".into(),
            compiler: "cc: gcc 12".into(),
            peak: "100.0 GFLOP/s".into(),
            protocol: "1 thread | pinned".into(),
            target: "x86-avx2".into(),
        }
    }

    #[test]
    fn the_section_records_the_machine_command_table_plot_and_notes() {
        let text = section(&table(), &machine(), &["libxsmm: skipped".into()], "perf.svg");
        assert!(text.starts_with("Generated by `morello bench-suite` on 2024-01-01;"));
        assert!(text.contains("```sh\nmorello bench-suite --sizes 8\n```\n"));
        assert!(text.contains("| CPU | Test CPU, 2 logical CPUs |\n"));
        assert!(text.contains("| protocol | 1 thread \\| pinned |\n"), "pipes are escaped");
        assert!(text.contains(&table().markdown()));
        assert!(text.contains("](perf.svg)\n"));
        assert!(text.ends_with("Notes:\n\n- libxsmm: skipped\n"));
    }

    #[test]
    fn a_document_without_markers_gets_a_new_section_at_its_end() {
        let doc = "# Performance\n\nFigures.\n\n";
        let out = insert_section(doc, "table\n", SUITE_MARKERS).unwrap_or_default();
        assert_eq!(out, format!("# Performance\n\nFigures.\n\n{HEADING}\n\n{BEGIN}\ntable\n{END}\n"));
        assert_eq!(
            insert_section("", "t", SUITE_MARKERS).unwrap_or_default(),
            format!("{HEADING}\n\n{BEGIN}\nt\n{END}\n")
        );
    }

    #[test]
    fn only_the_text_between_the_markers_is_replaced_and_reinsertion_is_stable() {
        let doc = format!("# P\n\n{HEADING}\n\n{BEGIN}\nold\nlines\n{END}\n\n## Later\n\nkept\n");
        let once = insert_section(&doc, "new\n", SUITE_MARKERS).unwrap_or_default();
        assert_eq!(once, format!("# P\n\n{HEADING}\n\n{BEGIN}\nnew\n{END}\n\n## Later\n\nkept\n"));
        assert_eq!(insert_section(&once, "new\n", SUITE_MARKERS).unwrap_or_default(), once);
    }

    #[test]
    fn broken_markers_are_errors() {
        for doc in [
            format!("{BEGIN}\nno end\n"),
            format!("no begin\n{END}\n"),
            format!("{END}\nreversed\n{BEGIN}\n"),
            format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n"),
        ] {
            assert!(insert_section(&doc, "x", SUITE_MARKERS).is_err(), "{doc}");
        }
    }

    #[test]
    fn two_sections_live_in_one_document_each_replaced_alone() {
        let doc = insert_section("# P\n", "first table\n", SUITE_MARKERS).unwrap_or_default();
        let both = insert_section(&doc, "regret table\n", REGRET_MARKERS).unwrap_or_default();
        let again = insert_section(&both, "second table\n", SUITE_MARKERS).unwrap_or_default();
        assert!(again.contains("second table\n") && !again.contains("first table"), "{again}");
        assert!(again.contains(&format!("{}\nregret table\n", REGRET_MARKERS.begin)), "{again}");
        assert_eq!(insert_section(&again, "regret table\n", REGRET_MARKERS).unwrap_or_default(), again);
    }

    #[test]
    fn dates_are_civil_utc() {
        let at = |seconds: u64| utc_date(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(19_723 * 86_400), "2024-01-01");
        assert_eq!(at(19_782 * 86_400 + 86_399), "2024-02-29");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(utc_date(UNIX_EPOCH - Duration::from_secs(1)), "1970-01-01");
        assert_eq!(at(400_000_000_000), "9999-12-31");
    }
}
