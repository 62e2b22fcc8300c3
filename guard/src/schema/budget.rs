//! The work one value can cost: the subschemas applied *in place* to a single instance
//! value (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, local
//! `$ref`s), counted with every reference expanded. A 2 KB schema of N levels of
//! `{"allOf": [{"$ref": next}, {"$ref": next}]}` applies 2^N of them to every value, and
//! the validator evaluates each: refused at load, so no contract can make one answer cost
//! exponential time. Counted on the graph of in-place steps the reference-cycle check
//! builds (`cycles.rs`: every reference resolved as the validator resolves it, across the
//! contract's files), each subschema once (memoised), with an explicit stack; member and
//! item keywords apply to other values and are not added up.

/// The most subschemas one schema may apply in place to one value. A hand-written or
/// generated schema applies a few hundred at most (every branch of a large `oneOf`, each
/// with its references); 2^17 is past anything but a blow-up.
pub const MAX_IN_PLACE: u64 = 1 << 17;

/// The longest chain of subschemas one schema may apply in place, one inside the other
/// (a `$ref` to a `$ref` to …): the validator descends it recursively for every value,
/// so a chain of 10 000 overflowed a 2 MiB thread stack (a debug build) and aborted the
/// process. Hand-written and generated schemas chain a few dozen.
pub const MAX_IN_PLACE_DEPTH: u64 = 1_000;

/// The most references (`$ref`, `$dynamicRef`, `$recursiveRef`) one schema may hold:
/// the validator's compiler takes time quadratic in a chain of them (100 000 chained:
/// 98 s in a release build, 10 000: under a second). A tool's output schema holds tens.
pub const MAX_REFERENCES: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::super::cycles::{in_place_check, in_place_check_across, InPlace};
    use super::super::Dialect;
    use super::*;
    use serde_json::{json, Value};

    fn over_budget(schema: &Value) -> Option<(String, u64)> {
        match in_place_check(schema, Some("v1.schema.json"), Dialect::Draft2020_12)? {
            InPlace::TooMuchWork { at, count } => Some((at, count)),
            other => panic!("{other:?}"),
        }
    }

    /// N levels of `allOf: [ref next, ref next]` (the attack: 2^N per value), each
    /// reference written by `reference(level)`.
    fn doubling_with(levels: usize, reference: &dyn Fn(usize) -> String) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..levels {
            let next = reference(i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"$anchor": format!("a{i}"), "allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(
            format!("d{levels}"),
            json!({"$anchor": format!("a{levels}"), "type": "object"}),
        );
        json!({"$ref": reference(0), "$defs": defs})
    }

    fn doubling(levels: usize) -> Value {
        doubling_with(levels, &|i| format!("#/$defs/d{i}"))
    }

    #[test]
    fn an_exponential_fan_out_is_over_budget_and_a_wide_schema_is_not() {
        let (at, cost) = over_budget(&doubling(30)).unwrap();
        assert_eq!(at, "#");
        assert!(cost > MAX_IN_PLACE, "{at} {cost}");
        assert!(over_budget(&doubling(10)).is_none());
        // Wide but linear: 2 000 branches, each with a reference.
        let branches: Vec<Value> = (0..2000).map(|_| json!({"$ref": "#/$defs/x"})).collect();
        let wide = json!({"anyOf": branches, "$defs": {"x": {"type": "string"}}});
        assert!(over_budget(&wide).is_none());
        // A recursive schema (a tree) is not in place: fine.
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(over_budget(&tree).is_none());
    }

    /// The budget followed only `#/…` pointers it could read as written: a fan-out
    /// through anchors, percent-encoded pointers or the document's own name loaded, and
    /// every answer then cost 2^40.
    #[test]
    fn a_fan_out_is_counted_however_its_references_are_written() {
        let spellings: [&dyn Fn(usize) -> String; 3] = [
            &|i| format!("#a{i}"),
            &|i| format!("#/%24defs/d{i}"),
            &|i| format!("v1.schema.json#/$defs/d{i}"),
        ];
        for reference in spellings {
            let schema = doubling_with(40, reference);
            let (_, count) = over_budget(&schema).unwrap_or_else(|| panic!("{schema}"));
            assert!(count > MAX_IN_PLACE, "{}", reference(0));
        }
    }

    fn chain(links: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..links {
            defs.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1)}),
            );
        }
        defs.insert(format!("d{links}"), json!({"type": "object"}));
        json!({"$ref": "#/$defs/d0", "$defs": defs})
    }

    /// A chain of references the validator descends for every value: 1 000 deep at most
    /// (10 000 overflowed a 2 MiB stack), 10 000 references at most (compiling a chain
    /// of 100 000 took 98 s).
    #[test]
    fn a_long_chain_of_references_is_refused_before_it_is_compiled() {
        let check = |schema: &Value| in_place_check(schema, None, Dialect::Draft2020_12);
        // The root, 998 links, the end: 1 000 schemas one inside the other.
        assert_eq!(check(&chain(998)), None);
        assert_eq!(
            check(&chain(999)),
            Some(InPlace::TooDeep {
                at: "#".into(),
                depth: 1_001
            })
        );
        assert_eq!(
            check(&chain(10_000)),
            Some(InPlace::TooManyReferences(10_001))
        );
        // Many references side by side are fine: the chain is what costs.
        let branches: Vec<Value> = (0..9_000).map(|_| json!({"$ref": "#/$defs/x"})).collect();
        let wide = json!({"anyOf": branches, "$defs": {"x": {"type": "string"}}});
        assert_eq!(check(&wide), None);
    }

    /// A fan-out split across two files of the contract is counted across them.
    #[test]
    fn a_fan_out_across_the_contracts_files_is_counted() {
        let main = json!({"$ref": "defs.json#/$defs/d0"});
        let defs = doubling(40)["$defs"].clone();
        let mut fetch = |name: &str| (name == "defs.json").then(|| json!({"$defs": defs.clone()}));
        match in_place_check_across(&main, "v1.schema.json", Dialect::Draft2020_12, &mut fetch) {
            Some(InPlace::TooMuchWork { at, count }) => {
                assert_eq!(at, "v1.schema.json#");
                assert!(count > MAX_IN_PLACE);
            }
            other => panic!("{other:?}"),
        }
    }
}
