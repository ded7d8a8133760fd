//! The sandbox a server runs in: a throwaway directory with the server's working directory,
//! `HOME` and `TMPDIR` in it, optionally seeded with a copy of `--sandbox-from DIR`, removed at
//! the end unless kept. Every server process of a run starts there ([`Sandbox::prepare`]), and
//! the tools phase hashes its tree before and after each tool ([`tree`]) to see what a tool
//! really wrote.
//!
//! The server command stays as given: a `{sandbox}` in it (or in an `--env` value) is the
//! sandbox's working directory, and a relative argument that names an existing file or
//! directory where the command was given is made absolute, so `node server.js` still finds its
//! script from the sandbox.
//!
//! See: issue 32 (a read-only tool that writes is a bug for every client that auto-approves it).

pub mod tree;

use std::io;
use std::path::{Path, PathBuf};

/// What a command line or an `--env` value writes for the sandbox's working directory.
pub const SANDBOX_PLACEHOLDER: &str = "{sandbox}";

/// The most a `--sandbox-from` copy may hold.
///
/// Why: the copy is made before the server starts; a project directory with its dependencies
/// (`node_modules`, a virtualenv) is better reached by path than copied.
pub const MAX_SEED_BYTES: u64 = 256 << 20;
/// The most entries a `--sandbox-from` copy may hold (the same reason).
pub const MAX_SEED_ENTRIES: u64 = 20_000;

/// Variables naming a toolchain's own cache or install directory under `HOME`: with `HOME` in
/// the sandbox, each is pointed at where it was (when the directory exists and the variable is
/// not set), so `npx`, `uvx`, `cargo` and friends still find what they installed and need no
/// network. What a server writes there is outside the sandbox and not watched.
const TOOLCHAIN_HOMES: &[(&str, &str)] = &[
    ("npm_config_cache", ".npm"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("UV_PYTHON_INSTALL_DIR", ".local/share/uv/python"),
    ("UV_TOOL_DIR", ".local/share/uv/tools"),
    ("PIPX_HOME", ".local/share/pipx"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("CARGO_HOME", ".cargo"),
    ("RUSTUP_HOME", ".rustup"),
    ("PYENV_ROOT", ".pyenv"),
    ("DENO_DIR", ".cache/deno"),
    ("BUN_INSTALL", ".bun"),
    ("GOPATH", "go"),
];

/// Whether and how a run sandboxes its server (`--no-sandbox`, `--keep-sandbox`,
/// `--sandbox-from`).
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    /// `--no-sandbox`: the server runs where it is told, with the caller's `HOME`.
    pub off: bool,
    /// `--keep-sandbox`: the directory stays after the run (its path is printed).
    pub keep: bool,
    /// `--sandbox-from DIR`: copied into the sandbox's working directory first.
    pub from: Option<PathBuf>,
}

/// Why the sandbox could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A directory could not be created or a file copied.
    #[error(
        "cannot make the sandbox in {dir}: {source}; set TMPDIR to a writable directory, or pass --no-sandbox"
    )]
    Io {
        /// Where.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// `{sandbox}` in the command, an `--env` value or a root, with the sandbox off.
    #[error(
        "`{{sandbox}}` in the server command, an --env value or a root needs the sandbox; drop --no-sandbox (or `no-sandbox = true`), or write the directory instead"
    )]
    Placeholder,
    /// `--sandbox-from` is not a directory that can be read.
    #[error("--sandbox-from {dir}: {why}")]
    Seed {
        /// The directory given.
        dir: PathBuf,
        /// What is wrong with it, and what to do.
        why: String,
    },
}

/// A sandbox on disk: removed when dropped, unless kept.
#[derive(Debug)]
pub struct Sandbox {
    root: PathBuf,
    keep: bool,
    /// The caller's working directory when the sandbox was made: relative arguments of the
    /// server command are read from there.
    caller_dir: PathBuf,
    caller_home: Option<PathBuf>,
}

impl Sandbox {
    /// Makes a fresh sandbox under the system's temporary directory (mode 0700) with `work/`,
    /// `home/` and `tmp/` in it, `work/` seeded from `options.from`.
    ///
    /// # Errors
    /// [`SandboxError`] when a directory cannot be made or the seed cannot be copied.
    pub fn create(options: &SandboxOptions) -> Result<Self, SandboxError> {
        let base = std::env::temp_dir();
        let io = |dir: &Path| {
            let dir = dir.to_path_buf();
            move |source| SandboxError::Io { dir, source }
        };
        let root = unique_dir(&base).map_err(io(&base))?;
        let sandbox = Self {
            root,
            keep: options.keep,
            caller_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            caller_home: std::env::var_os("HOME").map(PathBuf::from),
        };
        for dir in [sandbox.work(), sandbox.home(), sandbox.tmp()] {
            std::fs::create_dir(&dir).map_err(io(&dir))?;
        }
        if let Some(from) = &options.from {
            seed(from, &sandbox.work())?;
        }
        Ok(sandbox)
    }

