//! The reader's fuzz: random text and valid modules broken by random edits must give a module
//! or an error placed inside the text, never a panic. Modules that do read are handed to the
//! indexing analysis, which must not panic either.

use proptest::prelude::*;
use proptest::sample::{Index, select};

use crate::hlo::{HloModule, InstrId};
use crate::indexing::{input_to_output, output_to_input};

/// Valid modules covering the syntax: header, comments, signatures, `%` names, written operand
/// shapes, layouts, literals, every attribute form.
const SEEDS: &[&str] = &[
    "HloModule m, is_scheduled=true\n\nmin {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
     ROOT m = f32[] minimum(a, b)\n}\n\nENTRY e {\n  p0 = f32[4,6]{1,0} parameter(0)\n  k = f32[] constant(-inf)\n  \
     r = f32[6] reduce(p0, k), dimensions={0}, to_apply=min\n  \
     w = f32[2,3] reduce-window(p0, k), window={size=2x2 stride=2x2 pad=0_0x0_0}, to_apply=min\n  \
     ROOT t = (f32[6], f32[2,3]) tuple(r, w)\n}\n",
    "%fused (x: f32[8,4]) -> f32[4,8] {\n  %x = f32[8,4]{1,0} parameter(0)\n  \
     ROOT %t = f32[4,8]{0,1} transpose(f32[8,4]{1,0} %x), dimensions={1,0}, metadata={op_name=\"a/b\" source_line=3}\n}\n\
     ENTRY %main (a: f32[8,4]) -> f32[4,8] {\n  %a = f32[8,4]{1,0} parameter(0) /* the input */\n  \
     ROOT %f = f32[4,8]{0,1} fusion(%a), kind=kLoop, calls=%fused // fused\n}\n",
    "p0 = f32[10, 20, 50] parameter(0)\nslice = f32[5, 3, 25] slice(f32[10, 20, 50] p0),\n  \
     slice={[5:10:1], [3:20:7], [0:50:2]}\nr = f32[75, 5] reshape(slice)\nb = f32[5, 75]{0,1} bitcast(r)\n\
     c = f32[5, 150] concatenate(b, b), dimensions={1}\nrev = f32[5, 150] reverse(c), dimensions={0, 1}",
    "p0 = f32[4, 128, 16] parameter(0)\np1 = f32[4, 16, 8] parameter(1)\n\
     dot = f32[4, 128, 8] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n\
     v = f32[] parameter(2)\npad = f32[12, 142, 8] pad(dot, v), padding=1_4_1x-4_18_0x0_0\n\
     i = s32[12, 142, 8] iota(), iota_dimension=2\nbc = f32[2, 12, 142, 8] broadcast(v), dimensions={}\n\
     cmp = pred[12, 142, 8] compare(pad, pad), direction=LT\nsel = f32[12, 142, 8] select(cmp, pad, pad)\n\
     t = (f32[12, 142, 8], s32[12, 142, 8]) tuple(sel, i)\n\
     g = f32[12, 142, 8] get-tuple-element((f32[12, 142, 8], s32[12, 142, 8]) t), index=0",
];

/// Pieces an edit may insert: characters and tokens of the syntax.
const PIECES: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    "=",
    "%",
    ":",
    "_",
    "x",
    "-",
    "0",
    "1",
    "9",
    " ",
    "\n",
    "\"",
    "/*",
    "*/",
    "//",
    "ROOT ",
    "ENTRY ",
    "HloModule ",
    "f32",
    "(f32[2], s32[])",
    "[2,3]",
    "{0,1}",
    "{1,0:T(2,2)}",
    "parameter(0)",
    "add",
    "fusion",
    "calls=",
    "to_apply=",
    "dimensions={0}",
    "slice={[0:1]}",
    "window={size=2}",
    "padding=1_1",
    "99999999999999999999",
    "é",
];

fn edited(seed: &str, edits: &[(Index, u8, &str)]) -> String {
    let mut text = seed.to_string();
    for (at, kind, piece) in edits {
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let i = boundaries[at.index(boundaries.len())];
        let next = boundaries.iter().copied().find(|&b| b > i).unwrap_or(text.len());
        let line_start = text[..i].rfind('\n').map_or(0, |p| p + 1);
        let line_end = text[i..].find('\n').map_or(text.len(), |p| i + p);
        match kind {
            0 => text.insert_str(i, piece),
            1 => text.replace_range(i..next, ""),
            2 => text.replace_range(i..next, piece),
            // Delete up to the end of the line: drops attributes, operands, braces.
            3 => text.replace_range(i..line_end, ""),
            // Change a digit: the syntax stays, sizes and dimension numbers change.
            4 | 5 => {
                let digits: Vec<usize> =
                    text.match_indices(|c: char| c.is_ascii_digit()).map(|(p, _)| p).collect();
                if !digits.is_empty() {
                    let p = digits[at.index(digits.len())];
                    let new = char::from(b'0' + (text.as_bytes()[p] - b'0' + 1 + *kind) % 10);
                    text.replace_range(p..=p, &new.to_string());
                }
            }
            6 => text.replace_range(line_start..line_end, ""),
            _ => {
                let line = text[line_start..line_end].to_string();
                text.insert_str(line_start, &format!("{line}\n"));
            }
        }
    }
    text
}

fn mutated_module() -> impl Strategy<Value = String> {
    let edit = (any::<Index>(), 0u8..8, select(PIECES));
    (select(SEEDS), prop::collection::vec(edit, 1..4)).prop_map(|(seed, edits)| edited(seed, &edits))
}

/// Reads `text`; an error must lie inside it, a module must survive the indexing analysis.
fn exercise(text: &str) {
    match text.parse::<HloModule>() {
        Err(e) => {
            let lines = text.split('\n').count();
            assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}: {e}", e.line);
            assert!(e.column >= 1, "{e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
        Ok(module) => {
            let entry = module.entry_id();
            for (index, instr) in module.entry().instructions.iter().enumerate() {
                for output in 0..instr.shape.arrays().len() {
                    let _ = output_to_input(&module, entry, InstrId(index), output);
                }
                for operand in 0..instr.operands.len() {
                    let _ = input_to_output(&module, entry, InstrId(index), operand);
                }
            }
        }
    }
}

#[test]
fn the_seeds_read() {
    for seed in SEEDS {
        if let Err(e) = seed.parse::<HloModule>() {
            panic!("{e}\n{seed}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn reader_never_panics_on_random_text(
        text in "[ -~\n]{0,60}|[a-z0-9%=(){}\\[\\],:_ \n-]{0,80}|\\PC{0,30}"
    ) {
        exercise(&text);
    }

    #[test]
    fn reader_never_panics_on_mutated_modules(text in mutated_module()) {
        exercise(&text);
    }
}
