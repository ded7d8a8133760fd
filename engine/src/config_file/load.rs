//! Finding and reading `mcp-fuzz.toml`, layering its profiles over the built-in defaults
//! (`engine/default-config.toml`), and errors that name the line and the key.

use super::error::ConfigError;
use super::hints::Hints;
use super::keys::Profile;
use super::server::ServerTable;
use crate::config::ToolHint;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The name of the config file looked for in the working directory and its parents.
pub const FILE_NAME: &str = "mcp-fuzz.toml";

/// The built-in defaults, a commented config file: the layer under every profile.
pub const DEFAULT_CONFIG: &str = include_str!("../../default-config.toml");

/// The profile every other one starts from.
pub const DEFAULT_PROFILE: &str = "default";

/// A whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    server: Option<ServerTable>,
    #[serde(default)]
    profile: BTreeMap<String, Profile>,
    #[serde(default)]
    hints: Hints,
}

/// The configuration in force: the built-in defaults, and the user's file if there is one.
#[derive(Debug)]
pub struct ConfigFile {
    /// The user's file, and its directory.
    user: Option<(PathBuf, PathBuf)>,
    model: Model,
    builtin: Model,
}

impl ConfigFile {
    /// The built-in defaults only (no file).
    #[must_use]
    pub fn builtin() -> Self {
        Self { user: None, model: Model::default(), builtin: builtin() }
    }

    /// The file `mcp-fuzz.toml` in `start` or the nearest parent that has one, else the
    /// built-in defaults.
    ///
    /// # Errors
    /// A file that is found but cannot be read or used.
    pub fn discover(start: &Path) -> Result<Self, ConfigError> {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        match start.ancestors().map(|d| d.join(FILE_NAME)).find(|p| p.is_file()) {
            Some(path) => Self::read(&path),
            None => Ok(Self::builtin()),
        }
    }

    /// The file at `path`.
    ///
    /// # Errors
    /// A file that cannot be read, is not TOML, has an unknown key or a bad value.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| ConfigError::Read { path: path.to_path_buf(), error })?;
        let model = parse(&text, path)?;
        let dir = std::path::absolute(path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(Self { user: Some((path.to_path_buf(), dir)), model, builtin: builtin() })
    }

    /// The user's file, if one was read.
    #[must_use]
    pub fn path(&self) -> Option<&Path> {
        self.user.as_ref().map(|(p, _)| p.as_path())
    }

    /// The directory relative paths of the file are relative to (the working directory
    /// without a file).
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.user.as_ref().map_or(Path::new(""), |(_, d)| d.as_path())
    }

    /// The settings of profile `name`: that profile of the file, that profile of the defaults,
    /// then `default` of the file and of the defaults; relative paths made relative to the
    /// file's directory.
    ///
    /// # Errors
    /// A profile neither the file nor the defaults have.
    pub fn profile(&self, name: &str) -> Result<Profile, ConfigError> {
        let layer = |m: &Model, n: &str| m.profile.get(n).cloned().unwrap_or_default();
        if !self.model.profile.contains_key(name) && !self.builtin.profile.contains_key(name) {
            let mut names: Vec<&String> =
                self.model.profile.keys().chain(self.builtin.profile.keys()).collect();
            names.sort();
            names.dedup();
            return Err(ConfigError::UnknownProfile {
                name: name.to_owned(),
                where_: self.path().map_or_else(
                    || format!("no {FILE_NAME} was found here or in a parent directory"),
                    |p| format!("{} has no [profile.{name}]", p.display()),
                ),
                available: names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            });
        }
        let mut p = layer(&self.model, name).over(layer(&self.builtin, name));
        if name != DEFAULT_PROFILE {
            p = p.over(
                layer(&self.model, DEFAULT_PROFILE).over(layer(&self.builtin, DEFAULT_PROFILE)),
            );
        }
        let dir = self.dir();
        for path in [&mut p.output_dir, &mut p.output, &mut p.baseline, &mut p.artifacts]
            .into_iter()
            .flatten()
        {
            *path = dir.join(&*path);
        }
        if let Some(from) = &mut p.sandbox_from {
            *from = dir.join(&*from).to_string_lossy().into_owned();
        }
        Ok(p)
    }

    /// The file's `[server]`, if it has one.
    #[must_use]
    pub fn server(&self) -> Option<&ServerTable> {
        self.model.server.as_ref()
    }

    /// The server of the file's `[server]` table ([`ServerTable::target`]).
    ///
    /// # Errors
    /// No `[server]` table (the flags named no server either), or a header whose variable is
    /// not set.
    pub fn target(&self) -> Result<crate::transport::Target, ConfigError> {
        let file = self.path().map_or(FILE_NAME.to_owned(), |p| p.display().to_string());
        self.server().ok_or(ConfigError::NoServer { file })?.target(self.dir())
    }

    /// The file's value hints, in order.
    #[must_use]
    pub fn hints(&self) -> &[ToolHint] {
        &self.model.hints.0
    }
}

