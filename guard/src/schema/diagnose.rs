//! Explaining a rejection to the operator: the diagnostic of a validation error, the
//! branch of a `oneOf`/`anyOf` most likely meant, bounded causes.

use jsonschema::error::ValidationErrorKind;
use jsonschema::ValidationError;

use crate::audit::{bounded, Diagnostic, Stage};

/// A rejection the error-reporting validator could not explain: still a rejection.
pub(super) fn unexplained() -> Diagnostic {
    let message = "the response is invalid, but the validator gave no explanation";
    Diagnostic::new(Stage::Schema, "schema", message, message)
}

/// The guard explains a schema rejection of a body up to this size (256 KiB); a larger
/// rejected body gets a diagnostic that says it was not explained. Explaining keeps every
/// error of every failed `anyOf`/`oneOf` branch, about 190 bytes each and up to one per
/// two bytes of body (`[0,0,…]` against `items: {type: string}` in a branch): at most
/// about 50 MB for one answer. See `CompiledSchema::judge_doc`.
pub const MAX_EXPLAINED_BYTES: usize = 256 * 1024;

/// At most this many causes are kept under one diagnostic; the others are counted in its
/// message. (A body of thousands of bad items would otherwise carry thousands of causes.)
const MAX_CAUSES: usize = 8;

pub(super) fn diagnose(error: &ValidationError<'_>) -> Diagnostic {
    let at = error.instance_path().as_str();
    let (causes, more) = match error.kind() {
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            let branch = best_branch(at, context);
            let kept = branch.iter().take(MAX_CAUSES).map(diagnose).collect();
            (kept, branch.len().saturating_sub(MAX_CAUSES))
        }
        _ => (Vec::new(), 0),
    };
    let schema_path = error.schema_path().as_str();
    let mut keyword = error.kind().keyword();
    if keyword == "falseSchema" {
        // `additionalProperties: false` reports as a false subschema; name the keyword
        // that holds it, which is what the schema's author wrote.
        if let Some(holder) = schema_path
            .rsplit('/')
            .find(|s| s.chars().all(char::is_alphabetic))
        {
            keyword = holder;
        }
    }
    // Both texts are cut while they are written: a quoted value costs at most a few
    // hundred bytes, whatever its size in the body.
    let mut masked = bounded(&error.masked());
    // A composition failure quotes the whole instance; its causes say what is wrong.
    let mut message = if causes.is_empty() {
        bounded(error)
    } else {
        masked.clone()
    };
    if more > 0 {
        let tail = format!(" (and {more} more causes in this branch)");
        message.push_str(&tail);
        masked.push_str(&tail);
    }
    Diagnostic::new(Stage::Schema, keyword, message, masked)
        .with_schema_path(schema_path)
        .with_instance_path(error.instance_path().as_str())
        .with_causes(causes)
}

/// The branch the response was most plausibly trying to be. First, a branch whose
/// discriminating `const`s matched: one with no `const` failure on a member of the value
/// the branches judge (a success with a wrong member is explained by the success branch,
/// not by the failure branch its `outcome` ruled out). Then, the one whose errors reach
/// deepest into the instance; then the one with fewer errors.
fn best_branch<'a, 'e>(
    at: &str,
    branches: &'a [Vec<ValidationError<'e>>],
) -> &'a [ValidationError<'e>] {
    branches
        .iter()
        .max_by_key(|errors| {
            let discriminators_matched = !errors.iter().any(|e| is_discriminator_miss(at, e));
            let depth = errors
                .iter()
                .map(|e| e.instance_path().as_str().matches('/').count())
                .max()
                .unwrap_or(0);
            (
                discriminators_matched,
                depth,
                std::cmp::Reverse(errors.len()),
            )
        })
        .map_or(&[], Vec::as_slice)
}

/// A `const` failure on a direct member or item of the value at `at`.
fn is_discriminator_miss(at: &str, error: &ValidationError<'_>) -> bool {
    matches!(error.kind(), ValidationErrorKind::Constant { .. })
        && error
            .instance_path()
            .as_str()
            .strip_prefix(at)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|member| !member.contains('/'))
}
