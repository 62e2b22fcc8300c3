//! `Report::assert_clean`, for an adapter crate's `cargo test`: a panic message of a few
//! kilobytes whatever the run found (counts, the first findings, reproduce lines), and
//! the reproducers written under the crate's `target/`, never into the sources.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::report::{printable, Conclusion, Finding, Report};
use super::write_reproducer_file;

/// Findings the panic message shows, one line each.
const FINDINGS_SHOWN: usize = 5;
/// Reproduce lines the panic message shows.
const REPRODUCERS_SHOWN: usize = 5;
/// Contracts the panic message counts, one line each.
const CONTRACTS_SHOWN: usize = 10;
/// Characters of one line of the panic message (a message or a path can be long).
const LINE: usize = 240;

/// Where [`Report::assert_clean`] writes reproducers: `airlock/reproducers` under the
/// target folder, which is `$CARGO_TARGET_DIR` when set (a relative one is taken from
/// the workspace root), else `target/` in the nearest folder at or above the crate
/// (`$CARGO_MANIFEST_DIR`, which `cargo test` sets, else the current directory) holding a
/// `Cargo.lock` (a workspace's root), else the nearest holding a `Cargo.toml`, else the
/// start itself.
pub fn default_reproducer_dir() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|t| !t.is_empty())
        .map(PathBuf::from);
    reproducer_dir_from(target.as_deref(), &start)
}

/// [`default_reproducer_dir`] with its environment given.
fn reproducer_dir_from(target: Option<&Path>, start: &Path) -> PathBuf {
    let holding = |file: &str| start.ancestors().find(|d| d.join(file).is_file());
    let root = holding("Cargo.lock")
        .or_else(|| holding("Cargo.toml"))
        .unwrap_or(start);
    let target = match target {
        Some(t) => root.join(t),
        None => root.join("target"),
    };
    target.join("airlock").join("reproducers")
}

impl Report {
    /// Panic, unless the run is clean, with a short summary: counts per contract and
    /// kind, the first findings one line each, and a reproduce line for each
    /// reproducer, which are written under [`default_reproducer_dir`] (the crate's
    /// `target/airlock/reproducers`). For an adapter crate's own `#[test]`.
    ///
    /// # Panics
    ///
    /// When there is any finding or contract error.
    pub fn assert_clean(&self) {
        if self.conclusion() != Conclusion::Clean {
            self.assert_clean_in(&default_reproducer_dir());
        }
    }

    /// [`Report::assert_clean`], writing the reproducers under `dir`
    /// (`<dir>/<tool>/<stem>.case.json`, as `airlock check --reproducers` does).
    ///
    /// # Panics
    ///
    /// When there is any finding or contract error.
    pub fn assert_clean_in(&self, dir: &Path) {
        if self.conclusion() != Conclusion::Clean {
            panic!("{}", self.unclean_message(dir));
        }
    }

    /// The panic message of an unclean run: a few kilobytes at most. Writes the
    /// reproducers the run kept under `dir`.
    fn unclean_message(&self, dir: &Path) -> String {
        let mut out = String::new();
        let findings = self.findings().count();
        let errors = self.contract_errors().count();
        let _ = writeln!(
            out,
            "airlock check found problems: {} cases, {findings} findings ({} baselined), {errors} contract errors, seed {}",
            self.cases(),
            self.baselined(),
            self.seed
        );
        for c in self.contracts.iter().take(CONTRACTS_SHOWN) {
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            for f in c.contract_errors.iter().chain(&c.findings) {
                *kinds.entry(f.kind.as_str()).or_default() += 1;
            }
            if kinds.is_empty() {
                continue;
            }
            let counts: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
            line(
                &mut out,
                &format!("  {}: {}", printable(&c.tool), counts.join(", ")),
            );
        }
        if self.contracts.len() > CONTRACTS_SHOWN {
            let _ = writeln!(
                out,
                "  … and {} more contracts",
                self.contracts.len() - CONTRACTS_SHOWN
            );
        }
        // What fails the run first: contract errors, then findings the baseline does not
        // accept.
        let mut failing: Vec<&Finding> = self
            .contract_errors()
            .chain(self.findings().filter(|f| f.baselined.is_none()))
            .collect();
        if failing.is_empty() {
            failing = self.findings().collect();
        }
        let _ = writeln!(out, "first findings:");
        for f in failing.iter().take(FINDINGS_SHOWN) {
            let location = if f.location.is_empty() {
                String::new()
            } else {
                format!(" at {}", f.location)
            };
            line(
                &mut out,
                &format!(
                    "  {} {} {} [{}{location}]: {}",
                    f.kind.as_str(),
                    printable(&f.tool),
                    printable(&f.case),
                    printable(&f.class),
                    printable(&f.message)
                ),
            );
        }
        if failing.len() > FINDINGS_SHOWN {
            let _ = writeln!(out, "  … and {} more", failing.len() - FINDINGS_SHOWN);
        }
        self.reproduce_lines(dir, &mut out);
        out
    }

