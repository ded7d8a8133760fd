//! The one-line `mcp-fuzz call ...` command that reproduces a finding, built from the report's
//! redacted target (so it works for a report read back from a file, and never shows a secret).

use serde_json::{Map, Value};

/// Quotes a word for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The server part of a command line (`-- CMD ARGS` or `--http URL`), with environment and
/// header values left as `…` for the user to fill in.
pub fn server_args(target: &Value) -> String {
    match target.get("transport").and_then(Value::as_str) {
        Some("streamable-http") => {
            let url = target.get("url").and_then(Value::as_str).unwrap_or("URL");
            let headers: String = strings(target, "headers")
                .iter()
                .map(|h| {
                    let name = h.split(':').next().unwrap_or(h);
                    format!(" --header {}", shell_quote(&format!("{name}: …")))
                })
                .collect();
            format!("--http {}{headers}", shell_quote(url))
        }
        _ => {
            let mut s = String::new();
            for kv in strings(target, "env") {
                let key = kv.split('=').next().unwrap_or(&kv);
                s.push_str(&format!("--env {key}=… "));
            }
            if target.get("inheritEnv").and_then(Value::as_bool) == Some(true) {
                s.push_str("--inherit-env ");
            }
            if let Some(cwd) = target.get("cwd").and_then(Value::as_str) {
                s.push_str(&format!("--cwd {} ", shell_quote(cwd)));
            }
            let command: Vec<String> =
                strings(target, "command").iter().map(|w| shell_quote(w)).collect();
            format!("{s}-- {}", command.join(" "))
        }
    }
}

/// `mcp-fuzz call --tool TOOL --args JSON <server>`.
pub fn replay_line(target: &Value, tool: &str, args: &Map<String, Value>) -> String {
    let json = Value::Object(args.clone()).to_string();
    format!(
        "mcp-fuzz call --tool {} --args {} {}",
        shell_quote(tool),
        shell_quote(&json),
        server_args(target)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn stdio_lines_name_env_keys_but_never_values() {
        let t = json!({"transport": "stdio", "command": ["node", "my server.js"],
            "env": ["TOKEN=[REDACTED]"], "inheritEnv": false, "cwd": "/srv"});
        let mut a = Map::new();
        a.insert("q".into(), json!("it's"));
        assert_eq!(
            replay_line(&t, "search", &a),
            "mcp-fuzz call --tool search --args '{\"q\":\"it'\\''s\"}' --env TOKEN=… --cwd /srv -- node 'my server.js'"
        );
    }

    #[test]
    fn http_lines_keep_header_names_only() {
        let t = json!({"transport": "streamable-http", "url": "http://h/mcp",
            "headers": ["Authorization: [REDACTED]"]});
        assert_eq!(
            replay_line(&t, "x", &Map::new()),
            "mcp-fuzz call --tool x --args '{}' --http http://h/mcp --header 'Authorization: …'"
        );
    }
}
