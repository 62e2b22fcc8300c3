//! The command adapter (`GitBranchHead`) against the `git_branch_head` guard.
#![no_main]

mod common;

use airlock_harness::replaying;
use airlock_harness::{fuzz_adapter, AdapterFuzzer};
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
    let mut judged = replaying(|request, upstream| head.judge().replay(request, upstream));
    fuzz_adapter(fuzzer, &mut judged, data);
});
