//! Byte-for-byte snapshots of every document in every format: `run` on the deterministic
//! fixture servers (with and without a baseline, and a merged pair of shards), `diff` on the
//! hand-written and the real pairs, `clients` on the corpus and the edge schemas.
//!
//! The snapshots were recorded before the report code moved into its own crate (issue 11) and
//! guard every later change to a renderer: a difference fails with the first differing line.
//! Only what cannot repeat is redacted (wall times, the build's own paths). After a deliberate
//! change, re-record with `MCP_FUZZ_BLESS=1 cargo test --release --test integration snapshots`
//! and review the diff of `tests/snapshots/` like code.

use crate::run::server;
use crate::util::{TempDir, command, finish, fixture, fixture_json};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Where the snapshots live.
fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Compares `actual` with the stored snapshot `name`, or stores it when `MCP_FUZZ_BLESS` is set.
/// Returns a description of the difference, if any.
pub(crate) fn check(name: &str, actual: &str) -> Option<String> {
    let path = snapshot_dir().join(name);
    if std::env::var_os("MCP_FUZZ_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("snapshot has a parent"))
            .expect("snapshot dir is writable");
        std::fs::write(&path, actual).expect("snapshot is writable");
        return None;
    }
    let Ok(expected) = std::fs::read_to_string(&path) else {
        return Some(format!("{name}: no snapshot (record it with MCP_FUZZ_BLESS=1)"));
    };
    if expected == actual {
        return None;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs at line {}\n  expected: {}\n  actual:   {}",
        line + 1,
        expected.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>")
    ))
}

