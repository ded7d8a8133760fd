//! Capturing a server's tools through a real client: the typed result and the flow (discover,
//! run once behind the tap, map names back, account for every listed tool, find the culprit of a
//! listing the client lost as a whole).

use super::discover::{Installation, discover};
use super::driver::{self, Culprit, Failed, Outcome};
use super::names;
use super::process::tail;
use super::scratch::{Scratch, unique};
use super::spec::{CapturedTool, LostTool, ReasonSource, ServerSpec, SubsetServer};
use super::tap::{Handshake, Tap, Transcript};
use super::{RealClient, RealError};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How to capture.
#[derive(Clone)]
pub struct CaptureOptions {
    /// The deadline of one client run (bisection runs get the same each).
    pub timeout: Duration,
    /// The clients directory to search first (see [`super::discover()`]).
    pub clients_dir: Option<PathBuf>,
    /// Where throwaway directories go (default: the system temp dir).
    pub scratch_root: Option<PathBuf>,
    /// Keep the throwaway directories (to debug a client's configuration and logs).
    pub keep_scratch: bool,
    /// Extra variables for the client process itself.
    pub client_env: BTreeMap<String, String>,
    /// Serves tool subsets, enabling bisection and the re-run without culprits.
    pub subset_server: Option<SubsetServer>,
    /// The most extra runs one capture may spend on bisection.
    pub max_probes: usize,
    /// Run only the pinned version ([`RealClient::pinned_version`]): another version found is
    /// [`CaptureStatus::WrongVersion`] and is not run.
    pub pin: bool,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            clients_dir: None,
            scratch_root: None,
            keep_scratch: false,
            client_env: BTreeMap::new(),
            subset_server: None,
            max_probes: 40,
            pin: false,
        }
    }
}

impl fmt::Debug for CaptureOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureOptions")
            .field("timeout", &self.timeout)
            .field("clients_dir", &self.clients_dir)
            .field("scratch_root", &self.scratch_root)
            .field("keep_scratch", &self.keep_scratch)
            .field("client_env", &self.client_env)
            .field("subset_server", &self.subset_server.as_ref().map(|_| "set"))
            .field("max_probes", &self.max_probes)
            .field("pin", &self.pin)
            .finish()
    }
}

/// Whether the capture worked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", rename_all_fields = "camelCase", tag = "status")]
#[non_exhaustive]
pub enum CaptureStatus {
    /// The client ran and its rendering was read (possibly with every tool lost: see
    /// [`Capture::listing_failure`]).
    Captured,
    /// The client is not installed.
    NotInstalled {
        /// How to install it.
        install_hint: String,
    },
    /// With [`CaptureOptions::pin`]: the client found is not the pinned version; it was not run.
    WrongVersion {
        /// The version found (`None` when it could not be read).
        found: Option<String>,
        /// The executable found.
        program: PathBuf,
        /// How to install the pinned version.
        install_hint: String,
    },
    /// The client could not be run or produced nothing readable.
    Broken {
        /// What went wrong.
        reason: String,
        /// The end of its stderr.
        stderr_tail: String,
    },
}

/// The client lost the whole listing (or, for mcpo, refused to start) because of some tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingFailure {
    /// What the client said about the listing as a whole.
    pub reason: String,
    /// Where that comes from.
    pub source: ReasonSource,
    /// The tools that cause it, when found (from the client's log, or by bisection).
    pub culprits: Vec<LostTool>,
    /// With the culprits left out: what the client exposes of the other tools (filled when a
    /// [`SubsetServer`] was given).
    pub others: Option<Vec<CapturedTool>>,
    /// With the culprits left out: what it still loses.
    pub others_lost: Vec<LostTool>,
    /// How many extra client runs bisection and the re-run took.
    pub probes: usize,
}

