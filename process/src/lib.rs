//! # mcp-fuzz-process
//!
//! The process groups mcp-fuzz starts: the stdio servers of the engine (async) and the real
//! clients (std threads) alike. Synchronous and small, so both stand on it.
//!
//! - **Every child leads its own group.** A server or a client forks helpers (a shell's
//!   children, a CLI that re-spawns itself, the server a client starts); killing only the child
//!   would leave them running. So every child is put by [`in_own_group`] into a new process
//!   group led by itself (its id is the child's pid), and it ends with a `SIGKILL` to that whole
//!   group. A group of its own also keeps the terminal's Ctrl-C away from the child: mcp-fuzz
//!   decides when it ends.
//! - **A [`Group`] is killed once, and only while registered.** [`Group::led_by`] registers the
//!   group of a child just spawned; [`Group::kill`] (or dropping the `Group`) takes it out of the
//!   registry and signals it. A group already killed is never signalled again, since its number
//!   may belong to another process by then.
//! - **[`kill_all`] for the paths that drop nothing.** A panic that does not unwind, a thread that
//!   is never joined, a signal: the binary's panic hook calls `kill_all`, which empties the
//!   registry and kills every group still in it.
//!
//! ```
//! use std::os::unix::process::ExitStatusExt;
//! use std::process::Command;
//!
//! let mut command = Command::new("sleep");
//! command.arg("30");
//! mcp_fuzz_process::in_own_group(&mut command);
//! let mut child = command.spawn().expect("sleep starts");
//! let group = mcp_fuzz_process::Group::led_by(child.id());
//! assert!(group.kill(), "the first kill signals the group");
//! assert!(!group.kill(), "a group is signalled once");
//! assert_eq!(child.wait().expect("the child is reaped").signal(), Some(9));
//! ```

#![deny(missing_docs)]

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Makes the child of `command` lead a new process group of its own (`process_group(0)`): the
/// rule for every process mcp-fuzz starts, so that [`Group::kill`] reaches whatever it forks.
///
/// An async caller configures a std `Command` here and converts it
/// (`tokio::process::Command::from`), which keeps the setting.
pub fn in_own_group(command: &mut Command) -> &mut Command {
    command.process_group(0)
}

/// Process groups started by this process and not killed yet.
static LIVE: Mutex<Vec<Pid>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<Pid>> {
    // A panic while the lock was held must not stop the clean-up that follows it.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A process group this process started, led by a child spawned through [`in_own_group`].
///
/// Registered from [`Group::led_by`] until the first [`Group::kill`], [`kill_all`] or drop,
/// whichever comes first; only that one sends a signal. Share it (an `Arc`) rather than
/// registering the same child twice.
#[derive(Debug)]
pub struct Group {
    /// `None` for a number that is not a group to signal (0 and 1, or past `i32`).
    id: Option<Pid>,
}

impl Group {
    /// Registers the group led by the child with pid `leader`, just spawned through
    /// [`in_own_group`] (its group id is its pid).
    ///
    /// 0 and 1 are never registered: `killpg` would take 0 for this process's own group and 1 is
    /// init's. Such a `Group` kills nothing.
    #[must_use]
    pub fn led_by(leader: u32) -> Self {
        let id = i32::try_from(leader).ok().filter(|&p| p > 1).map(Pid::from_raw);
        if let Some(id) = id {
            live().push(id);
        }
        Self { id }
    }

    /// The group's id (its leader's pid), when it is one to signal.
    #[must_use]
    pub fn id(&self) -> Option<u32> {
        self.id.and_then(|p| u32::try_from(p.as_raw()).ok())
    }

    /// `SIGKILL` to the whole group (the leader and whatever it forked), if it is still
    /// registered; it is taken out of the registry, so no later call signals it again. True
    /// when this call sent the signal. A group whose members have all exited is normal here
    /// (`ESRCH`, ignored).
    pub fn kill(&self) -> bool {
        let Some(id) = self.id else { return false };
        let registered = {
            let mut groups = live();
            // One entry per registration: a number reused after its group ended stays
            // registered for its new owner.
            groups.iter().position(|&g| g == id).map(|i| groups.swap_remove(i)).is_some()
        };
        if registered {
            signal(id);
        }
        registered
    }
}

impl Drop for Group {
    /// A group ends with its handle: no path that drops it (an error, a panic unwinding) leaves
    /// its processes behind.
    fn drop(&mut self) {
        self.kill();
    }
}

/// `SIGKILL` to every group still registered, and empties the registry (their [`Group`]s then
/// kill nothing). For panic hooks and signal handlers: dropping a `Group` kills it, but a panic
/// that does not unwind (a panic while panicking, `panic = "abort"`, `std::process::exit`, a
/// thread that is never joined) drops nothing.
pub fn kill_all() {
    let groups = std::mem::take(&mut *live());
    for g in groups {
        signal(g);
    }
}

fn signal(group: Pid) {
    // ESRCH (every member already gone) is the normal end of a group whose leader exited.
    let _ = killpg(group, Signal::SIGKILL);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Child, Stdio};
    use std::sync::mpsc;
    use std::thread;
    use std::time::{Duration, Instant};

    /// The registry is the process's: tests that register groups run one at a time, so that
    /// `kill_all` in one does not take another's groups.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `sh -c script` leading a group of its own, and its group.
    fn start(script: &str) -> (Child, Group) {
        let mut command = Command::new("/bin/sh");
        command.args(["-c", script]).stdin(Stdio::null()).stdout(Stdio::piped());
        in_own_group(&mut command);
        let child = command.spawn().expect("sh starts");
        let group = Group::led_by(child.id());
        (child, group)
    }

    /// Whether `child` ends by `SIGKILL` within a few seconds (SIGKILL is immediate).
    fn killed(child: &mut Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status.signal() == Some(9);
            }
            thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_group_with_a_grandchild_is_killed_whole() {
        let _serial = serial();
        // The background `sleep` is a grandchild holding stdout: the pipe closes only when it
        // dies too, which killing the leader alone would not do.
        let (mut child, group) = start("sleep 300 & sleep 300");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let (tx, closed) = mpsc::channel();
        thread::spawn(move || {
            let _ = stdout.read_to_end(&mut Vec::new());
            let _ = tx.send(());
        });
        assert!(closed.recv_timeout(Duration::from_millis(200)).is_err(), "the group runs");
        assert!(group.kill());
        assert!(killed(&mut child), "the leader is killed");
        closed.recv_timeout(Duration::from_secs(5)).expect("every holder of stdout is dead");
    }

    #[test]
    fn killing_twice_signals_once() {
        let _serial = serial();
        let (mut child, group) = start("sleep 300");
        assert!(group.kill(), "the first kill signals");
        assert!(!group.kill(), "the second does not");
        assert!(killed(&mut child));
        assert!(live().is_empty(), "a killed group is out of the registry");
    }

    #[test]
    fn dropping_a_group_kills_it() {
        let _serial = serial();
        let (mut child, group) = start("sleep 300");
        drop(group);
        assert!(killed(&mut child));
        assert!(live().is_empty());
    }

    #[test]
    fn kill_all_empties_the_registry() {
        let _serial = serial();
        let (mut one, first) = start("sleep 300");
        let (mut two, second) = start("sleep 300");
        assert_eq!(live().len(), 2);
        kill_all();
        assert!(live().is_empty());
        assert!(killed(&mut one) && killed(&mut two), "every registered group is killed");
        assert!(!first.kill() && !second.kill(), "a group emptied out is not signalled again");
    }
}
