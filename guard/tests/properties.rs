//! Properties that hold whatever the bytes: the agent value is always one of the two
//! closed shapes, a rejection is exactly the fixed failure, the strict parser agrees
//! with serde_json wherever it accepts, and validating the guard's document in place
//! agrees with validating the `serde_json` value.

use airlock_guard::{parse, AgentValue, ParseErrorKind};
use proptest::prelude::*;
use serde_json::Value;

use crate::util::generators::{json_like_bytes, json_value, mutated};
use crate::util::{accepted_successes, guards, TOOLS};

/// Judge `bytes` with every shipped contract and check the agent value's shape.
fn assert_closed_shapes(bytes: &[u8]) -> Result<(), TestCaseError> {
    for (guard, request) in guards() {
        let tool = guard.contract().tool();
        let admission = guard.admit(request, bytes);
        let json = admission.agent().to_json();
        let members: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        match admission.agent().data() {
            Some(_) => prop_assert_eq!(members, ["tool", "request_id", "outcome", "data"]),
            None => {
                prop_assert_eq!(members, ["tool", "request_id", "outcome", "error"]);
                let error: Vec<&str> = json["error"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                prop_assert_eq!(error, ["code", "retryable"]);
            }
        }
        prop_assert_eq!(json["tool"].as_str(), Some(tool));
        prop_assert_eq!(
            json["request_id"].as_str(),
            Some(request.request_id.as_str())
        );
        if !admission.is_admitted() {
            prop_assert_eq!(
                admission.agent().to_json_string(),
                AgentValue::invalid_response(tool, &request.request_id).to_json_string()
            );
        }
    }
    Ok(())
}

/// The guard validates its own parsed document in place; the same schema on the
/// `serde_json` value of the same bytes must give the same verdict and diagnostic.
fn assert_validators_agree(bytes: &[u8]) -> Result<(), TestCaseError> {
    for (guard, _) in guards() {
        let contract = guard.contract();
        let depth = contract.limits().max_depth;
        let in_place = contract.schema().validate_bytes(bytes, depth);
        match parse(bytes, depth) {
            Err(e) => {
                let d = in_place.expect_err("the document parser accepted what parse rejects");
                prop_assert_eq!(d.keyword(), e.keyword());
                prop_assert_eq!(d.byte_offset(), Some(e.offset()));
            }
            Ok(value) => prop_assert_eq!(in_place, contract.schema().validate(&value)),
        }
    }
    Ok(())
}

fn fixture_bytes() -> impl Strategy<Value = Vec<u8>> {
    let mut bases = Vec::new();
    for tool in TOOLS {
        bases.extend(accepted_successes(tool).into_iter().map(|(_, b)| b));
    }
    prop::sample::select(bases).prop_flat_map(mutated)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bytes_give_a_closed_shape_and_rejections_are_the_fixed_failure(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        assert_closed_shapes(&bytes)?;
    }

    #[test]
    fn json_like_bytes_give_a_closed_shape(bytes in json_like_bytes()) {
        assert_closed_shapes(&bytes)?;
    }

    #[test]
    fn mutated_fixtures_give_a_closed_shape(bytes in fixture_bytes()) {
        assert_closed_shapes(&bytes)?;
    }

    #[test]
    fn validating_bytes_in_place_agrees_with_validating_the_value(bytes in fixture_bytes()) {
        assert_validators_agree(&bytes)?;
    }

    #[test]
    fn validating_json_like_bytes_in_place_agrees_with_validating_the_value(bytes in json_like_bytes()) {
        assert_validators_agree(&bytes)?;
    }

    #[test]
    fn strict_parser_reads_serialised_values_exactly_as_serde_json(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let ours = parse(text.as_bytes(), 64).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let theirs: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(ours, theirs);
    }

    #[test]
    fn strict_parser_agrees_with_serde_json_or_rejects_for_a_documented_reason(bytes in json_like_bytes()) {
        let theirs = serde_json::from_slice::<Value>(&bytes);
        match parse(&bytes, 64) {
            Ok(ours) => {
                let theirs = theirs.map_err(|e| TestCaseError::fail(format!("we accepted what serde_json rejects: {e}")))?;
                prop_assert_eq!(ours, theirs);
            }
            Err(e) => {
                if theirs.is_ok() {
                    // serde_json keeps the last duplicate, rounds huge integers and
                    // flushes underflow to zero; the guard refuses all three.
                    let documented = matches!(
                        e.kind(),
                        ParseErrorKind::DuplicateMember(_)
                            | ParseErrorKind::IntegerOutOfRange
                            | ParseErrorKind::NumberUnderflow
                    );
                    prop_assert!(documented, "serde_json accepted what we rejected with {}", e);
                }
            }
        }
    }
}
