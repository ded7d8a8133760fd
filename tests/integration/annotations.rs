//! The sandbox and what tools really do: `fx-annotations` has a read-only tool that writes a
//! file in its working directory (`peek`), one that appends to a list another tool shows
//! (`remember`, `recall`), a closed world that resolves a host (`resolve`), honest read-only
//! tools (one whose output is the time), a writer annotated as one (`save`), a writer without
//! annotations (`jot`) and a misspelled hint (`tidy`); `fx-writes` has writers whose
//! `destructiveHint: false` or `idempotentHint: true` is a lie, and a store that splits a note
//! on a newline (a round trip that breaks). The server runs in a throwaway sandbox: the caller's directory is
//! never written, and the sandbox is gone after the run unless kept.
//!
//! See: issue 32.

use crate::run::server;
use crate::util::{TempDir, command, finish, tool};
use serde_json::{Map, Value, json};
use std::path::Path;

/// Runs `mcp-fuzz --json -q ARGS -- fx-annotations` in `cwd`, with `tmp` as its TMPDIR (where
/// the sandbox is made).
fn run_in(cwd: &Path, tmp: &Path, args: &[&str]) -> (i32, Value, String) {
    run_server_in("fx-annotations", cwd, tmp, args)
}

/// [`run_in`] with the fixture `name`.
fn run_server_in(name: &str, cwd: &Path, tmp: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut cmd = command(["--json", "-q", "--cases", "3"]);
    cmd.args(args).arg("--").arg(server(name));
    cmd.current_dir(cwd).env("TMPDIR", tmp);
    let run = finish(cmd.spawn().expect("mcp-fuzz starts"));
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("a JSON report ({e}): {}\n{}", run.stdout, run.stderr));
    (run.code, report, run.stderr)
}

fn findings<'r>(r: &'r Value, kind: &str) -> Vec<&'r Value> {
    r["findings"].as_array().expect("findings").iter().filter(|f| f["kind"] == kind).collect()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_read_only_tool_that_writes_fails_with_its_file_and_smallest_call_in_a_sandbox_that_goes_away()
{
    let (cwd, tmp) = (TempDir::new("ann-cwd"), TempDir::new("ann-tmp"));
    let (code, r, stderr) = run_in(cwd.path(), tmp.path(), &[]);
    assert_eq!(code, 1, "a failure: {stderr}\n{r:#}");
    let mismatch = findings(&r, "annotation-mismatch");
    let f = mismatch.iter().find(|f| f["tool"] == "peek").expect("peek's finding");
    assert_eq!((f["tool"].as_str(), f["severity"].as_str()), (Some("peek"), Some("failure")));
    let smallest = f.get("minimalArguments").unwrap_or(&f["arguments"]);
    assert_eq!(smallest, &json!({"name": ""}), "the smallest call that writes: {f:#}");
    assert!(f["message"].as_str().expect("message").contains("created peek.log"), "{f:#}");
    let peek = &tool(&r, "peek")["annotations"];
    assert_eq!(peek["verdict"], "mismatch");
    assert_eq!(peek["files"], json!(["peek.log"]));
    assert_eq!(peek["claimed"], json!({"readOnlyHint": true}));
    // get_time's answer differs on every call: never a reader, never blamed.
    for honest in ["get_time", "recall", "look"] {
        assert_eq!(tool(&r, honest)["annotations"]["verdict"], "consistent", "{honest}");
    }
    // remember writes no file, but recall shows what it appended.
    let state: Vec<&&Value> = mismatch.iter().filter(|f| f["tool"] == "remember").collect();
    assert_eq!(state.len(), 1, "{r:#}");
    let words = state[0]["message"].as_str().expect("message");
    assert!(words.contains("tool recall answers differently"), "{words}");
    assert_eq!(state[0]["severity"], "failure");
    assert_eq!(tool(&r, "remember")["annotations"]["verdict"], "mismatch");
    // resolve declares a closed world and answers DNS failures.
    let open: Vec<&&Value> = mismatch.iter().filter(|f| f["tool"] == "resolve").collect();
    assert_eq!(open.len(), 1, "{r:#}");
    assert_eq!(open[0]["severity"], "warning");
    assert!(open[0]["message"].as_str().expect("m").contains("getaddrinfo ENOTFOUND"));
    let misnamed = findings(&r, "misnamed-annotation");
    assert_eq!(misnamed.len(), 1, "{r:#}");
    assert_eq!(misnamed[0]["tool"], "tidy");
    assert!(misnamed[0]["message"].as_str().expect("m").contains("rename it `readOnlyHint`"));
    assert!(entries(cwd.path()).is_empty(), "the caller's directory is never written");
    assert!(entries(tmp.path()).is_empty(), "the sandbox is removed after the run");
}