/// What one client made of one server's tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    /// The client that made the capture.
    pub client: RealClient,
    /// Its version, when known.
    pub version: Option<String>,
    /// The executable that ran (or was found), when one was found.
    pub program: Option<PathBuf>,
    /// Whether it worked.
    #[serde(flatten)]
    pub status: CaptureStatus,
    /// The tools the client exposes, in the client's order.
    pub tools: Vec<CapturedTool>,
    /// The listed tools it does not expose, with reasons.
    pub lost: Vec<LostTool>,
    /// Set when the client lost every tool because of some of them.
    pub listing_failure: Option<ListingFailure>,
    /// What the client declared in `initialize`.
    pub handshake: Option<Handshake>,
    /// What the server listed to this client (after this client's handshake), as sent.
    pub server_tools: Option<Vec<Value>>,
    /// The raw captured document: the provider request body (agent CLIs), the `openapi.json`
    /// (mcpo) or the CLI's JSON output (Inspector); `null` when there is none (mcpo refused to
    /// start, or the capture is not [`CaptureStatus::Captured`]).
    pub request: Value,
    /// Other things worth knowing (log lines, cut output).
    pub notes: Vec<String>,
    /// Wall time, bisection included.
    #[serde(with = "millis")]
    pub elapsed: Duration,
}

mod millis {
    use serde::Serializer;
    use std::time::Duration;

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

impl Capture {
    fn empty(
        client: RealClient,
        version: Option<String>,
        status: CaptureStatus,
        elapsed: Duration,
    ) -> Self {
        Self {
            client,
            version,
            program: None,
            status,
            tools: Vec::new(),
            lost: Vec::new(),
            listing_failure: None,
            handshake: None,
            server_tools: None,
            request: Value::Null,
            notes: Vec::new(),
            elapsed,
        }
    }

    /// Whether the client ran and was read.
    #[must_use]
    pub fn is_captured(&self) -> bool {
        self.status == CaptureStatus::Captured
    }

    /// The exposed tool the server listed as `server_name`.
    #[must_use]
    pub fn tool(&self, server_name: &str) -> Option<&CapturedTool> {
        self.tools.iter().find(|t| t.server_name.as_deref() == Some(server_name))
    }

