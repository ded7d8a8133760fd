//! `mcp-fuzz init`: a short probe run against a server, and the commented starter
//! `mcp-fuzz.toml` written from it: the server, every profile key with its default, the tools
//! (which are gated and why), and hint stubs for the properties of the tools whose valid calls
//! failed in the probe.

use crate::config::ShrinkConfig;
use crate::config::{Campaign, PerTool, RunConfig, Selection, Stateful};
use crate::config_file::KEYS;
use crate::config_file::{DEFAULT_CONFIG, DEFAULT_PROFILE};
use crate::finding::{FindingKind, ToolStatus, gate};
use crate::report::Report;
use crate::run::{RunError, run};
use crate::server::{Instance, ListError, ServerSpec};
use crate::transport::Target;
use crate::transport::listing::Tool;
use mcp_fuzz_generators::pointer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// Random cases of each kind per tool in the probe.
///
/// Why: a few random calls besides the deterministic ones show whether valid calls can succeed
/// at all; the probe is not the run.
pub const PROBE_CASES: usize = 3;

/// Longest the probe may take, and per tool.
const PROBE_BUDGET: (Duration, Duration) = (Duration::from_secs(60), Duration::from_secs(10));

/// Properties given a hint stub per tool, at most.
const MAX_STUBS_PER_TOOL: usize = 6;

/// What the probe saw: the listing and a short run's report.
#[derive(Debug)]
pub struct Probe {
    /// The tools, as listed.
    pub tools: Vec<Tool>,
    /// The probe run (read-only tools only, [`PROBE_CASES`] random cases, no shrinking).
    pub report: Report,
}

/// Lists the server's tools and runs a short probe: the read-only tools only (a probe never
/// calls a tool that may change something), without shrinking, within a minute.
///
/// # Errors
/// [`RunError`] when the server cannot be started or listed.
pub async fn probe(spec: &ServerSpec) -> Result<Probe, RunError> {
    let mut first = Instance::start(spec).await?;
    let listing = first.list_tools(crate::config::MAX_PAGES).await.map_err(|e| match e {
        ListError::Connect(c) => RunError::Connect(c),
        ListError::Listing(l) => RunError::Listing(l),
    });
    first.close().await;
    let cfg = RunConfig {
        server: spec.clone(),
        seed: 0,
        cases: PROBE_CASES,
        selection: Selection::default(),
        campaign: Campaign {
            shrink: ShrinkConfig { enabled: false, reruns: 0, ..ShrinkConfig::default() },
            time_budget: Some(PROBE_BUDGET.0),
            tool_time_budget: Some(PROBE_BUDGET.1),
            stateful: Stateful { enabled: false, ..Stateful::default() },
            ..Campaign::default()
        },
        per_tool: PerTool::default(),
    };
    let report = run(&cfg, |_| {}).await?;
    Ok(Probe { tools: listing?.tools, report })
}

/// The starter file for the server at `target`, from what the probe saw.
#[must_use]
pub fn starter(probe: &Probe, target: &Target) -> String {
    let r = &probe.report;
    let mut s = String::new();
    let called = r.tools.iter().filter(|t| t.status.was_called()).count();
    let _ = writeln!(
        s,
        "# mcp-fuzz.toml for {} {}, written by `mcp-fuzz init`: {} tool(s), {called} called by \
         default.\n# `mcp-fuzz` runs [profile.default] and `mcp-fuzz --profile ci` [profile.ci]; \
         a flag given on the\n# command line wins over this file. A profile key is the long \
         name of a `mcp-fuzz run` flag;\n# the commented values are the defaults \
         (docs/config.schema.json describes every key).\n",
        r.server.name.as_deref().unwrap_or("(unnamed server)"),
        r.server.version.as_deref().unwrap_or(""),
        probe.tools.len()
    );
    server_table(&mut s, target);
    s.push_str("\n[profile.default]\n");
    let defaults: toml::Table = toml::from_str::<toml::Table>(DEFAULT_CONFIG)
        .ok()
        .and_then(|t| t.get("profile")?.get(DEFAULT_PROFILE)?.as_table().cloned())
        .unwrap_or_default();
    for key in KEYS {
        let doc = key.doc.lines().map(str::trim).collect::<Vec<_>>().join("\n# ");
        let value = defaults.get(key.name).map_or_else(
            || example(key.name),
            |v| format!("{} = {}", key.name, serde_json::to_string(v).unwrap_or_default()),
        );
        let _ = writeln!(s, "# {doc}\n# {value}");
    }
    s.push_str(
        "\n[profile.ci]\n# Built in: output-dir = \"mcp-fuzz-report\" (every report, where the CI \
         recipes of docs/ci/ look).\n# fail-under = 90\n",
    );
    tools_section(&mut s, probe);
    hints_section(&mut s, probe);
    s
}

