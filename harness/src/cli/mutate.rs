//! `airlock mutate`: write the adversary's variants as raw files plus a manifest, for
//! seeding fuzzers and for reading what the adversary does.

use airlock_harness::adversary::{generate, CLASSES};
use airlock_harness::cases::{Expectation, Upstream};
use airlock_harness::check::Subject;
use airlock_harness::exit::Exit;
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::path::PathBuf;

/// Write variants of a contract's fixtures as raw files and a `manifest.json` (id, class,
/// location, expected verdict). Exit 0, or 2 on a usage or contract error.
#[derive(Debug, clap::Args)]
pub struct MutateArgs {
    /// Print the catalogue, one class per line, and exit.
    #[arg(long)]
    list_classes: bool,
    /// The contract folder (`schemas/<tool>`).
    #[arg(long, required_unless_present = "list_classes")]
    contract: Option<PathBuf>,
    /// Only variants derived from this fixture file.
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Only these classes (repeatable).
    #[arg(long = "class")]
    classes: Vec<String>,
    /// Seed of canaries and random variants.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Random mutation variants to add.
    #[arg(long, default_value_t = 100)]
    cases: usize,
    /// Output folder (created).
    #[arg(long, required_unless_present = "list_classes")]
    out: Option<PathBuf>,
}

pub fn run(args: MutateArgs) -> Result<Exit> {
    if args.list_classes {
        for (name, what) in CLASSES {
            outln!("{name:<22} {what}")?;
        }
        return Ok(Exit::Success);
    }
    let (Some(contract), Some(out)) = (&args.contract, &args.out) else {
        bail!("--contract and --out are required");
    };
    for class in &args.classes {
        if !CLASSES.iter().any(|(name, _)| name == class) {
            bail!("unknown class {class:?}; see airlock mutate --list-classes");
        }
    }
    let subject = Subject::load(contract)?;
    let origin = match &args.fixture {
        Some(path) => {
            let name = airlock_harness::corpus::fixture_name(path);
            if !subject.corpus.fixtures.iter().any(|f| f.name == name) {
                bail!(
                    "{} is not a fixture of this contract's corpus",
                    path.display()
                );
            }
            Some(name)
        }
        None => None,
    };
    let guard = &subject.guard;
    let cases = generate(guard.contract(), &subject.corpus, args.seed, args.cases);
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut manifest = Vec::new();
    for case in cases {
        if !args.classes.is_empty() && !args.classes.contains(&case.class) {
            continue;
        }
        if origin.is_some() && case.origin != origin {
            continue;
        }
        let stem = format!("{:05}-{}", manifest.len(), case.class);
        let request_file = format!("{stem}.request.json");
        std::fs::write(
            out.join(&request_file),
            serde_json::to_vec_pretty(&case.request)?,
        )?;
        let (admission, body_file, transport) = match &case.upstream {
            Upstream::Body(bytes) => {
                let file = format!("{stem}.json");
                std::fs::write(out.join(&file), bytes)?;
                (guard.admit(&case.request, bytes), Some(file), None)
            }
            Upstream::Transport(e) => (
                guard.admit_transport_error(&case.request, *e),
                None,
                Some(e.as_str()),
            ),
        };
        let expected = match admission.audit().verdict() {
            airlock_guard::Verdict::Admitted | airlock_guard::Verdict::UpstreamFailure => "admit",
            airlock_guard::Verdict::TransportFailure => "transport",
            airlock_guard::Verdict::Rejected => "reject",
        };
        manifest.push(json!({
            "id": case.id,
            "class": case.class,
            "location": case.location,
            "origin": case.origin,
            "file": body_file,
            "transport_error": transport,
            "request_file": request_file,
            "expected": expected,
            "by_construction": case.expect != Expectation::Reference,
            "stage": admission.audit().stage(),
            "canaries": case.canaries,
        }));
    }
    let count = manifest.len();
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_vec_pretty(
            &json!({"tool": guard.contract().tool(), "seed": args.seed, "variants": manifest}),
        )?,
    )?;
    eprintln!(
        "airlock mutate: {count} variants written to {}",
        out.display()
    );
    Ok(Exit::Success)
}
