//! A client process in its own process group, with its output collected and a guaranteed end.
//!
//! See `DESIGN.md` next to this file: the group (a [`mcp_fuzz_process::Group`], registered like
//! the engine's servers, so the binary's panic hook reaches it) is killed with `SIGKILL` whenever
//! the [`Proc`] ends (finish, error, panic unwinding through `Drop`), and a sweep kills every
//! process that carries the capture's environment marker, which also reaches helpers that left
//! the group.

use mcp_fuzz_process::Group;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Why: a client's JSON output or debug log is a few MiB at most; past this the rest is dropped
/// (and the capture says the output was cut) instead of growing without bound.
const MAX_OUTPUT: usize = 32 << 20;
/// Why: how often a deadline wait looks at the child; small against the 1-5 s a capture takes.
const POLL: Duration = Duration::from_millis(10);
/// Why: once the group is killed, the pipes close at once unless a helper outside the group holds
/// them; the sweep kills those, and this bounds the wait for the reader threads either way.
const DRAIN: Duration = Duration::from_secs(2);

/// Bytes read from one pipe by a background thread.
struct Collector {
    buf: Arc<Mutex<Vec<u8>>>,
    done: Receiver<()>,
}

impl Collector {
    fn start(mut pipe: impl Read + Send + 'static) -> Self {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let sink = Arc::clone(&buf);
        thread::spawn(move || {
            let mut chunk = [0_u8; 16 * 1024];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut b = sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        let room = MAX_OUTPUT.saturating_sub(b.len());
                        b.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }
            let _ = tx.send(());
        });
        Self { buf, done }
    }

    /// What was read so far.
    fn snapshot(&self) -> Vec<u8> {
        self.buf.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Waits (bounded) for the pipe to close, then returns everything read.
    fn finish(self) -> Vec<u8> {
        let _ = self.done.recv_timeout(DRAIN);
        self.snapshot()
    }
}

/// The environment variable that marks every process of one capture (client, server and their
/// helpers) with a value unique to the capture: how leftovers are found and killed.
pub const MARKER_VAR: &str = "MCP_FUZZ_CAPTURE";

/// Set by [`stop_all`]: no client is started any more.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Kills every client this process started (each capture's marker begins with our pid) and
/// everything they started, removes the captures' throwaway directories, and refuses to start
/// any client afterwards. For Ctrl-C, SIGTERM and panic hooks: capture threads that are not
/// joined do not unwind, so their `Drop`s never run.
pub fn stop_all() {
    STOPPING.store(true, Ordering::SeqCst);
    let own = format!("{}-", std::process::id());
    let prefixes = [format!("{MARKER_VAR}={own}"), format!("{MARKER_VAR}=version-{own}")];
    for _ in 0..3 {
        let found: Vec<Pid> =
            pids_where(|entry| prefixes.iter().any(|p| entry.starts_with(p.as_bytes())));
        if found.is_empty() {
            break;
        }
        for pid in found {
            let _ = kill(pid, Signal::SIGKILL);
        }
        thread::sleep(POLL);
    }
    super::scratch::remove_all();
}

/// A running client. Dropping it kills the group and sweeps the marker.
pub(crate) struct Proc {
    child: Child,
    group: Group,
    stdout: Option<Collector>,
    stderr: Option<Collector>,
    marker: String,
    status: Option<ExitStatus>,
}

