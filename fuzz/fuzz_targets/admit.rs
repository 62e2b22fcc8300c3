//! The guard of every contract on arbitrary bytes: closed agent values, the fixed
//! failure on rejection, only the response's own agent fields, validators that agree,
//! an audit record of exactly the bytes read.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = common::fuzzer().check_admit(data) {
        panic!("{violation}");
    }
});
