//! The tables of `BENCHMARKS.md`, from a recorded run (see `airlock_benches::report`).
//!
//! ```sh
//! cargo bench -p airlock-benches                                      # the run
//! cargo run --release -p airlock-benches --bin bench-report collect   # -> benches/results.json
//! cargo run --release -p airlock-benches --bin bench-report write     # -> BENCHMARKS.md
//! cargo run --release -p airlock-benches --bin bench-report           # print the tables
//! ```
//!
//! Exit codes: 0 done, 1 a file could not be read or written, 2 a bad argument.

use airlock_benches::report::{self, ReportError};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = airlock_benches::root();
    let results = root.join("benches/results.json");
    let outcome = match std::env::args().nth(1).as_deref() {
        Some("collect") => report::collect(&root.join("target/criterion")).and_then(|run| {
            let text = serde_json::to_string_pretty(&run).expect("a value serialises") + "\n";
            write(&results, &text)
        }),
        Some("write") => read_run(&results).and_then(|run| {
            let path = root.join("BENCHMARKS.md");
            let doc = std::fs::read_to_string(&path)
                .map_err(|e| ReportError(format!("{}: {e}", path.display())))?;
            write(&path, &report::rewrite(&doc, &report::sections(&run))?)
        }),
        None => read_run(&results).map(|run| {
            for (name, text) in report::sections(&run) {
                println!("<!-- {name} -->\n{text}");
            }
        }),
        Some(other) => {
            eprintln!("bench-report: unknown command `{other}` (collect, write, or none to print)");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_run(path: &Path) -> Result<serde_json::Value, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ReportError(format!(
            "{}: {e} (run the benches, then `bench-report collect`)",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| ReportError(format!("{}: {e}", path.display())))
}

fn write(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|e| ReportError(format!("{}: {e}", path.display())))?;
    eprintln!("bench-report: wrote {}", path.display());
    Ok(())
}