    /// The lost tool listed as `name` (among [`Self::lost`] and the listing failure's culprits).
    #[must_use]
    pub fn lost_tool(&self, name: &str) -> Option<&LostTool> {
        self.listing_failure
            .iter()
            .flat_map(|f| &f.culprits)
            .chain(&self.lost)
            .find(|l| l.name == name)
    }
}

/// Captures `spec`'s tools through `client`. Never panics and never hangs past the deadlines: a
/// missing client gives [`CaptureStatus::NotInstalled`], a failure [`CaptureStatus::Broken`].
#[must_use]
pub fn capture(client: RealClient, spec: &ServerSpec, options: &CaptureOptions) -> Capture {
    let started = Instant::now();
    let install = match discover(client, options.clients_dir.as_deref()) {
        Ok(install) => install,
        Err(e) => {
            let hint = match &e {
                RealError::NotInstalled { .. } => e.to_string(),
                _ => client.install_hint(),
            };
            return Capture::empty(
                client,
                None,
                CaptureStatus::NotInstalled { install_hint: hint },
                started.elapsed(),
            );
        }
    };
    if options.pin && !install.is_pinned() {
        let mut c = Capture::empty(
            client,
            install.version.clone(),
            CaptureStatus::WrongVersion {
                found: install.version.clone(),
                program: install.program.clone(),
                install_hint: client.install_hint(),
            },
            started.elapsed(),
        );
        c.program = Some(install.program);
        return c;
    }
    let mut result = capture_with(&install, spec, options);
    result.elapsed = started.elapsed();
    result
}

/// Captures through every client in `clients`, all at once (one thread each), in their order.
#[must_use]
pub fn capture_all(
    clients: &[RealClient],
    spec: &ServerSpec,
    options: &CaptureOptions,
) -> Vec<Capture> {
    std::thread::scope(|s| {
        let handles: Vec<_> =
            clients.iter().map(|&c| s.spawn(move || capture(c, spec, options))).collect();
        handles
            .into_iter()
            .zip(clients)
            .map(|(h, &c)| {
                h.join().unwrap_or_else(|_| {
                    Capture::empty(
                        c,
                        None,
                        CaptureStatus::Broken {
                            reason: "the capture thread panicked".into(),
                            stderr_tail: String::new(),
                        },
                        Duration::ZERO,
                    )
                })
            })
            .collect()
    })
}

/// [`capture`] with an installation already found.
#[must_use]
pub fn capture_with(
    install: &Installation,
    spec: &ServerSpec,
    options: &CaptureOptions,
) -> Capture {
    let started = Instant::now();
    let client = install.client;
    let broken = |failed: Failed, elapsed| {
        let mut c = Capture::empty(
            client,
            install.version.clone(),
            CaptureStatus::Broken {
                reason: failed.error.to_string(),
                stderr_tail: tail(&failed.stderr, 20),
            },
            elapsed,
        );
        c.program = Some(install.program.clone());
        c.handshake = failed.transcript.as_ref().and_then(|t| t.handshake.clone());
        c.server_tools = failed.transcript.and_then(|t| t.listed);
        c
    };
    let mut single = match run_once(install, spec, options) {
        Ok(single) => single,
        Err(failed) => return broken(failed, started.elapsed()),
    };
    // A client that shows none of the tools without a word may have asked its model before the
    // server was ready (a start-up race under load): one more run tells a race from a loss.
    if single.failure.as_ref().is_some_and(|f| f.source == ReasonSource::Silent)
        && let Ok(mut again) = run_once(install, spec, options)
        && again.failure.is_none()
    {
        again.notes.push(
            "a first run showed the model none of the tools without a word; this second run \
             showed them (a start-up race, not a loss)"
                .into(),
        );
        single = again;
    }
    // A lost listing is about the schemas only when the server did list them.
    if let (Some(loss), None) = (&single.failure, &single.transcript.listed) {
        let answered = if single.transcript.initialized { "answered" } else { "did not answer" };
        let error = RealError::NoOutput {
            client,
            reason: format!(
                "{} (the server {answered} initialize and never answered tools/list)",
                loss.reason
            ),
        };
        let mut failed = Failed::from(error);
        failed.transcript = Some(Box::new(single.transcript));
        return broken(failed, started.elapsed());
    }
    let mut capture = Capture {
        client,
        version: install.version.clone(),
        program: Some(install.program.clone()),
        status: CaptureStatus::Captured,
        tools: single.tools,
        lost: single.lost,
        listing_failure: None,
        handshake: single.transcript.handshake.clone(),
        server_tools: single.transcript.listed.clone(),
        request: single.outcome_request,
        notes: single.notes,
        elapsed: Duration::ZERO,
    };
    if let Some(loss) = single.failure {
        let failure = explain(install, options, &capture, loss);
        // Every other listed tool went down with the listing.
        let culprits: BTreeSet<&str> = failure.culprits.iter().map(|c| c.name.as_str()).collect();
        let exposed: BTreeSet<&str> =
            capture.tools.iter().filter_map(|t| t.server_name.as_deref()).collect();
        let mut lost = Vec::new();
        for tool in capture.server_tools.iter().flatten() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
            if culprits.contains(name)
                || exposed.contains(name)
                || capture.lost.iter().any(|l| l.name == name)
            {
                continue;
            }
            lost.push(LostTool {
                name: name.to_owned(),
                reason: format!("lost with the whole listing: {}", failure.reason),
                source: failure.source,
            });
        }
        capture.lost.extend(lost);
        capture.listing_failure = Some(failure);
    }
    capture.elapsed = started.elapsed();
    capture
}

/// One run, interpreted: tools mapped back, every listed tool accounted for.
struct Single {
    tools: Vec<CapturedTool>,
    lost: Vec<LostTool>,
    failure: Option<driver::ListingLoss>,
    transcript: Transcript,
    outcome_request: Value,
    notes: Vec<String>,
}

/// One client run's throwaway directory, capture marker and tap, with the server behind the tap.
pub(crate) struct Prepared {
    scratch: Scratch,
    marker: String,
    pub(crate) tap: Tap,
    wrapped: ServerSpec,
}

impl Prepared {
    /// Checks `spec`, makes the scratch directory and puts the server behind the tap.
    pub(crate) fn new(
        install: &Installation,
        spec: &ServerSpec,
        options: &CaptureOptions,
    ) -> Result<Self, Failed> {
        spec.check()?;
        let root = options.scratch_root.clone().unwrap_or_else(std::env::temp_dir);
        let scratch = Scratch::new(&root, install.client.as_str(), options.keep_scratch)?;
        let marker = unique();
        let mut marked = spec.clone();
        marked.env.insert(super::process::MARKER_VAR.to_owned(), marker.clone());
        let (tap, wrapped) = Tap::wrap(&marked, &scratch.dir("tap")?)?;
        Ok(Self { scratch, marker, tap, wrapped })
    }

