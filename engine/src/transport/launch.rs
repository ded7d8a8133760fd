//! HTTP servers mcp-fuzz starts itself (`--http URL -- command`): the command runs in a process
//! group of its own like a stdio server (the same spawn, environment and exit watch), its
//! stdout and stderr are drained into one tail for reports, and the connection is made once the
//! URL's port accepts a TCP connection. `{port}` in the URL, the command or an `--env` value is a
//! free loopback port picked for each process (also passed as `PORT`), so that processes can
//! run side by side (restarts, warm spares, `--jobs`); a fixed port serves one process at a
//! time.

use super::{ConnectError, ExitInfo, Spawned, drain, spawn};
use mcp_fuzz_model::target::{Launch, PORT_PLACEHOLDER};
use mcp_fuzz_process::Group;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// A launched server whose port is open.
pub(crate) struct Launched {
    /// The URL with its port filled in.
    pub url: String,
    /// What is left of the start-up time for the handshake.
    pub remaining: Duration,
    /// Its stdin, held open (some servers stop at end of input).
    pub stdin: tokio::process::ChildStdin,
    pub stderr: Arc<Mutex<VecDeque<String>>>,
    pub exit_rx: watch::Receiver<Option<ExitInfo>>,
    pub kill_tx: oneshot::Sender<()>,
    pub group: Arc<Group>,
}

/// Host names that reach this machine only.
const LOOPBACK: [&str; 4] = ["127.0.0.1", "localhost", "[::1]", "::1"];

/// How long a fixed port may stay taken by the process before (killed, its socket closing).
const PORT_RELEASE: Duration = Duration::from_secs(2);

/// Whether `url` may be the endpoint of a command mcp-fuzz starts: an `http` or `https` URL on
/// a loopback host (a command started here that is reached elsewhere would fuzz another
/// server than the one started).
///
/// # Errors
/// What is wrong, and what to give instead.
pub fn check(url: &str, launch: &Launch) -> Result<(), String> {
    if wants_port(url, launch) && !url.contains(PORT_PLACEHOLDER) {
        return Err(format!(
            "`{PORT_PLACEHOLDER}` is in the server command or its environment but not in --http              `{url}`: put it in the URL too (http://127.0.0.1:{PORT_PLACEHOLDER}/mcp), so that              mcp-fuzz reaches the port it gave the server"
        ));
    }
    let uri = parse(url)?;
    let host = uri.host().unwrap_or_default();
    if LOOPBACK.contains(&host) {
        Ok(())
    } else {
        Err(format!(
            "--http `{url}` points at `{host}`, but a server command after `--` is started on \
             this machine: give a loopback URL (such as http://127.0.0.1:{{port}}/mcp), or drop \
             the command to test a server someone else runs"
        ))
    }
}

/// `url` as a URI (with `{port}` standing for a port), scheme `http` or `https`.
fn parse(url: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = url.replace(PORT_PLACEHOLDER, "1").parse().map_err(|e| {
        format!("--http `{url}` is not a URL ({e}); give one such as http://127.0.0.1:8000/mcp")
    })?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(uri),
        _ => Err(format!("--http `{url}` is not an http:// or https:// URL with a host")),
    }
}

/// Whether the launch needs a port picked: `{port}` in the URL, the command or an env value.
fn wants_port(url: &str, launch: &Launch) -> bool {
    url.contains(PORT_PLACEHOLDER)
        || launch.command.iter().any(|w| w.contains(PORT_PLACEHOLDER))
        || launch.env.iter().any(|(_, v)| v.contains(PORT_PLACEHOLDER))
}

/// Whether a target's processes can run side by side: any but a launched server on a fixed
/// port.
#[must_use]
pub fn side_by_side(url: &str, launch: Option<&Launch>) -> bool {
    launch.is_none_or(|l| wants_port(url, l))
}

/// A loopback port nobody listens on now (the OS's pick).
fn free_port() -> Result<u16, ConnectError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| ConnectError::Invalid(format!("no free loopback port for the server: {e}")))
}

