//! The command adapter (`GitBranchHead`) against the `git_branch_head` guard.
#![no_main]

mod common;

use airlock_harness::{fuzz_adapter, replaying, AdapterFuzzer};
use ci_connector::GitBranchHead;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn state() -> &'static (AdapterFuzzer, GitBranchHead) {
    static STATE: OnceLock<(AdapterFuzzer, GitBranchHead)> = OnceLock::new();
    STATE.get_or_init(|| {
        let tool = "git_branch_head";
        // The upstream's bytes come from the fuzz input: the repository is never read.
        let head = GitBranchHead::new(std::env::temp_dir(), common::contract(tool))
            .unwrap_or_else(|e| panic!("{e}"));
        (common::fuzzer(tool), head)
    })
}

fuzz_target!(|data: &[u8]| {
    let (fuzzer, head) = state();
    // The adapter's own path from the upstream's answer (its body, or the transport
    // error) to the guard's admission: no network, the fuzz case's bytes instead.
    let mut judged = replaying(|request, upstream| head.judge().replay(request, upstream));
    // Panics on a finding, with the case id, what is wrong and the reproducer.
    fuzz_adapter(fuzzer, &mut judged, data);
});
