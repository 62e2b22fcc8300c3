//! Structure-aware: the input is a chain of edits (`airlock_harness::fuzz::Chain`) applied
//! to one of the adversary's variants, judged by that variant's own contract and request.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = common::fuzzer().check_mutate(data) {
        panic!("{violation}");
    }
});
