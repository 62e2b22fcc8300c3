//! The HTTP adapter (`CiConnector`) against the `ci_pipeline_status` guard.
#![no_main]

mod common;

use airlock_harness::{fuzz_adapter, replaying, AdapterFuzzer};
use ci_connector::CiConnector;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn state() -> &'static (AdapterFuzzer, CiConnector) {
    static STATE: OnceLock<(AdapterFuzzer, CiConnector)> = OnceLock::new();
    STATE.get_or_init(|| {
        let tool = "ci_pipeline_status";
        let connector = CiConnector::new("http://127.0.0.1:9", common::contract(tool))
            .unwrap_or_else(|e| panic!("{e}"));
        (common::fuzzer(tool), connector)
    })
}

fuzz_target!(|data: &[u8]| {
    let (fuzzer, connector) = state();
    // The adapter's own path from the upstream's answer (its body, or the transport
    // error) to the guard's admission: no network, the fuzz case's bytes instead.
    let mut judged = replaying(|request, upstream| connector.judge().replay(request, upstream));
    // Panics on a finding, with the case id, what is wrong and the reproducer.
    fuzz_adapter(fuzzer, &mut judged, data);
});
