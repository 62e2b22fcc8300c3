//! `airlock certify`: certify a schema version change of a contract, of two schema files,
//! or of two saved MCP tools lists.

use crate::cli::exit::Exit;
use airlock_guard::Contract;
use airlock_harness::certify::{
    certify_contract, certify_files, certify_tools_lists, certify_vendor, reports, Certificate,
    Class, ToolsCertificate,
};
use airlock_harness::check::report::visible;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Compare two versions of a schema: every change classified (breaking, unknown,
/// agent-visible, compatible) and backed by a proof, a witness instance, a replayed
/// fixture or the structural comparison; a certificate with both schemas' SHA-256. Give a
/// contract (--contract DIR: two of its versions, its fixtures replayed; with --vendor-from, two of a vendor contract's vendor schemas), two schema files
/// (OLD NEW), or two saved tools/list answers (--tools-list OLD NEW). Exit 0 no breaking
/// change, 1 a breaking or unknown change (or an agent-visible one with --strict), 2 usage,
/// contract or input error.
#[derive(Debug, clap::Args)]
pub struct CertifyArgs {
    /// Two schema files, old then new (no contract: the whole instance is the agent's
    /// view unless --agent-field names fields).
    #[arg(value_name = "SCHEMA", num_args = 2, conflicts_with_all = ["contract", "tools_list"])]
    schemas: Vec<PathBuf>,
    /// The contract folder.
    #[arg(long, conflicts_with = "tools_list")]
    contract: Option<PathBuf>,
    /// The contract's corpus folder (default: `corpora/<tool>` beside `schemas/<tool>`).
    #[arg(long, value_name = "DIR", requires = "contract")]
    corpus: Option<PathBuf>,
    /// Two saved MCP tools/list answers, old then new: every tool certified (output
    /// schemas as responses, input schemas as requests), tools added and removed.
    #[arg(long = "tools-list", num_args = 2, value_names = ["OLD", "NEW"])]
    tools_list: Vec<PathBuf>,
    /// With two schema files: an agent field (a JSON pointer; repeatable).
    #[arg(long = "agent-field", value_name = "POINTER")]
    agent_fields: Vec<String>,
    /// A vendor contract's old vendor schema (a file in the contract folder): certify the
    /// vendor schema change instead of a contract version change.
    #[arg(long = "vendor-from", value_name = "FILE", requires = "contract", conflicts_with_all = ["from", "to"])]
    vendor_from: Option<String>,
    /// The new vendor schema [default: the file `[input] schema` names now].
    #[arg(long = "vendor-to", value_name = "FILE", requires = "vendor_from")]
    vendor_to: Option<String>,
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
    /// Also write the certificate in FORMAT to PATH (repeatable; human, json, markdown,
    /// sarif or junit).
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
    /// SARIF 2.1.0 for code scanning: a rule per change kind, each change located in the
    /// new schema file (errors: breaking and unknown; warnings: agent-visible).
    Sarif,
    /// JUnit XML: a test case per change, failing where the verdict fails the run.
    Junit,
}

pub fn run(args: CertifyArgs) -> Result<Exit> {
    if !args.agent_fields.is_empty() && args.schemas.is_empty() {
        bail!("--agent-field applies to two schema files (OLD NEW); a contract names its agent fields in contract.toml");
    }
    if (args.from.is_some() || args.to.is_some()) && args.contract.is_none() {
        bail!("--from and --to choose versions of a contract: give --contract DIR");
    }
    if let [old, new] = args.tools_list.as_slice() {
        let certificate = certify_tools_lists(old, new)?;
        return finish_tools(&args, &certificate, new);
    }
    if let [old, new] = args.schemas.as_slice() {
        let certificate = certify_files(old, new, &args.agent_fields)?;
        let (from, to) = (old.display().to_string(), new.display().to_string());
        return finish(&args, &certificate, &from, &to, new);
    }
    let Some(contract) = &args.contract else {
        bail!("nothing to certify: give --contract DIR, two schema files (OLD NEW), or --tools-list OLD NEW");
    };
    if let Some(from) = &args.vendor_from {
        let certificate = certify_vendor(
            contract,
            from,
            args.vendor_to.as_deref(),
            args.corpus.as_deref(),
        )?;
        let to = certificate.to["vendor_schema"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let file = contract.join(&to);
        return finish(&args, &certificate, from, &to, &file);
    }
    let current =
        Contract::load(contract).with_context(|| format!("loading {}", contract.display()))?;
    let to = args.to.unwrap_or(current.current_version());
    let from = match args.from {
        Some(from) => from,
        None if to > 1 => to - 1,
        None => bail!("version {to} has no earlier version: give --from"),
    };
    if from >= to {
        bail!("--from ({from}) must be an earlier version than --to ({to})");
    }
    let certificate = certify_contract(contract, from, to, args.corpus.as_deref())?;
    let file = contract.join(airlock_guard::version_file(to));
    finish(
        &args,
        &certificate,
        &format!("v{from}"),
        &format!("v{to}"),
        &file,
    )
}

/// Print and write a certificate; the exit status from its verdict.
fn finish(
    args: &CertifyArgs,
    certificate: &Certificate,
    from: &str,
    to: &str,
    new_file: &Path,
) -> Result<Exit> {
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        // The tool name is the contract's; keep it inside --out whatever it holds.
        let tool = airlock_harness::cases::file_component(&certificate.tool);
        // A vendor schema's file name without `.schema.json` (`vendor.v1`).
        let label = |s: &str| {
            let s = s.strip_suffix(".json").unwrap_or(s);
            airlock_harness::cases::file_component(s.strip_suffix(".schema").unwrap_or(s))
        };
        let stem = if args.schemas.is_empty() {
            format!("{tool}-{}-{}", label(from), label(to))
        } else {
            // Two files: the names are paths; the certificate is named after the new one.
            format!("{tool}-certificate")
        };
        super::write_file(&dir.join(format!("{stem}.json")), certificate.json())?;
        super::write_file(&dir.join(format!("{stem}.md")), certificate.markdown())?;
    }
    let render = |format: CertifyFormat| -> String {
        match format {
            CertifyFormat::Json => format!("{}\n", certificate.json()),
            CertifyFormat::Markdown => certificate.markdown(),
            CertifyFormat::Human => human(certificate, from, to),
            CertifyFormat::Sarif => format!("{}\n", reports::sarif(&[certificate], new_file)),
            CertifyFormat::Junit => reports::junit(&[certificate], args.strict),
        }
    };
    super::print(&render(args.format))?;
    for (format, path) in &args.reports {
        super::write_file(path, render(*format))?;
    }
    Ok(exit(certificate.verdict, args.strict))
}

/// Breaking and unknown fail; agent-visible with --strict.
fn exit(verdict: Class, strict: bool) -> Exit {
    let fails = match verdict {
        Class::Breaking | Class::Unknown => true,
        Class::AgentVisible => strict,
        Class::Compatible => false,
    };
    if fails {
        Exit::Findings
    } else {
        Exit::Success
    }
}

/// Print and write the certificates of two tools lists.
fn finish_tools(
    args: &CertifyArgs,
    certificate: &ToolsCertificate,
    new_file: &Path,
) -> Result<Exit> {
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        super::write_file(&dir.join("tools-list.json"), certificate.json())?;
        super::write_file(&dir.join("tools-list.md"), certificate.markdown())?;
    }
    let render = |format: CertifyFormat| -> String {
        match format {
            CertifyFormat::Json => format!("{}\n", certificate.json()),
            CertifyFormat::Markdown => certificate.markdown(),
            CertifyFormat::Sarif => {
                let all: Vec<&Certificate> = certificate.tools.iter().collect();
                format!("{}\n", reports::sarif(&all, new_file))
            }
            CertifyFormat::Junit => {
                let all: Vec<&Certificate> = certificate.tools.iter().collect();
                reports::junit(&all, args.strict)
            }
            CertifyFormat::Human => {
                let mut out = format!("certify tools list: {}\n", certificate.verdict.as_str());
                for c in &certificate.added {
                    let tool = visible(&c.tool);
                    out.push_str(&format!("  tool {tool} added ({})\n", c.class.as_str()));
                }
                for c in &certificate.removed {
                    out.push_str(&format!(
                        "  tool {} removed ({})\n",
                        visible(&c.tool),
                        c.class.as_str()
                    ));
                }
                for c in &certificate.tools {
                    out.push_str(&human(c, "old", "new"));
                }
                out
            }
        }
    };
    super::print(&render(args.format))?;
    for (format, path) in &args.reports {
        super::write_file(path, render(*format))?;
    }
    Ok(exit(certificate.verdict, args.strict))
}

