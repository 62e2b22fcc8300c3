//! JSON values as sets and as bounded lists: membership that stays linear on an `enum` of
//! hundreds of thousands of values, and change details that name a few of them.

use serde_json::Value;
use std::collections::HashSet;

/// Values a change detail names before it counts the rest.
const NAMED: usize = 16;

/// JSON values compared as `Value`'s `==` compares them (object members in any order,
/// `1` and `1.0` apart), held by a canonical text.
#[derive(Default)]
pub(super) struct ValueSet(HashSet<String>);

impl ValueSet {
    /// True when `value` was not in the set.
    pub(super) fn insert(&mut self, value: &Value) -> bool {
        self.0.insert(canonical(value))
    }

    pub(super) fn contains(&self, value: &Value) -> bool {
        self.0.contains(&canonical(value))
    }
}

impl<'a> FromIterator<&'a Value> for ValueSet {
    fn from_iter<I: IntoIterator<Item = &'a Value>>(values: I) -> Self {
        let mut set = ValueSet::default();
        for value in values {
            set.insert(value);
        }
        set
    }
}

/// `values` without repeats, first occurrences kept in order.
pub(super) fn unique(values: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut seen = ValueSet::default();
    values.into_iter().filter(|v| seen.insert(v)).collect()
}

/// `values` as a JSON array of at most 16, then how many more there are.
pub(super) fn named(values: &[Value]) -> String {
    let shown = Value::from(&values[..values.len().min(NAMED)]);
    match values.len().saturating_sub(NAMED) {
        0 => shown.to_string(),
        more => format!("{shown} and {more} more"),
    }
}

/// One text per value as `==` sees it: object members sorted by name, numbers as
/// serde_json writes them (an integer and a float stay apart, as they do under `==`).
fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value);
    out
}

fn write(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(name.as_str()).to_string());
                out.push(':');
                write(out, member);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn membership_agrees_with_equality() {
        let values = [
            json!({"a": 1, "b": [1, {"c": null}]}),
            json!({"b": [1, {"c": null}], "a": 1}),
            json!(1),
            json!(1.0),
            json!("1"),
            json!([1, 2]),
            json!([2, 1]),
        ];
        let set: ValueSet = values[..1].iter().collect();
        for v in &values {
            assert_eq!(set.contains(v), *v == values[0], "{v}");
        }
        assert_eq!(unique(values.to_vec()).len(), 6);
    }

    #[test]
    fn a_detail_names_sixteen_values_and_counts_the_rest() {
        let values: Vec<Value> = (0..20).map(Value::from).collect();
        assert_eq!(
            named(&values),
            "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15] and 4 more"
        );
        assert_eq!(named(&values[..2]), "[0,1]");
    }
}
