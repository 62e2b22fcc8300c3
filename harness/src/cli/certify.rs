//! `airlock certify`: certify a schema version change of a contract.

use airlock_guard::Contract;
use airlock_harness::certify::{certify, Class};
use airlock_harness::exit::Exit;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// Compare two schema versions of a contract: every change classified (breaking,
/// agent-visible, compatible) and confirmed by a witness instance, every fixture replayed
/// under both, a certificate with both schemas' SHA-256. Exit 0 no breaking change, 1 a
/// breaking change (or an agent-visible one with --strict), 2 usage or contract error.
#[derive(Debug, clap::Args)]
pub struct CertifyArgs {
    /// The contract folder.
    #[arg(long)]
    contract: PathBuf,
    /// The old version [default: the version before --to].
    #[arg(long)]
    from: Option<u32>,
    /// The new version [default: the contract's current version].
    #[arg(long)]
    to: Option<u32>,
    /// Agent-visible changes fail too.
    #[arg(long)]
    strict: bool,
    /// Also write the certificate as `<tool>-v<from>-v<to>.json` and `.md` here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// What to print: a summary, the JSON certificate or the Markdown one.
    #[arg(long, value_enum, default_value_t = CertifyFormat::Human)]
    format: CertifyFormat,
    /// Also write the certificate in FORMAT to PATH (repeatable; human, json or
    /// markdown).
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = report_spec)]
    reports: Vec<(CertifyFormat, PathBuf)>,
}

/// `FORMAT=PATH` of `--report`.
fn report_spec(text: &str) -> Result<(CertifyFormat, PathBuf), String> {
    super::format_and_path(text)
}

/// How `certify` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CertifyFormat {
    /// A summary.
    Human,
    /// The certificate as JSON.
    Json,
    /// The certificate as Markdown.
    Markdown,
}

pub fn run(args: CertifyArgs) -> Result<Exit> {
    let current = Contract::load(&args.contract)
        .with_context(|| format!("loading {}", args.contract.display()))?;
    let to = args.to.unwrap_or(current.current_version());
    let from = match args.from {
        Some(from) => from,
        None if to > 1 => to - 1,
        None => bail!("version {to} has no earlier version: give --from"),
    };
    if from >= to {
        bail!("--from ({from}) must be an earlier version than --to ({to})");
    }
    let certificate = certify(&args.contract, from, to)?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        // The tool name is the contract's; keep it inside --out whatever it holds.
        let tool = airlock_harness::cases::file_component(&certificate.tool);
        let stem = format!("{tool}-v{from}-v{to}");
        super::write_file(&dir.join(format!("{stem}.json")), certificate.json())?;
        super::write_file(&dir.join(format!("{stem}.md")), certificate.markdown())?;
    }
    let render = |format: CertifyFormat| -> String {
        match format {
            CertifyFormat::Json => format!("{}\n", certificate.json()),
            CertifyFormat::Markdown => certificate.markdown(),
            CertifyFormat::Human => human(&certificate, from, to),
        }
    };
    super::print(&render(args.format))?;
    for (format, path) in &args.reports {
        super::write_file(path, render(*format))?;
    }
    let fails = match certificate.verdict {
        Class::Breaking => true,
        Class::AgentVisible => args.strict,
        Class::Compatible => false,
    };
    Ok(if fails { Exit::Findings } else { Exit::Success })
}

/// The human summary of a certificate.
pub(super) fn human(
    certificate: &airlock_harness::certify::Certificate,
    from: u32,
    to: u32,
) -> String {
    let mut out = format!(
        "certify {} v{from} -> v{to}: {}\n",
        certificate.tool,
        certificate.verdict.as_str()
    );
    for c in &certificate.changes {
        let witness = c.witness.as_ref().map_or_else(
            || "no witness found".to_owned(),
            |w| {
                let isolated = if w.isolated { "" } else { ", not isolated" };
                format!("witness ({}{isolated}): {}", w.accepted_by, w.instance)
            },
        );
        out.push_str(&format!(
            "  {:<13} {:<20} {}: {}\n                {witness}\n",
            c.class.as_str(),
            c.kind,
            c.pointer,
            c.detail
        ));
    }
    for f in certificate.fixtures.iter().filter(|f| f.old != f.new) {
        let verdict = |admitted: bool| if admitted { "admit" } else { "reject" };
        out.push_str(&format!(
            "  fixture {}: {} -> {}\n",
            f.fixture,
            verdict(f.old),
            verdict(f.new)
        ));
    }
    out
}