    /// Write the kept reproducers under `dir`; the reproduce lines of those and of the
    /// reproducers the run wrote itself.
    fn reproduce_lines(&self, dir: &Path, out: &mut String) {
        let mut paths: Vec<PathBuf> = Vec::new();
        for f in self.contract_errors().chain(self.findings()) {
            if let Some(path) = &f.reproducer {
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
        }
        let mut failure = None;
        let mut written = 0;
        for c in &self.contracts {
            for kept in &c.kept {
                let mut reproducer = kept.reproducer();
                // An absolute contract folder: the reproducer replays from anywhere.
                if let Ok(absolute) = reproducer.contract.canonicalize() {
                    reproducer.contract = absolute;
                }
                match write_reproducer_file(dir, &kept.tool, &reproducer) {
                    Ok(path) => {
                        written += 1;
                        paths.push(path);
                    }
                    Err(e) => failure = Some(e.to_string()),
                }
            }
        }
        if written > 0 {
            line(
                out,
                &format!(
                    "{written} reproducers written under {}",
                    printable(&dir.display().to_string())
                ),
            );
        }
        if let Some(e) = failure {
            line(
                out,
                &format!("reproducers not all written: {}", printable(&e)),
            );
        }
        if paths.is_empty() {
            let _ = writeln!(out, "no reproducer: these findings are not on one case");
            return;
        }
        let _ = writeln!(
            out,
            "reproduce (the guard alone; add --adapter-cmd CMD for an exec adapter, or call airlock_harness::check::replay):"
        );
        for path in paths.iter().take(REPRODUCERS_SHOWN) {
            line(
                out,
                &format!(
                    "  airlock check --replay {}",
                    printable(&path.display().to_string())
                ),
            );
        }
        if paths.len() > REPRODUCERS_SHOWN {
            let _ = writeln!(
                out,
                "  … and {} more reproducers",
                paths.len() - REPRODUCERS_SHOWN
            );
        }
    }
}

/// Push `text` as one line of at most [`LINE`] characters (the rest cut, with `…`).
fn line(out: &mut String, text: &str) {
    out.push_str(&crate::base::report::clip(text, LINE));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducers_go_under_the_target_folder_of_the_workspace_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let member = root.join("crates").join("adapter");
        std::fs::create_dir_all(&member).unwrap();
        std::fs::write(member.join("Cargo.toml"), "").unwrap();
        // A crate alone: its own target/.
        assert_eq!(
            reproducer_dir_from(None, &member),
            member.join("target/airlock/reproducers")
        );
        // In a workspace: the root's (the folder holding Cargo.lock).
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        std::fs::write(root.join("Cargo.lock"), "").unwrap();
        assert_eq!(
            reproducer_dir_from(None, &member),
            root.join("target/airlock/reproducers")
        );
        // CARGO_TARGET_DIR wins; a relative one is taken from the root.
        assert_eq!(
            reproducer_dir_from(Some(Path::new("/elsewhere/t")), &member),
            Path::new("/elsewhere/t/airlock/reproducers")
        );
        assert_eq!(
            reproducer_dir_from(Some(Path::new("build")), &member),
            root.join("build/airlock/reproducers")
        );
    }

    #[test]
    fn a_line_is_cut_at_its_bound_on_a_character_boundary() {
        let mut out = String::new();
        line(&mut out, &"é".repeat(LINE + 10));
        assert_eq!(out.chars().count(), LINE + 2, "{out}");
        assert!(out.ends_with("…\n"));
    }
}
