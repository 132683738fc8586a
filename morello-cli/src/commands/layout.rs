//! `morello layout SHAPE LAYOUT`: the buffer-indexing expression of a layout.

use anyhow::Result;
use morello_core::layout::{Layout, LayoutView};
use morello_core::shape::Shape;
use serde_json::json;

use crate::failure::{Failure, bad_input};
use crate::output;

/// Examples shown after `morello layout --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello layout 6x8 row-major
  morello layout 6x8 '[1, 0, 1 p(4)]'
  morello layout 8x32 '[0, 1, 0 p(4), 1 oe(16)]' --json
  morello layout 6x8 '[1, 0, 1 p(4)]' --tile 6x2

Layout syntax: physical dims from slowest to fastest, each a logical dimension index optionally
followed by `p(N)` (a packed strip of N elements) or `oe(N)` (a strip of N elements stored
even-indexed first, then odd-indexed). `row-major` and `col-major` name the usual orders.";

/// The most logical points `--json` lists offsets for.
const MAX_LISTED_OFFSETS: u64 = 1 << 24;

/// Arguments of `morello layout`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tensor's shape, dimensions separated by `x`, e.g. `6x8`.
    shape: String,
    /// The layout, e.g. `[1, 0, 1 p(4)]`, `row-major` or `col-major`.
    layout: String,
    /// Also show the layout and contiguity of a tile of this shape (tiles start at multiples of it).
    #[arg(long, value_name = "SHAPE")]
    tile: Option<String>,
    /// Print one JSON object (with the offset of every point) instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `morello layout`.
pub fn run(args: &Args) -> Result<()> {
    let shape: Shape = args.shape.parse().bad_input(|| format!("invalid shape `{}`", args.shape))?;
    let layout = Layout::parse_for_rank(&args.layout, shape.rank())
        .bad_input(|| format!("invalid layout `{}`", args.layout))?;
    let for_shape = || format!("layout `{layout}` does not fit shape {shape}");
    let expr = layout.buffer_index(&shape).bad_input(for_shape)?;
    let elements = layout.buffer_elements(&shape).bad_input(for_shape)?;
    let dense = LayoutView::dense(&layout, &shape).bad_input(for_shape)?;
    let tile = match &args.tile {
        None => None,
        Some(text) => {
            let tile: Shape = text.parse().bad_input(|| format!("invalid tile shape `{text}`"))?;
            let view = layout.update_for_tile(&shape, &tile).bad_input(|| format!("invalid tile {tile}"))?;
            Some((tile, view))
        }
    };
    if args.json {
        if shape.volume() > MAX_LISTED_OFFSETS {
            return Err(bad_input(format!(
                "shape {shape} has {} points; --json lists offsets for at most {MAX_LISTED_OFFSETS}",
                shape.volume()
            )));
        }
        let indexer = layout.indexer(&shape).bad_input(for_shape)?;
        let offsets: Vec<u64> = shape.points().map(|p| indexer.offset(&p)).collect();
        let mut value = json!({
            "shape": shape.to_string(),
            "layout": layout.to_string(),
            "canonical": dense.layout.to_string(),
            "expr": expr.to_string(),
            "buffer_elements": elements,
            "physical_dims": layout.len(),
            "contiguous_dims": dense.contiguous_dims,
            "offsets": offsets,
        });
        if let Some((tile, view)) = &tile {
            value["tile"] = json!({
                "shape": tile.to_string(),
                "layout": view.layout.to_string(),
                "contiguous_dims": view.contiguous_dims,
                "physical_dims": view.layout.len(),
            });
        }
        return output::print_json(&value);
    }
    let mut text = String::new();
    text += &format!("shape:           {shape}\n");
    text += &format!("layout:          {layout}\n");
    text += &format!("canonical:       {}\n", dense.layout);
    text += &format!("buffer index:    {expr}\n");
    text += &format!("buffer elements: {elements}\n");
    text += &format!("contiguity:      {}\n", describe(&dense));
    if let Some((tile, view)) = &tile {
        text += &format!("tile {tile}:\n");
        text += &format!("  layout:        {}\n", view.layout);
        text += &format!("  contiguity:    {}\n", describe(view));
    }
    if let Some(grid) = offset_grid(&layout, &shape) {
        text += "offsets:\n";
        text += &grid;
    }
    output::print(&text)
}

fn describe(view: &LayoutView) -> String {
    let whole = if view.is_fully_contiguous() { " (one contiguous run)" } else { "" };
    format!("{} of {} physical dims contiguous{whole}", view.contiguous_dims, view.layout.len())
}

/// A table of offsets, like the figures of seed 004, for small rank-1 and rank-2 shapes.
fn offset_grid(layout: &Layout, shape: &Shape) -> Option<String> {
    let (rows, cols) = match shape.dims() {
        [n] => (1, *n),
        [m, n] => (*m, *n),
        _ => return None,
    };
    if rows > 32 || cols > 32 {
        return None;
    }
    let indexer = layout.indexer(shape).ok()?;
    let width = (shape.volume() - 1).to_string().len();
    let mut grid = String::new();
    for r in 0..rows {
        let cells: Vec<String> = (0..cols)
            .map(|c| {
                let point = if shape.rank() == 1 { vec![c] } else { vec![r, c] };
                format!("{:>width$}", indexer.offset(&point))
            })
            .collect();
        grid += "  ";
        grid += &cells.join(" ");
        grid += "\n";
    }
    Some(grid)
}
