//! `BENCHMARKS.md` shows the run recorded in `benches/results.json`: every generated table
//! is exactly what `bench-report write` renders from it. A table edited by hand, or a new
//! run collected without the document rewritten, fails here.

use airlock_benches::report;

#[test]
fn benchmarks_md_shows_the_recorded_run() {
    let root = airlock_benches::root();
    let results = std::fs::read_to_string(root.join("benches/results.json"))
        .expect("benches/results.json is committed");
    let run: serde_json::Value = serde_json::from_str(&results).expect("results.json is JSON");
    let doc = std::fs::read_to_string(root.join("BENCHMARKS.md")).expect("BENCHMARKS.md");
    let rendered = report::rewrite(&doc, &report::sections(&run)).expect("every marker is there");
    assert!(
        rendered == doc,
        "BENCHMARKS.md differs from the tables rendered from benches/results.json: run \
         `cargo run -p airlock-benches --bin bench-report write`"
    );
    assert!(
        !doc.contains("not measured"),
        "the recorded run lacks a figure a table shows: re-run every bench, then collect"
    );
}
