//! What a user installs: the library alone (what an adapter crate's tests build) pulls in
//! none of the command line's dependencies, and the published crates and the wheel carry
//! real metadata. `.ci/run` builds and installs the wheel (`ci/wheel.sh`) and runs
//! `cargo publish --dry-run` on the crates.

use crate::util::root;
use std::process::Command;

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root());
    command
}

#[test]
fn the_library_alone_pulls_none_of_the_command_lines_dependencies() {
    let tree = |features: &[&str]| {
        let out = cargo()
            .args([
                "tree",
                "-p",
                "airlock-harness",
                "-e",
                "normal",
                "--prefix",
                "none",
            ])
            .args(["--locked", "--offline"])
            .args(features)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let cli_only = ["clap", "indicatif", "signal-hook", "quick-junit", "anyhow"];
    let lean = tree(&["--no-default-features"]);
    for name in cli_only {
        assert!(!lean.contains(name), "the library alone depends on {name}");
    }
    // The default (the binary) has them: the test above is not vacuous.
    let full = tree(&[]);
    for name in cli_only {
        assert!(full.contains(name), "the cli feature lost {name}");
    }
}

#[test]
fn the_published_crates_and_the_wheel_carry_real_metadata() {
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Table = workspace.parse().unwrap();
    let package = &manifest["workspace"]["package"];
    let repository = package["repository"].as_str().unwrap();
    assert!(
        repository.starts_with("https://") && !repository.contains(".invalid"),
        "{repository}"
    );
    for krate in ["guard", "harness"] {
        let text = std::fs::read_to_string(root().join(krate).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = text.parse().unwrap();
        let package = manifest["package"].as_table().unwrap();
        for key in [
            "description",
            "license",
            "repository",
            "keywords",
            "categories",
        ] {
            assert!(package.contains_key(key), "{krate}/Cargo.toml: no {key}");
        }
        let readme = package["readme"].as_str().unwrap();
        assert!(
            root().join(krate).join(readme).is_file(),
            "{krate}: {readme}"
        );
    }
    // The wheel: maturin's bin bindings of the crate's binary, under the crate's name.
    let text = std::fs::read_to_string(root().join("harness/pyproject.toml")).unwrap();
    let pyproject: toml::Table = text.parse().unwrap();
    assert_eq!(
        pyproject["project"]["name"].as_str(),
        Some("airlock-harness")
    );
    let maturin = &pyproject["tool"]["maturin"];
    assert_eq!(maturin["bindings"].as_str(), Some("bin"));
    assert_eq!(
        maturin["features"].as_array().unwrap()[0].as_str(),
        Some("cli")
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let install = readme
        .find("## Install")
        .expect("README: no Install section");
    let commands = readme.find("## Commands").unwrap();
    assert!(
        install < commands,
        "the README's Install comes before its commands"
    );
    assert!(readme[install..].contains("pip install airlock-harness"));
}