#[track_caller]
pub(crate) fn assert_all(differences: Vec<String>) {
    assert!(
        differences.is_empty(),
        "{} snapshot(s) differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Removes what differs between two runs of the same thing: wall times, warm spares (started
/// only when the server's measured start is slow, which a loaded machine can make it) and the
/// build's paths.
fn redact(text: &str, target_dir: &Path) -> String {
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"spares\": "))
        .map(|l| {
            if l.contains(" calls, ") && l.contains(" restarts") {
                l.split(", ")
                    .filter(|p| !p.ends_with(" warm spare") && !p.ends_with(" warm spares"))
                    .collect::<Vec<_>>()
                    .join(", ")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" };
    let text = text.as_str();
    let mut out = text.replace(&target_dir.display().to_string(), "[TARGET]");
    for (prefix, suffix) in [
        ("\"durationSecs\": ", ""),
        ("\"time\": ", ""),
        (" time=\"", "\""),
        ("\"elapsedSecs\": ", ""),
    ] {
        out = redact_numbers_after(&out, prefix, suffix);
    }
    // The human and Markdown summaries end their counts line with the wall time: `, 1.2s`.
    out.lines()
        .map(|line| {
            if (line.contains(" calls, ") && line.contains(" restarts, ")) && line.ends_with('s') {
                match line.rfind(", ") {
                    Some(i) if line[i + 2..line.len() - 1].parse::<f64>().is_ok() => {
                        format!("{}, [TIME]s", &line[..i])
                    }
                    _ => line.to_owned(),
                }
            } else if line.contains(" calls, ") && line.contains(" restarts, ") {
                // Markdown: `- Seed 0, 12 calls, 0 restarts, 0.3s, mcp-fuzz 0.1.0`.
                let mut parts: Vec<String> = line.split(", ").map(str::to_owned).collect();
                for p in &mut parts {
                    if p.ends_with('s') && p[..p.len() - 1].parse::<f64>().is_ok() {
                        *p = "[TIME]s".to_owned();
                    }
                }
                parts.join(", ")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if out.ends_with('\n') { "\n" } else { "" }
}

/// Replaces the number after each `prefix` (up to `suffix` or the end of the number).
pub(crate) fn redact_numbers_after(text: &str, prefix: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        out.push_str(&rest[..i + prefix.len()]);
        rest = &rest[i + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
            .unwrap_or(rest.len());
        if end > 0 && (suffix.is_empty() || rest[end..].starts_with(suffix)) {
            out.push_str("[TIME]");
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

/// The fixture servers whose reports repeat exactly, run after run (no timing, no flakiness).
const RUN_FIXTURES: &[(&str, &[&str])] = &[
    ("example-notes", &[]),
    ("fx-healthy", &[]),
    ("fx-crash-on-missing", &[]),
    ("fx-crash-on-valid", &[]),
    ("fx-internal-error", &[]),
    ("fx-exception-text", &[]),
    ("fx-unavailable", &[]),
    ("fx-exit-on-input", &[]),
    ("fx-junk-stdout", &[]),
    ("fx-graceful-iserror", &[]),
    ("fx-graceful-32602", &[]),
    ("fx-lenient", &[]),
    ("fx-output-violation", &[]),
    ("fx-paged", &[]),
    ("fx-cursor-loop", &[]),
    ("fx-malformed-tool", &[]),
    ("fx-destructive", &["--include-destructive"]),
    ("fx-combo", &["--cases", "10"]),
    ("fx-ids", &[]),
];

/// Every file a run writes with `--output-dir`, and the human summary on stdout.
fn run_documents(dir: &TempDir, args: &[String], cwd: &Path) -> (i32, Vec<(String, String)>) {
    let out = dir.join("out");
    let mut all = vec!["--output-dir".to_owned(), out.display().to_string()];
    all.extend(args.iter().cloned());
    let run = finish(command(&all).current_dir(cwd).spawn().expect("mcp-fuzz starts"));
    let mut docs = vec![("human.txt".to_owned(), run.stdout.clone())];
    for file in ["report.json", "report.sarif", "report.junit.xml", "report.md"] {
        let text = std::fs::read_to_string(out.join(file))
            .unwrap_or_else(|e| panic!("{file} missing ({e}); stderr:\n{}", run.stderr));
        docs.push((file.to_owned(), text));
    }
    (run.code, docs)
}

fn target_dir() -> PathBuf {
    server("fx-healthy").parent().expect("profile dir").to_path_buf()
}

#[test]
fn run_documents_are_unchanged() {
    let target = target_dir();
    let mut differences = Vec::new();
    for (fixture_name, extra) in RUN_FIXTURES {
        let dir = TempDir::new(&format!("snap-{fixture_name}"));
        let mut args: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        if !extra.contains(&"--cases") {
            args.extend(["--cases".to_owned(), "3".to_owned()]);
        }
        args.push("--".into());
        args.push(server(fixture_name).display().to_string());
        let (code, docs) = run_documents(&dir, &args, dir.path());
        for (file, text) in docs {
            let text = format!(
                "{}{}",
                if file == "human.txt" { format!("exit {code}\n") } else { String::new() },
                text
            );
            differences
                .extend(check(&format!("run/{fixture_name}/{file}"), &redact(&text, &target)));
        }
    }
    assert_all(differences);
}

#[test]
fn baselined_and_merged_run_documents_are_unchanged() {
    let target = target_dir();
    let mut differences = Vec::new();
    let dir = TempDir::new("snap-baseline");
    // A baseline that accepts one finding of fx-combo and lists one that no longer occurs.
    let baseline = dir.join("baseline.json");
    std::fs::write(
        &baseline,
        serde_json::to_string_pretty(&json!({"baselineVersion": 1, "findings": [
            {"tool": "search", "kind": "exited", "message": "known"},
            {"tool": "batch", "kind": "timeout", "message": "gone"}
        ]}))
        .expect("json"),
    )
    .expect("baseline is writable");
    let args: Vec<String> = [
        "--cases",
        "10",
        "--baseline",
        baseline.to_str().expect("utf-8"),
        "--",
        server("fx-combo").to_str().expect("utf-8"),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let (code, docs) = run_documents(&dir, &args, dir.path());
    for (file, text) in docs {
        let text = redact(&text, &target).replace(&dir.path().display().to_string(), "[TMP]");
        let text = if file == "human.txt" { format!("exit {code}\n{text}") } else { text };
        differences.extend(check(&format!("run-baseline/fx-combo/{file}"), &text));
    }

    // Two shards of fx-paged, merged.
    let mut shards = Vec::new();
    for m in 1..=2 {
        let path = dir.join(&format!("shard{m}.json"));
        let run = finish(
            command([
                "--cases",
                "3",
                "--partition",
                &format!("count:{m}/2"),
                "--output",
                path.to_str().expect("utf-8"),
                "--",
                server("fx-paged").to_str().expect("utf-8"),
            ])
            .current_dir(dir.path())
            .spawn()
            .expect("mcp-fuzz starts"),
        );
        differences.extend(check(
            &format!("run-merge/shard{m}.txt"),
            &redact(&format!("exit {}\n{}", run.code, run.stdout), &target),
        ));
        shards.push(format!("shard{m}.json"));
    }
    let out = dir.join("merged");
    for format in ["human", "json", "junit", "sarif", "markdown"] {
        let mut args = vec!["report".to_owned(), "merge".to_owned()];
        args.extend(shards.iter().cloned());
        args.extend(["--format".to_owned(), format.to_owned()]);
        let run = finish(command(&args).current_dir(dir.path()).spawn().expect("starts"));
        differences.extend(check(
            &format!("run-merge/merged.{format}"),
            &redact(&format!("exit {}\n{}", run.code, run.stdout), &target),
        ));
    }
    drop(out);
    assert_all(differences);
}

/// `diff OLD NEW` in every format, run in `cwd` with relative file names.
fn diff_documents(cwd: &Path, old: &str, new: &str) -> Vec<(String, String)> {
    ["human", "json", "markdown", "junit", "sarif"]
        .iter()
        .map(|format| {
            let run = finish(
                command(["diff", old, new, "--format", format])
                    .current_dir(cwd)
                    .spawn()
                    .expect("mcp-fuzz starts"),
            );
            ((*format).to_owned(), format!("exit {}\n{}", run.code, run.stdout))
        })
        .collect()
}

#[test]
fn diff_documents_are_unchanged() {
    let mut differences = Vec::new();
    let pairs = fixture_json("diff/pairs.json");
    let dir = TempDir::new("snap-diff");
    for (i, case) in pairs["cases"].as_array().expect("cases").iter().enumerate() {
        let surface =
            |side: &Value| json!({"tools": if side.is_null() { json!([]) } else { json!([side]) }});
        std::fs::write(dir.join("old.json"), surface(&case["old"]).to_string()).expect("writable");
        std::fs::write(dir.join("new.json"), surface(&case["new"]).to_string()).expect("writable");
        for (format, text) in diff_documents(dir.path(), "old.json", "new.json") {
            differences.extend(check(&format!("diff/pair-{i:02}.{format}"), &text));
        }
    }
    let real = fixture("diff/real");
    let mut names: Vec<String> = std::fs::read_dir(&real)
        .expect("real pairs")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for pair in names.windows(2) {
        let stem = |n: &str| n.split('@').next().unwrap_or("").to_owned();
        if stem(&pair[0]) != stem(&pair[1]) {
            continue;
        }
        for (format, text) in diff_documents(&real, &pair[0], &pair[1]) {
            differences.extend(check(&format!("diff/{}--{}.{format}", pair[0], pair[1]), &text));
        }
    }
    assert_all(differences);
}

/// `clients` on one input in every format (all adapters).
fn clients_documents(cwd: &Path, input: &[&str]) -> Vec<(String, String)> {
    // One run writes every format (`--output-dir`), the human one also to stdout: the same bytes
    // as one run per `--format`, at a fifth of the cost (this test ran 255 of them: issue 28).
    let dir = TempDir::new("clients-documents");
    let out = dir.join("out");
    let mut args = vec!["clients"];
    args.extend(input);
    let out_arg = out.display().to_string();
    args.extend(["--format", "human,json,markdown,junit,sarif", "--output-dir", &out_arg]);
    let run = finish(command(&args).current_dir(cwd).spawn().expect("mcp-fuzz starts"));
    let file = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name} missing ({e}); stderr:\n{}", run.stderr))
    };
    let exit = |text: String| format!("exit {}\n{text}", run.code);
    vec![
        ("human".to_owned(), exit(run.stdout.clone())),
        ("json".to_owned(), exit(file("report.json"))),
        ("markdown".to_owned(), exit(file("report.md"))),
        ("junit".to_owned(), exit(file("report.junit.xml"))),
        ("sarif".to_owned(), exit(file("report.sarif"))),
    ]
}

/// Inputs whose `clients` documents are kept whole; the rest of the corpus is kept as digests
/// (its documents run to 40 MB, mostly rendered schemas).
const CLIENTS_WHOLE: &[&str] = &[
    "clients/breakers.json",
    "clients/clean.json",
    "clients/mcp-sdk-cases.json",
    "tools-list/npm/@modelcontextprotocol__server-everything@2026.8.31.json",
    "tools-list/pypi/mcp-server-time@2026.10.19.json",
];

/// FNV-1a 64 of the bytes, with their length: enough to notice any change of a document.
fn digest(text: &str) -> String {
    let hash = text
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{} {hash:016x}", text.len())
}

#[test]
fn clients_documents_are_unchanged() {
    let mut differences = Vec::new();
    let root = fixture("");
    let mut corpus: Vec<String> = Vec::new();
    for registry in ["npm", "pypi"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join("tools-list").join(registry))
            .expect("corpus")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        corpus.extend(names.into_iter().map(|n| format!("tools-list/{registry}/{n}")));
    }
    let mut digests = String::new();
    for input in CLIENTS_WHOLE.iter().map(|s| (*s).to_owned()).chain(corpus) {
        for (format, text) in clients_documents(&root, &["--tools", &input]) {
            let name = input.replace('/', "--");
            if CLIENTS_WHOLE.contains(&input.as_str()) {
                differences.extend(check(&format!("clients/{name}.{format}"), &text));
            } else {
                digests.push_str(&format!("{input} {format} {}\n", digest(&text)));
            }
        }
    }
    differences.extend(check("clients/corpus-digests.txt", &digests));
    for schema in ["schemas/event.json", "schemas/user.json", "schemas/anything.json"] {
        for (format, text) in clients_documents(&root, &["--schema", schema]) {
            differences
                .extend(check(&format!("clients/{}.{format}", schema.replace('/', "--")), &text));
        }
    }
    assert_all(differences);
}
