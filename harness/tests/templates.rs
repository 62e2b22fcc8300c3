//! The CI templates run: their `run:` steps, with the job's `env:`, executed by bash as a
//! runner would (the install steps aside: the wheel is tried by `ci/wheel.sh`), in a
//! scratch folder holding what the template's example names, with the `airlock` under
//! test on the PATH. (That every file of `ci/` is YAML and uses only flags `airlock` has
//! is in `docs.rs`.)

use crate::util::root;
use std::path::Path;
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

/// A template's one job: its `run:` steps as (name, script), its `env:` as (key, value).
struct Job {
    steps: Vec<(String, String)>,
    env: Vec<(String, String)>,
}

fn job(template: &str) -> Job {
    let text = std::fs::read_to_string(root().join(template)).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    let jobs = docs[0]["jobs"].as_hash().unwrap();
    assert_eq!(jobs.len(), 1, "{template}: one job");
    let job = jobs.values().next().unwrap();
    let env = job["env"]
        .as_hash()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_owned(), scalar(v)))
                .collect()
        })
        .unwrap_or_default();
    let steps = job["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|step| {
            let run = step["run"].as_str()?;
            let name = step["name"].as_str().unwrap_or(run);
            Some((name.to_owned(), run.to_owned()))
        })
        .collect();
    Job { steps, env }
}

fn scalar(value: &Yaml) -> String {
    match value {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("env value {other:?}"),
    }
}

/// Runs the `run:` steps `wanted` picks, in order, in `dir`; each must succeed.
fn run_steps(
    template: &str,
    dir: &Path,
    env: &[(&str, String)],
    wanted: impl Fn(&str) -> bool,
) -> usize {
    let Job {
        steps,
        env: job_env,
    } = job(template);
    let path = crate::util::path_with_airlock();
    let summary = dir.join("step-summary.md");
    let mut ran = 0;
    for (name, run) in steps.iter().filter(|(name, _)| wanted(name)) {
        let mut command = Command::new("bash");
        command
            .args(["-eo", "pipefail", "-c", run])
            .current_dir(dir)
            .env("PATH", &path)
            .env("GITHUB_STEP_SUMMARY", &summary);
        for (key, value) in &job_env {
            command.env(key, value);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{template}: step {name:?} failed ({:?})\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    ran
}

/// The scratch folder: links to what the template's example names.
fn scratch(links: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in links {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

#[test]
fn the_python_adapter_template_runs_its_check_and_writes_the_summary() {
    let dir = scratch(&["schemas", "corpora", "docs"]);
    let ran = run_steps("ci/python-adapter.yml", dir.path(), &[], |name| {
        !name.starts_with("Install")
    });
    assert_eq!(ran, 2, "the check and the summary steps");
    for report in ["airlock.sarif", "airlock.xml", "airlock.md"] {
        assert!(dir.path().join(report).is_file(), "{report} not written");
    }
    let summary = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert!(summary.contains("review\\_status"), "{summary}");
}

#[test]
fn the_mcp_server_template_imports_the_real_server_and_lints_its_contracts() {
    let Some(python) = crate::mcp_import::mcp_python() else {
        return;
    };
    let dir = scratch(&[]);
    // The step that shows what the import changed reads git, as in the server's repository.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status();
    assert!(git.unwrap().success());
    let server = format!(
        "{} {}",
        python.display(),
        root().join("tests/mcp/server.py").display()
    );
    // The check step runs the adversary over 8 MiB size bounds (minutes in a debug build):
    // its flags are checked by `the_ci_templates_use_only_flags_airlock_has`.
    let ran = run_steps(
        "ci/mcp-server.yml",
        dir.path(),
        &[("SERVER_CMD", server.clone())],
        |name| {
            name.starts_with("Re-import")
                || name.starts_with("What the import")
                || name.starts_with("Lint")
        },
    );
    assert_eq!(ran, 3);
    for written in [
        "schemas/change_review/contract.toml",
        "schemas/project_quota/v1.schema.json",
        "corpora/change_review/request.json",
        "airlock-lint.sarif",
    ] {
        assert!(dir.path().join(written).is_file(), "{written} not written");
    }
    // A second run is a pull request that changed no tool: every contract unchanged, exit 0.
    let ran = run_steps(
        "ci/mcp-server.yml",
        dir.path(),
        &[("SERVER_CMD", server)],
        |name| name.starts_with("Re-import"),
    );
    assert_eq!(ran, 1);
}
