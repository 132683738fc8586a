//! Real HLO from a real compiler: the modules JAX lowers a few small functions to (before and
//! after XLA's CPU compiler), checked in under `fixtures/jax/` by `fixtures/jax/generate.py`:
//! among them a gather in the form JAX emits and in the form XLA's GatherSimplifier leaves, and
//! a dynamic-slice at a run-time offset.
//! Every module must read, and every map of every instruction of its entry must equal the
//! reference (brute force over the ops' semantics, through fusions), except where an op
//! without a map (a `call`) makes the maps unknown, which must then be said.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::hlo::{HloModule, HloOp, InstrId};
use crate::indexing::{Completeness, output_to_input};

use super::reference::output_to_input_relations;
use super::union;

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path.file_name().expect("a file name").to_string_lossy().into_owned(), text)
        })
        .collect()
}

/// Whether an instruction's maps go through an op without a map (directly or in a fusion).
fn reaches_unknown(module: &HloModule, op: &HloOp) -> bool {
    match op {
        HloOp::Unknown { .. } | HloOp::Call { .. } => true,
        HloOp::Fusion { calls } => {
            module.computations()[calls.0].instructions.iter().any(|i| reaches_unknown(module, &i.op))
        }
        _ => false,
    }
}

#[test]
fn every_jax_fixture_reads_and_its_maps_verify() {
    let fixtures = fixtures();
    assert!(fixtures.len() >= 12, "expected the JAX fixtures, found {}", fixtures.len());
    let mut checked = 0;
    let mut unknown = 0;
    for (name, text) in &fixtures {
        let module: HloModule = text.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
        let comp = module.entry();
        for (index, instr) in comp.instructions.iter().enumerate() {
            if instr.operands.is_empty() {
                continue;
            }
            let id = InstrId(index);
            for output in 0..instr.shape.arrays().len() {
                let got = output_to_input(&module, module.entry_id(), id, output)
                    .unwrap_or_else(|e| panic!("{name}: `{}`: {e}", instr.name));
                if reaches_unknown(&module, &instr.op) {
                    assert!(
                        got.iter().any(|o| o.completeness == Completeness::Unknown),
                        "{name}: `{}` goes through an op without a map but no map says unknown",
                        instr.name
                    );
                    unknown += 1;
                    continue;
                }
                let expected: BTreeMap<_, _> = output_to_input_relations(&module, comp, id, output);
                for o in &got {
                    assert_eq!(o.completeness, Completeness::Complete, "{name}: `{}`", instr.name);
                    let want = expected.get(&(o.operand, o.operand_output)).cloned().unwrap_or_default();
                    assert_eq!(union(&o.maps), want, "{name}: `{}` -> operand {}", instr.name, o.operand);
                }
                for (key, relation) in &expected {
                    let listed = got.iter().any(|o| (o.operand, o.operand_output) == *key);
                    assert!(listed || relation.is_empty(), "{name}: `{}` misses operand {key:?}", instr.name);
                }
                checked += 1;
            }
        }
    }
    // Most instructions have maps: the count keeps the test from passing on nothing. The
    // unoptimised modules call `jax.nn.relu` and `jnp.take` through a `call`, which has no map.
    assert!(checked >= 40, "only {checked} instructions checked");
    assert_eq!(unknown, 3, "only the `call`s of jit(relu) (two) and jit(_take) lack a map");
}
