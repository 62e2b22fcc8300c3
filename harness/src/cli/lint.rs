//! `airlock lint`: static checks of contracts' schemas.

use crate::cli::exit::Exit;
use airlock_harness::check::discover;
use airlock_harness::lint::{lint_contract, lint_schema_file, Level, LintFinding, RULES};
use anyhow::{bail, Result};
use std::path::PathBuf;

/// Lint schemas for what a guard should not let through: open objects, unbounded strings
/// and arrays, free-form maps, unanchored or backtracking patterns, remote `$ref`s and
/// in-place `$ref` cycles, the dialect, envelope branches that overlap, free-text agent
/// fields. Each finding names
/// the file, line and column. Exit 0 no error (warnings are printed), 1 an error (or any
/// warning with --strict), 2 usage or an unreadable path.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// A contract folder (repeatable); default: every contract under ./schemas (when no
    /// --schema is given).
    #[arg(long = "contract")]
    contracts: Vec<PathBuf>,
    /// A standalone schema file (repeatable); agent-field rules do not apply.
    #[arg(long = "schema")]
    schemas: Vec<PathBuf>,
    /// Warnings fail too.
    #[arg(long)]
    strict: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LintFormat::Human)]
    format: LintFormat,
    /// Also write the findings in FORMAT to PATH (repeatable; human, json or sarif).
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = report_spec)]
    reports: Vec<(LintFormat, PathBuf)>,
    /// Print the rules and exit.
    #[arg(long)]
    list_rules: bool,
}

/// `FORMAT=PATH` of `--report`.
fn report_spec(text: &str) -> Result<(LintFormat, PathBuf), String> {
    super::format_and_path(text)
}

/// How `lint` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// One line per finding, `file:line:column: severity[rule] pointer: message`.
    Human,
    /// `{"findings": [...], "totals": {...}}`.
    Json,
    /// SARIF 2.1.0 for code scanning: a rule per lint rule, findings at file, line and
    /// column, allowed findings suppressed with their reason.
    Sarif,
}

pub fn run(args: LintArgs) -> Result<Exit> {
    if args.list_rules {
        for (id, severity, what) in RULES {
            outln!("{id:<30} {severity:<8} {what}")?;
        }
        return Ok(Exit::Success);
    }
    for path in args.contracts.iter().chain(&args.schemas) {
        if !path.exists() {
            bail!("{}: no such file or folder", path.display());
        }
    }
    let contracts = if args.contracts.is_empty() && args.schemas.is_empty() {
        discover(&PathBuf::from("schemas"))?
    } else {
        args.contracts.clone()
    };
    let mut findings: Vec<LintFinding> = Vec::new();
    for dir in &contracts {
        findings.extend(lint_contract(dir));
    }
    for schema in &args.schemas {
        findings.extend(lint_schema_file(schema, &[], None));
    }
    let open = |severity: Level| {
        findings
            .iter()
            .filter(|f| f.severity == severity && f.allowed.is_none())
            .count()
    };
    let (errors, warnings) = (open(Level::Error), open(Level::Warning));
    let allowed = findings.iter().filter(|f| f.allowed.is_some()).count();
    let files = contracts.len() + args.schemas.len();
    let render = |format: LintFormat| -> Result<String> {
        Ok(match format {
            LintFormat::Human => {
                let mut text = String::new();
                for finding in &findings {
                    text.push_str(&format!("{finding}\n"));
                }
                text.push_str(&format!(
                    "lint: {errors} errors, {warnings} warnings, {allowed} allowed ({} contracts, {} schema files)\n",
                    contracts.len(),
                    args.schemas.len()
                ));
                text
            }
            LintFormat::Sarif => format!("{}\n", airlock_harness::lint::sarif(&findings)),
            LintFormat::Json => {
                let report = serde_json::json!({
                    "findings": findings,
                    "totals": {"errors": errors, "warnings": warnings, "allowed": allowed, "inputs": files},
                });
                format!("{}\n", serde_json::to_string_pretty(&report)?)
            }
        })
    };
    super::print(&render(args.format)?)?;
    for (format, path) in &args.reports {
        super::write_file(path, render(*format)?)?;
    }
    Ok(if errors > 0 || (args.strict && warnings > 0) {
        Exit::Findings
    } else {
        Exit::Success
    })
}
