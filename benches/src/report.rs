//! The tables of `BENCHMARKS.md`, generated from a recorded run instead of copied by hand.
//!
//! `bench-report collect` reads what criterion and the memory bench left under
//! `target/criterion` into one file, `benches/results.json` (committed: the run the
//! document describes). `bench-report write` renders every table from that file into
//! `BENCHMARKS.md`, between the markers `<!-- bench-report: NAME -->` and
//! `<!-- /bench-report: NAME -->`. A test renders them again and compares, so a table
//! edited by hand, or a run recorded without the document rewritten, fails the build.

use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::Path;

/// What went wrong reading a run or rewriting the document.
#[derive(Debug)]
pub struct ReportError(pub String);

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReportError {}

/// Reads a criterion output folder (`target/criterion`) into one value: every benchmark by
/// its full id (`group/function[/input]`) with its mean, median and the median's 95 %
/// interval in nanoseconds and its throughput, the memory bench's results, and the date.
///
/// # Errors
///
/// When the folder cannot be read or a result file is not criterion's JSON.
pub fn collect(criterion: &Path) -> Result<Value, ReportError> {
    let mut benches = Map::new();
    let mut folders = vec![criterion.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .map_err(|e| ReportError(format!("{}: {e}", folder.display())))?;
        for entry in entries {
            let path = entry
                .map_err(|e| ReportError(format!("{}: {e}", folder.display())))?
                .path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "report") {
                folders.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let dir = path.parent().unwrap_or(&folder);
                let (id, measured) = bench(dir)?;
                benches.insert(id, measured);
            }
        }
    }
    let memory = criterion.join("memory/results.json");
    let memory = if memory.exists() {
        read_json(&memory)?
    } else {
        Value::Object(Map::new())
    };
    Ok(json!({"date": today(), "benches": benches, "memory": memory}))
}

fn read_json(path: &Path) -> Result<Value, ReportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReportError(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| ReportError(format!("{}: {e}", path.display())))
}

/// One benchmark's id and figures from its `new/` folder.
fn bench(dir: &Path) -> Result<(String, Value), ReportError> {
    let about = read_json(&dir.join("benchmark.json"))?;
    let estimates = read_json(&dir.join("estimates.json"))?;
    let id = about["full_id"]
        .as_str()
        .ok_or_else(|| ReportError(format!("{}: no full_id", dir.display())))?
        .to_owned();
    let point = |name: &str| estimates[name]["point_estimate"].as_f64().map(round);
    let median = &estimates["median"]["confidence_interval"];
    let mut measured = json!({
        "mean_ns": point("mean"),
        "median_ns": point("median"),
        "median_low_ns": median["lower_bound"].as_f64().map(round),
        "median_high_ns": median["upper_bound"].as_f64().map(round),
    });
    if let Some(n) = about["throughput"]["Elements"].as_u64() {
        measured["elements"] = n.into();
    }
    if let Some(n) = about["throughput"]["Bytes"].as_u64() {
        measured["bytes"] = n.into();
    }
    Ok((id, measured))
}

