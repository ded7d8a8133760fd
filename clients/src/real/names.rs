//! How each client rewrites a server's tool name before showing it to the model, and the way
//! back to the name the server listed.
//!
//! The rewrites were observed with the pinned versions (see `fixtures/clients/real/`): Codex CLI
//! replaces every character outside `[A-Za-z0-9_]` with `_` inside its `mcp__<server>`
//! namespace; Claude Code prefixes `mcp__<server>__` and replaces characters outside
//! `[A-Za-z0-9_-]`; Gemini CLI prefixes `mcp_<server>_`, replaces characters outside
//! `[A-Za-z0-9_.-]`, and cuts a name longer than 63 characters to its first 30 and last 30 around
//! `...`. Mapping back tries the observed rule first and falls back to a looser comparison, so a
//! rule that changes in a new version still maps unambiguous names.

use super::RealClient;

/// The key the captures give the server in every client's configuration.
pub(crate) const SERVER_KEY: &str = "srv";

fn sanitize(name: &str, keep: impl Fn(char) -> bool) -> String {
    name.chars().map(|c| if keep(c) { c } else { '_' }).collect()
}

/// Why: the longest function name Gemini CLI sends (its limit is 64; it cuts to 63).
const GEMINI_MAX: usize = 63;
const GEMINI_HALF: usize = 30;

/// The name `client` shows the model for a server tool named `name` (observed rule).
pub(crate) fn shown(client: RealClient, name: &str) -> String {
    match client {
        RealClient::Inspector | RealClient::Mcpo => name.to_owned(),
        RealClient::CodexCli => sanitize(name, |c| c.is_ascii_alphanumeric() || c == '_'),
        RealClient::ClaudeCode => {
            format!(
                "mcp__{SERVER_KEY}__{}",
                sanitize(name, |c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            )
        }
        RealClient::GeminiCli => {
            let full = format!(
                "mcp_{SERVER_KEY}_{}",
                sanitize(name, |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            );
            let chars: Vec<char> = full.chars().collect();
            if chars.len() <= GEMINI_MAX {
                full
            } else {
                let head: String = chars[..GEMINI_HALF].iter().collect();
                let tail: String = chars[chars.len() - GEMINI_HALF..].iter().collect();
                format!("{head}...{tail}")
            }
        }
    }
}

/// The prefix `client` puts before every MCP tool name (empty when none).
pub(crate) fn prefix(client: RealClient) -> String {
    match client {
        RealClient::ClaudeCode => format!("mcp__{SERVER_KEY}__"),
        RealClient::GeminiCli => format!("mcp_{SERVER_KEY}_"),
        _ => String::new(),
    }
}

/// Lowercase, every non-alphanumeric character as `_`.
fn loose(name: &str) -> String {
    name.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// The server tool (among `listed`) that `client` showed as `shown_name`, when exactly one fits.
pub(crate) fn map_back(client: RealClient, shown_name: &str, listed: &[&str]) -> Option<String> {
    let exact: Vec<&&str> = listed.iter().filter(|n| shown(client, n) == shown_name).collect();
    if let [one] = exact.as_slice() {
        return Some((**one).to_owned());
    }
    if exact.len() > 1 {
        return None;
    }
    let bare = shown_name.strip_prefix(prefix(client).as_str()).unwrap_or(shown_name);
    let fits = |candidate: &str| -> bool {
        let candidate = loose(candidate);
        match bare.split_once("...") {
            Some((head, tail)) => {
                let (head, tail) = (loose(head), loose(tail));
                candidate.len() >= head.len() + tail.len()
                    && candidate.starts_with(&head)
                    && candidate.ends_with(&tail)
            }
            None => candidate == loose(bare),
        }
    };
    let loose_hits: Vec<&&str> = listed.iter().filter(|n| fits(n)).collect();
    match loose_hits.as_slice() {
        [one] => Some((**one).to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_observed_rewrites() {
        assert_eq!(shown(RealClient::CodexCli, "dot.name"), "dot_name");
        assert_eq!(shown(RealClient::CodexCli, "unicode_é"), "unicode__");
        assert_eq!(shown(RealClient::ClaudeCode, "dash-name"), "mcp__srv__dash-name");
        assert_eq!(shown(RealClient::ClaudeCode, "space name"), "mcp__srv__space_name");
        assert_eq!(shown(RealClient::GeminiCli, "dot.name"), "mcp_srv_dot.name");
        let long = "x".repeat(70);
        let cut = shown(RealClient::GeminiCli, &long);
        assert_eq!(cut.chars().count(), 63);
        assert_eq!(cut, format!("mcp_srv_{}...{}", "x".repeat(22), "x".repeat(30)));
    }

    #[test]
    fn names_map_back_exactly_or_loosely_and_never_ambiguously() {
        let listed = [
            "dot.name",
            "dot_name",
            "space name",
            "long_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_end",
        ];
        assert_eq!(
            map_back(RealClient::GeminiCli, "mcp_srv_dot.name", &listed).as_deref(),
            Some("dot.name")
        );
        // Codex shows both `dot.name` and `dot_name` as `dot_name`: not decidable.
        assert_eq!(map_back(RealClient::CodexCli, "dot_name", &listed), None);
        assert_eq!(
            map_back(RealClient::CodexCli, "space_name", &listed).as_deref(),
            Some("space name")
        );
        let cut = shown(RealClient::GeminiCli, listed[3]);
        assert_eq!(map_back(RealClient::GeminiCli, &cut, &listed).as_deref(), Some(listed[3]));
        // A rule change (say, a different cut) still maps through the loose comparison.
        assert_eq!(
            map_back(RealClient::GeminiCli, "mcp_srv_long_aaaa...aaaa_end", &listed).as_deref(),
            Some(listed[3])
        );
        assert_eq!(map_back(RealClient::ClaudeCode, "mcp__srv__unknown", &listed), None);
    }
}
