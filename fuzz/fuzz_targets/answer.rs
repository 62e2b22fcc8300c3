//! Structure-aware: the input is an edit chain (`airlock_harness::fuzz::AnswerChain`)
//! applied to a seed's reference agent value, judged by the harness's strict answer reader: judged
//! clean means every JSON reader sees exactly the reference.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = common::fuzzer().check_answer(data) {
        panic!("{violation}");
    }
});