#[test]
fn writers_are_judged_by_their_annotations_with_include_destructive() {
    let (cwd, tmp) = (TempDir::new("ann-cwd"), TempDir::new("ann-tmp"));
    let (_, r, stderr) = run_in(cwd.path(), tmp.path(), &["--include-destructive"]);
    let save = &tool(&r, "save")["annotations"];
    assert_eq!(
        (save["verdict"].as_str(), &save["files"]),
        (Some("consistent"), &json!(["saved.txt"]))
    );
    let jot = &tool(&r, "jot")["annotations"];
    assert_eq!(jot["verdict"], "unannotated", "{stderr}\n{r:#}");
    let info: Vec<&Value> =
        findings(&r, "annotation-mismatch").into_iter().filter(|f| f["tool"] == "jot").collect();
    assert_eq!(info.len(), 1, "{r:#}");
    assert_eq!(info[0]["severity"], "info");
    assert!(info[0]["message"].as_str().expect("m").contains("readOnlyHint: false"));
    assert!(entries(cwd.path()).is_empty(), "the caller's directory is never written");
}

#[test]
fn no_sandbox_runs_where_told_and_keep_sandbox_leaves_it_with_its_path_printed() {
    let (cwd, tmp) = (TempDir::new("ann-cwd"), TempDir::new("ann-tmp"));
    let (_, r, _) = run_in(cwd.path(), tmp.path(), &["--no-sandbox"]);
    assert_eq!(entries(cwd.path()), ["peek.log"], "without a sandbox the tool writes here");
    assert!(tool(&r, "peek").get("annotations").is_none(), "nothing to compare: {r:#}");
    assert!(findings(&r, "annotation-mismatch").is_empty());

    let (cwd, tmp) = (TempDir::new("ann-cwd"), TempDir::new("ann-tmp"));
    let (_, _, stderr) = run_in(cwd.path(), tmp.path(), &["--keep-sandbox"]);
    let kept = entries(tmp.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        stderr.contains(&format!("sandbox kept at {}", tmp.join(&kept[0]).display())),
        "{stderr}"
    );
    let work = tmp.join(&kept[0]).join("work");
    assert!(entries(&work).is_empty(), "put back as it was before peek: {:?}", entries(&work));
    let _ = std::fs::remove_dir_all(tmp.join(&kept[0]));

    let e = finish(command(["--no-sandbox", "--", "srv", "{sandbox}/db"]).spawn().expect("starts"));
    e.assert_code(2);
    assert!(e.stderr.contains("`{sandbox}`") && e.stderr.contains("--no-sandbox"), "{}", e.stderr);
}

#[test]
fn writers_whose_hints_or_stores_lie_get_a_warning_with_the_call_and_honest_ones_none() {
    let (cwd, tmp) = (TempDir::new("ann-cwd"), TempDir::new("ann-tmp"));
    let (code, r, stderr) =
        run_server_in("fx-writes", cwd.path(), tmp.path(), &["--include-destructive"]);
    assert_eq!(code, 0, "warnings only: {stderr}\n{r:#}");
    let of = |tool: &str| -> Vec<&Value> {
        r["findings"].as_array().expect("findings").iter().filter(|f| f["tool"] == tool).collect()
    };
    let archive = of("archive_note");
    assert_eq!(archive.len(), 1, "{r:#}");
    assert_eq!(
        (archive[0]["kind"].as_str(), archive[0]["severity"].as_str()),
        (Some("annotation-mismatch"), Some("warning"))
    );
    let words = archive[0]["message"].as_str().expect("message");
    assert!(
        words.contains("destructiveHint: false")
            && words.contains("tool list_notes no longer shows `- "),
        "{words}"
    );
    assert!(archive[0]["arguments"]["index"].is_u64(), "{:#}", archive[0]);
    let tag = of("tag");
    assert_eq!(tag.len(), 1, "{r:#}");
    let words = tag[0]["message"].as_str().expect("message");
    assert!(
        words.contains("idempotentHint: true") && words.contains("after the second call"),
        "{words}"
    );
    for t in ["archive_note", "tag"] {
        assert_eq!(tool(&r, t)["annotations"]["verdict"], "mismatch", "{t}");
    }
    let trip = of("add_note");
    assert_eq!(trip.len(), 1, "{r:#}");
    assert_eq!(trip[0]["kind"], "round-trip-mismatch");
    let write = trip[0].get("minimalArguments").unwrap_or(&trip[0]["arguments"]);
    let text = write["text"].as_str().expect("a string `text`");
    assert!(text.starts_with("mcpfuzz") && text.ends_with("\nsecond line"), "{write}");
    assert_eq!(write.as_object().map(Map::len), Some(1), "only `text`: {write}");
    // Honest writers, and the readers: nothing.
    for honest in ["set_title", "touch", "list_notes", "list_tags", "get_title"] {
        assert!(of(honest).is_empty(), "{honest}: {r:#}");
    }
    assert_eq!(tool(&r, "touch")["annotations"]["verdict"], "consistent");
    assert!(entries(cwd.path()).is_empty() && entries(tmp.path()).is_empty());

    // Without --include-destructive no writer is called, and nothing is judged.
    let (code, r, _) = run_server_in("fx-writes", cwd.path(), tmp.path(), &[]);
    assert_eq!(code, 0);
    assert!(r["findings"].as_array().expect("findings").is_empty(), "{r:#}");
}