/// Tenths of a nanosecond are past any machine's precision: keep the file small and stable.
fn round(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Every generated section of `BENCHMARKS.md`, by marker name, rendered from a run that
/// [`collect`] read. A figure the run lacks is shown as "not measured".
pub fn sections(run: &Value) -> Vec<(&'static str, String)> {
    let r = Run(run);
    vec![
        ("run", r.run()),
        ("admit", r.admit()),
        ("parse", r.parse()),
        ("hostile", r.hostile()),
        ("memory-hostile", r.memory_hostile()),
        ("memory-shapes", r.memory_shapes()),
        ("memory-explained", r.memory_explained()),
        ("large-limit-memory", r.large_limit_memory()),
        ("large-limit-time", r.large_limit_time()),
        ("load", r.load()),
        ("contract-fields", r.contract_fields()),
        ("check", r.check()),
        ("certify", r.certify()),
    ]
}

/// Replaces the text between each section's markers with the section.
///
/// # Errors
///
/// When the document lacks a section's markers (every section must appear once), or
/// names a section there is none of.
pub fn rewrite(doc: &str, sections: &[(&str, String)]) -> Result<String, ReportError> {
    let mut out = doc.to_owned();
    for (name, text) in sections {
        let open = format!("<!-- bench-report: {name} -->\n");
        let close = format!("<!-- /bench-report: {name} -->");
        let start = out
            .find(&open)
            .ok_or_else(|| ReportError(format!("BENCHMARKS.md has no `{}` marker", open.trim())))?
            + open.len();
        let end = out[start..]
            .find(&close)
            .ok_or_else(|| ReportError(format!("BENCHMARKS.md has no `{close}` marker")))?
            + start;
        if out[end + close.len()..].contains(&open) {
            return Err(ReportError(format!(
                "BENCHMARKS.md has the `{}` marker twice",
                open.trim()
            )));
        }
        out.replace_range(start..end, text);
    }
    let known: Vec<&str> = sections.iter().map(|(n, _)| *n).collect();
    for marker in out.match_indices("<!-- bench-report: ") {
        let rest = &out[marker.0 + marker.1.len()..];
        let name = rest.split(" -->").next().unwrap_or_default();
        if !known.contains(&name) {
            return Err(ReportError(format!(
                "BENCHMARKS.md names a section `{name}` that bench-report does not write"
            )));
        }
    }
    Ok(out)
}

/// A recorded run, read for rendering.
struct Run<'a>(&'a Value);

const NOT_MEASURED: &str = "not measured";

