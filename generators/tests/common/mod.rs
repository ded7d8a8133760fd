//! Helpers shared by the integration tests: fixture paths, an independent reference validator,
//! panic capture and a watchdog that names the work still running when a deadline passes.
//!
//! Each test binary uses a different subset of these helpers.
#![allow(dead_code, reason = "each test binary uses a different subset of the helpers")]

use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// The repository's `fixtures/` directory; tests read fixtures only from here.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");

/// A path under `fixtures/`.
pub fn fixture(relative: &str) -> PathBuf {
    Path::new(FIXTURES).join(relative)
}

/// Reads and parses a JSON file, panicking with the path when it cannot.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("failed to read fixture {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("failed to parse fixture {}: {e}", path.display()))
}

/// The `*.json` files directly inside `dir`, sorted by name.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| {
        panic!("failed to list fixture directory {} (are the fixtures copied?): {e}", dir.display())
    });
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json") && path.is_file())
        .collect();
    files.sort();
    files
}

/// Compact JSON, cut to a readable length for failure reports.
pub fn show(value: &Value) -> String {
    const LIMIT: usize = 240;
    let text = value.to_string();
    if text.chars().count() <= LIMIT {
        return text;
    }
    let cut: String = text.chars().take(LIMIT).collect();
    format!("{cut}… ({} bytes)", text.len())
}

/// A `jsonschema` validator built by the test itself, formats asserted, so that no check trusts the
/// generator's own oracle. `draft` overrides `$schema`; `None` lets `$schema` decide (2020-12
/// when absent). The workspace builds jsonschema without `resolve-http`/`resolve-file`, so a
/// remote `$ref` fails here instead of being fetched.
pub fn reference_validator(
    schema: &Value,
    draft: Option<jsonschema::Draft>,
) -> Result<jsonschema::Validator, String> {
    let mut options = jsonschema::options().should_validate_formats(true);
    if let Some(draft) = draft {
        options = options.with_draft(draft);
    }
    options.build(schema).map_err(|e| e.to_string())
}

/// Values of every JSON type: a schema that accepts everything accepts all of them.
pub fn probe_values() -> Vec<Value> {
    serde_json::from_str(
        r#"[null, true, false, 0, -1, 1.5, 1e300, "", "x", "2024-01-01", [], [1, "a"], {},
            {"a": 1}, {"": null}]"#,
    )
    .expect("probe values are valid JSON")
}

/// FNV-1a, 64 bit: a seed derived from a name that is the same on every machine and toolchain.
pub fn seed_of(name: &str) -> u64 {
    mcp_fuzz_generators::hash::fnv1a(name.as_bytes())
}

thread_local! {
    /// Whether panics on this thread are being captured (not printed).
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    /// The last captured panic on this thread: message and location.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once per process) a panic hook that, on threads inside [`guarded`], records the panic
/// message and location instead of printing them, and otherwise behaves as the default hook.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                let message = payload_message(info.payload());
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|last| *last.borrow_mut() = Some(format!("{message}{location}")));
            } else {
                previous(info);
            }
        }));
    });
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Runs `f`, turning a panic into `Err("message at file:line")` without printing it.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let was = CAPTURING.with(|c| c.replace(true));
    LAST_PANIC.with(|last| last.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(was));
    result.map_err(|payload| {
        LAST_PANIC
            .with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| payload_message(&*payload))
    })
}

