//! `[server]`: the server a config file names, a command over stdio or a streamable HTTP URL,
//! and the [`Target`] it becomes.

use super::error::ConfigError;
use crate::transport::Target;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `[server]` table: a command (with `env`, `inherit-env`, `cwd`), an `http` URL (with
/// `headers` whose values come from environment variables), or both (a command that serves the
/// URL: mcp-fuzz starts it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct ServerTable {
    /// How to reach it.
    pub how: How,
}

/// A command or a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// A command speaking MCP over stdio.
    Command {
        /// Program and arguments.
        command: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// The caller's whole environment.
        inherit_env: bool,
        /// The working directory, relative to the config file.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The URL.
        url: String,
        /// Header name -> the environment variable holding its value.
        headers: BTreeMap<String, String>,
        /// The command serving it ([`How::Command`]), when mcp-fuzz starts it.
        launch: Option<Box<How>>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Raw {
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    inherit_env: Option<bool>,
    cwd: Option<PathBuf>,
    http: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl TryFrom<Raw> for ServerTable {
    type Error = String;

    fn try_from(r: Raw) -> Result<Self, String> {
        if r.command.as_ref().is_some_and(|c| c.first().is_none_or(String::is_empty)) {
            return Err("[server] `command` is empty: give the program and its arguments, such \
                        as [\"node\", \"server.js\"]"
                .into());
        }
        let command = r.command.map(|command| How::Command {
            command,
            env: r.env.clone(),
            inherit_env: r.inherit_env.unwrap_or(false),
            cwd: r.cwd.clone(),
        });
        let how = match (command, r.http) {
            (None, None) => {
                return Err("[server] names no server: add `command = [\"node\", \"server.js\"]` \
                            or `http = \"http://127.0.0.1:3000/mcp\"`"
                    .into());
            }
            (Some(_), None) if !r.headers.is_empty() => {
                return Err("[server] `headers` go with `http`, not with `command`".into());
            }
            (Some(command), None) => command,
            (None, Some(_)) if !r.env.is_empty() || r.cwd.is_some() || r.inherit_env.is_some() => {
                return Err("[server] `env`, `inherit-env` and `cwd` go with `command`; an HTTP \
                            server without one is already running"
                    .into());
            }
            (command, Some(url)) => {
                if let Some(How::Command { command, env, inherit_env, cwd }) = &command {
                    let launch = crate::transport::Launch {
                        command: command.clone(),
                        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                        inherit_env: *inherit_env,
                        cwd: cwd.clone(),
                    };
                    crate::transport::check_launch(&url, &launch)
                        .map_err(|e| format!("[server] {}", e.replace("--http", "`http`")))?;
                }
                How::Http { url, headers: r.headers, launch: command.map(Box::new) }
            }
        };
        Ok(Self { how })
    }
}

impl ServerTable {
    /// The target, for a config file in `dir`: a command runs in `dir` (or `cwd` relative to
    /// it), with a relative program path (`./server`) resolved there; header values are read
    /// from their environment variables.
    ///
    /// # Errors
    /// A header whose environment variable is not set.
    pub fn target(&self, dir: &Path) -> Result<Target, ConfigError> {
        target(&self.how, dir)
    }
}

/// [`ServerTable::target`] of one way to reach the server.
fn target(how: &How, dir: &Path) -> Result<Target, ConfigError> {
    match how {
        How::Command { command, env, inherit_env, cwd } => {
            let mut command = command.clone();
            if command[0].contains('/') && Path::new(&command[0]).is_relative() {
                command[0] = dir.join(&command[0]).display().to_string();
            }
            Ok(Target::Stdio {
                command,
                env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                inherit_env: *inherit_env,
                cwd: Some(cwd.as_ref().map_or_else(|| dir.to_path_buf(), |c| dir.join(c))),
            })
        }
        How::Http { url, headers, launch } => {
            let headers = headers
                .iter()
                .map(|(name, var)| match std::env::var(var) {
                    Ok(value) => Ok((name.clone(), value)),
                    Err(_) => Err(ConfigError::Server(format!(
                        "the header `{name}` of [server] takes its value from the environment \
                             variable {var}, which is not set (or not UTF-8); export it, or remove \
                             the header"
                    ))),
                })
                .collect::<Result<_, _>>()?;
            let launch = match launch.as_deref().map(|h| target(h, dir)).transpose()? {
                Some(Target::Stdio { command, env, inherit_env, cwd }) => {
                    Some(crate::transport::Launch { command, env, inherit_env, cwd })
                }
                _ => None,
            };
            Ok(Target::Http { url: url.clone(), headers, launch })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ServerTable, String> {
        toml::from_str(text).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn a_command_runs_in_the_config_directory() {
        let s = read("command = [\"./srv\", \"--x\"]\nenv = { A = \"1\" }").expect("reads");
        let Target::Stdio { command, env, cwd, inherit_env } =
            s.target(Path::new("/proj")).expect("target")
        else {
            panic!("stdio")
        };
        assert_eq!(command, ["/proj/./srv", "--x"]);
        assert_eq!(env, [("A".to_owned(), "1".to_owned())]);
        assert_eq!(cwd, Some(PathBuf::from("/proj")));
        assert!(!inherit_env);
        let s = read("command = [\"node\", \"s.js\"]\ncwd = \"sub\"").expect("reads");
        let Target::Stdio { command, cwd, .. } = s.target(Path::new("/p")).expect("target") else {
            panic!("stdio")
        };
        assert_eq!((command[0].as_str(), cwd), ("node", Some(PathBuf::from("/p/sub"))));
    }

    #[test]
    fn a_command_with_a_url_is_launched_in_the_config_directory() {
        let s = read(
            "command = [\"./srv\", \"--port\", \"{port}\"]\nhttp = \"http://127.0.0.1:{port}/mcp\"\nenv = { A = \"1\" }",
        )
        .expect("reads");
        let Target::Http { url, launch: Some(launch), .. } =
            s.target(Path::new("/proj")).expect("target")
        else {
            panic!("a launched HTTP server")
        };
        assert_eq!(url, "http://127.0.0.1:{port}/mcp");
        assert_eq!(launch.command, ["/proj/./srv", "--port", "{port}"]);
        assert_eq!(launch.env, [("A".to_owned(), "1".to_owned())]);
        assert_eq!(launch.cwd, Some(PathBuf::from("/proj")));
    }

    #[test]
    fn one_server_and_its_own_keys() {
        let e = read("command = [\"a\"]\nhttp = \"http://x.example/mcp\"").expect_err("remote");
        assert!(e.contains("loopback") && e.contains("`http`"), "{e}");
        assert!(read("env = {}").expect_err("none").contains("names no server"));
        assert!(read("command = []").expect_err("empty").contains("empty"));
        assert!(read("http = \"http://x\"\ncwd = \".\"").expect_err("cwd").contains("go with"));
        assert!(
            read("command = [\"a\"]\nheaders = { A = \"B\" }").expect_err("h").contains("http")
        );
        let s =
            read("http = \"http://x\"\nheaders = { Authorization = \"MCP_FUZZ_TEST_UNSET_VAR\" }")
                .expect("reads");
        let e = s.target(Path::new(".")).expect_err("unset variable").to_string();
        assert!(e.contains("MCP_FUZZ_TEST_UNSET_VAR") && e.contains("Authorization"), "{e}");
    }
}