/// The commented example of the built-in defaults for a key without a default
/// (`output-dir = "mcp-fuzz-report"`).
fn example(key: &str) -> String {
    let line = format!("\n# {key} = ");
    DEFAULT_CONFIG.find(&line).map_or_else(
        || format!("{key} = ..."),
        |at| DEFAULT_CONFIG[at + 3..].lines().next().unwrap_or_default().to_owned(),
    )
}

/// A TOML string (a JSON string is one).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn server_table(s: &mut String, target: &Target) {
    s.push_str("[server]\n");
    match target {
        Target::Stdio { command, env, inherit_env, cwd } => {
            command_lines(s, command, env, *inherit_env, cwd.as_ref());
        }
        Target::Http { url, headers, launch } => {
            let _ = writeln!(s, "http = {}", quote(url));
            if let Some(l) = launch {
                s.push_str("# mcp-fuzz starts this command, serving the URL ({port}: a free port per process)\n");
                command_lines(s, &l.command, &l.env, l.inherit_env, l.cwd.as_ref());
            }
            let vars: Vec<(String, String)> = headers
                .iter()
                .map(|(name, _)| {
                    let var: String =
                        name.chars()
                            .map(|c| {
                                if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }
                            })
                            .collect();
                    (name.clone(), format!("MCP_FUZZ_HEADER_{var}"))
                })
                .collect();
            if !vars.is_empty() {
                let pairs: Vec<String> =
                    vars.iter().map(|(n, v)| format!("{} = {}", quote(n), quote(v))).collect();
                let exports: Vec<String> = vars.iter().map(|(_, v)| format!("{v}=...")).collect();
                let _ = writeln!(
                    s,
                    "# Each header's value comes from an environment variable: export {}\n\
                     headers = {{ {} }}",
                    exports.join(" "),
                    pairs.join(", ")
                );
            }
        }
    }
}

/// The `command`, `env`, `inherit-env` and `cwd` lines of a server started by mcp-fuzz.
fn command_lines(
    s: &mut String,
    command: &[String],
    env: &[(String, String)],
    inherit_env: bool,
    cwd: Option<&std::path::PathBuf>,
) {
    let words: Vec<String> = command.iter().map(|w| quote(w)).collect();
    let _ = writeln!(s, "command = [{}]", words.join(", "));
    if env.is_empty() {
        s.push_str(
            "# env = { NAME = \"value\" }  # the server gets a minimal environment otherwise\n",
        );
    } else {
        let names: Vec<String> =
            env.iter().map(|(k, _)| format!("{} = \"...\"", quote(k))).collect();
        let _ = writeln!(
            s,
            "# The values given to init are not written here; give them again:\n\
             # env = {{ {} }}",
            names.join(", ")
        );
    }
    let _ = writeln!(s, "{}inherit-env = {inherit_env}", if inherit_env { "" } else { "# " });
    match cwd {
        Some(c) => {
            let _ = writeln!(s, "cwd = {}", quote(&c.display().to_string()));
        }
        None => s.push_str("# cwd = \".\"  # relative to this file, its directory by default\n"),
    }
}

/// Why a tool is gated (not called by default), in the gate's words.
fn gated_note(tool: &Tool) -> String {
    let why = gate(tool.read_only_hint(), false).map_or_else(String::new, |r| r.to_string());
    format!("gated: {why}")
}