/// The human summary of a certificate.
pub(super) fn human(certificate: &Certificate, from: &str, to: &str) -> String {
    let tool = if certificate.from.get("path").is_some() {
        String::new()
    } else {
        format!("{} ", visible(&certificate.tool))
    };
    let mut out = format!(
        "certify {tool}{from} -> {to}: {} ({}; newly rejected: {}, newly admitted: {})\n",
        certificate.verdict.as_str(),
        certificate.evidence.as_str(),
        certificate.semantic.newly_rejected.as_str(),
        certificate.semantic.newly_admitted.as_str(),
    );
    for c in &certificate.changes {
        let witness = c.witness.as_ref().map_or_else(
            || format!("{}, no witness", c.evidence.as_str()),
            |w| {
                let isolated = if w.isolated { "" } else { ", not isolated" };
                let instance = w.instance.to_string();
                format!(
                    "witness ({}{isolated}): {}",
                    w.accepted_by,
                    visible(&instance)
                )
            },
        );
        out.push_str(&format!(
            "  {:<13} {:<20} {}: {}\n                {witness}\n",
            c.class.as_str(),
            c.kind,
            visible(&c.pointer),
            visible(&c.detail)
        ));
    }
    for f in certificate.fixtures.iter().filter(|f| f.old != f.new) {
        let verdict = |admitted: bool| if admitted { "admit" } else { "reject" };
        out.push_str(&format!(
            "  fixture {}: {} -> {}\n",
            visible(&f.fixture),
            verdict(f.old),
            verdict(f.new)
        ));
    }
    out
}
