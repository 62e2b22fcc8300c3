//! The contracts every target judges with: `AIRLOCK_FUZZ_SCHEMAS` (a folder of contract
//! folders), else `schemas/` next to the executable (how ClusterFuzzLite ships them), else
//! the repository's `schemas/`. Each contract's corpus is `../corpora/<tool>` from there.

use airlock_harness::check::discover;
use airlock_harness::fuzz::Fuzzer;
use std::path::PathBuf;
use std::sync::OnceLock;

fn schemas() -> PathBuf {
    if let Some(dir) = std::env::var_os("AIRLOCK_FUZZ_SCHEMAS") {
        return PathBuf::from(dir);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("schemas")))
        .filter(|dir| dir.is_dir());
    beside.unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas")))
}

pub fn fuzzer() -> &'static Fuzzer {
    static FUZZER: OnceLock<Fuzzer> = OnceLock::new();
    FUZZER.get_or_init(|| {
        let schemas = schemas();
        let dirs = discover(&schemas).unwrap_or_else(|e| panic!("no contracts to fuzz: {e}"));
        Fuzzer::load(&dirs).unwrap_or_else(|e| panic!("contracts do not load: {e}"))
    })
}
