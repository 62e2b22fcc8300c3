//! `airlock mutate`: write the adversary's variants as raw files plus a manifest, for
//! seeding fuzzers and for reading what the adversary does.

use crate::cli::exit::Exit;
use airlock_harness::adversary::{write_variants, MutateOptions, MutateOptionsError, CLASSES};
use airlock_harness::check::Subject;
use anyhow::{bail, Result};
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
    let subject = Subject::load(contract)?;
    let options = MutateOptions {
        classes: args.classes.clone(),
        fixture: args
            .fixture
            .as_deref()
            .map(airlock_harness::corpus::fixture_name),
        seed: args.seed,
        random: args.cases,
    };
    if let Err(reason) = options.check(&subject) {
        match (&reason, &args.fixture) {
            // Named as the user wrote it (a path), not by its fixture name.
            (MutateOptionsError::UnknownFixture { .. }, Some(path)) => bail!(
                "{} is not a fixture of this contract's corpus",
                path.display()
            ),
            _ => bail!("{reason}"),
        }
    }
    let count = write_variants(&subject, &options, out).map_err(
        |airlock_harness::WriteFileError { path, source }| super::WriteError {
            what: path.display().to_string(),
            source,
        },
    )?;
    errln!(
        "airlock mutate: {count} variants written to {}",
        out.display()
    );
    Ok(Exit::Success)
}
