//! Modules whose fusions nest thousands deep: the analysis keeps no stack per level, so they get
//! their maps on a test thread's small stack as on the main thread.

use crate::hlo::{ComputationId, HloModule};
use crate::indexing::{
    computation_output_to_parameters, computation_output_to_values, computation_parameter_to_outputs,
    input_to_output, output_to_input,
};

/// HLO text of `depth` computations, each a fusion calling the next, the innermost reversing a
/// vector of 4: every map from the entry's root to its parameter is `(d0) -> (-d0 + 3)`.
fn nested(depth: usize) -> String {
    let mut text = String::from("HloModule deep\n\n");
    text += &format!(
        "c{depth} {{\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(p), dimensions={{0}}\n}}\n\n"
    );
    for level in (1..depth).rev() {
        text += &format!(
            "c{level} {{\n  p = f32[4] parameter(0)\n  ROOT f = f32[4] fusion(p), kind=kLoop, calls=c{}\n}}\n\n",
            level + 1
        );
    }
    text += "ENTRY main {\n  p = f32[4] parameter(0)\n  ROOT f = f32[4] fusion(p), kind=kLoop, calls=c1\n}\n";
    text
}

#[test]
fn ten_thousand_nested_fusions_get_their_maps() {
    let module: HloModule = nested(10_000).parse().expect("the module reads");
    let entry = module.entry_id();
    let root = module.entry().root;
    let reversed = "(d0) -> (-d0 + 3), domain: d0 in [0, 3]";
    let maps = output_to_input(&module, entry, root, 0).expect("maps");
    assert_eq!(maps.len(), 1);
    assert_eq!(maps[0].maps.iter().map(ToString::to_string).collect::<Vec<_>>(), [reversed]);
    let back = input_to_output(&module, entry, root, 0).expect("maps");
    assert_eq!(back[0].maps.iter().map(ToString::to_string).collect::<Vec<_>>(), [reversed]);
    let whole = computation_output_to_parameters(&module, entry, 0).expect("maps");
    assert_eq!(whole[0].maps.iter().map(ToString::to_string).collect::<Vec<_>>(), [reversed]);
    let forward = computation_parameter_to_outputs(&module, entry, 0, 0).expect("maps");
    assert_eq!(forward[0].maps.iter().map(ToString::to_string).collect::<Vec<_>>(), [reversed]);
    let values = computation_output_to_values(&module, entry, root, 0).expect("maps");
    assert_eq!(values.len(), 2, "the root itself and the parameter");
}

/// A called computation whose maps fail is an error only for a query that reaches it.
#[test]
fn a_failing_callee_is_an_error_only_where_it_is_reached() {
    let module: HloModule = nested(3).parse().expect("the module reads");
    let inner = module.computation_by_name("c3").expect("c3");
    let inner_root = module.computation(inner).expect("c3").root;
    assert!(output_to_input(&module, inner, inner_root, 7).is_err(), "no output 7");
    assert!(output_to_input(&module, module.entry_id(), module.entry().root, 0).is_ok());
    assert!(output_to_input(&module, ComputationId(99), inner_root, 0).is_err(), "no computation 99");
}
