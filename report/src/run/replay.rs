//! The one-line `mcp-fuzz call ...` command that reproduces a finding, built from the report's
//! redacted target (so it works for a report read back from a file, and never shows a secret).

use mcp_fuzz_model::report::TargetInfo;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Quotes a word for a POSIX shell.
#[must_use]
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The server part of a command line (`-- CMD ARGS` or `--http URL`), with environment and
/// header values left as `…` for the user to fill in.
#[must_use]
pub fn server_args(target: &TargetInfo) -> String {
    match target {
        TargetInfo::Http { url, headers, launch } => {
            let mut s = format!("--http {}", shell_quote(url));
            for h in headers {
                let name = h.split(':').next().unwrap_or(h);
                let _ = write!(s, " --header {}", shell_quote(&format!("{name}: …")));
            }
            if let Some(l) = launch {
                let _ = write!(
                    s,
                    " {}",
                    command_args(&l.command, &l.env, l.inherit_env, l.cwd.as_ref())
                );
            }
            s
        }
        TargetInfo::Stdio { command, env, inherit_env, cwd } => {
            command_args(command, env, *inherit_env, cwd.as_ref())
        }
    }
}

/// `--env KEY=… --inherit-env --cwd DIR -- CMD ARGS`.
fn command_args(
    command: &[String],
    env: &[String],
    inherit_env: bool,
    cwd: Option<&String>,
) -> String {
    let mut s = String::new();
    for kv in env {
        let key = kv.split('=').next().unwrap_or(kv);
        let _ = write!(s, "--env {key}=… ");
    }
    if inherit_env {
        s.push_str("--inherit-env ");
    }
    if let Some(cwd) = cwd {
        let _ = write!(s, "--cwd {} ", shell_quote(cwd));
    }
    let command: Vec<String> = command.iter().map(|w| shell_quote(w)).collect();
    format!("{s}-- {}", command.join(" "))
}

/// `mcp-fuzz call --tool TOOL --args JSON <server>`.
#[must_use]
pub fn replay_line(target: &TargetInfo, tool: &str, args: &Map<String, Value>) -> String {
    let json = Value::Object(args.clone()).to_string();
    format!(
        "mcp-fuzz call --tool {} --args {} {}",
        shell_quote(tool),
        shell_quote(&json),
        server_args(target)
    )
}

/// `mcp-fuzz call --prompt NAME --args JSON`, `--resource URI` or `--complete JSON` with the
/// server, for a request of the phase beyond tools (`{"method": ..., "params": ...}`); `None`
/// for another method.
#[must_use]
pub fn request_line(target: &TargetInfo, request: &Value) -> Option<String> {
    let params = request.get("params")?;
    let what = match request.get("method")?.as_str()? {
        "prompts/get" => {
            let name = shell_quote(params.get("name")?.as_str()?);
            match params.get("arguments") {
                Some(args) => format!("--prompt {name} --args {}", shell_quote(&args.to_string())),
                None => format!("--prompt {name}"),
            }
        }
        "resources/read" => format!("--resource {}", shell_quote(params.get("uri")?.as_str()?)),
        "completion/complete" => format!("--complete {}", shell_quote(&params.to_string())),
        _ => return None,
    };
    Some(format!("mcp-fuzz call {what} {}", server_args(target)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_beside_tools_replay_with_their_own_flags() {
        let t = TargetInfo::Stdio {
            command: vec!["srv".into()],
            env: Vec::new(),
            inherit_env: false,
            cwd: None,
        };
        let line = |r: Value| request_line(&t, &r);
        assert_eq!(
            line(json!({"method": "prompts/get", "params": {"name": "greet", "arguments": {"n": "x"}}}))
                .as_deref(),
            Some("mcp-fuzz call --prompt greet --args '{\"n\":\"x\"}' -- srv")
        );
        assert_eq!(
            line(json!({"method": "resources/read", "params": {"uri": "file:///a b"}})).as_deref(),
            Some("mcp-fuzz call --resource 'file:///a b' -- srv")
        );
        let complete = json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}});
        assert!(
            line(json!({"method": "completion/complete", "params": complete}))
                .is_some_and(|l| l.starts_with("mcp-fuzz call --complete '{"))
        );
        assert_eq!(line(json!({"method": "prompts/list", "params": {}})), None);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn stdio_lines_name_env_keys_but_never_values() {
        let t = TargetInfo::Stdio {
            command: vec!["node".into(), "my server.js".into()],
            env: vec!["TOKEN=[REDACTED]".into()],
            inherit_env: false,
            cwd: Some("/srv".into()),
        };
        let mut a = Map::new();
        a.insert("q".into(), json!("it's"));
        assert_eq!(
            replay_line(&t, "search", &a),
            "mcp-fuzz call --tool search --args '{\"q\":\"it'\\''s\"}' --env TOKEN=… --cwd /srv -- node 'my server.js'"
        );
    }

    #[test]
    fn http_lines_keep_header_names_only() {
        let t = TargetInfo::Http {
            url: "http://h/mcp".into(),
            headers: vec!["Authorization: [REDACTED]".into()],
            launch: None,
        };
        assert_eq!(
            replay_line(&t, "x", &Map::new()),
            "mcp-fuzz call --tool x --args '{}' --http http://h/mcp --header 'Authorization: …'"
        );
    }

    #[test]
    fn launched_http_lines_name_the_command_after_the_url() {
        let t = TargetInfo::Http {
            url: "http://127.0.0.1:{port}/mcp".into(),
            headers: Vec::new(),
            launch: Some(mcp_fuzz_model::target::LaunchInfo {
                command: vec!["node".into(), "server.js".into()],
                env: vec!["TOKEN=[REDACTED]".into()],
                inherit_env: false,
                cwd: None,
            }),
        };
        assert_eq!(
            replay_line(&t, "x", &Map::new()),
            "mcp-fuzz call --tool x --args '{}' --http 'http://127.0.0.1:{port}/mcp' --env TOKEN=… -- node server.js"
        );
    }
}
