//! Run one side of the `admit` comparison in a loop, for `valgrind --tool=callgrind`
//! (instruction counts are repeatable where wall time on a shared VM is not).
//!
//! ```sh
//! cargo build --release -p airlock-benches --bin profile-admit
//! valgrind --tool=callgrind target/release/profile-admit guard review_status 10000
//! valgrind --tool=callgrind target/release/profile-admit baseline review_status 10000
//! target/release/profile-admit timing review_status 300   # wall time, sides interleaved
//! ```
//!
//! `request` reads the fixture's request from its JSON text, as the bindings and the exec
//! protocol do on every call; `timing` prints that cost too, beside the others.

use airlock_benches::{root, shipped_contract};
use airlock_guard::{Guard, Request};
use serde_json::Value;
use std::hint::black_box;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [side, tool, rounds] = args.as_slice() else {
        eprintln!("usage: profile-admit guard|baseline|parse|request|serde|timing TOOL ROUNDS");
        return ExitCode::from(2);
    };
    let Ok(rounds) = rounds.parse::<u32>() else {
        eprintln!("ROUNDS must be a number");
        return ExitCode::from(2);
    };
    let dir = root().join("corpora").join(tool);
    let Some(body) = airlock_benches::first_success_fixture(&dir) else {
        eprintln!("no accepted success fixture under {}", dir.display());
        return ExitCode::from(2);
    };
    let request = airlock_benches::fixture_request(&dir, &body.0);
    let body = body.1;
    let contract = shipped_contract(tool);
    match side.as_str() {
        "guard" => {
            let guard = Guard::new(contract);
            assert!(guard.admit(&request, &body).is_admitted());
            for _ in 0..rounds {
                black_box(guard.admit(&request, black_box(&body)));
            }
        }
        "baseline" => {
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(contract.schema().document())
                .expect("schema compiles");
            for _ in 0..rounds {
                let value: Value = serde_json::from_slice(black_box(&body)).expect("valid");
                black_box(validator.is_valid(&value));
            }
        }
        "parse" => {
            let depth = contract.limits().max_depth;
            for _ in 0..rounds {
                black_box(airlock_guard::parse(black_box(&body), depth).expect("valid"));
            }
        }
        "request" => {
            let request_json = serde_json::to_vec(&request).expect("a request serialises");
            for _ in 0..rounds {
                black_box(Request::from_json(black_box(&request_json)).expect("a request"));
            }
        }
        "serde" => {
            for _ in 0..rounds {
                black_box(serde_json::from_slice::<Value>(black_box(&body)).expect("valid"));
            }
        }
        "timing" => {
            // Interleaved batches, minimum per call: a quick native comparison.
            let guard = Guard::new(contract.clone());
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(contract.schema().document())
                .expect("schema compiles");
            let depth = contract.limits().max_depth;
            let admission = guard.admit(&request, &body);
            let request_json = serde_json::to_vec(&request).expect("a request serialises");
            let mut best = [f64::MAX; 7];
            for _ in 0..rounds {
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(guard.admit(&request, black_box(&body)));
                }
                best[0] = best[0].min(t.elapsed().as_nanos() as f64 / 2000.0);
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    let value: Value = serde_json::from_slice(black_box(&body)).expect("valid");
                    black_box(validator.is_valid(&value));
                }
                best[1] = best[1].min(t.elapsed().as_nanos() as f64 / 2000.0);
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(contract.schema().validate_bytes(black_box(&body), depth)).ok();
                }
                best[2] = best[2].min(t.elapsed().as_nanos() as f64 / 2000.0);
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(airlock_guard::Sha256Digest::of(black_box(&body)));
                }
                best[3] = best[3].min(t.elapsed().as_nanos() as f64 / 2000.0);
                // What a binding or the proxy adds per call to write the audit record.
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(black_box(&admission).audit().to_json_line());
                }
                best[4] = best[4].min(t.elapsed().as_nanos() as f64 / 2000.0);
                // What a binding adds per call to read the request it is given as JSON.
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(Request::from_json(black_box(&request_json)).expect("a request"));
                }
                best[5] = best[5].min(t.elapsed().as_nanos() as f64 / 2000.0);
                // And to write the agent's value as JSON text.
                let t = std::time::Instant::now();
                for _ in 0..2000 {
                    black_box(black_box(&admission).agent().to_json_string());
                }
                best[6] = best[6].min(t.elapsed().as_nanos() as f64 / 2000.0);
            }
            println!(
                "guard {:.0} ns, baseline {:.0} ns, stages 2-3 (validate_bytes) {:.0} ns, sha256 {:.0} ns, audit line {:.0} ns, request from JSON {:.0} ns, agent to JSON {:.0} ns, ratio {:.2}",
                best[0], best[1], best[2], best[3], best[4], best[5], best[6], best[0] / best[1]
            );
        }
        other => {
            eprintln!("unknown side {other:?}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