fn tools_section(s: &mut String, probe: &Probe) {
    let _ = writeln!(
        s,
        "\n# The tools, as a probe saw them ({PROBE_CASES} random cases of each kind per read-only \
         tool, no shrinking):"
    );
    let width = probe.tools.iter().map(|t| t.name.chars().count()).max().unwrap_or(0);
    let mut gated = Vec::new();
    for tool in &probe.tools {
        let line = probe.report.tools.iter().find(|t| t.name == tool.name);
        let note = match line {
            Some(t) if t.status == ToolStatus::Tested => {
                let valid = t.cases.valid + t.cases.boundary;
                format!(
                    "read-only: {} of {valid} valid calls succeeded",
                    t.valid_succeeded.unwrap_or(0)
                )
            }
            Some(t) if t.status == ToolStatus::Skipped && tool.read_only_hint() != Some(true) => {
                gated.push(tool.name.as_str());
                gated_note(tool)
            }
            Some(t) => format!("{}: {}", t.status, t.reason.as_deref().unwrap_or("")),
            None => "not in the probe's report".into(),
        };
        let _ = writeln!(s, "#   {:width$}  {note}", tool.name);
    }
    if let Some(first) = gated.first() {
        let _ = writeln!(
            s,
            "# A gated tool may change something, so it is called only with include-destructive \
             (for\n# every tool in a profile, or for some with an override), best on a throwaway \
             copy of the data:\n# [[profile.default.overrides]]\n# tools = {}\n# \
             include-destructive = true",
            quote(first)
        );
    }
}

fn hints_section(s: &mut String, probe: &Probe) {
    s.push_str("\n[hints]\n");
    // Each failing tool: its note and the properties to hint.
    let mut failing: Vec<(&Tool, String, Vec<String>)> = Vec::new();
    for tool in &probe.tools {
        let Some(line) = probe.report.tools.iter().find(|t| t.name == tool.name) else { continue };
        let finding = probe.report.findings.iter().find(|f| {
            f.concerns(&tool.name)
                && matches!(
                    f.kind,
                    FindingKind::ValidCallFailed | FindingKind::NoValidCallSucceeded
                )
        });
        if line.status != ToolStatus::Tested || finding.is_none() {
            continue;
        }
        let answer = probe
            .report
            .findings
            .iter()
            .filter(|f| f.concerns(&tool.name) && f.kind == FindingKind::ValidCallFailed)
            .find_map(|f| f.outcome.as_ref().and_then(|o| o.message()))
            .map(|m| m.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned());
        let valid = line.cases.valid + line.cases.boundary;
        let note = format!(
            "{} of {valid} valid calls succeeded{}",
            line.valid_succeeded.unwrap_or(0),
            answer.map_or(String::new(), |a| format!(
                ", e.g. {}",
                quote(&crate::judge::words::clip(&a))
            ))
        );
        failing.push((tool, note, stub_properties(tool.input())));
    }
    if failing.is_empty() {
        s.push_str(
            "# Valid calls of every probed tool succeeded. Hints give values that valid calls \
             must name\n# to reach real work, e.g. path = [\"./sandbox/a.txt\"] or \
             \"git_*./repo_path\" = [\"./repo\"].\n",
        );
        return;
    }
    s.push_str(
        "# Valid calls of these tools failed in the probe: the generated values may name nothing \
         that\n# exists. Give values they accept (uncomment and edit): a list of values, or \
         { regex = \"...\" }\n# or { glob = \"...\" } to draw strings from. A property name \
         applies to every tool.\n",
    );
    for (tool, note, _) in &failing {
        let _ = writeln!(s, "#   {}: {note}", tool.name);
    }
    // A property several failing tools share gets one stub by name; the others one per tool.
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (tool, _, props) in &failing {
        for p in props {
            by_name.entry(p.as_str()).or_default().push(tool.name.as_str());
        }
    }
    let mut stubs: Vec<(&&str, &Vec<&str>)> = by_name.iter().collect();
    stubs.sort_by_key(|(_, tools)| std::cmp::Reverse(tools.len()));
    for (name, tools) in stubs {
        let key = if tools.len() > 1 {
            bare_or_quoted(name)
        } else {
            quote(&format!("{}.{}", tools[0], pointer::push("", name)))
        };
        let _ = writeln!(s, "# {key} = [\"...\"]  # {}", tools.join(", "));
    }
}

/// The properties a failing tool's valid calls may need: the required top-level ones (all of
/// them when none is required) that take more than a few known values (no `enum`, `const` or
/// boolean), at most [`MAX_STUBS_PER_TOOL`].
fn stub_properties(schema: &Value) -> Vec<String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let names = if required.is_empty() {
        props.map(|p| p.keys().cloned().collect()).unwrap_or_default()
    } else {
        required
    };
    let closed = |name: &String| {
        props.and_then(|p| p.get(name)).is_some_and(|p| {
            p.get("enum").is_some()
                || p.get("const").is_some()
                || p.get("type") == Some(&"boolean".into())
        })
    };
    names.into_iter().filter(|n| !closed(n)).take(MAX_STUBS_PER_TOOL).collect()
}