    /// What a driver needs for one run, with a deadline `options.timeout` from now.
    pub(crate) fn run<'a>(
        &'a self,
        install: &'a Installation,
        options: &'a CaptureOptions,
    ) -> driver::Run<'a> {
        driver::Run {
            install,
            server: &self.wrapped,
            scratch: &self.scratch,
            marker: &self.marker,
            timeout: options.timeout,
            deadline: Instant::now() + options.timeout,
            client_env: &options.client_env,
        }
    }
}

fn run_once(
    install: &Installation,
    spec: &ServerSpec,
    options: &CaptureOptions,
) -> Result<Single, Failed> {
    let prepared = Prepared::new(install, spec, options)?;
    let outcome = driver::run(&prepared.run(install, options)).map_err(|mut f| {
        f.transcript = Some(Box::new(prepared.tap.read()));
        f
    })?;
    let transcript = prepared.tap.read();
    Ok(interpret(install.client, outcome, transcript))
}

/// Maps names back and accounts for every listed tool.
fn interpret(client: RealClient, outcome: Outcome, transcript: Transcript) -> Single {
    let Outcome { request, mut tools, mut lost, loss, mut notes } = outcome;
    let listed_names: Vec<String> = transcript
        .listed
        .iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let listed: Vec<&str> = listed_names.iter().map(String::as_str).collect();
    for tool in &mut tools {
        if tool.server_name.is_none() {
            tool.server_name = names::map_back(client, &tool.shown_name, &listed);
        }
    }
    for l in &mut lost {
        // Clients name skipped tools by the shown name sometimes; map when that is the case.
        if !listed.contains(&l.name.as_str())
            && let Some(name) = names::map_back(client, &l.name, &listed)
        {
            l.name = name;
        }
    }
    let exposed = tools.iter().filter(|t| t.server_name.is_some()).count();
    let mut failure = loss;
    if failure.is_none() && exposed == 0 && lost.is_empty() && !listed.is_empty() {
        failure = Some(driver::ListingLoss {
            reason: format!(
                "the server listed {} tools and the client exposes none of them without saying why",
                listed.len()
            ),
            source: ReasonSource::Silent,
            culprits: Vec::new(),
        });
    }
    if transcript.listed.is_none() {
        notes.push(
            "the server's tools/list answer was not seen on the wire (no listing to compare with)"
                .into(),
        );
    } else {
        let accounted: BTreeSet<String> = tools
            .iter()
            .filter_map(|t| t.server_name.clone())
            .chain(lost.iter().map(|l| l.name.clone()))
            .collect();
        if failure.is_none() {
            for name in &listed {
                if !accounted.contains(*name) {
                    lost.push(LostTool {
                        name: (*name).to_owned(),
                        reason: driver::silent_reason(client, name).unwrap_or_else(|| {
                            "the server listed it; nothing the client printed or logged \
                             mentions it"
                                .into()
                        }),
                        source: ReasonSource::Silent,
                    });
                }
            }
        }
    }
    let unmapped: Vec<&str> =
        tools.iter().filter(|t| t.server_name.is_none()).map(|t| t.shown_name.as_str()).collect();
    if !unmapped.is_empty() && transcript.listed.is_some() {
        notes
            .push(format!("shown names not mapped back to a listed tool: {}", unmapped.join(", ")));
    }
    Single { tools, lost, failure, transcript, outcome_request: request, notes }
}

