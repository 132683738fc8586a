//! Tests of indexing maps: seed 003's examples as printed text and against a brute-force
//! reference, the map algebra (text, simplification, composition, enumeration), and properties
//! on random maps and random small fusions.

mod conformance;
mod deep;
mod jax_fixtures;
mod maps;
mod random_fusions;
mod reference;
mod seed;
mod xla_corpus;

use std::collections::{BTreeMap, BTreeSet};

use crate::hlo::{ComputationBuilder, ComputationId, HloModule, HloOp, HloShape, InstrId};

use super::{EnumerationLimits, IndexingMap, input_to_output, output_to_input};
use reference::Relation;

/// The reducer every test module starts with (computation 0).
pub const REDUCER: ComputationId = ComputationId(0);

fn reducer() -> crate::hlo::HloComputation {
    let mut r = ComputationBuilder::new("reducer");
    let a = r.add("a", HloShape::array(&[]), HloOp::Parameter { number: 0 }, &[]);
    let b = r.add("b", HloShape::array(&[]), HloOp::Parameter { number: 1 }, &[]);
    let sum = r.add("sum", HloShape::array(&[]), HloOp::Elementwise(crate::hlo::ElementwiseOp::Add), &[a, b]);
    r.finish(sum)
}

/// A computation under construction, numbering parameters as they are added.
pub struct Body {
    builder: ComputationBuilder,
    params: usize,
}

impl Body {
    pub fn new(name: &str) -> Self {
        Body { builder: ComputationBuilder::new(name), params: 0 }
    }

    pub fn param(&mut self, name: &str, dims: &[i64]) -> InstrId {
        self.param_shaped(name, HloShape::array(dims))
    }

    pub fn param_shaped(&mut self, name: &str, shape: HloShape) -> InstrId {
        self.params += 1;
        self.builder.add(name, shape, HloOp::Parameter { number: self.params - 1 }, &[])
    }

    pub fn op(&mut self, name: &str, dims: &[i64], op: HloOp, operands: &[InstrId]) -> InstrId {
        self.builder.add(name, HloShape::array(dims), op, operands)
    }

    pub fn shaped(&mut self, name: &str, shape: HloShape, op: HloOp, operands: &[InstrId]) -> InstrId {
        self.builder.add(name, shape, op, operands)
    }
}

/// A module whose entry is `body` (computation 1), after the reducer.
pub fn module(body: Body, root: InstrId) -> HloModule {
    HloModule::new("test", vec![reducer(), body.builder.finish(root)], ComputationId(1))
        .unwrap_or_else(|e| panic!("invalid test module: {e}"))
}

/// A module with `body` as a fused computation (computation 1) and an entry (computation 2)
/// whose root is a fusion of it; returns the module and the fusion instruction.
pub fn fusion_module(body: Body, root: InstrId) -> (HloModule, InstrId) {
    let fused = body.builder.finish(root);
    let mut entry = Body::new("entry");
    let mut operands = Vec::new();
    for id in fused.parameters() {
        operands.push(
            entry.param_shaped(&format!("arg{}", operands.len()), fused.instructions[id.0].shape.clone()),
        );
    }
    let shape = fused.instructions[root.0].shape.clone();
    let fusion = entry.shaped("fusion", shape, HloOp::Fusion { calls: ComputationId(1) }, &operands);
    let module =
        HloModule::new("test", vec![reducer(), fused, entry.builder.finish(fusion)], ComputationId(2))
            .unwrap_or_else(|e| panic!("invalid test module: {e}"));
    (module, fusion)
}

/// The printed maps from output `output` of the entry's instruction `id`, per operand.
pub fn out_to_in(module: &HloModule, id: InstrId, output: usize) -> Vec<Vec<String>> {
    printed(output_to_input(module, module.entry_id(), id, output).unwrap().into_iter().map(|o| o.maps))
}

/// The printed maps from operand `operand` of the entry's instruction `id`, per output.
pub fn in_to_out(module: &HloModule, id: InstrId, operand: usize) -> Vec<Vec<String>> {
    printed(input_to_output(module, module.entry_id(), id, operand).unwrap().into_iter().map(|o| o.maps))
}

/// Each list of maps, printed.
fn printed(lists: impl Iterator<Item = Vec<IndexingMap>>) -> Vec<Vec<String>> {
    lists.map(|maps| maps.iter().map(ToString::to_string).collect()).collect()
}

fn union(maps: &[IndexingMap]) -> Relation {
    let limits = EnumerationLimits { max_pairs: 2_000_000, max_points: 20_000_000 };
    let mut out = BTreeSet::new();
    for map in maps {
        check_map_invariants(map);
        for pair in map.enumerate(&limits).unwrap_or_else(|e| panic!("{map}: {e}")) {
            out.insert((pair.source, pair.target));
        }
    }
    out
}

/// Text round trip (both forms) and idempotent simplification.
pub fn check_map_invariants(map: &IndexingMap) {
    let printed = map.to_string();
    let parsed: IndexingMap = printed.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
    assert_eq!(&parsed, map, "round trip of {printed}");
    let long = format!("{map:#}");
    assert_eq!(&long.parse::<IndexingMap>().unwrap(), map, "round trip of\n{long}");
    assert_eq!(&map.simplify().unwrap(), map, "simplify is not idempotent on {printed}");
}

/// Checks both directions of the entry's instruction `id` against the reference: every map's
/// pairs, unioned per operand array, are exactly the reads the op's semantics give.
pub fn check_against_reference(module: &HloModule, id: InstrId) {
    let comp_id = module.entry_id();
    let comp = module.entry();
    let instr = &comp.instructions[id.0];
    let mut expected_in_to_out: BTreeMap<(usize, usize, usize), Relation> = BTreeMap::new();
    for output in 0..instr.shape.arrays().len() {
        let expected = reference::output_to_input_relations(module, comp, id, output);
        let got = output_to_input(module, comp_id, id, output).unwrap();
        let mut seen = BTreeSet::new();
        for o in &got {
            let key = (o.operand, o.operand_output);
            let want = expected.get(&key).cloned().unwrap_or_default();
            assert_eq!(
                union(&o.maps),
                want,
                "output {output} -> operand {key:?} of `{}`: {:#?}",
                instr.name,
                o.maps
            );
            seen.insert(key);
        }
        for (key, relation) in &expected {
            assert!(
                seen.contains(key) || relation.is_empty(),
                "no maps to operand {key:?} of `{}`",
                instr.name
            );
            let swapped = relation.iter().map(|(a, b)| (b.clone(), a.clone())).collect();
            expected_in_to_out.insert((key.0, key.1, output), swapped);
        }
    }
    for operand in 0..instr.operands.len() {
        let got = input_to_output(module, comp_id, id, operand).unwrap();
        let mut seen = BTreeSet::new();
        for o in &got {
            let key = (operand, o.operand_output, o.output);
            let want = expected_in_to_out.get(&key).cloned().unwrap_or_default();
            assert_eq!(union(&o.maps), want, "operand {key:?} -> output of `{}`: {:#?}", instr.name, o.maps);
            seen.insert(key);
        }
        for (key, relation) in expected_in_to_out.range((operand, 0, 0)..(operand + 1, 0, 0)) {
            assert!(
                seen.contains(key) || relation.is_empty(),
                "no maps from operand {key:?} of `{}`",
                instr.name
            );
        }
    }
}
