//! The Rust snippets of the user docs that use `airlock_harness`, as code that compiles
//! against its public API: `docs::every_rust_snippet_of_the_docs_is_compiled_code` finds
//! each snippet here (or in the worked crate) line for line, so a snippet that would no
//! longer compile fails the build. The functions are compiled, not run: their paths are
//! an adapter crate's.
#![allow(dead_code)]

use airlock_guard::{Contract, Guard, Request};
use airlock_harness::{Adapter, AdapterFailure, Answer, Upstream};
use std::error::Error;

/// A user's adapter: the guard in process.
struct MyAdapter(Guard);

impl MyAdapter {
    fn new() -> Self {
        let contract = Contract::load("schemas/review_status").expect("the contract loads");
        Self(Guard::new(contract))
    }
}

impl Adapter for MyAdapter {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let admission = match upstream {
            Upstream::Body(bytes) => self.0.admit(request, bytes),
            Upstream::Transport(e) => self.0.admit_transport_error(request, *e),
        };
        Ok(Answer::Bytes(
            admission.agent().to_json_string().into_bytes(),
        ))
    }
}

/// README.md, "Checking your own adapter crate".
fn readme_check() -> Result<(), Box<dyn Error>> {
    use airlock_harness::Check;

    // In a #[test] of the adapter crate: MyAdapter implements airlock_harness::Adapter.
    let mut adapter = MyAdapter::new();
    Check::contract("schemas/review_status")
        .run(&mut adapter)?
        .assert_clean();
    Ok(())
}

/// docs/fuzzing-adapters.md, "In `cargo test`".
fn fuzzing_adapters_smoke_run() -> Result<(), Box<dyn Error>> {
    let mut my_adapter = MyAdapter::new();

    use airlock_harness::{AdapterFuzzer, RunOptions};

    let fuzzer = AdapterFuzzer::load(&["schemas/my_tool".into()])?;
    let run = fuzzer.run(&mut my_adapter, &RunOptions::default().runs(5_000));
    assert!(run.finding.is_none(), "{}", run.finding.unwrap().1);
    Ok(())
}
