//! Running the binary, reading its JSON Lines, and checking them against a schema.

use serde_json::Value;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long one run of the binary may take before the test fails.
///
/// Why: a generator that loops forever must fail the test, not hang CI. Debug builds of the
/// generators are slow, so this is generous.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The exit codes of `src/exit_code.rs`, repeated here on purpose: changing one must break a test.
pub mod code {
    pub const SUCCESS: i32 = 0;
    pub const USAGE: i32 = 2;
    pub const NO_TOOLS: i32 = 4;
    pub const UNSATISFIABLE_SCHEMA: i32 = 5;
}

/// A path under `fixtures/`.
pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(relative)
}

/// The element of the array `report[list]` whose `key` is `value`; panics naming what is missing.
pub fn entry<'a>(report: &'a Value, list: &str, key: &str, value: &str) -> &'a Value {
    report[list]
        .as_array()
        .unwrap_or_else(|| panic!("no `{list}` array"))
        .iter()
        .find(|e| e[key] == value)
        .unwrap_or_else(|| panic!("no `{list}` entry with {key} {value:?}"))
}

/// The report's tool `name`.
pub fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    entry(report, "tools", "name", name)
}

/// Reads a JSON fixture.
pub fn fixture_json(relative: &str) -> Value {
    let text = std::fs::read_to_string(fixture(relative)).expect("fixture is readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts the exit code, showing stderr when it differs.
    #[track_caller]
    pub fn assert_code(&self, expected: i32) -> &Self {
        assert_eq!(self.code, expected, "unexpected exit code; stderr:\n{}", self.stderr);
        self
    }

    /// The stdout lines, each parsed as JSON.
    pub fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
            })
            .collect()
    }

    /// The `mode` of every line, in order.
    pub fn modes(&self) -> Vec<String> {
        self.lines().iter().map(|line| line["mode"].as_str().expect("mode").to_owned()).collect()
    }
}

/// Runs `mcp-fuzz ARGS` with an empty stdin.
pub fn mcp_fuzz<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    mcp_fuzz_with_stdin(args, "")
}

/// Runs `mcp-fuzz ARGS` with `stdin` as standard input.
pub fn mcp_fuzz_with_stdin<I, S>(args: I, stdin: &str) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut child = command(args).stdin(Stdio::piped()).spawn().expect("binary starts");
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_owned();
    let writer = thread::spawn(move || {
        // The binary may exit before reading everything; that is the test's business.
        let _ = input.write_all(stdin.as_bytes());
    });
    let run = finish(child);
    writer.join().expect("stdin writer");
    run
}

/// The binary with `args`, stdout and stderr piped.
pub fn command<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fuzz"));
    command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

/// Waits for the child (at most [`RUN_TIMEOUT`]) and collects its output.
pub fn finish(mut child: Child) -> Run {
    // A test may have taken stdout to read it itself.
    let stdout = child.stdout.take().map(reader);
    let stderr = child.stderr.take().map(reader);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            panic!("mcp-fuzz ran longer than {RUN_TIMEOUT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().expect("exited, not killed by a signal"),
        stdout: stdout.map(|r| r.join().expect("stdout reader")).unwrap_or_default(),
        stderr: stderr.map(|r| r.join().expect("stderr reader")).unwrap_or_default(),
    }
}

fn reader(mut stream: impl std::io::Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("UTF-8 output");
        text
    })
}

/// A file in the temp dir with a unique name, removed on drop.
pub struct TempFile(PathBuf);

/// A path in the temp dir that no other test, or test process, uses.
pub fn unique_temp_path(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let unique = format!(
        "mcp-fuzz-test-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    std::env::temp_dir().join(unique)
}

impl TempFile {
    pub fn new(name: &str, contents: &str) -> Self {
        let path = unique_temp_path(name);
        std::fs::write(&path, contents).expect("temp file is writable");
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Checks every line against `schema`: `valid` and `boundary` values validate, `invalid` values
/// fail and carry a label (`mutation`, `pointer`, `keyword`). Returns the number of lines.
#[track_caller]
pub fn check_lines(schema: &Value, run: &Run) -> usize {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("the test schema is a valid JSON Schema");
    let lines = run.lines();
    for line in &lines {
        let object = line.as_object().unwrap_or_else(|| panic!("line is not an object: {line}"));
        let value = object.get("value").unwrap_or_else(|| panic!("no value: {line}"));
        match object.get("mode").and_then(Value::as_str) {
            Some("valid" | "boundary") => {
                let errors: Vec<String> =
                    validator.iter_errors(value).map(|error| error.to_string()).collect();
                assert!(
                    errors.is_empty(),
                    "labelled valid but fails the schema: {line}: {errors:?}"
                );
                assert_eq!(object.len(), 2, "unexpected keys: {line}");
            }
            Some("invalid") => {
                assert!(!validator.is_valid(value), "labelled invalid but validates: {line}");
                let mutation = object.get("mutation").and_then(Value::as_str);
                let is_kebab = |s: &str| {
                    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                };
                assert!(mutation.is_some_and(is_kebab), "bad mutation: {line}");
                let pointer = object.get("pointer").and_then(Value::as_str);
                assert!(
                    pointer.is_some_and(|p| p.is_empty() || p.starts_with('/')),
                    "bad pointer: {line}"
                );
                let keyword = object.get("keyword").and_then(Value::as_str);
                assert!(keyword.is_some_and(|k| !k.is_empty()), "bad keyword: {line}");
                assert_eq!(object.len(), 5, "unexpected keys: {line}");
            }
            _ => panic!("unknown mode: {line}"),
        }
    }
    lines.len()
}

/// A fresh directory in the temp dir, removed (with its contents) on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let path = unique_temp_path(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir is creatable");
        Self(path)
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fixture server under a name of its own (a symlink in the temp dir, removed on drop), so
/// that the leftover-process check of this test cannot see, or be seen by, a concurrent test
/// running the same fixture.
pub struct OwnServer(PathBuf);

impl OwnServer {
    pub fn new(fixture: &str) -> Self {
        let link = unique_temp_path(fixture);
        std::os::unix::fs::symlink(crate::run::server(fixture), &link)
            .expect("temp dir is writable");
        Self(link)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Each tool of a run report: name -> (status, reason or "").
pub fn statuses(r: &Value) -> std::collections::BTreeMap<String, (String, String)> {
    r["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("name").to_owned(),
                (
                    t["status"].as_str().expect("status").to_owned(),
                    t["reason"].as_str().unwrap_or("").to_owned(),
                ),
            )
        })
        .collect()
}