impl Run<'_> {
    fn bench(&self, id: &str) -> &Value {
        &self.0["benches"][id]
    }

    fn median(&self, id: &str) -> Option<f64> {
        self.bench(id)["median_ns"].as_f64()
    }

    fn mean(&self, id: &str) -> Option<f64> {
        self.bench(id)["mean_ns"].as_f64()
    }

    fn memory(&self, name: &str, field: &str) -> Option<u64> {
        self.0["memory"][name][field].as_u64()
    }

    /// The inputs of a parameterised benchmark (`group/function/INPUT`), sorted.
    fn inputs(&self, group_function: &str) -> Vec<String> {
        let prefix = format!("{group_function}/");
        let mut inputs: Vec<String> = self.0["benches"]
            .as_object()
            .into_iter()
            .flat_map(|b| b.keys())
            .filter_map(|k| k.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        inputs.sort();
        inputs
    }

    fn run(&self) -> String {
        format!(
            "Recorded run: {} (`benches/results.json`).\n",
            self.0["date"].as_str().unwrap_or(NOT_MEASURED)
        )
    }

    /// A table of `ours` against `base` per input, with the worst ratio against `target`.
    fn versus(
        &self,
        group: &str,
        ours: &str,
        base: &str,
        header: &str,
        target: Option<f64>,
    ) -> String {
        let mut out = format!("{header}\n|---|---|---|---|\n");
        let mut worst = Worst::default();
        for input in self.inputs(&format!("{group}/{ours}")) {
            let a = self.mean(&format!("{group}/{ours}/{input}"));
            let b = self.mean(&format!("{group}/{base}/{input}"));
            let size = self.bench(&format!("{group}/{ours}/{input}"))["bytes"]
                .as_u64()
                .map_or_else(String::new, |n| format!(" ({} B)", grouped(n)));
            let _ = writeln!(
                out,
                "| {input}{size} | {} | {} | {} |",
                time(a),
                time(b),
                ratio(a, b)
            );
            worst.add(a.zip(b).map(|(a, b)| a / b), &input);
        }
        if let Some(target) = target {
            out.push_str(&worst.verdict(&format!("{target}×"), target));
        }
        out
    }

    fn admit(&self) -> String {
        self.versus(
            "admit_vs_baseline",
            "guard_admit",
            "baseline_serde_json_jsonschema",
            "| input (body size) | guard admit | baseline (serde_json + jsonschema) | ratio |",
            Some(1.25),
        )
    }

    fn parse(&self) -> String {
        self.versus(
            "parse_vs_serde_json",
            "strict_parse",
            "serde_json_from_slice",
            "| input (body size) | `airlock_guard::parse` | `serde_json::from_slice::<Value>` | ratio |",
            None,
        )
    }

    fn hostile(&self) -> String {
        let valid = self.mean("hostile_vs_valid_4k/valid_4k_body");
        let mut out = format!(
            "| hostile input | time | ratio to a valid 4 KB body ({}) |\n|---|---|---|\n",
            time(valid)
        );
        let mut worst = Worst::default();
        for (name, label) in [
            ("body_100mb_slice", "100 MB body, as a slice"),
            ("body_100mb_reader", "100 MB body, from a reader"),
            (
                "brackets_10m_slice",
                "10 million `[`, as a slice (stopped at the byte limit: never parsed)",
            ),
            (
                "brackets_10m_reader",
                "10 million `[`, from a reader (stopped at the byte limit: never parsed)",
            ),
            (
                "brackets_4k_within_limit",
                "4096 `[` (within the byte limit: refused by the depth limit)",
            ),
        ] {
            let t = self.mean(&format!("hostile_vs_valid_4k/{name}"));
            let _ = writeln!(out, "| {label} | {} | {} |", time(t), ratio(t, valid));
            worst.add(t.zip(valid).map(|(t, v)| t / v), name);
        }
        out.push_str(&worst.verdict("2×", 2.0));
        out
    }

    fn memory_hostile(&self) -> String {
        let mut out = String::from("| input | peak heap growth |\n|---|---|\n");
        for (name, label) in [
            ("valid_4k_body", "valid 4 KB body"),
            (
                "body_100mb_reader",
                "100 MB body from a reader (the 4 097 bytes read, plus the record)",
            ),
            (
                "brackets_10m_reader",
                "10 million `[` from a reader (stopped at the byte limit)",
            ),
            (
                "brackets_4k_within_limit",
                "4096 `[` (refused by the depth limit)",
            ),
        ] {
            let _ = writeln!(out, "| {label} | {} |", bytes(self.memory(name, "peak")));
        }
        out
    }

    fn memory_shapes(&self) -> String {
        let mut out = String::from(
            "| body (8 MiB) | peak heap growth | × body | × body, the body counted |\n\
             |---|---|---|---|\n",
        );
        let mut worst = Worst::default();
        for (name, label) in [
            ("zeros", "`[0,0,…]`"),
            ("empty_objects", "`[{},{},…]`"),
            (
                "one_object_many_members",
                "one object of 1 M members `{\"0\":0,\"1\":0,…}`",
            ),
            ("deep_nesting", "depth-511 nesting, repeated"),
            (
                "escaped_names",
                "`[{\"\\u0061\":0},…]` (names with escapes)",
            ),
            (
                "short_escaped_strings",
                "`[\"\\n\",\"\\n\",…]` (the worst shape: 3 words and the text per 5 bytes)",
            ),
            ("long_plain_string", "one string without escapes"),
            ("long_escaped_string", "one string of `\\n` escapes"),
        ] {
            let key = format!("shape_{name}");
            let peak = self.memory(&key, "peak");
            let body = self.memory(&key, "body");
            let (alone, counted) = match (peak, body) {
                (Some(p), Some(b)) if b > 0 => {
                    let counted = (p + b) as f64 / b as f64;
                    worst.add(Some(counted), name);
                    (
                        format!("{:.2}×", p as f64 / b as f64),
                        format!("{counted:.2}×"),
                    )
                }
                _ => {
                    worst.add(None, name);
                    (NOT_MEASURED.into(), NOT_MEASURED.into())
                }
            };
            let _ = writeln!(out, "| {label} | {} | {alone} | {counted} |", bytes(peak));
        }
        out.push_str(&worst.verdict("4× the body (the body counted)", 4.0));
        out
    }

    fn memory_explained(&self) -> String {
        let mut out = String::from(
            "| body (256 KiB) under `anyOf: [{items: {type: string}}, {type: object}]` | \
             peak heap growth | × body | diagnostic |\n|---|---|---|---|\n",
        );
        for (name, label) in [("zeros", "`[0,0,…]`"), ("empty_objects", "`[{},{},…]`")] {
            let key = format!("explained_rejection_{name}");
            let peak = self.memory(&key, "peak");
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} |",
                bytes(peak),
                times_body(peak, self.memory(&key, "body")),
                bytes(self.memory(&key, "diagnostic"))
            );
        }
        out
    }

    fn large_limit_memory(&self) -> String {
        let mut out = String::from(
            "| input | peak heap growth | ratio to the body | diagnostic (text / audit line) |\n\
             |---|---|---|---|\n",
        );
        let peak = self.memory("valid_large_limit", "peak");
        let _ = writeln!(
            out,
            "| valid body, 100 000 items ({}, the schema's `maxItems`) | {} | {} | — |",
            bytes(self.memory("valid_large_limit", "body")),
            bytes(peak),
            times_body(peak, self.memory("valid_large_limit", "body")),
        );
        for (len, label) in [
            (200_000, "explained: within `MAX_EXPLAINED_BYTES`, 256 KiB"),
            (20_000_000, "past 256 KiB: not explained"),
        ] {
            let key = format!("schema_rejection_{len}_large_limit");
            let peak = self.memory(&key, "peak");
            let causes = self
                .memory(&key, "causes")
                .filter(|n| *n > 0)
                .map_or_else(String::new, |n| format!(", {n} causes kept"));
            let _ = writeln!(
                out,
                "| schema rejection, {} ({label}) | {} | {} | {} / {}{causes} |",
                bytes(self.memory(&key, "body")),
                bytes(peak),
                times_body(peak, self.memory(&key, "body")),
                bytes(self.memory(&key, "diagnostic")),
                bytes(self.memory(&key, "audit_line")),
            );
        }
        out
    }

    fn large_limit_time(&self) -> String {
        let mut out =
            String::from("| input | time | ratio to admitting the valid body |\n|---|---|---|\n");
        for (size, label, explained) in [
            ("200kb", "200 KB", "explained"),
            ("2mb", "2 MB", "not explained"),
        ] {
            let valid = self.mean(&format!("large_limit_rejection/valid_{size}"));
            let rejected = self.mean(&format!("large_limit_rejection/schema_rejection_{size}"));
            let _ = writeln!(out, "| valid {label} | {} | — |", time(valid));
            let _ = writeln!(
                out,
                "| schema rejection {label} ({explained}) | {} | {} |",
                time(rejected),
                ratio(rejected, valid)
            );
        }
        out
    }

    fn load(&self) -> String {
        let mut out = String::from("| schema | 1 000 files | alone | ratio |\n|---|---|---|---|\n");
        for (name, label) in [
            ("valid", "valid, one sibling referenced"),
            (
                "old_dialect_refused",
                "refused dialect (draft-04, refused before any sibling is read)",
            ),
        ] {
            let crowded = self.mean(&format!("load_schema_file/{name}_1000_files"));
            let alone = self.mean(&format!("load_schema_file/{name}_alone"));
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} |",
                time(crowded),
                time(alone),
                ratio(crowded, alone)
            );
        }
        out
    }

    fn contract_fields(&self) -> String {
        let mut out = String::from(
            "| contract | 4 096 fields | 32 768 fields | ratio (8× fields) |\n|---|---|---|---|\n",
        );
        let mut worst = Worst::default();
        for (kind, label) in [("mcp", "MCP"), ("envelope", "envelope")] {
            let small = self.mean(&format!("contract_fields/{kind}_4096"));
            let large = self.mean(&format!("contract_fields/{kind}_32768"));
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} |",
                time(small),
                time(large),
                ratio(large, small)
            );
            worst.add(large.zip(small).map(|(l, s)| l / s), kind);
        }
        out.push_str(&worst.verdict(
            "16× for 8× the fields (near-linear; quadratic would be 64×)",
            16.0,
        ));
        out
    }

    fn check(&self) -> String {
        let rate = |id: &str| {
            let b = self.bench(id);
            let elements = b["elements"].as_f64()?;
            Some(elements / (b["mean_ns"].as_f64()? / 1e9))
        };
        let cases = self.bench("check_cases_per_second/check_in_process")["elements"].as_u64();
        let mut out = format!(
            "Cases in the run: {}.\n\n| run | per second |\n|---|---|\n",
            cases.map_or_else(|| NOT_MEASURED.to_owned(), grouped)
        );
        let in_process = rate("check_cases_per_second/check_in_process");
        let exec = rate("check_cases_per_second/check_exec_protocol_airlock_guard");
        for (id, label) in [
            (
                "variants_generated_per_second/adversary_generate_all_contracts",
                "adversary: variants generated (`adversary::generate`, all contracts)",
            ),
            (
                "check_cases_per_second/baseline_guard_admit_only",
                "baseline: `admit` alone on every case",
            ),
            (
                "check_cases_per_second/check_in_process",
                "`check` in process (reference + adapter = two `admit`s per case, plus judging)",
            ),
            (
                "check_cases_per_second/check_exec_protocol_airlock_guard",
                "`check` over the exec protocol against `airlock guard` (pipelined, 64 in flight)",
            ),
        ] {
            let shown =
                rate(id).map_or_else(|| NOT_MEASURED.to_owned(), |r| grouped(r.round() as u64));
            let _ = writeln!(out, "| {label} | {shown} |");
        }
        let met = |r: Option<f64>, target: f64| match r {
            Some(r) if r >= target => "met",
            Some(_) => "missed",
            None => NOT_MEASURED,
        };
        let whole = self.mean("check_cases_per_second/check_in_process");
        let _ = writeln!(
            out,
            "\nOne whole in-process run: {}. Targets: ≥ 50 000 cases/s in process ({}), \
             ≥ 10 000 over the exec protocol ({}), the whole run under 10 s ({}).",
            time(whole),
            met(in_process, 50_000.0),
            met(exec, 10_000.0),
            match whole {
                Some(t) if t < 1e10 => "met",
                Some(_) => "missed",
                None => NOT_MEASURED,
            }
        );
        out
    }

    fn certify(&self) -> String {
        let mut out = String::from("| pair | time (median, [95 % interval]) |\n|---|---|\n");
        for (name, label) in [
            ("edited", "edited (target: under 2 s)"),
            ("itself", "itself (proved compatible by identity)"),
        ] {
            let b = self.bench(&format!("certify_400_defs/{name}"));
            let _ = writeln!(
                out,
                "| {label} | {} [{}, {}] |",
                time(b["median_ns"].as_f64()),
                time(b["median_low_ns"].as_f64()),
                time(b["median_high_ns"].as_f64()),
            );
        }
        let edited = self.median("certify_400_defs/edited");
        out.push_str(&verdict_of(
            "2 s for the edited pair",
            edited.map(|t| (time(Some(t)), t < 2e9)),
        ));
        out
    }
}

