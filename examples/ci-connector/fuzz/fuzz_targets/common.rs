//! What both targets share: the adapter under fuzz (one of the crate's judges, fed the
//! case's bytes as `airlock check` feeds them) and the fuzzer of its contract.

use airlock_guard::Request;
use airlock_harness::adapter::{Adapter, AdapterFailure, Answer};
use airlock_harness::cases::Upstream;
use airlock_harness::fuzz::adapter::AdapterFuzzer;
use ci_connector::Judge;
use std::path::PathBuf;

/// An adapter's judging path, fed the case: the exact bytes its agent is given.
pub struct Replayed<'a>(pub &'a Judge);

impl Adapter for Replayed<'_> {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let upstream = match upstream {
            Upstream::Body(bytes) => Ok(bytes.as_slice()),
            Upstream::Transport(error) => Err(*error),
        };
        let admission = self
            .0
            .replay(request, upstream)
            .map_err(|e| AdapterFailure::Crash(e.to_string()))?;
        Ok(Answer::Bytes(
            admission.agent().to_json_string().into_bytes(),
        ))
    }
}

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
