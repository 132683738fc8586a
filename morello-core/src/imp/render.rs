//! The pretty-printer: one line per node, like a table.
//!
//! ```text
//!       cost  GL L2    L1 VRF RF  implementation
//!      12345   0  0  4096   8  1  tile 1x4x64x16  Matmul(1x64x64x64, ...)
//!        ...   .  .     .   .  .    move out to VRF row-major v8  ...
//! ```

use std::fmt::Write;

use super::{AllocKind, Impl, Node, Parallelism};
use crate::target::Target;

impl Impl {
    /// The tree as a table: cost, peak memory per level, then the node and its spec, indented.
    pub fn render(&self, target: &Target) -> String {
        let names = target.level_names();
        let mut rows: Vec<(String, Vec<String>, String)> = Vec::new();
        self.collect_rows(target, 0, "", &mut rows);
        let mut widths: Vec<usize> = names.iter().map(|n| n.len()).collect();
        let mut cost_width = "cost".len();
        for (cost, peaks, _) in &rows {
            cost_width = cost_width.max(cost.len());
            for (w, p) in widths.iter_mut().zip(peaks) {
                *w = (*w).max(p.len());
            }
        }
        let mut out = String::new();
        let _ = write!(out, "{:>cost_width$}", "cost");
        for (name, w) in names.iter().zip(&widths) {
            let _ = write!(out, "  {name:>w$}");
        }
        out.push_str("  implementation\n");
        for (cost, peaks, text) in rows {
            let _ = write!(out, "{cost:>cost_width$}");
            for (p, w) in peaks.iter().zip(&widths) {
                let _ = write!(out, "  {p:>w$}");
            }
            let _ = writeln!(out, "  {text}");
        }
        out
    }

    fn collect_rows(
        &self,
        target: &Target,
        depth: usize,
        label: &str,
        rows: &mut Vec<(String, Vec<String>, String)>,
    ) {
        let peaks: Vec<String> = (0..target.levels().len()).map(|i| self.peaks.0[i].to_string()).collect();
        let indent = "  ".repeat(depth);
        let text = format!("{indent}{label}{}  {}", self.describe(target), self.spec.display(target));
        rows.push((self.cost.to_string(), peaks, text));
        match &self.node {
            Node::Loop { body, boundaries, .. } => {
                body.collect_rows(target, depth + 1, "", rows);
                for b in boundaries {
                    let origin: Vec<String> = b.origin.iter().map(u32::to_string).collect();
                    b.body.collect_rows(target, depth + 1, &format!("[at {}] ", origin.join(",")), rows);
                }
            }
            Node::Alloc { prologue, body, epilogue, .. } => {
                if let Some(p) = prologue {
                    p.collect_rows(target, depth + 1, "[in] ", rows);
                }
                body.collect_rows(target, depth + 1, "", rows);
                if let Some(e) = epilogue {
                    e.collect_rows(target, depth + 1, "[out] ", rows);
                }
            }
            Node::Block { stages, .. } => {
                for s in stages {
                    let label = match &s.origins {
                        Some(origins) => {
                            let at: Vec<String> = origins
                                .iter()
                                .map(|o| o.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                                .collect();
                            format!("[at {}] ", at.join("; "))
                        }
                        None => String::new(),
                    };
                    s.body.collect_rows(target, depth + 1, &label, rows);
                }
            }
            Node::AsMatmul { body } => body.collect_rows(target, depth + 1, "", rows),
            Node::Kernel(_) | Node::SpecApp { .. } => {}
        }
    }

    /// A short description of this node alone, e.g. `tile 1x4x64x16` or `kernel MultAdd`.
    pub fn describe(&self, target: &Target) -> String {
        match &self.node {
            Node::Loop { tile, parallelism, .. } => {
                let tile: Vec<String> = tile.iter().map(u32::to_string).collect();
                let par = if *parallelism == Parallelism::Parallel { "parallel " } else { "" };
                format!("{par}tile {}", tile.join("x"))
            }
            Node::Alloc { operand, kind, destination, .. } => {
                let what = if *kind == AllocKind::CacheView { "cache" } else { "move" };
                format!("{what} operand {operand} to {}", destination.display(target))
            }
            Node::Block { temporaries, .. } if !temporaries.is_empty() => {
                let t: Vec<String> =
                    temporaries.iter().map(|t| format!("{} {}", t.shape, t.display(target))).collect();
                format!("block with {}", t.join(", "))
            }
            Node::Block { .. } => "block".to_string(),
            Node::AsMatmul { .. } => "as matmul".to_string(),
            Node::Kernel(k) => format!("kernel {k}"),
            Node::SpecApp { .. } => "unsolved".to_string(),
        }
    }
}