/// What a finished client left.
#[derive(Debug)]
pub(crate) struct Output {
    /// Its exit status, or `None` when it was killed before exiting.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Proc {
    /// Spawns `command` with stdin from `/dev/null`, stdout and stderr collected, in a new
    /// process group. `marker` must already be in the command's environment as
    /// `MCP_FUZZ_CAPTURE=<marker>`.
    pub(crate) fn spawn(mut command: Command, marker: &str) -> std::io::Result<Self> {
        if STOPPING.load(Ordering::SeqCst) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "mcp-fuzz is stopping: no client is started",
            ));
        }
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        mcp_fuzz_process::in_own_group(&mut command);
        let mut child = command.spawn()?;
        let group = Group::led_by(child.id());
        let stdout = child.stdout.take().map(Collector::start);
        let stderr = child.stderr.take().map(Collector::start);
        Ok(Self { child, group, stdout, stderr, marker: marker.to_owned(), status: None })
    }

    /// Waits for the client to exit until `deadline`; `None` when it is still running.
    pub(crate) fn wait_until(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            thread::sleep(POLL.min(deadline - now));
        }
    }

    /// The exit status if the client has exited.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// stderr so far (the client is still running).
    pub(crate) fn stderr_so_far(&self) -> Vec<u8> {
        self.stderr.as_ref().map(Collector::snapshot).unwrap_or_default()
    }

    /// Kills the group (whether or not the leader exited), sweeps the marker and returns the
    /// output.
    pub(crate) fn finish(mut self) -> Output {
        self.terminate();
        Output {
            status: self.status,
            stdout: self.stdout.take().map(Collector::finish).unwrap_or_default(),
            stderr: self.stderr.take().map(Collector::finish).unwrap_or_default(),
        }
    }

    fn terminate(&mut self) {
        // The group outlives its leader when helpers remain: kill it either way (once: `finish`
        // and then `Drop` both come here).
        self.group.kill();
        if self.status.is_none() {
            // SIGKILL cannot be ignored: the wait returns at once.
            self.status = self.child.wait().ok().filter(|s| s.code().is_some());
        }
        sweep(&self.marker);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Kills every process whose environment holds `MCP_FUZZ_CAPTURE=<marker>`: helpers a client
/// started in another process group or session (MCP servers, re-spawned node processes). Returns
/// how many were signalled. Linux reads `/proc`; elsewhere nothing is swept.
pub(crate) fn sweep(marker: &str) -> usize {
    let needle = format!("{MARKER_VAR}={marker}");
    let mut killed = 0;
    // A dying parent can fork once more between two passes; three passes settle it.
    for _ in 0..3 {
        let found = marked_pids(&needle);
        if found.is_empty() {
            break;
        }
        for pid in found {
            if kill(pid, Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        thread::sleep(POLL);
    }
    killed
}

/// The pids (other than ours) whose environment contains the exact entry `needle`.
pub(crate) fn marked_pids(needle: &str) -> Vec<Pid> {
    pids_where(|entry| entry == needle.as_bytes())
}

/// The pids (other than ours) with an environment entry for which `matches` holds.
fn pids_where(matches: impl Fn(&[u8]) -> bool) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let own = std::process::id();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        // Unreadable (another user's process, or it just exited): not ours.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|b| *b == 0).any(&matches)
            && let Ok(raw) = i32::try_from(pid)
        {
            found.push(Pid::from_raw(raw));
        }
    }
    found
}

/// The last `lines` lines of `bytes`, as text.
pub(crate) fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(command: &str, marker: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", command]).env_clear().env("PATH", "/usr/bin:/bin").env(MARKER_VAR, marker);
        c
    }

    #[test]
    fn output_and_status_are_collected() {
        let marker = format!("test-out-{}", std::process::id());
        let mut p = Proc::spawn(marked("echo out; echo err >&2; exit 3", &marker), &marker)
            .expect("sh starts");
        let status = p.wait_until(Instant::now() + Duration::from_secs(10)).expect("exits");
        assert_eq!(status.code(), Some(3));
        let out = p.finish();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_hung_group_and_a_helper_in_its_own_session_are_killed() {
        let marker = format!("test-hang-{}", std::process::id());
        // `setsid` puts the helper outside the group: only the marker sweep reaches it.
        let script = "setsid sleep 300 & sleep 300";
        let mut p = Proc::spawn(marked(script, &marker), &marker).expect("sh starts");
        let started = Instant::now();
        assert!(p.wait_until(Instant::now() + Duration::from_millis(300)).is_none());
        let needle = format!("{MARKER_VAR}={marker}");
        assert!(!marked_pids(&needle).is_empty(), "the group is running");
        let out = p.finish();
        assert!(out.status.is_none(), "killed, not exited");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(marked_pids(&needle).is_empty(), "nothing carrying the marker is left");
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail(b"a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail(b"", 2), "");
    }
}