/// The `host:port` of an HTTP URL (`None` for what is not one).
pub(crate) fn endpoint(url: &str) -> Option<String> {
    parse(url).ok().map(|u| address(&u))
}

/// The `host:port` a URL's requests go to.
fn address(uri: &http::Uri) -> String {
    let host = uri.host().unwrap_or("127.0.0.1").trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

/// Whether `addr` accepts a TCP connection within a quarter of a second.
pub(crate) async fn accepts(addr: &str) -> bool {
    matches!(
        tokio::time::timeout(Duration::from_millis(250), tokio::net::TcpStream::connect(addr))
            .await,
        Ok(Ok(_))
    )
}

/// Starts `launch` for `url` and waits (within `startup_timeout`) until the URL's port accepts
/// a connection.
///
/// # Errors
/// A URL that is not loopback, a command that cannot start, a process that exits first or a
/// port that does not open in time (each with the server's last output lines).
pub(crate) async fn start(
    url: &str,
    launch: &Launch,
    startup_timeout: Duration,
    sandbox: Option<&crate::sandbox::Sandbox>,
) -> Result<Launched, ConnectError> {
    let began = Instant::now();
    check(url, launch).map_err(ConnectError::Invalid)?;
    let port = if wants_port(url, launch) { Some(free_port()?) } else { None };
    let fill = |s: &str| {
        port.map_or_else(|| s.to_owned(), |p| s.replace(PORT_PLACEHOLDER, &p.to_string()))
    };
    let url = fill(url);
    let addr = address(&parse(&url).map_err(ConnectError::Invalid)?);
    let command: Vec<String> = launch.command.iter().map(|w| fill(w)).collect();
    let mut env: Vec<(String, String)> =
        launch.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect();
    if let Some(p) = port.filter(|_| !env.iter().any(|(k, _)| k == "PORT")) {
        env.push(("PORT".into(), p.to_string()));
    }
    if port.is_none() {
        // A fixed port: the process before this one may still be closing it.
        let free_by = Instant::now() + PORT_RELEASE;
        while accepts(&addr).await && Instant::now() < free_by {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let Spawned { stdin, stdout, stderr, exit_rx, kill_tx, group } =
        spawn(&command, &env, launch.inherit_env, launch.cwd.as_ref(), sandbox)?;
    drain(stdout, &stderr);
    loop {
        let exited = exit_rx.borrow().clone();
        if let Some(info) = exited {
            tokio::time::sleep(Duration::from_millis(100)).await;
            group.kill();
            return Err(ConnectError::ExitedDuringStartup {
                status: info.to_string(),
                stderr: super::tail(&stderr),
            });
        }
        if began.elapsed() >= startup_timeout {
            group.kill();
            return Err(ConnectError::NoPort {
                addr,
                timeout: startup_timeout,
                stderr: super::tail(&stderr),
            });
        }
        if accepts(&addr).await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let remaining = startup_timeout.saturating_sub(began.elapsed()).max(Duration::from_secs(1));
    Ok(Launched { url, remaining, stdin, stderr, exit_rx, kill_tx, group })
}

/// The local addresses the processes of group `pgid` listen on at `port` (TCP, IPv4 and
/// IPv6, read from `/proc`); empty where `/proc` does not tell (another OS).
#[must_use]
pub fn listening(pgid: u32, port: u16) -> Vec<std::net::IpAddr> {
    let mut sockets = std::collections::BTreeSet::new();
    for pid in members(pgid) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                let link = link.to_string_lossy().into_owned();
                if let Some(inode) = link.strip_prefix("socket:[").and_then(|l| l.strip_suffix(']'))
                {
                    sockets.insert(inode.to_owned());
                }
            }
        }
    }
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(local), Some(state), Some(inode)) = (cols.get(1), cols.get(3), cols.get(9))
            else {
                continue;
            };
            if *state != "0A" || !sockets.contains(*inode) {
                continue;
            }
            if let Some((ip, p)) = proc_address(local)
                && p == port
            {
                found.push(ip);
            }
        }
    }
    found
}