/// Runs `f` under [`guarded`], silencing panics (e.g. those proptest catches while shrinking), and
/// returns the last panic captured during the run, if any, with the result.
pub fn quietly<T>(f: impl FnOnce() -> T) -> (Result<T, String>, Option<String>) {
    install_hook();
    let was = CAPTURING.with(|c| c.replace(true));
    LAST_PANIC.with(|last| last.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    let last = LAST_PANIC.with(|last| last.borrow_mut().take());
    CAPTURING.with(|c| c.set(was));
    let result =
        result.map_err(|payload| last.clone().unwrap_or_else(|| payload_message(&*payload)));
    (result, last)
}

/// Records what a thread is about to check in `target/tmp/breadcrumbs/<name>`, overwriting the
/// previous record. When the process aborts (an allocation failure, a stack overflow) no report is
/// printed, and this file names the schema that was being checked.
pub fn breadcrumb(name: &str, content: &str) {
    let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join("breadcrumbs");
    // Best effort: a missing breadcrumb must not fail the test.
    let _ = std::fs::create_dir_all(&directory);
    let _ = std::fs::write(directory.join(name), content);
}

/// Stack size of worker threads: that of a main thread on Linux, so a generator that recurses too
/// deeply fails here as it would in the CLI.
pub const WORKER_STACK: usize = 8 << 20;

/// Runs `check` on every item with `workers` threads, each item under [`guarded`], and returns the
/// results in item order. If the whole run is not done within `deadline`, panics naming the items
/// still running (their threads are left behind; the test process ends soon after). Each worker
/// leaves a [`breadcrumb`] `<tag>-worker-<n>` naming its current item.
pub fn run_all<I, T>(
    tag: &str,
    items: Vec<I>,
    workers: usize,
    deadline: Duration,
    name: fn(&I) -> String,
    check: impl Fn(&I) -> T + Send + Sync + 'static,
) -> Vec<Result<T, String>>
where
    I: Send + Sync + 'static,
    T: Send + 'static,
{
    let total = items.len();
    let items = Arc::new(items);
    let check = Arc::new(check);
    let next = Arc::new(AtomicUsize::new(0));
    let running: Arc<Mutex<Vec<Option<usize>>>> = Arc::new(Mutex::new(vec![None; workers.max(1)]));
    let (sender, receiver) = mpsc::channel::<(usize, Result<T, String>)>();
    for worker in 0..workers.max(1) {
        let (items, check, next, running, sender) =
            (items.clone(), check.clone(), next.clone(), running.clone(), sender.clone());
        let crumb = format!("{tag}-worker-{worker}");
        std::thread::Builder::new()
            .name(format!("test-worker-{worker}"))
            .stack_size(WORKER_STACK)
            .spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= items.len() {
                        break;
                    }
                    running.lock().expect("running lock")[worker] = Some(index);
                    breadcrumb(&crumb, &name(&items[index]));
                    let result = guarded(|| check(&items[index]));
                    running.lock().expect("running lock")[worker] = None;
                    if sender.send((index, result)).is_err() {
                        break;
                    }
                }
            })
            .expect("failed to spawn a test worker");
    }
    drop(sender);
    let until = Instant::now() + deadline;
    let mut results: Vec<Option<Result<T, String>>> = (0..total).map(|_| None).collect();
    loop {
        match receiver.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok((index, result)) => results[index] = Some(result),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                let stuck: Vec<String> = running
                    .lock()
                    .expect("running lock")
                    .iter()
                    .flatten()
                    .map(|&index| name(&items[index]))
                    .collect();
                panic!(
                    "watchdog: not finished after {deadline:?}; still running: {}",
                    stuck.join("; ")
                );
            }
        }
    }
    results
        .into_iter()
        .map(|result| result.unwrap_or_else(|| Err("the worker thread died".to_owned())))
        .collect()
}

/// How many worker threads to use: the machine's parallelism, at most 4.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(4))
}

/// One failed check, for the report collected at the end of a test.
pub struct Failure {
    /// Stable name of the check (`valid-rejected-by-reference`, `compile`, ...).
    pub check: &'static str,
    /// The offending value, shortened.
    pub value: Option<String>,
    /// What went wrong.
    pub detail: String,
}

impl Failure {
    /// Records a failure.
    pub fn push(
        failures: &mut Vec<Self>,
        check: &'static str,
        value: Option<&Value>,
        detail: String,
    ) {
        failures.push(Self { check, value: value.map(show), detail });
    }
}

/// Writes `FAIL <name>` and at most `limit` of its failures, indented.
pub fn write_failures(out: &mut String, name: &str, failures: &[Failure], limit: usize) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "FAIL {name}");
    for failure in failures.iter().take(limit) {
        let _ = write!(out, "    {}: {}", failure.check, failure.detail);
        if let Some(value) = &failure.value {
            let _ = write!(out, "; value {value}");
        }
        let _ = writeln!(out);
    }
    if failures.len() > limit {
        let _ = writeln!(out, "    ... and {} more", failures.len() - limit);
    }
}

/// What [`check_generation`] drew and checked.
#[derive(Default)]
pub struct Drawn {
    /// Valid values drawn and checked.
    pub valid: usize,
    /// Invalid values drawn and checked.
    pub invalid: usize,
    /// Boundary values checked.
    pub boundary: usize,
    /// Mutations checked.
    pub mutations: usize,
    /// The generator answered `AcceptsEverything` (for invalid values or mutations).
    pub accepts_everything: bool,
}

fn describe(invalid: &mcp_fuzz_generators::Invalid) -> String {
    format!("{} at {:?} ({})", invalid.label.mutation, invalid.label.pointer, invalid.label.keyword)
}

