//! The five real clients, their pinned versions and where each shows a server's tools.

use crate::Adapter;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A real MCP client (or proxy) whose rendering of a server's tools is captured by running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RealClient {
    /// MCP Inspector CLI (`inspector --cli --method tools/list`): the tools as a TypeScript-SDK
    /// client parses them.
    Inspector,
    /// mcpo, the MCP-to-OpenAPI proxy: the tools as OpenAPI operations.
    Mcpo,
    /// OpenAI Codex CLI: the tools in its Responses API request.
    CodexCli,
    /// Anthropic Claude Code: the tools in its Messages API request.
    ClaudeCode,
    /// Google Gemini CLI: the tools in its `streamGenerateContent` request.
    GeminiCli,
}

impl RealClient {
    /// Every real client, in report order.
    pub const ALL: [RealClient; 5] = [
        RealClient::Inspector,
        RealClient::Mcpo,
        RealClient::CodexCli,
        RealClient::ClaudeCode,
        RealClient::GeminiCli,
    ];

    /// The client's stable name (`inspector`, `mcpo`, `codex-cli`, `claude-code`, `gemini-cli`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inspector => "inspector",
            Self::Mcpo => "mcpo",
            Self::CodexCli => "codex-cli",
            Self::ClaudeCode => "claude-code",
            Self::GeminiCli => "gemini-cli",
        }
    }

    /// The client named `name`, if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The version `scripts/install-clients.sh` installs (and the recorded captures come from).
    #[must_use]
    pub fn pinned_version(self) -> &'static str {
        match self {
            Self::Inspector => "2.12.0",
            Self::Mcpo => "0.0.20",
            Self::CodexCli => "0.171.0",
            Self::ClaudeCode => "2.1.332",
            Self::GeminiCli => "0.61.0",
        }
    }

    /// The registry package, as `registry:name`.
    #[must_use]
    pub fn package(self) -> &'static str {
        match self {
            Self::Inspector => "npm:@modelcontextprotocol/inspector",
            Self::Mcpo => "pypi:mcpo",
            Self::CodexCli => "npm:@openai/codex",
            Self::ClaudeCode => "npm:@anthropic-ai/claude-code",
            Self::GeminiCli => "npm:@google/gemini-cli",
        }
    }

    /// The npm package name of a Node client (`None` for mcpo).
    pub(crate) fn npm_package(self) -> Option<&'static str> {
        self.package().strip_prefix("npm:")
    }

    /// The executable names the client installs, most specific first.
    pub(crate) fn executables(self) -> &'static [&'static str] {
        match self {
            Self::Inspector => &["inspector", "mcp-inspector"],
            Self::Mcpo => &["mcpo"],
            Self::CodexCli => &["codex"],
            Self::ClaudeCode => &["claude"],
            Self::GeminiCli => &["gemini"],
        }
    }

    /// How to install the pinned version: on `PATH` from its registry, or all five with
    /// `scripts/install-clients.sh` from a checkout.
    #[must_use]
    pub fn install_hint(self) -> String {
        let (registry, name) = self.package().split_once(':').expect("registry:name");
        let pinned = self.pinned_version();
        let on_path = if registry == "npm" {
            format!("`npm install -g {name}@{pinned}`")
        } else {
            // See scripts/clients/requirements.txt: mcpo 0.0.20 breaks with mcp 2 and fastapi 0.145.
            format!(
                "`pip install {name}=={pinned} \"mcp<2\" \"fastapi<0.145\"` (in a venv on PATH)"
            )
        };
        format!(
            "install it with {on_path}, or from a checkout of mcp-fuzz run \
             `scripts/install-clients.sh` (all five clients into target/clients); --clients-dir \
             or MCP_FUZZ_CLIENTS_DIR names another directory that script installed into"
        )
    }

    /// The modelled adapter this client is held against (`clients/tests/models_vs_real.rs`).
    #[must_use]
    pub fn modelled(self) -> Adapter {
        match self {
            Self::Inspector => Adapter::Mcp,
            Self::Mcpo => Adapter::Openapi,
            Self::CodexCli => Adapter::OpenaiStrict,
            Self::ClaudeCode => Adapter::Anthropic,
            Self::GeminiCli => Adapter::Gemini,
        }
    }

    /// Whether the client talks to a model provider (and so needs the loopback stand-in).
    #[must_use]
    pub fn is_agent(self) -> bool {
        matches!(self, Self::CodexCli | Self::ClaudeCode | Self::GeminiCli)
    }
}

impl fmt::Display for RealClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_name() {
        for client in RealClient::ALL {
            let json = serde_json::to_value(client).expect("serialises");
            assert_eq!(json, client.as_str());
            assert_eq!(RealClient::from_name(client.as_str()), Some(client));
            let back: RealClient = serde_json::from_value(json).expect("deserialises");
            assert_eq!(back, client);
        }
        assert_eq!(RealClient::from_name("codex"), None);
    }

    #[test]
    fn install_hints_name_the_script_and_the_pin() {
        assert!(RealClient::Mcpo.install_hint().contains("mcpo==0.0.20"));
        assert!(RealClient::CodexCli.install_hint().contains("@openai/codex@0.171.0"));
        for client in RealClient::ALL {
            assert!(client.install_hint().contains("scripts/install-clients.sh"));
        }
    }
}
