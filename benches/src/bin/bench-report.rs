//! Print the ratios of a criterion run as Markdown: each `guard_*` bench against the
//! baseline of the same input, and each hostile bench against the valid 4 KB body.
//! Run after `cargo bench -p airlock-benches`.

use serde_json::Value;
use std::path::Path;

fn mean_ns(dir: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join("new/estimates.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

fn main() {
    let criterion = airlock_benches::root().join("target/criterion");
    let group = criterion.join("admit_vs_baseline");
    println!("| input | guard admit | baseline (serde_json + jsonschema) | ratio |");
    println!("|---|---|---|---|");
    let mut inputs: Vec<_> = std::fs::read_dir(group.join("guard_admit"))
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    inputs.retain(|n| n != "report");
    inputs.sort();
    for input in inputs {
        let ours = mean_ns(&group.join("guard_admit").join(&input));
        let base = mean_ns(&group.join("baseline_serde_json_jsonschema").join(&input));
        if let (Some(ours), Some(base)) = (ours, base) {
            println!(
                "| {input} | {} | {} | {:.2}× |",
                human(ours),
                human(base),
                ours / base
            );
        }
    }
    let hostile = criterion.join("hostile_vs_valid_4k");
    if let Some(valid) = mean_ns(&hostile.join("valid_4k_body")) {
        println!();
        println!(
            "| hostile input | time | ratio to a valid 4 KB body ({}) |",
            human(valid)
        );
        println!("|---|---|---|");
        for name in [
            "body_100mb_slice",
            "body_100mb_reader",
            "brackets_10m_slice",
            "brackets_10m_reader",
            "brackets_4k_within_limit",
        ] {
            if let Some(t) = mean_ns(&hostile.join(name)) {
                println!("| {name} | {} | {:.2}× |", human(t), t / valid);
            }
        }
    }
    let rows = [
        (
            "variants_generated_per_second",
            "adversary_generate_all_contracts",
        ),
        ("check_cases_per_second", "baseline_guard_admit_only"),
        ("check_cases_per_second", "check_in_process"),
        (
            "check_cases_per_second",
            "check_exec_protocol_airlock_guard",
        ),
    ];
    if rows
        .iter()
        .any(|(g, b)| per_second(&criterion.join(g).join(b)).is_some())
    {
        println!();
        println!("| run | per second |");
        println!("|---|---|");
        for (group, bench) in rows {
            if let Some(rate) = per_second(&criterion.join(group).join(bench)) {
                println!("| {group}/{bench} | {rate:.0} |");
            }
        }
    }
}

/// Elements per second of a bench with `Throughput::Elements`.
fn per_second(dir: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join("new/benchmark.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let elements = v["throughput"]["Elements"].as_f64()?;
    Some(elements / (mean_ns(dir)? / 1e9))
}

fn human(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
