//! Number formatting and aligned plain-text tables for the benchmark reports.

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text, padded on the right.
    Left,
    /// Numbers, padded on the left.
    Right,
}

/// A table with a header row; every row has one cell per column.
#[derive(Debug, Clone)]
pub struct TextTable {
    columns: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these columns.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        TextTable { columns: columns.iter().map(|(h, a)| ((*h).to_string(), *a)).collect(), rows: Vec::new() }
    }

    /// Adds a row (missing cells are empty, extra ones dropped).
    pub fn row(&mut self, mut cells: Vec<String>) {
        cells.resize(self.columns.len(), String::new());
        self.rows.push(cells);
    }

    /// The table, columns separated by two spaces, trailing spaces trimmed.
    pub fn render(&self) -> String {
        let width = |i: usize| {
            let cells = self.rows.iter().map(|r| r[i].chars().count());
            cells.chain([self.columns[i].0.chars().count()]).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.columns.len()).map(width).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((cell, (_, align)), &w)| match align {
                    Align::Left => format!("{cell:<w$}"),
                    Align::Right => format!("{cell:>w$}"),
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let header: Vec<String> = self.columns.iter().map(|(h, _)| h.clone()).collect();
        let mut out = line(&header);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }
}

/// A duration in seconds with a unit that keeps three or four significant digits: `812 ns`,
/// `5.02 us`, `13.1 ms`, `1.20 s`.
pub fn duration(seconds: f64) -> String {
    let (value, unit) = if seconds < 1e-6 {
        (seconds * 1e9, "ns")
    } else if seconds < 1e-3 {
        (seconds * 1e6, "us")
    } else if seconds < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    format!("{} {unit}", significant(value))
}

/// A positive number with three significant digits (no exponent below 10^6): `0.123`, `1.23`,
/// `12.3`, `123`, `1234`.
pub fn significant(x: f64) -> String {
    let magnitude = x.abs();
    let decimals = if magnitude >= 100.0 || magnitude == 0.0 {
        0
    } else if magnitude >= 10.0 {
        1
    } else if magnitude >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.decimals$}")
}

/// A throughput with one decimal: `104.4`; `-` when unknown.
pub fn rate(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"))
}

/// A ratio as `1.23x`; `-` when unknown.
pub fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(812e-9), "812 ns");
        assert_eq!(duration(5.023e-6), "5.02 us");
        assert_eq!(duration(0.0131), "13.1 ms");
        assert_eq!(duration(1.2), "1.20 s");
        assert_eq!(significant(0.1234), "0.123");
        assert_eq!(rate(None), "-");
        assert_eq!(ratio(Some(1.234)), "1.23x");
    }

    #[test]
    fn tables_align_columns() {
        let mut t = TextTable::new(&[("name", Align::Left), ("GFLOP/s", Align::Right)]);
        t.row(vec!["morello".into(), "104.4".into()]);
        t.row(vec!["naive".into(), "9.1".into()]);
        assert_eq!(t.render(), "name     GFLOP/s\nmorello    104.4\nnaive        9.1\n");
    }
}
