//! `mcp-fuzz.toml` (issue 16): discovery in parent directories, `--config`, `--profile`, strict
//! keys with line numbers, flags over the file, `mcp-fuzz` alone running the configured server,
//! per-tool overrides, value hints that make valid calls succeed, `mcp-fuzz init`, and the JSON
//! Schema of the file (`docs/config.schema.json`, regenerated from the code).
//!
//! See: issue 16, "a config file, value hints, init, coverage".

use crate::run::server;
use crate::util::{TempDir, code, command, finish, tool};
use serde_json::Value;
use std::path::Path;

/// Runs `mcp-fuzz ARGS` in `dir`.
fn in_dir(dir: &Path, args: &[&str]) -> crate::util::Run {
    let mut c = command(args);
    c.current_dir(dir);
    finish(c.spawn().expect("mcp-fuzz starts"))
}

/// The JSON report on stdout.
fn report(run: &crate::util::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!("not a JSON report ({e}); stderr:\n{}\nstdout:\n{}", run.stderr, run.stdout)
    })
}

/// A `[server]` table starting the fixture `name`.
fn server_table(name: &str) -> String {
    format!("[server]\ncommand = [{:?}]\n", server(name).display().to_string())
}

fn kinds(r: &Value, tool: &str) -> Vec<String> {
    r["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["tool"] == tool)
        .map(|f| {
            format!("{}/{}", f["kind"].as_str().unwrap_or(""), f["severity"].as_str().unwrap_or(""))
        })
        .collect()
}

#[test]
fn mcp_fuzz_alone_runs_the_server_of_the_config_found_in_a_parent() {
    let dir = TempDir::new("cfg-parent");
    let text = format!(
        "{}\n[profile.default]\ncases = 1\nseed = 7\nformat = [\"json\"]\nquiet = true\n",
        server_table("fx-healthy")
    );
    std::fs::write(dir.join("mcp-fuzz.toml"), text).expect("writes");
    let sub = dir.join("a/b");
    std::fs::create_dir_all(&sub).expect("subdir");
    let run = in_dir(&sub, &[]);
    run.assert_code(code::SUCCESS);
    let r = report(&run);
    assert_eq!(r["seed"], 7, "the file's profile");
    assert!(r["calls"].as_u64().expect("calls") > 0);
    assert_eq!(r["target"]["cwd"], dir.path().display().to_string(), "runs in the file's dir");
    assert!(run.stderr.is_empty(), "quiet = true: {}", run.stderr);
    // Flags win over the file, and `-- CMD` replaces its server.
    let run = in_dir(&sub, &["--seed", "3", "--", &server("fx-healthy").display().to_string()]);
    let r = report(run.assert_code(code::SUCCESS));
    assert_eq!((r["seed"].as_u64(), r["target"]["cwd"].is_null()), (Some(3), true));
}

#[test]
fn config_names_a_file_and_profile_ci_writes_every_report() {
    let dir = TempDir::new("cfg-explicit");
    let elsewhere = TempDir::new("cfg-cwd");
    let path = dir.join("fuzz.toml");
    let text = format!(
        "{}\n[profile.default]\ncases = 1\nseed = 11\n[profile.ci]\nseed = 12\nquiet = true\n",
        server_table("fx-healthy")
    );
    std::fs::write(&path, text).expect("writes");
    let cfg = path.display().to_string();
    let r = report(in_dir(elsewhere.path(), &["--config", &cfg, "--json"]).assert_code(0));
    assert_eq!(r["seed"], 11);
    let run = in_dir(elsewhere.path(), &["--config", &cfg, "--profile", "ci"]);
    run.assert_code(code::SUCCESS);
    assert!(run.stdout.contains("Crash-resilience score"), "the human summary: {}", run.stdout);
    // The built-in ci profile writes the four reports to mcp-fuzz-report/ next to the file.
    let out = dir.join("mcp-fuzz-report");
    for f in ["report.json", "report.junit.xml", "report.sarif", "report.md"] {
        assert!(out.join(f).is_file(), "{f} in {}", out.display());
    }
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("reads"))
            .expect("JSON");
    assert_eq!(r["seed"], 12, "[profile.ci] over [profile.default]");
    let run = in_dir(elsewhere.path(), &["--config", &cfg, "--profile", "nightly"]);
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("no profile `nightly`") && run.stderr.contains("`ci`, `default`"));
    let missing = in_dir(elsewhere.path(), &["--config", "no-such.toml"]);
    missing.assert_code(code::USAGE);
    assert!(missing.stderr.contains("failed to read no-such.toml"), "{}", missing.stderr);
}