    /// The sandbox directory itself.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The server's working directory (what `{sandbox}` stands for).
    #[must_use]
    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// The directories whose files a tool's calls are judged by: the working directory and
    /// `HOME` (`TMPDIR` is the server's to use).
    #[must_use]
    pub fn watched(&self) -> Vec<PathBuf> {
        vec![self.work(), self.home()]
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// How a path in the sandbox is shown: relative to the working directory, `~/...` under
    /// its `HOME`, else in full.
    #[must_use]
    pub fn name(&self, path: &Path) -> String {
        if let Ok(rel) = path.strip_prefix(self.work()) {
            rel.display().to_string()
        } else if let Ok(rel) = path.strip_prefix(self.home()) {
            format!("~/{}", rel.display())
        } else {
            path.display().to_string()
        }
    }

    /// Whether the directory stays after the run.
    #[must_use]
    pub fn kept(&self) -> bool {
        self.keep
    }

    /// A root directory as the server is told it: `{sandbox}` filled in, a relative one inside
    /// the working directory (created when missing).
    #[must_use]
    pub fn root_dir(&self, given: &Path) -> PathBuf {
        let text = given.to_string_lossy();
        let filled = PathBuf::from(fill(&text, &self.work()));
        let dir = if filled.is_absolute() { filled } else { self.work().join(filled) };
        let _ = std::fs::create_dir_all(&dir);
        dir
    }

    /// The command, environment and working directory one server process starts with:
    /// `{sandbox}` filled in everywhere, relative arguments naming existing paths (read from
    /// `cwd`, else where mcp-fuzz was started) made absolute, `HOME`, `TMPDIR` and the
    /// toolchain directories set unless `env` sets them, and the working directory the
    /// sandbox's.
    #[must_use]
    pub fn prepare(
        &self,
        command: &[String],
        env: &[(String, String)],
        cwd: Option<&PathBuf>,
    ) -> (Vec<String>, Vec<(String, String)>, PathBuf) {
        let work = self.work();
        let from = cwd.map_or_else(|| self.caller_dir.clone(), |c| self.caller_dir.join(c));
        let mut after_m = false;
        let command = command
            .iter()
            .enumerate()
            .map(|(i, word)| {
                let module = std::mem::replace(&mut after_m, word == "-m");
                if word.contains(SANDBOX_PLACEHOLDER) {
                    return fill(word, &work);
                }
                let path = Path::new(word);
                // A program without a slash is looked up on PATH; `-m NAME` names a module.
                let lookup = i == 0 && !word.contains('/');
                if module || lookup || word.starts_with('-') || path.is_absolute() {
                    return word.clone();
                }
                let there = from.join(path);
                if there.exists() {
                    std::path::absolute(&there).unwrap_or(there).display().to_string()
                } else {
                    word.clone()
                }
            })
            .collect();
        let given = |name: &str| env.iter().any(|(k, _)| k == name);
        let mut out: Vec<(String, String)> = Vec::new();
        for (name, dir) in [("HOME", self.home()), ("TMPDIR", self.tmp())] {
            if !given(name) {
                out.push((name.to_owned(), dir.display().to_string()));
            }
        }
        if let Some(home) = &self.caller_home {
            for (name, sub) in TOOLCHAIN_HOMES {
                let dir = home.join(sub);
                if !given(name) && std::env::var_os(name).is_none() && dir.is_dir() {
                    out.push(((*name).to_owned(), dir.display().to_string()));
                }
            }
        }
        out.extend(env.iter().map(|(k, v)| (k.clone(), fill(v, &work))));
        (command, out, work)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.keep {
            // A server's files may be read-only: make them writable so they can be removed.
            let _ = tree::make_removable(&self.root);
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// `text` with every `{sandbox}` replaced by `work`.
#[must_use]
pub fn fill(text: &str, work: &Path) -> String {
    text.replace(SANDBOX_PLACEHOLDER, &work.display().to_string())
}

/// A new directory `mcp-fuzz-sandbox-<pid>-<nanos>-<n>` in `base`, readable by its owner only.
fn unique_dir(base: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last = None;
    for n in 0..100u32 {
        // Digits only: a cause that quotes a path normalises to the same words every run.
        let dir = base.join(format!("mcp-fuzz-sandbox-{}-{stamp}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free name")))
}

/// Copies `from` into `to` (files, directories and symbolic links as links, never followed),
/// within [`MAX_SEED_BYTES`] and [`MAX_SEED_ENTRIES`].
fn seed(from: &Path, to: &Path) -> Result<(), SandboxError> {
    let bad = |why: String| SandboxError::Seed { dir: from.to_path_buf(), why };
    if !from.is_dir() {
        return Err(bad("not a directory; give the directory the server should start with".into()));
    }
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        let listing =
            std::fs::read_dir(&src).map_err(|e| bad(format!("{}: {e}", src.display())))?;
        for entry in listing {
            let entry = entry.map_err(|e| bad(format!("{}: {e}", src.display())))?;
            let (s, d) = (entry.path(), dst.join(entry.file_name()));
            let kind = entry.file_type().map_err(|e| bad(format!("{}: {e}", s.display())))?;
            entries += 1;
            if entries > MAX_SEED_ENTRIES {
                return Err(bad(format!(
                    "holds more than {MAX_SEED_ENTRIES} files; seed the sandbox with a smaller \
                     directory and pass the rest by absolute path"
                )));
            }
            let copied = if kind.is_symlink() {
                std::fs::read_link(&s).and_then(|t| std::os::unix::fs::symlink(t, &d))
            } else if kind.is_dir() {
                stack.push((s.clone(), d.clone()));
                std::fs::create_dir(&d)
            } else if kind.is_file() {
                bytes += entry.metadata().map_or(0, |m| m.len());
                if bytes > MAX_SEED_BYTES {
                    return Err(bad(format!(
                        "holds more than {} MiB; seed the sandbox with a smaller directory and \
                         pass the rest by absolute path",
                        MAX_SEED_BYTES >> 20
                    )));
                }
                std::fs::copy(&s, &d).map(|_| ())
            } else {
                Ok(()) // sockets, FIFOs and devices are not copied
            };
            copied.map_err(|e| bad(format!("cannot copy {}: {e}", s.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_has_its_three_directories_and_goes_away() {
        let sandbox = Sandbox::create(&SandboxOptions::default()).expect("made");
        let root = sandbox.root().to_path_buf();
        assert!(sandbox.work().is_dir() && sandbox.home().is_dir() && sandbox.tmp().is_dir());
        drop(sandbox);
        assert!(!root.exists(), "removed at the end");
        let kept =
            Sandbox::create(&SandboxOptions { keep: true, ..Default::default() }).expect("made");
        let root = kept.root().to_path_buf();
        drop(kept);
        assert!(root.is_dir(), "kept");
        std::fs::remove_dir_all(root).expect("cleaned");
    }

    #[test]
    fn the_command_keeps_its_meaning_from_the_sandbox() {
        let sandbox = Sandbox::create(&SandboxOptions::default()).expect("made");
        let here = std::env::current_dir().expect("cwd");
        let words = ["node", "Cargo.toml", "-m", "src", "--flag", "missing.js", "{sandbox}/db"];
        let command: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let env = vec![("DB".to_owned(), "{sandbox}/x".to_owned()), ("HOME".into(), "/h".into())];
        let (command, env, cwd) = sandbox.prepare(&command, &env, None);
        let work = sandbox.work().display().to_string();
        assert_eq!(command[0], "node", "looked up on PATH");
        assert_eq!(command[1], here.join("Cargo.toml").display().to_string());
        assert_eq!(command[3], "src", "a module name after -m stays");
        assert_eq!(command[5], "missing.js", "nothing there: as given");
        assert_eq!(command[6], format!("{work}/db"));
        assert_eq!(cwd, sandbox.work());
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("HOME").as_deref(), Some("/h"), "the user's own HOME wins");
        assert_eq!(get("TMPDIR"), Some(sandbox.tmp().display().to_string()));
        assert_eq!(get("DB"), Some(format!("{work}/x")));
    }

    #[test]
    fn a_seed_is_copied_and_bounded() {
        let src = Sandbox::create(&SandboxOptions::default()).expect("made");
        std::fs::create_dir_all(src.work().join("a/b")).expect("dirs");
        std::fs::write(src.work().join("a/b/f.txt"), "hello").expect("file");
        std::os::unix::fs::symlink("/etc/passwd", src.work().join("out")).expect("link");
        let options = SandboxOptions { from: Some(src.work()), ..Default::default() };
        let sandbox = Sandbox::create(&options).expect("seeded");
        let copied = std::fs::read_to_string(sandbox.work().join("a/b/f.txt")).expect("copied");
        assert_eq!(copied, "hello");
        let link = std::fs::read_link(sandbox.work().join("out")).expect("a link, not a copy");
        assert_eq!(link, PathBuf::from("/etc/passwd"));
        let bad = SandboxOptions { from: Some(src.work().join("nope")), ..Default::default() };
        let e = Sandbox::create(&bad).expect_err("not a directory").to_string();
        assert!(e.contains("--sandbox-from") && e.contains("not a directory"), "{e}");
    }
}
