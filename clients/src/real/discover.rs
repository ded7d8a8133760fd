//! Finding an installed client and its version.
//!
//! Places are searched in order: the clients directory given by the caller, then
//! `MCP_FUZZ_CLIENTS_DIR`, then `target/clients` under the current directory (each laid out by
//! `scripts/install-clients.sh`: `node/node_modules/.bin/<exe>` and `mcpo-venv/bin/mcpo`), then
//! `PATH`. The version is read from the installed package's metadata (`package.json`, the
//! `mcpo-<version>.dist-info` directory) without running the client; a client found on `PATH`
//! without readable metadata is asked `--version` (bounded by a deadline).

use super::RealClient;
use super::RealError;
use super::process::{MARKER_VAR, Proc};
use super::tap::which;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Why: `--version` of the Node CLIs takes well under a second; a client that needs longer is
/// not one we can drive within a capture's budget either.
const VERSION_TIMEOUT: Duration = Duration::from_secs(15);

/// The environment variable that names a clients directory.
pub const CLIENTS_DIR_VAR: &str = "MCP_FUZZ_CLIENTS_DIR";

/// Where an installation was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "dir")]
pub enum Origin {
    /// A clients directory laid out by `scripts/install-clients.sh`.
    ClientsDir(PathBuf),
    /// `PATH`.
    Path,
}

/// An installed client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installation {
    /// The client that was looked for.
    pub client: RealClient,
    /// The executable to run.
    pub program: PathBuf,
    /// Its version, when it could be read.
    pub version: Option<String>,
    /// Where it was found.
    pub origin: Origin,
}

impl Installation {
    /// Whether the installed version is the one pinned by `scripts/install-clients.sh`.
    #[must_use]
    pub fn is_pinned(&self) -> bool {
        self.version.as_deref() == Some(self.client.pinned_version())
    }
}

/// The clients directories searched, in order: `explicit`, then `MCP_FUZZ_CLIENTS_DIR`, then
/// `target/clients` under the current directory. A relative directory is taken from the current
/// directory and made absolute: the clients run in a scratch directory of their own.
#[must_use]
pub fn search_dirs(explicit: Option<&Path>) -> Vec<PathBuf> {
    let absolute = |d: &Path| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
    let mut dirs = Vec::new();
    if let Some(d) = explicit {
        dirs.push(absolute(d));
    }
    if let Some(d) = std::env::var_os(CLIENTS_DIR_VAR).filter(|d| !d.is_empty()) {
        dirs.push(absolute(Path::new(&d)));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd.join("target/clients"));
    }
    dirs
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where `client`'s executable sits inside a clients directory.
fn in_dir(client: RealClient, dir: &Path) -> Option<PathBuf> {
    client
        .executables()
        .iter()
        .map(|exe| match client {
            RealClient::Mcpo => dir.join("mcpo-venv/bin").join(exe),
            _ => dir.join("node/node_modules/.bin").join(exe),
        })
        .find(|p| executable(p))
}

/// Finds `client`, searching `clients_dir` first (see the module doc for the order).
///
/// # Errors
/// [`RealError::NotInstalled`] with the places searched and the install command.
pub fn discover(client: RealClient, clients_dir: Option<&Path>) -> Result<Installation, RealError> {
    let dirs = search_dirs(clients_dir);
    for dir in &dirs {
        if let Some(program) = in_dir(client, dir) {
            let version = version_in_dir(client, dir).or_else(|| version_of(client, &program));
            return Ok(Installation {
                client,
                program,
                version,
                origin: Origin::ClientsDir(dir.clone()),
            });
        }
    }
    let path = std::env::var("PATH").unwrap_or_default();
    for exe in client.executables() {
        if let Some(program) = which(exe, &path) {
            let version = version_of(client, &program);
            return Ok(Installation { client, program, version, origin: Origin::Path });
        }
    }
    let mut looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    looked.push("PATH".into());
    Err(RealError::NotInstalled { client, looked: looked.join(", "), hint: client.install_hint() })
}

/// Every client, found or not, in report order.
#[must_use]
pub fn discover_all(
    clients_dir: Option<&Path>,
) -> Vec<(RealClient, Result<Installation, RealError>)> {
    RealClient::ALL.into_iter().map(|c| (c, discover(c, clients_dir))).collect()
}

/// The version recorded by the install layout of a clients directory.
fn version_in_dir(client: RealClient, dir: &Path) -> Option<String> {
    match client.npm_package() {
        Some(package) => package_version(
            &dir.join("node/node_modules").join(package).join("package.json"),
            package,
        ),
        None => dist_info_version(&dir.join("mcpo-venv"), "mcpo"),
    }
}