/// The built-in defaults, parsed.
fn builtin() -> Model {
    parse(DEFAULT_CONFIG, Path::new("default-config.toml"))
        .expect("the built-in default config is valid (tested)")
}

/// Parses a file, with errors that name the line, the column and the key.
fn parse(text: &str, path: &Path) -> Result<Model, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start).min(text.len());
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..at].chars().count() + 1;
        let message = match e.message().strip_prefix("unknown field ") {
            Some(rest) => format!("unknown key {rest}"),
            None => match text[line_start..at].split_once('=') {
                Some((key, _)) if !key.trim().is_empty() => {
                    format!("key `{}`: {}", key.trim().trim_matches('"'), e.message())
                }
                _ => e.message().to_owned(),
            },
        };
        ConfigError::Invalid { path: path.to_path_buf(), line, column, message }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_file::KEYS;

    #[test]
    fn the_builtin_defaults_set_every_key_with_a_default_and_mention_the_others() {
        let p = ConfigFile::builtin().profile(DEFAULT_PROFILE).expect("default profile");
        assert_eq!(p.cases, Some(10));
        assert!(p.timeout.is_some() && p.shrink_time.is_some() && p.jobs.is_some());
        for key in KEYS {
            assert!(
                DEFAULT_CONFIG.contains(&format!("\n{} = ", key.name))
                    || DEFAULT_CONFIG.contains(&format!("\n# {} = ", key.name)),
                "default-config.toml does not show `{}`",
                key.name
            );
        }
        let ci = ConfigFile::builtin().profile("ci").expect("ci profile");
        assert_eq!(ci.output_dir, Some(PathBuf::from("mcp-fuzz-report")));
        assert_eq!(ci.cases, Some(10), "ci starts from default");
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let text = "[profile.default]\ncases = 3\ncasess = 4\n";
        let e = parse(text, Path::new("m.toml")).expect_err("unknown key").to_string();
        assert!(e.starts_with("m.toml:3:1: unknown key `casess`, expected one of"), "{e}");
        let e = parse("[profile.ci]\n\ntimeout = \"soon\"\n", Path::new("m.toml"))
            .expect_err("bad value")
            .to_string();
        assert!(e.starts_with("m.toml:3:11: key `timeout`: expected a positive duration"), "{e}");
        let e =
            parse("[hints]\n\"a/b\" = [1]\n", Path::new("m.toml")).expect_err("bad").to_string();
        assert!(e.starts_with("m.toml:2:1:") && e.contains("TOOL-GLOB./pointer"), "{e}");
        let e = parse("[server\n", Path::new("m.toml")).expect_err("not TOML").to_string();
        assert!(e.starts_with("m.toml:1:8:"), "{e}");
    }

    #[test]
    fn profiles_layer_and_unknown_ones_are_named() {
        let dir = std::env::temp_dir().join(format!("mcp-fuzz-cfg-{}", std::process::id()));
        let sub = dir.join("a/b");
        std::fs::create_dir_all(&sub).expect("temp dir");
        std::fs::write(
            dir.join(FILE_NAME),
            "[profile.default]\ncases = 3\nbaseline = \"base.json\"\nsandbox-from = \"seed\"\n\
             [profile.ci]\nseed = 9\n\
             [profile.nightly]\ncases = 500\n",
        )
        .expect("writes");
        let f = ConfigFile::discover(&sub).expect("found in a parent");
        assert_eq!(f.path(), Some(dir.join(FILE_NAME).as_path()));
        let ci = f.profile("ci").expect("ci");
        assert_eq!((ci.cases, ci.seed), (Some(3), Some(9)));
        assert_eq!(ci.output_dir, Some(dir.join("mcp-fuzz-report")), "the built-in ci layer");
        assert_eq!(ci.baseline, Some(dir.join("base.json")), "relative to the file");
        let seed = dir.join("seed").to_string_lossy().into_owned();
        assert_eq!(ci.sandbox_from, Some(seed), "relative to the file");
        assert_eq!(f.profile("nightly").expect("nightly").cases, Some(500));
        let e = f.profile("weekly").expect_err("unknown").to_string();
        assert!(e.contains("`ci`, `default`, `nightly`"), "{e}");
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }
}
