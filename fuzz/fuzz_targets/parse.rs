//! The strict parser against serde_json: equal values, or a documented refusal.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = airlock_harness::fuzz::check_parse(data) {
        panic!("{violation}");
    }
});