#[test]
fn an_unknown_key_or_a_bad_value_is_an_error_naming_the_line_and_the_key() {
    let dir = TempDir::new("cfg-bad");
    let file = dir.join("mcp-fuzz.toml");
    std::fs::write(&file, "[profile.default]\ncases = 1\ncasess = 2\n").expect("writes");
    let run = in_dir(dir.path(), &["--", "true"]);
    run.assert_code(code::USAGE);
    assert!(
        run.stderr
            .contains("mcp-fuzz.toml:3:1: unknown key `casess`, expected one of `startup-timeout`"),
        "{}",
        run.stderr
    );
    std::fs::write(&file, "[profile.default]\n\njobs = 99\n").expect("writes");
    let run = in_dir(dir.path(), &["--", "true"]);
    run.assert_code(code::USAGE);
    assert!(
        run.stderr.contains(":3:8: key `jobs`: expected a whole number from 1 to 64"),
        "{}",
        run.stderr
    );
    std::fs::write(&file, "[profile.default]\ncases = 1\n").expect("writes");
    let run = in_dir(dir.path(), &[]);
    run.assert_code(code::USAGE);
    assert!(
        run.stderr.contains("no server given") && run.stderr.contains("[server]"),
        "{}",
        run.stderr
    );
}

#[test]
fn overrides_skip_gate_and_size_tools_by_glob() {
    let dir = TempDir::new("cfg-overrides");
    let marker = dir.join("deleted");
    let text = format!(
        "{}env = {{ FX_MARKER_FILE = {:?} }}\n\n[profile.default]\ncases = 2\nformat = [\"json\"]\n\
         [[profile.default.overrides]]\ntools = \"delete_*\"\ninclude-destructive = true\ncases = 0\n\
         [[profile.default.overrides]]\ntools = \"*\"\ncases = 5\nskip = false\n\
         [[profile.ci.overrides]]\ntools = \"status\"\nskip = true\n",
        server_table("fx-destructive"),
        marker.display().to_string()
    );
    std::fs::write(dir.join("mcp-fuzz.toml"), text).expect("writes");
    let r = report(in_dir(dir.path(), &["--quiet"]).assert_code(code::SUCCESS));
    let (delete, status) = (tool(&r, "delete_all"), tool(&r, "status"));
    assert_eq!(delete["status"], "tested", "include-destructive for delete_*: {r:#}");
    assert!(std::fs::read_to_string(&marker).is_ok_and(|t| t.contains("delete_all called")));
    assert_eq!(delete["cases"]["valid"], 0, "cases = 0 from the first override that sets it");
    assert_eq!(status["cases"]["valid"], 5, "cases = 5 from the catch-all");
    in_dir(dir.path(), &["--quiet", "--profile", "ci"]).assert_code(code::SUCCESS);
    let written = std::fs::read_to_string(dir.join("mcp-fuzz-report/report.json")).expect("ci");
    let r: Value = serde_json::from_str(&written).expect("JSON");
    assert_eq!(tool(&r, "status")["status"], "skipped");
    assert_eq!(tool(&r, "status")["reason"], "skipped by an override in mcp-fuzz.toml");
    assert_eq!(tool(&r, "delete_all")["status"], "tested", "ci keeps default's overrides");
}

