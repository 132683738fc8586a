//! `morello xla SHAPE`: read an XLA shape and show its layout, buffer and morello equivalent.

use anyhow::Result;
use morello_xla::xla::{ArrayShape, BufferPosition, BufferlessArrayShape, ElementType, XlaShape};
use serde_json::{Value, json};

use crate::failure::{Failure, bad_input};
use crate::output;

/// Examples shown after `morello xla --help`.
pub const EXAMPLES: &str = "\
Examples:
  morello xla 'f32[3,5]{1,0:T(2,2)}'
  morello xla 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'
  morello xla 'f32[2,3]{0,1:pad(3,5)}' --json
  morello xla '(f32[2], s32[])'

  morello xla 's4[5]{0:E(4)}'
  morello xla 'f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}'
  morello xla 'f32[<=10,?]'

Shape syntax: TYPE[SIZES]{MINOR_TO_MAJOR:ITEMS}. TYPE is any XLA primitive type: pred, s1, s2, s4,
s8, s16, s32, s64, the same u*, f16, bf16, f32, f64, the f8 types (f8e4m3fn, f8e5m2, ...),
f4e2m1fn, c64, c128, or token[] / opaque[] alone. A size is N, <=N (bounded dynamic: the buffer
holds N) or ? (unbounded: no buffer size until run time). The layout block is optional (default:
major to minor). ITEMS: T(..)(..) tilings applied in order (a * entry combines a dimension with
the next more minor one), L(N) tail padding alignment in elements, E(N) element size in bits
(packed), S(N) memory space (0 device HBM, 1 VMEM, 5 host), SC(D:I,..)(D:I,..) split configurations,
M(N) dynamic-shape metadata bytes, #(TYPE) and *(TYPE) index and pointer types, D(L,..) dimension
level types (D dense, C compressed, S singleton, H loose compressed, + not unique, ~ not ordered;
any but D makes a sparse array, which has no dense buffer), P(SHAPE) physical shape, pad(W,...)
the older padded_dimensions (a width per dimension). A tuple is (SHAPE, SHAPE, ...); each of its
arrays has its own buffer.";

/// The most elements `--json` lists offsets for (all arrays of a tuple together).
const MAX_LISTED_ELEMENTS: u64 = 1_000_000;

/// The most buffer positions the text output draws one by one.
const MAX_DRAWN_POSITIONS: u64 = 64;

/// Arguments of `morello xla`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The XLA shape, e.g. `f32[16,256]{1,0:T(8,128)}` (quote it for the shell).
    shape: String,
    /// Print one JSON object, with the buffer offset of every element, instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `morello xla`.
pub fn run(args: &Args) -> Result<()> {
    let shape: XlaShape =
        args.shape.parse().bad_input(|| format!("invalid XLA shape `{}`", quote(&args.shape)))?;
    if args.json {
        let total: u64 =
            shape.arrays().iter().map(|(_, array)| array.element_count()).fold(0, u64::saturating_add);
        if total > MAX_LISTED_ELEMENTS {
            return Err(bad_input(format!(
                "{shape} has {total} elements; --json lists offsets for at most {MAX_LISTED_ELEMENTS}"
            )));
        }
        return output::print_json(&shape_json(&shape));
    }
    let text = match &shape {
        XlaShape::Array(array) => describe(array, ""),
        XlaShape::Bufferless(array) => describe_bufferless(array, ""),
        XlaShape::Tuple(_) => {
            let arrays = shape.arrays();
            let mut text = format!("{:<17}{shape}\n", "shape:");
            text += &format!(
                "{:<17}{}, each with its own buffer\n",
                "tuple of:",
                plural(arrays.len() as u64, "array")
            );
            for (path, array) in arrays {
                text += &format!("array {{{}}}:\n", join(&path, ","));
                text += &describe(array, "  ");
            }
            text
        }
    };
    output::print(&text)
}

/// The user's text for an error message: one line, not too long.
fn quote(text: &str) -> String {
    let mut out: String = text.chars().take(80).flat_map(char::escape_debug).collect();
    if text.chars().count() > 80 {
        out += "...";
    }
    out
}