/// The version of an installation found anywhere: package metadata near the executable, else
/// `--version`.
fn version_of(client: RealClient, program: &Path) -> Option<String> {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let from_metadata = match client.npm_package() {
        Some(package) => {
            real.ancestors().skip(1).find_map(|d| package_version(&d.join("package.json"), package))
        }
        // A venv's console script: `<venv>/bin/mcpo`.
        None => {
            program.parent().and_then(Path::parent).and_then(|venv| dist_info_version(venv, "mcpo"))
        }
    };
    from_metadata.or_else(|| asked_version(program))
}

/// `version` of `package.json` at `path` when its `name` is `package`.
fn package_version(path: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    (json.get("name")?.as_str()? == package)
        .then(|| json.get("version")?.as_str().map(str::to_owned))?
}

/// The version in `<venv>/lib/python*/site-packages/<dist>-<version>.dist-info`.
fn dist_info_version(venv: &Path, dist: &str) -> Option<String> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    let prefix = format!("{dist}-");
    for python in lib.flatten() {
        let Ok(site) = std::fs::read_dir(python.path().join("site-packages")) else { continue };
        for entry in site.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(version) =
                name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".dist-info"))
            {
                return Some(version.to_owned());
            }
        }
    }
    None
}

/// Runs `program --version` in a throwaway HOME and takes the first version-looking word.
fn asked_version(program: &Path) -> Option<String> {
    let home = std::env::temp_dir().join(format!(
        "mcp-fuzz-version-{}-{}",
        std::process::id(),
        super::scratch::unique()
    ));
    std::fs::create_dir_all(&home).ok()?;
    let marker = format!("version-{}", super::scratch::unique());
    let mut command = Command::new(program);
    command
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("CODEX_HOME", &home)
        .env("CLAUDE_CONFIG_DIR", &home)
        .env("DISABLE_AUTOUPDATER", "1")
        .env(MARKER_VAR, &marker);
    let found = Proc::spawn(command, &marker).ok().and_then(|mut p| {
        p.wait_until(Instant::now() + VERSION_TIMEOUT);
        let out = p.finish();
        parse_version(&String::from_utf8_lossy(&out.stdout))
    });
    let _ = std::fs::remove_dir_all(&home);
    found
}

/// The first whitespace-separated word made of digits and dots (with at least one dot).
pub(crate) fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_the_usual_outputs() {
        assert_eq!(parse_version("codex-cli 0.171.0\n").as_deref(), Some("0.171.0"));
        assert_eq!(parse_version("2.1.332 (Claude Code)").as_deref(), Some("2.1.332"));
        assert_eq!(parse_version("v20.1.0").as_deref(), Some("20.1.0"));
        assert_eq!(parse_version("no version here"), None);
    }

    #[test]
    fn a_missing_client_names_the_places_and_the_install_command() {
        let empty = std::env::temp_dir().join(format!("mcp-fuzz-empty-{}", std::process::id()));
        std::fs::create_dir_all(&empty).expect("dir");
        // Only when nothing else provides it: the test must not depend on this machine.
        if let Err(RealError::NotInstalled { looked, hint, .. }) =
            discover(RealClient::Mcpo, Some(&empty))
        {
            assert!(looked.starts_with(&empty.display().to_string()), "{looked}");
            assert!(looked.ends_with("PATH"));
            assert!(hint.contains("scripts/install-clients.sh"));
        }
        let _ = std::fs::remove_dir(&empty);
    }

    #[test]
    fn a_relative_clients_dir_is_made_absolute() {
        let dirs = search_dirs(Some(Path::new("some/clients")));
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(dirs[0], cwd.join("some/clients"));
        assert!(dirs.iter().all(|d| d.is_absolute()), "{dirs:?}");
    }

    #[test]
    fn the_install_layout_is_read_without_running_anything() {
        let dir = std::env::temp_dir().join(format!("mcp-fuzz-layout-{}", std::process::id()));
        let bin = dir.join("node/node_modules/.bin");
        let package = dir.join("node/node_modules/@openai/codex");
        std::fs::create_dir_all(&bin).expect("bin");
        std::fs::create_dir_all(&package).expect("package");
        std::fs::write(
            package.join("package.json"),
            r#"{"name":"@openai/codex","version":"9.9.9"}"#,
        )
        .expect("json");
        let exe = bin.join("codex");
        std::fs::write(&exe, "#!/bin/sh\nexit 1\n").expect("exe");
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let found = discover(RealClient::CodexCli, Some(&dir)).expect("found");
        assert_eq!(found.program, exe);
        assert_eq!(found.version.as_deref(), Some("9.9.9"));
        assert!(!found.is_pinned());
        assert_eq!(found.origin, Origin::ClientsDir(dir.clone()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