#[test]
fn a_tool_timeout_and_expected_slow_by_override() {
    let dir = TempDir::new("cfg-slow");
    let base = format!(
        "{}\n[profile.default]\ncases = 0\ntimeout = \"1s\"\nmax-call-time = \"10s\"\nno-shrink = true\n",
        server_table("fx-slow")
    );
    let file = dir.join("mcp-fuzz.toml");
    std::fs::write(
        &file,
        format!("{base}[[profile.default.overrides]]\ntools = \"slow\"\nexpected-slow = true\n"),
    )
    .expect("writes");
    let r = report(in_dir(dir.path(), &["--quiet", "--json"]).assert_code(code::SUCCESS));
    let slow = kinds(&r, "slow");
    assert!(slow.contains(&"slow/info".to_owned()), "expected-slow: slow is an info: {slow:?}");
    assert!(slow.iter().all(|k| !k.ends_with("/warning") && !k.ends_with("/failure")), "{slow:?}");
    std::fs::write(
        &file,
        format!("{base}[[profile.default.overrides]]\ntools = \"s*\"\ntimeout = \"6s\"\n"),
    )
    .expect("writes");
    let r = report(in_dir(dir.path(), &["--quiet", "--json"]).assert_code(code::SUCCESS));
    assert_eq!(kinds(&r, "slow"), Vec::<String>::new(), "the tool's own 6 s timeout: {r:#}");
}

#[test]
fn value_hints_make_valid_calls_succeed_and_are_reported_as_hinted() {
    let dir = TempDir::new("cfg-hints");
    let file = dir.join("mcp-fuzz.toml");
    let base = format!(
        "{}\n[profile.default]\ncases = 4\nformat = [\"json\"]\n",
        server_table("fx-sandbox")
    );
    std::fs::write(&file, &base).expect("writes");
    let before = report(in_dir(dir.path(), &["--quiet"]).assert_code(code::SUCCESS));
    for t in ["read_note", "list_notes", "notify"] {
        assert_eq!(tool(&before, t)["validSucceeded"], 0, "{t} without hints");
        assert!(kinds(&before, t).contains(&"no-valid-call-succeeded/warning".to_owned()));
    }
    let hints = "[hints]\n\"read_*./path\" = [\"./sandbox/a.txt\", \"./sandbox/b.txt\"]\n\
                 dir = \"./sandbox\"\n\"format:email\" = [\"ops@example.com\"]\n";
    std::fs::write(&file, format!("{base}{hints}")).expect("writes");
    let after = report(in_dir(dir.path(), &["--quiet"]).assert_code(code::SUCCESS));
    for t in ["read_note", "list_notes", "notify"] {
        let line = tool(&after, t);
        let hinted = &line["hinted"];
        assert!(hinted["calls"].as_u64() > Some(0), "{t}: {line:#}");
        assert_eq!(hinted["succeeded"], hinted["calls"], "{t}: every hinted call succeeds");
        assert_eq!(line["validSucceeded"], hinted["succeeded"], "{t}: only hinted ones do");
        assert!(!kinds(&after, t).iter().any(|k| k.starts_with("no-valid-call-succeeded")));
    }
    // Two values used in turn: read_note's hinted cases name both notes.
    assert!(tool(&after, "read_note")["hinted"]["calls"].as_u64() >= Some(2));
    // The human summary says how many tools were exercised.
    let human = in_dir(dir.path(), &["--quiet", "--format", "human"]);
    assert!(human.stdout.contains("Coverage: 3 of 3 tested tool(s) exercised"), "{}", human.stdout);
    // A regex hint draws strings; a note path that does not exist is a graceful failure.
    std::fs::write(&file, format!("{base}[hints]\npath = {{ glob = \"./sandbox/?.txt\" }}\n"))
        .expect("writes");
    let drawn = report(in_dir(dir.path(), &["--quiet", "--cases", "30"]).assert_code(0));
    let hinted = &tool(&drawn, "read_note")["hinted"];
    assert!(hinted["calls"].as_u64() > Some(5), "{hinted}");
    assert!(hinted["succeeded"].as_u64() < hinted["calls"].as_u64(), "not every letter is a note");
}