/// The worst ratio of a table's rows, and whether any row was not measured.
#[derive(Default)]
struct Worst {
    worst: Option<(f64, String)>,
    missing: bool,
}

impl Worst {
    fn add(&mut self, ratio: Option<f64>, row: &str) {
        match ratio {
            Some(r) if self.worst.as_ref().is_none_or(|(w, _)| r > *w) => {
                self.worst = Some((r, row.to_owned()));
            }
            Some(_) => {}
            None => self.missing = true,
        }
    }

    /// "**Target ≤ …: met** (worst 1.23×, row)." or missed; not judged when a row lacks
    /// its figure (a verdict over the rows measured would claim more than the run shows).
    fn verdict(&self, target: &str, limit: f64) -> String {
        if self.missing {
            return format!("\n**Target ≤ {target}: not judged** (a row was {NOT_MEASURED}).\n");
        }
        let shown = self
            .worst
            .as_ref()
            .map(|(w, row)| (format!("worst {w:.2}×, {row}"), *w <= limit));
        verdict_of(target, shown)
    }
}

/// The verdict line with the figure as given (`worst 1.23×`, `874.89 ms`).
fn verdict_of(target: &str, figure: Option<(String, bool)>) -> String {
    match figure {
        Some((f, true)) => format!("\n**Target ≤ {target}: met** ({f}).\n"),
        Some((f, false)) => format!("\n**Target ≤ {target}: missed** ({f}).\n"),
        None => format!("\n{NOT_MEASURED}.\n"),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => NOT_MEASURED.into(),
    }
}

