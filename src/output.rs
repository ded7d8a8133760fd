//! Where documents go: the `--format` / `--output-dir` / `--output` plan, standard output, and
//! atomic file writes (a reader never sees a partial file).

use crate::cli::OutputArgs;
use crate::errors::CliError;
use anyhow::Context as _;
use mcp_fuzz_report::Format;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where each requested format goes (`run`, `report merge`, `clients`).
pub struct OutputPlan {
    /// The format printed on stdout, if any.
    stdout: Option<Format>,
    /// Formats written under `dir`.
    files: Vec<Format>,
    dir: Option<PathBuf>,
    /// `--output FILE`: the JSON document, also.
    json_file: Option<PathBuf>,
}

impl OutputPlan {
    /// The plan for the output flags.
    ///
    /// # Errors
    /// More than one format without `--output-dir`.
    pub fn resolve(args: &OutputArgs) -> Result<Self, CliError> {
        let mut formats: Vec<Format> = Vec::new();
        for f in args.format.iter().copied().chain(args.json.then_some(Format::Json)) {
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        let Some(dir) = &args.output_dir else {
            if formats.len() > 1 {
                let names: Vec<&str> = formats.iter().map(|f| f.as_str()).collect();
                return Err(CliError::Usage(format!(
                    "--format {} asks for {} documents but stdout holds one; add --output-dir DIR to write them to files",
                    names.join(","),
                    formats.len()
                )));
            }
            return Ok(Self {
                stdout: Some(formats.first().copied().unwrap_or(Format::Human)),
                files: Vec::new(),
                dir: None,
                json_file: args.output.clone(),
            });
        };
        if formats.is_empty() {
            formats = Format::ALL.to_vec();
        }
        Ok(Self {
            stdout: formats.contains(&Format::Human).then_some(Format::Human),
            files: formats.into_iter().filter(|f| *f != Format::Human).collect(),
            dir: Some(dir.clone()),
            json_file: args.output.clone(),
        })
    }

    /// Whether stdout carries a machine-readable document (then no progress bar).
    pub fn stdout_is_machine(&self) -> bool {
        self.stdout.is_some_and(|f| f != Format::Human)
    }

    /// Writes every requested document; `render` gives the document in one format.
    ///
    /// # Errors
    /// A file or stdout that cannot be written.
    pub fn emit(&self, render: impl Fn(Format) -> String) -> anyhow::Result<()> {
        if let Some(path) = &self.json_file {
            write_atomically(path, render(Format::Json).as_bytes())?;
        }
        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir).with_context(|| {
                format!(
                    "failed to create --output-dir {}; check the path and permissions",
                    dir.display()
                )
            })?;
            for f in &self.files {
                let name = f.file_name().expect("only file formats are listed");
                write_atomically(&dir.join(name), render(*f).as_bytes())?;
            }
        }
        if let Some(f) = self.stdout {
            write_stdout(&render(f))?;
        }
        Ok(())
    }
}

/// Writes `text` to stdout and flushes.
///
/// # Errors
/// A closed or failing stdout (a closed pipe ends the run quietly, see `main`).
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).context("failed to write to stdout")?;
    out.flush().context("failed to write to stdout")
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a partial file.
///
/// # Errors
/// A directory that does not exist or is not writable.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_via_temp(path, bytes, true)
}

/// As [`write_atomically`], but never replaces a file: a hard link puts the new file in place,
/// and fails if one is already there (so two writers cannot both win).
///
/// # Errors
/// `path` exists, or as [`write_atomically`].
pub fn write_new_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_via_temp(path, bytes, false)
}

fn write_via_temp(path: &Path, bytes: &[u8], replace: bool) -> anyhow::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("report"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| {
        format!(
            "failed to write {}; check that the directory exists and is writable",
            tmp.display()
        )
    })?;
    if replace {
        return std::fs::rename(&tmp, path)
            .with_context(|| format!("failed to move the report into {}", path.display()));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    linked.with_context(|| format!("failed to create {} (does it exist already?)", path.display()))
}
