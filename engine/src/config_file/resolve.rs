//! A layered profile (flags over the file over the defaults) resolved into what the engine runs:
//! the server's limits ([`ServerSpec`]) and the whole [`RunConfig`].

use super::keys::Profile;
use crate::config::ShrinkConfig;
use crate::config::{Beyond, Campaign, PerTool, RunConfig, Selection, Stateful, ToolHint};
use crate::server::ServerSpec;
use crate::transport::asks::ClientFeatures;
use crate::transport::{ConnectOptions, Target};
use std::time::Duration;

/// A setting the built-in defaults give a value to.
fn set<T>(value: Option<T>) -> T {
    value.expect("the built-in default profile sets every key that has a default (tested)")
}

impl Profile {
    /// Checks the settings that must go together (after the flags are layered on).
    ///
    /// # Errors
    /// `update-baseline` without `baseline`.
    pub fn check(&self) -> Result<(), super::ConfigError> {
        if self.update_baseline == Some(true) && self.baseline.is_none() {
            return Err(super::ConfigError::Conflict(
                "--update-baseline needs a baseline file: pass --baseline FILE or set `baseline` \
                 in the profile",
            ));
        }
        Ok(())
    }

    /// The server at `target` with this profile's limits. `max-call-time` defaults to twice
    /// the longest timeout (the run's or an override's), and is never below it.
    #[must_use]
    pub fn server_spec(&self, target: Target) -> ServerSpec {
        let timeout = set(self.timeout).0;
        let longest = self.overrides.iter().filter_map(|o| o.timeout).fold(timeout, Duration::max);
        ServerSpec {
            target,
            connect: ConnectOptions {
                startup_timeout: set(self.startup_timeout).0,
                max_response_bytes: set(self.max_response_bytes),
                max_call_time: self.max_call_time.map_or(longest * 2, |m| m.0.max(longest)),
                roots: self.roots.clone().unwrap_or_default().into_iter().map(Into::into).collect(),
                client: ClientFeatures::of(
                    self.client_capabilities.as_deref().unwrap_or_default(),
                    self.elicit.unwrap_or_default(),
                ),
                heard: std::sync::Arc::default(),
                sandbox: None,
            },
            sandboxing: crate::sandbox::SandboxOptions {
                off: self.no_sandbox == Some(true),
                keep: self.keep_sandbox == Some(true),
                from: self.sandbox_from.as_ref().map(Into::into),
            },
            timeout,
            spares: std::sync::Arc::default(),
            call_limit: std::sync::Arc::default(),
        }
    }

    /// The run this profile describes, against `target`, with `hints`.
    #[must_use]
    pub fn run_config(&self, target: Target, hints: Vec<ToolHint>) -> RunConfig {
        let flag = |b: Option<bool>| b.unwrap_or(false);
        RunConfig {
            server: self.server_spec(target),
            seed: set(self.seed),
            cases: set(self.cases),
            selection: Selection {
                include_destructive: flag(self.include_destructive),
                tools: self.tool.clone().unwrap_or_default(),
                skip_tools: self.skip_tool.clone().unwrap_or_default(),
                partition: self.partition,
            },
            campaign: Campaign {
                shrink: ShrinkConfig {
                    enabled: !flag(self.no_shrink),
                    time: set(self.shrink_time).0,
                    max_steps: set(self.max_shrink_steps),
                    ..ShrinkConfig::default()
                },
                jobs: usize::try_from(set(self.jobs).0).unwrap_or(1),
                time_budget: self.time_budget.map(|d| d.0),
                tool_time_budget: self.tool_time_budget.map(|d| d.0),
                max_failures: self.max_failures.and_then(|n| usize::try_from(n.0).ok()),
                feed: !flag(self.no_feed),
                stateful: Stateful {
                    enabled: !flag(self.no_stateful),
                    sequences: usize::try_from(set(self.sequences).0).unwrap_or(usize::MAX),
                    length: usize::try_from(set(self.sequence_length).0).unwrap_or(usize::MAX),
                },
                expected_slow: false,
                beyond: Beyond {
                    prompts: !flag(self.no_prompts),
                    resources: !flag(self.no_resources),
                    protocol: !flag(self.no_protocol),
                },
            },
            per_tool: PerTool { overrides: self.overrides.clone(), hints },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ToolOverride;
    use crate::config_file::{ConfigFile, DEFAULT_PROFILE, Seconds};
    use crate::transport::Target;
    use std::time::Duration;

    #[test]
    fn the_defaults_resolve_and_max_call_time_covers_every_timeout() {
        let target =
            Target::Http { url: "http://x.invalid".into(), headers: Vec::new(), launch: None };
        let p = ConfigFile::builtin().profile(DEFAULT_PROFILE).expect("default");
        let cfg = p.run_config(target.clone(), Vec::new());
        assert_eq!((cfg.cases, cfg.seed, cfg.campaign.jobs), (10, 0, 1));
        assert_eq!(cfg.server.timeout, Duration::from_secs(10));
        assert_eq!(cfg.server.connect.max_call_time, Duration::from_secs(20));
        assert!(cfg.campaign.shrink.enabled && cfg.campaign.feed);
        let mut slow = p.clone();
        slow.overrides.push(ToolOverride {
            tools: "export".into(),
            timeout: Some(Duration::from_secs(60)),
            ..ToolOverride::default()
        });
        assert_eq!(
            slow.server_spec(target.clone()).connect.max_call_time,
            Duration::from_secs(120)
        );
        slow.max_call_time = Some(Seconds(Duration::from_secs(30)));
        assert_eq!(slow.server_spec(target).connect.max_call_time, Duration::from_secs(60));
    }
}