/// Names the culprits of a lost listing (from the log, else by bisection) and, when a subset
/// server is given, captures the other tools without them.
fn explain(
    install: &Installation,
    options: &CaptureOptions,
    capture: &Capture,
    loss: driver::ListingLoss,
) -> ListingFailure {
    let listed = capture.server_tools.clone().unwrap_or_default();
    let name_of = |i: usize| {
        listed.get(i).and_then(|t| t.get("name")).and_then(Value::as_str).map(str::to_owned)
    };
    let mut culprits: Vec<LostTool> = Vec::new();
    for c in &loss.culprits {
        let name = match c {
            Culprit { name: Some(n), .. } => Some(n.clone()),
            Culprit { index: Some(i), .. } => name_of(*i),
            _ => None,
        };
        if let Some(name) = name {
            match culprits.iter_mut().find(|l| l.name == name) {
                Some(existing) => {
                    existing.reason.push_str("; ");
                    existing.reason.push_str(&c.reason);
                }
                None => {
                    culprits.push(LostTool { name, reason: c.reason.clone(), source: loss.source })
                }
            }
        }
    }
    let mut failure = ListingFailure {
        reason: loss.reason,
        source: loss.source,
        culprits,
        others: None,
        others_lost: Vec::new(),
        probes: 0,
    };
    let Some(subset) = options.subset_server.as_ref() else { return failure };
    if listed.is_empty() {
        return failure;
    }
    let mut probe_options = options.clone();
    probe_options.subset_server = None;
    let fails = |tools: &[Value], probes: &mut usize| -> Option<Option<String>> {
        *probes += 1;
        let spec = subset(tools).ok()?;
        let single = run_once(install, &spec, &probe_options).ok()?;
        Some(single.failure.map(|f| f.reason))
    };
    if failure.culprits.is_empty() {
        let mut probes = 0;
        let mut rest: Vec<Value> = listed.clone();
        let mut reason = failure.reason.clone();
        // Invariant: `rest` makes the client lose the listing, with `reason`.
        'search: while !rest.is_empty() && probes < options.max_probes {
            let (mut lo, mut hi) = (1, rest.len());
            let mut hi_reason = reason.clone();
            while lo < hi {
                if probes >= options.max_probes {
                    break 'search;
                }
                let mid = (lo + hi) / 2;
                match fails(&rest[..mid], &mut probes) {
                    Some(Some(r)) => {
                        hi = mid;
                        hi_reason = r;
                    }
                    Some(None) => lo = mid + 1,
                    None => break 'search,
                }
            }
            let culprit = rest.remove(lo - 1);
            let name =
                culprit.get("name").and_then(Value::as_str).unwrap_or("(unnamed)").to_owned();
            failure.culprits.push(LostTool {
                name,
                reason: hi_reason,
                source: ReasonSource::Bisection,
            });
            if rest.is_empty() || probes >= options.max_probes {
                break;
            }
            match fails(&rest, &mut probes) {
                Some(Some(r)) => reason = r,
                _ => break,
            }
        }
        failure.probes = probes;
    }
    if failure.culprits.is_empty() {
        return failure;
    }
    let culprit_names: BTreeSet<&str> = failure.culprits.iter().map(|c| c.name.as_str()).collect();
    let others: Vec<Value> = listed
        .iter()
        .filter(|t| {
            !t.get("name").and_then(Value::as_str).is_some_and(|n| culprit_names.contains(n))
        })
        .cloned()
        .collect();
    failure.probes += 1;
    if let Ok(spec) = subset(&others)
        && let Ok(single) = run_once(install, &spec, &probe_options)
        && single.failure.is_none()
    {
        failure.others = Some(single.tools);
        failure.others_lost = single.lost;
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_spec_is_refused_before_anything_runs() {
        assert!(ServerSpec::new("").check().is_err());
        assert!(ServerSpec::new("x").env("A=B", "c").check().is_err());
        assert!(ServerSpec::new("x").arg("a\0b").check().is_err());
        assert!(ServerSpec::new("x").env("A", "b").arg("c").check().is_ok());
    }

    #[test]
    fn a_missing_client_is_not_installed_with_the_install_command() {
        let empty = std::env::temp_dir().join(format!("mcp-fuzz-none-{}", unique()));
        std::fs::create_dir_all(&empty).expect("dir");
        let options =
            CaptureOptions { clients_dir: Some(empty.clone()), ..CaptureOptions::default() };
        let c = capture(RealClient::Mcpo, &ServerSpec::new("/bin/true"), &options);
        // On a machine with mcpo on PATH or in target/clients this runs it; either way no panic.
        if let CaptureStatus::NotInstalled { install_hint } = &c.status {
            assert!(install_hint.contains("scripts/install-clients.sh"), "{install_hint}");
            assert!(c.tools.is_empty());
        }
        let _ = std::fs::remove_dir(&empty);
    }
}