/// The pids whose process group is `pgid`.
fn members(pgid: u32) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else { return Vec::new() };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                // pid (comm) state ppid pgrp ...: the comm may hold spaces and parentheses.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<u32>().ok())
                    == Some(pgid)
            })
        })
        .collect()
}

/// A `/proc/net/tcp{,6}` address (`0100007F:1F90`: the address's 32-bit words in host order).
fn proc_address(text: &str) -> Option<(std::net::IpAddr, u16)> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Vec<u32> = (0..ip.len() / 8)
        .map(|i| u32::from_str_radix(&ip[i * 8..i * 8 + 8], 16).map(u32::swap_bytes))
        .collect::<Result<_, _>>()
        .ok()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    let ip = match bytes.len() {
        4 => std::net::IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => std::net::IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some((ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(cmd: &[&str]) -> Launch {
        Launch {
            command: cmd.iter().map(|w| (*w).to_owned()).collect(),
            env: Vec::new(),
            inherit_env: false,
            cwd: None,
        }
    }

    #[test]
    fn only_loopback_urls_may_be_launched() {
        let s = l(&["s"]);
        assert!(check("http://127.0.0.1:{port}/mcp", &s).is_ok());
        assert!(check("http://localhost:8000/mcp", &s).is_ok());
        assert!(check("http://[::1]:8000/mcp", &s).is_ok());
        let e = check("https://example.com/mcp", &s).expect_err("remote");
        assert!(e.contains("`example.com`") && e.contains("loopback"), "{e}");
        let e = check("ftp://127.0.0.1/x", &s).expect_err("scheme");
        assert!(e.contains("http://"), "{e}");
        let e =
            check("http://127.0.0.1:8000/mcp", &l(&["s", "--port={port}"])).expect_err("no port");
        assert!(e.contains("put it in the URL"), "{e}");
    }

    #[test]
    fn addresses_carry_the_default_port_of_their_scheme() {
        let a = |u: &str| address(&parse(u).expect("url"));
        assert_eq!(a("http://127.0.0.1:8123/mcp"), "127.0.0.1:8123");
        assert_eq!(a("http://localhost/mcp"), "localhost:80");
        assert_eq!(a("https://[::1]/mcp"), "[::1]:443");
    }

    #[test]
    fn proc_net_addresses_are_read_in_host_order() {
        let (ip, port) = proc_address("0100007F:1F90").expect("v4");
        assert_eq!((ip.to_string(), port), ("127.0.0.1".to_owned(), 8080));
        let (ip, _) = proc_address("00000000:0050").expect("any");
        assert!(ip.is_unspecified());
        let (ip, _) = proc_address("00000000000000000000000001000000:0050").expect("v6");
        assert_eq!(ip.to_string(), "::1");
    }

    #[test]
    fn a_launched_process_is_seen_listening() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // This test's own process group: the test binary is one of its members.
        let pgid = nix_pgid();
        let found = listening(pgid, port);
        assert_eq!(found, [std::net::IpAddr::from([127, 0, 0, 1])], "{found:?}");
    }

    /// This process's group id, from `/proc/self/stat`.
    fn nix_pgid() -> u32 {
        let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
        let rest = stat.rsplit_once(')').expect("comm").1;
        rest.split_whitespace().nth(2).expect("pgrp").parse().expect("number")
    }

    #[test]
    fn a_fixed_port_serves_one_process_at_a_time() {
        assert!(side_by_side("http://127.0.0.1:{port}/mcp", Some(&l(&["s"]))));
        assert!(!side_by_side("http://127.0.0.1:8000/mcp", Some(&l(&["s"]))));
        assert!(side_by_side("http://127.0.0.1:8000/mcp", None));
    }
}