fn bare_or_quoted(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_owned()
    } else {
        quote(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_file::ConfigFile;
    use serde_json::json;

    #[test]
    fn the_starter_parses_and_says_what_the_probe_saw() {
        let tool = |name: &str, ro: Option<bool>, schema: Value| {
            let mut raw = json!({"name": name, "inputSchema": schema});
            if let Some(ro) = ro {
                raw["annotations"] = json!({"readOnlyHint": ro, "destructiveHint": !ro});
            }
            Tool::parse_listed(&raw).expect("a usable tool")
        };
        let repo = json!({"type": "object", "properties": {"repo_path": {"type": "string"}, "n": {"type": "integer"}}, "required": ["repo_path"]});
        let tools = vec![
            tool("git_status", Some(true), repo.clone()),
            tool("git_log", Some(true), repo.clone()),
            tool(
                "git_show",
                Some(true),
                json!({"type": "object", "properties": {"rev": {"type": "string"}}}),
            ),
            tool("git_commit", Some(false), repo),
        ];
        let report: Report = serde_json::from_value(json!({
            "reportVersion": 1, "toolVersion": "0.1.0",
            "target": {"transport": "stdio", "command": ["srv"]},
            "server": {"name": "git", "version": "1.0"},
            "seed": 0,
            "tools": [
                {"name": "git_status", "status": "tested", "cases": {"boundary": 2, "valid": 3, "invalid": 4}, "graceful": 4, "scored": 4, "outcomes": {}, "validSucceeded": 0},
                {"name": "git_log", "status": "tested", "cases": {"boundary": 2, "valid": 3, "invalid": 4}, "graceful": 4, "scored": 4, "outcomes": {}, "validSucceeded": 0},
                {"name": "git_show", "status": "tested", "cases": {"boundary": 2, "valid": 3, "invalid": 4}, "graceful": 4, "scored": 4, "outcomes": {}, "validSucceeded": 5},
                {"name": "git_commit", "status": "skipped", "reason": "annotated readOnlyHint: false", "cases": {"boundary": 0, "valid": 0, "invalid": 0}, "graceful": 0, "scored": 0, "outcomes": {}}
            ],
            "findings": [
                {"tool": "git_status", "kind": "valid-call-failed", "severity": "info", "message": "m",
                 "outcome": {"kind": "tool-error", "text": "Repository path '.' is outside the allowed repository", "upstream": false}},
                {"tool": "git_log", "kind": "no-valid-call-succeeded", "severity": "warning", "message": "m"}
            ],
            "score": {"graceful": 8, "scored": 8, "percent": 100.0, "grade": "A"},
            "restarts": 0, "calls": 20, "durationSecs": 1.0
        }))
        .expect("report");
        let target = Target::Stdio {
            command: vec!["mcp-server-git".into(), "--repository".into(), "./repo".into()],
            env: vec![("TOKEN".into(), "secret".into())],
            inherit_env: false,
            cwd: None,
        };
        let text = starter(&Probe { tools, report }, &target);
        assert!(
            text.contains("command = [\"mcp-server-git\", \"--repository\", \"./repo\"]"),
            "{text}"
        );
        assert!(!text.contains("secret"), "env values are never written");
        assert!(
            text.contains(
                "git_commit  gated: annotated readOnlyHint: false; pass --include-destructive to \
                 call it"
            ),
            "{text}"
        );
        assert!(text.contains("git_status  read-only: 0 of 5 valid calls succeeded"), "{text}");
        assert!(text.contains("# repo_path = [\"...\"]  # git_status, git_log"), "{text}");
        assert!(text.contains("outside the allowed repository"), "{text}");
        assert!(!text.contains("git_show:"), "a tool whose valid calls succeeded gets no stub");
        assert!(text.contains("# cases = 10\n"), "{text}");
        assert!(text.contains("this directory.\n# output-dir = \"mcp-fuzz-report\"\n"), "{text}");
        // It is a valid config file, and uncommenting the stub makes one too.
        let dir = std::env::temp_dir().join(format!("mcp-fuzz-starter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("mcp-fuzz.toml");
        for t in [text.clone(), text.replace("# repo_path = [\"...\"]", "repo_path = [\"./repo\"]")]
        {
            std::fs::write(&path, &t).expect("writes");
            let f = ConfigFile::read(&path).expect("the starter reads back");
            assert!(f.server().is_some());
            f.profile("ci").expect("ci");
        }
        assert_eq!(ConfigFile::read(&path).expect("reads").hints().len(), 1);
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }
}