fn times_body(peak: Option<u64>, body: Option<u64>) -> String {
    match (peak, body) {
        (Some(p), Some(b)) if b > 0 => format!("{:.2}×", p as f64 / b as f64),
        _ => NOT_MEASURED.into(),
    }
}

/// Nanoseconds in the unit a reader takes in at a glance.
fn time(ns: Option<f64>) -> String {
    match ns {
        Some(ns) if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        Some(ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        Some(ns) if ns >= 1e3 => format!("{:.2} µs", ns / 1e3),
        Some(ns) => format!("{ns:.0} ns"),
        None => NOT_MEASURED.into(),
    }
}

/// Bytes, in MB past a megabyte, else grouped by thousands.
fn bytes(n: Option<u64>) -> String {
    match n {
        Some(n) if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        Some(n) => format!("{} B", grouped(n)),
        None => NOT_MEASURED.into(),
    }
}

/// `23460` → `23 460`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_replaced_between_its_markers_and_nothing_else_moves() {
        let doc = "a\n<!-- bench-report: run -->\nold\n<!-- /bench-report: run -->\nb\n";
        let out = rewrite(doc, &[("run", "new\n".into())]).unwrap();
        assert_eq!(
            out,
            "a\n<!-- bench-report: run -->\nnew\n<!-- /bench-report: run -->\nb\n"
        );
    }

    #[test]
    fn missing_twice_or_unknown_markers_are_refused() {
        assert!(rewrite("nothing", &[("run", String::new())]).is_err());
        let twice = "<!-- bench-report: run -->\n<!-- /bench-report: run -->\n\
                     <!-- bench-report: run -->\n<!-- /bench-report: run -->";
        assert!(rewrite(twice, &[("run", String::new())]).is_err());
        let unknown = "<!-- bench-report: run -->\n<!-- /bench-report: run -->\n\
                       <!-- bench-report: other -->\n<!-- /bench-report: other -->";
        assert!(rewrite(unknown, &[("run", String::new())]).is_err());
    }

    #[test]
    fn a_missed_target_is_said_to_be_missed() {
        let run = json!({"benches": {
            "admit_vs_baseline/guard_admit/x": {"mean_ns": 300.0},
            "admit_vs_baseline/baseline_serde_json_jsonschema/x": {"mean_ns": 100.0},
        }});
        let admit = Run(&run).admit();
        assert!(admit.contains("| x | 300 ns | 100 ns | 3.00× |"), "{admit}");
        assert!(admit.contains("missed** (worst 3.00×, x)"), "{admit}");
        // A row without its figure: no verdict over the others.
        let partial = json!({"benches": {
            "contract_fields/mcp_4096": {"mean_ns": 1.0},
            "contract_fields/mcp_32768": {"mean_ns": 8.0},
        }});
        let fields = Run(&partial).contract_fields();
        assert!(fields.contains("not judged"), "{fields}");
        let none = Run(&json!({})).certify();
        assert!(none.contains(NOT_MEASURED), "{none}");
    }

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(grouped(23_460), "23 460");
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(1_000_000), "1 000 000");
        assert_eq!(bytes(Some(16_800_000)), "16.8 MB");
        assert_eq!(time(Some(1_540.0)), "1.54 µs");
        assert_eq!(time(Some(2.5e9)), "2.50 s");
    }
}