#[test]
fn init_writes_a_starter_that_runs_and_never_overwrites_without_force() {
    let dir = TempDir::new("cfg-init");
    let fx = server("fx-sandbox").display().to_string();
    let run = in_dir(dir.path(), &["init", "--", &fx]);
    run.assert_code(code::SUCCESS);
    assert!(
        run.stderr.contains("wrote mcp-fuzz.toml: 3 tool(s), 3 hint stub(s)"),
        "{}",
        run.stderr
    );
    let path = dir.join("mcp-fuzz.toml");
    let text = std::fs::read_to_string(&path).expect("written");
    assert!(text.contains(&format!("command = [{fx:?}]")), "{text}");
    assert!(text.contains("#   read_note   read-only: 0 of "), "{text}");
    assert!(text.contains("# \"read_note./path\" = [\"...\"]  # read_note"), "{text}");
    assert!(text.contains("no such note") || text.contains("outside the allowed directory"));
    assert!(text.contains("# cases = 10\n"), "the defaults, commented: {text}");
    // Never over an existing file without --force.
    std::fs::write(&path, "# mine\n").expect("writes");
    let again = in_dir(dir.path(), &["init", "--", &fx]);
    again.assert_code(code::USAGE);
    assert!(again.stderr.contains("already exists; pass --force"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&path).expect("reads"), "# mine\n");
    in_dir(dir.path(), &["init", "--force", "--", &fx]).assert_code(code::SUCCESS);
    let text = std::fs::read_to_string(&path).expect("rewritten");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1, "no temporary file left");
    // The starter runs as written, and with its stubs filled in the tools are exercised.
    let filled = text
        .replace("# \"read_note./path\" = [\"...\"]", "\"read_note./path\" = [\"./sandbox/a.txt\"]")
        .replace("# \"list_notes./dir\" = [\"...\"]", "\"list_notes./dir\" = [\"./sandbox\"]")
        .replace("# \"notify./to\" = [\"...\"]", "\"notify./to\" = [\"ops@example.com\"]");
    std::fs::write(&path, filled).expect("writes");
    let r = report(in_dir(dir.path(), &["--quiet", "--json", "--cases", "2"]).assert_code(0));
    for t in ["read_note", "list_notes", "notify"] {
        assert!(tool(&r, t)["validSucceeded"].as_u64() > Some(0), "{t}: {r:#}");
    }
    let unreachable =
        in_dir(dir.path(), &["init", "--output", "other.toml", "--", "/nonexistent/srv"]);
    assert_eq!(unreachable.code, 3, "{}", unreachable.stderr);
    assert!(!dir.join("other.toml").exists());
}

/// `docs/config.schema.json` is what the code writes; the built-in defaults and a full example
/// validate against it. `MCP_FUZZ_BLESS=1` rewrites it.
#[test]
fn config_schema_is_generated_from_the_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config.schema.json");
    let schema = mcp_fuzz_engine::config_file::json_schema();
    let text = format!("{}\n", serde_json::to_string_pretty(&schema).expect("serialises"));
    if std::env::var_os("MCP_FUZZ_BLESS").is_some() {
        std::fs::write(&path, &text).expect("writes the schema");
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == text,
        "docs/config.schema.json is not what the code writes; regenerate it with \
         `MCP_FUZZ_BLESS=1 cargo test --release --test integration config_schema` and review the diff"
    );
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the config schema compiles");
    let example = r#"
        [server]
        http = "http://127.0.0.1:3000/mcp"
        headers = { Authorization = "MCP_TOKEN" }
        [profile.default]
        cases = 20
        timeout = 2.5
        format = ["sarif", "junit"]
        partition = "count:1/2"
        [[profile.default.overrides]]
        tools = "export_*"
        timeout = "60s"
        expected-slow = true
        [hints]
        path = ["./a.txt"]
        "git_*./repo_path" = "./repo"
        "format:email" = { regex = "[a-z]+@example[.]com" }
    "#;
    for (name, toml_text) in [
        ("default-config.toml", mcp_fuzz_engine::config_file::DEFAULT_CONFIG),
        ("example", example),
    ] {
        let doc: Value =
            serde_json::to_value(toml::from_str::<toml::Table>(toml_text).expect("TOML"))
                .expect("JSON");
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{name} breaks the config schema: {errors:#?}");
    }
    let bad: Value = serde_json::json!({"profile": {"default": {"casess": 1}}});
    assert!(!validator.is_valid(&bad), "unknown keys are refused by the schema too");
}
