//! What both targets share: where the contracts are, and the fuzzer of one.

use airlock_harness::AdapterFuzzer;
use std::path::PathBuf;

/// A contract folder: under `$AIRLOCK_FUZZ_SCHEMAS`, else `schemas/` beside the
/// executable (how ClusterFuzzLite ships it), else the repository's.
pub fn contract(tool: &str) -> PathBuf {
    let schemas = std::env::var_os("AIRLOCK_FUZZ_SCHEMAS")
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.join("schemas")).filter(|d| d.is_dir())
        })
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../schemas")));
    schemas.join(tool)
}

/// The fuzzer of `tool`'s contract.
pub fn fuzzer(tool: &str) -> AdapterFuzzer {
    AdapterFuzzer::load(&[contract(tool)]).unwrap_or_else(|e| panic!("{e}"))
}