/// The generation contract, checked against the generator's oracle *and* an independent
/// reference validator: `valid` sampled values are valid, `invalid` sampled values are invalid
/// (unless the generator says `AcceptsEverything`), every boundary value is valid and every
/// mutation invalid, and an `AcceptsEverything` answer is refuted by any value the reference
/// rejects (a produced invalid value, or one of [`probe_values`]).
pub fn check_generation(
    generator: &mcp_fuzz_generators::Generator,
    reference: &jsonschema::Validator,
    seed: u64,
    valid: usize,
    invalid: usize,
    failures: &mut Vec<Failure>,
) -> Drawn {
    use mcp_fuzz_generators::SchemaErrorKind;
    let mut drawn = Drawn::default();
    let mut sampler = generator.sampler(seed);
    for draw in 0..valid {
        match sampler.valid() {
            Ok(value) => {
                drawn.valid += 1;
                if !generator.is_valid(&value) {
                    let detail = format!("draw {draw}");
                    Failure::push(failures, "valid-rejected-by-oracle", Some(&value), detail);
                }
                if !reference.is_valid(&value) {
                    let detail = format!("draw {draw}");
                    Failure::push(failures, "valid-rejected-by-reference", Some(&value), detail);
                }
            }
            Err(e) => {
                let detail = format!("draw {draw}: {}: {e}", e.code());
                Failure::push(failures, "valid-draw", None, detail);
                break;
            }
        }
    }

    // A value the reference rejects refutes an `AcceptsEverything` answer.
    let mut invalid_witness: Option<Value> = None;
    for draw in 0..invalid {
        match sampler.invalid() {
            Ok(case) => {
                drawn.invalid += 1;
                let detail = format!("draw {draw}: {}", describe(&case));
                if generator.is_valid(&case.value) {
                    Failure::push(
                        failures,
                        "invalid-accepted-by-oracle",
                        Some(&case.value),
                        detail.clone(),
                    );
                }
                if reference.is_valid(&case.value) {
                    Failure::push(
                        failures,
                        "invalid-accepted-by-reference",
                        Some(&case.value),
                        detail,
                    );
                } else if invalid_witness.is_none() {
                    invalid_witness = Some(case.value);
                }
            }
            Err(e) if e.kind == SchemaErrorKind::AcceptsEverything => {
                drawn.accepts_everything = true;
                break;
            }
            Err(e) => {
                let detail = format!("draw {draw}: {}: {e}", e.code());
                Failure::push(failures, "invalid-draw", None, detail);
                break;
            }
        }
    }

    match generator.boundary() {
        Ok(values) => {
            if values.is_empty() {
                Failure::push(failures, "boundary-empty", None, "no boundary value".to_owned());
            }
            for (i, value) in values.iter().enumerate() {
                drawn.boundary += 1;
                if !generator.is_valid(value) {
                    let detail = format!("boundary {i}");
                    Failure::push(failures, "boundary-rejected-by-oracle", Some(value), detail);
                }
                if !reference.is_valid(value) {
                    let detail = format!("boundary {i}");
                    Failure::push(failures, "boundary-rejected-by-reference", Some(value), detail);
                }
            }
        }
        Err(e) => Failure::push(failures, "boundary", None, format!("{}: {e}", e.code())),
    }

    match generator.mutations() {
        Ok(mutations) => {
            for (i, case) in mutations.iter().enumerate() {
                drawn.mutations += 1;
                let detail = format!("mutation {i}: {}", describe(case));
                if generator.is_valid(&case.value) {
                    Failure::push(
                        failures,
                        "mutation-accepted-by-oracle",
                        Some(&case.value),
                        detail.clone(),
                    );
                }
                if reference.is_valid(&case.value) {
                    Failure::push(
                        failures,
                        "mutation-accepted-by-reference",
                        Some(&case.value),
                        detail,
                    );
                } else if invalid_witness.is_none() {
                    invalid_witness = Some(case.value.clone());
                }
            }
        }
        Err(e) if e.kind == SchemaErrorKind::AcceptsEverything => drawn.accepts_everything = true,
        Err(e) => Failure::push(failures, "mutations", None, format!("{}: {e}", e.code())),
    }

    if drawn.accepts_everything {
        let witness =
            invalid_witness.or_else(|| probe_values().into_iter().find(|v| !reference.is_valid(v)));
        if let Some(witness) = witness {
            let detail =
                "the generator says accepts-everything, but the reference rejects this".to_owned();
            Failure::push(failures, "false-accepts-everything", Some(&witness), detail);
        }
    }
    drawn
}
