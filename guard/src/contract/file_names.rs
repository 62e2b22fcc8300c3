//! The names of a contract folder's files: a schema version's (`v<N>.schema.json`) and
//! the other schema files a manifest may name, which are never a version's.

use super::error::{invalid, ContractError};
use crate::names::is_plain_name;

/// The file of the contract schema at `version`: `v{version}.schema.json`.
pub fn version_file(version: u32) -> String {
    format!("v{version}.schema.json")
}

/// The version whose contract schema a file named `name` is: `v<digits>.schema.json`
/// exactly as [`version_file`] writes it (no leading zero, no sign, within `u32`). `None`
/// for every other name — a vendor schema such as `vendor.v2.schema.json`, a file a
/// `$ref` names — which is never a contract schema version.
pub fn schema_version(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('v')?.strip_suffix(".schema.json")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let version: u32 = digits.parse().ok()?;
    (version_file(version) == name).then_some(version)
}

/// A vendor schema's file: a `.json` file name in the contract folder that is not a
/// contract schema version's (`v2.schema.json` would be read as both).
pub(crate) fn check_vendor_file_name(file: &str) -> Result<(), ContractError> {
    if !is_plain_name(file) || !file.ends_with(".json") {
        return Err(invalid(
            "input.schema",
            format!("{file:?} is not a .json file name in the contract folder"),
        ));
    }
    if schema_version(file).is_some() {
        return Err(invalid(
            "input.schema",
            format!(
                "{file:?} is the name of a contract schema version (v<N>.schema.json): name \
                 the vendor schema otherwise, such as \"vendor.v1.schema.json\""
            ),
        ));
    }
    Ok(())
}