/// `1 element`, `2 elements`.
fn plural(count: u64, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

fn join<T: ToString>(values: &[T], separator: &str) -> String {
    values.iter().map(T::to_string).collect::<Vec<_>>().join(separator)
}

/// The JSON object of a shape: arrays in full, tuples as their elements.
fn shape_json(shape: &XlaShape) -> Value {
    match shape {
        XlaShape::Array(array) => array_json(array),
        XlaShape::Bufferless(array) => json!({
            "kind": if array.layout().is_sparse() { "sparse array" } else { "unbounded array" },
            "shape": array.to_string(),
            "element_type": array.element_type().name(),
            "dimensions": array.dims().iter().map(ToString::to_string).collect::<Vec<_>>(),
            "minor_to_major": array.layout().minor_to_major(),
        }),
        XlaShape::Tuple(elements) => json!({
            "kind": "tuple",
            "shape": shape.to_string(),
            "elements": elements.iter().map(shape_json).collect::<Vec<_>>(),
        }),
    }
}

fn array_json(array: &ArrayShape) -> Value {
    let layout = array.layout();
    let morello = array.to_morello();
    let offsets: Vec<u64> = array.indexer().offsets_row_major().collect();
    json!({
        "kind": "array",
        "shape": array.to_string(),
        "element_type": array.element_type().name(),
        "element_bits": array.element_type().bits(),
        "element_size_in_bits": layout.element_size_in_bits(),
        "dimensions": array.dims(),
        "dynamic_dimensions": (0..array.num_dims()).filter(|&d| array.is_dynamic_dimension(d)).collect::<Vec<_>>(),
        "true_num_dimensions": array.true_num_dims(),
        "element_count": array.element_count(),
        "minor_to_major": layout.minor_to_major(),
        "tiles": layout.tiles().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "tiled_dimensions": array.tiled_dims(),
        "padded_dimensions": layout.padded_dimensions(),
        "tail_padding_alignment_in_elements": layout.tail_padding_alignment_in_elements(),
        "memory_space": { "id": layout.memory_space().id(), "name": layout.memory_space().name() },
        "buffer_elements": array.buffer_elements(),
        "buffer_bytes": array.buffer_bytes(),
        "morello": morello.as_ref().ok().map(|m| json!({ "shape": m.shape.to_string(), "layout": m.layout.to_string() })),
        "morello_error": morello.as_ref().err().map(ToString::to_string),
        "offsets": offsets,
    })
}

/// The text report of one array, each line prefixed with `indent`.
fn describe(array: &ArrayShape, indent: &str) -> String {
    let layout = array.layout();
    let element = array.element_type();
    let mut lines: Vec<(&str, String)> = vec![
        ("shape", array.to_string()),
        ("element type", element_text(element, layout.element_size_in_bits())),
        (
            "dimensions",
            format!(
                "[{}]: {}, {} of size > 1, {}",
                join(&array.dim_sizes(), ","),
                plural(array.num_dims() as u64, "dimension"),
                array.true_num_dims(),
                plural(array.element_count(), "element")
            ),
        ),
        ("minor-to-major", format!("[{}]", join(layout.minor_to_major(), ","))),
    ];
    let tiles = if layout.tiles().is_empty() {
        "none".to_string()
    } else {
        format!("T{}", layout.tiles().iter().map(ToString::to_string).collect::<String>())
    };
    lines.push(("tiles", tiles));
    lines.push(("tiled shape", format!("[{}] (most major first)", join(array.tiled_dims(), ","))));
    if let Some(padded) = layout.padded_dimensions() {
        lines.push(("padded dims", format!("[{}]", join(padded, ","))));
    }
    if layout.tail_padding_alignment_in_elements() != 1 {
        lines.push((
            "tail padding",
            format!("to a multiple of {} elements", layout.tail_padding_alignment_in_elements()),
        ));
    }
    lines.push(("memory space", format!("{} ({})", layout.memory_space(), layout.memory_space().name())));
    let buffer =
        format!("{}, {}", plural(array.buffer_elements(), "element"), plural(array.buffer_bytes(), "byte"));
    lines.push(("buffer", buffer));
    let morello = match array.to_morello() {
        Ok(m) if m.shape.rank() == 0 => format!("scalar {}", m.layout),
        Ok(m) => format!("{} {}", m.shape, m.layout),
        Err(e) => format!("none: {e}"),
    };
    lines.push(("morello layout", morello));
    if array.buffer_elements() <= MAX_DRAWN_POSITIONS {
        lines.push(("buffer contents", contents(array)));
    }
    let mut text = String::new();
    for (name, value) in lines {
        text += &format!("{indent}{:<17}{value}\n", format!("{name}:"));
    }
    if let Some(grid) = offset_grid(array) {
        text += &format!("{indent}offsets:\n");
        for row in grid.lines() {
            text += &format!("{indent}  {row}\n");
        }
    }
    text
}

/// `s4 (4 bits, 1 byte)`, `s4 (4 bits, packed 4 bits each by E(4))`.
fn element_text(element: ElementType, element_size_in_bits: u64) -> String {
    let bits = element.bits();
    match (element, element_size_in_bits) {
        (ElementType::Token, _) => "token (no data)".to_string(),
        (ElementType::Opaque, _) => "opaque (a runtime value, pointer-sized)".to_string(),
        (_, 0) => format!("{element} ({bits} bits, {})", plural(u64::from(element.byte_width()), "byte")),
        (_, packed) => format!("{element} ({bits} bits, packed {packed} bits each by E({packed}))"),
    }
}

/// The text report of an array without a buffer (an unbounded dimension or a sparse layout).
fn describe_bufferless(array: &BufferlessArrayShape, indent: &str) -> String {
    let lines = [
        ("shape", array.to_string()),
        ("element type", element_text(array.element_type(), array.layout().element_size_in_bits())),
        ("dimensions", format!("[{}]", join(array.dims(), ","))),
        ("minor-to-major", format!("[{}]", join(array.layout().minor_to_major(), ","))),
        ("buffer", no_buffer_text(array)),
    ];
    lines.iter().map(|(name, value)| format!("{indent}{:<17}{value}\n", format!("{name}:"))).collect()
}

/// Why an array has no buffer to describe.
fn no_buffer_text(array: &BufferlessArrayShape) -> String {
    if array.layout().is_sparse() {
        format!(
            "none: D({}) makes it a sparse array, stored as index and value buffers, not a dense one",
            join(array.layout().dim_level_types(), ",")
        )
    } else {
        "unknown until run time: `?` dimensions are unbounded".to_string()
    }
}

/// What each buffer position holds, in buffer order: an element's index or `-` for padding.
fn contents(array: &ArrayShape) -> String {
    let cells: Vec<String> = (0..array.buffer_elements())
        .map(|linear| match array.multi_index(linear) {
            Ok(BufferPosition::Element(index)) => format!("({})", join(&index, ",")),
            _ => "-".to_string(),
        })
        .collect();
    if cells.is_empty() { "(empty)".to_string() } else { cells.join(" ") }
}

/// The offset of every element as a table, for small arrays of one or two dimensions.
fn offset_grid(array: &ArrayShape) -> Option<String> {
    let (rows, cols) = match array.dims() {
        [n] => (1, *n),
        [m, n] => (*m, *n),
        _ => return None,
    };
    if rows == 0 || cols == 0 || rows > 32 || cols > 32 {
        return None;
    }
    let offsets: Vec<u64> = array.indexer().offsets_row_major().collect();
    let width = offsets.iter().max().map_or(1, |m| m.to_string().len());
    let mut grid = String::new();
    for row in offsets.chunks(cols as usize) {
        grid += &row.iter().map(|o| format!("{o:>width$}")).collect::<Vec<_>>().join(" ");
        grid += "\n";
    }
    Some(grid)
}
