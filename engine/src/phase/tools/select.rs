//! Which listed tools a run calls: `--tool` / `--skip-tool` globs, the config file's per-tool
//! `skip`, the `readOnlyHint` gate (or a per-tool `include-destructive`) and the `--partition`
//! share.

use crate::config::RunConfig;
pub use crate::config::glob;
use crate::finding::{SkipReason, gate};

/// Deals the listed tools out: for each, in listing order, why it is not called, if it is not.
#[derive(Debug)]
pub struct Selector<'a> {
    cfg: &'a RunConfig,
    /// Tools that passed every other gate so far (`count:M/N` deals over these).
    dealt: u64,
}

impl<'a> Selector<'a> {
    /// A selector for one listing.
    #[must_use]
    pub fn new(cfg: &'a RunConfig) -> Self {
        Self { cfg, dealt: 0 }
    }

    /// Why `name` (annotated `readOnlyHint: read_only`) is not called, or `None` to call it.
    /// Call once per tool, in listing order.
    pub fn skip(&mut self, name: &str, read_only: Option<bool>) -> Option<SkipReason> {
        let s = &self.cfg.selection;
        let per_tool = self.cfg.tool_settings(name);
        if s.skip_tools.iter().any(|g| glob(g, name)) {
            return Some(SkipReason::Excluded);
        }
        if !s.tools.is_empty() && !s.tools.iter().any(|g| glob(g, name)) {
            return Some(SkipReason::NotSelected);
        }
        if per_tool.skip {
            return Some(SkipReason::SkippedByConfig);
        }
        if let Some(gated) = gate(read_only, per_tool.include_destructive) {
            return Some(gated);
        }
        let p = s.partition?;
        self.dealt += 1;
        (!p.contains(name, self.dealt - 1)).then_some(SkipReason::NotInPartition(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("get_*", "get_user"));
        assert!(glob("*", "x"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("get_*", "set_user"));
        assert!(glob("*_user", "get_user_user"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("**", ""));
        assert!(!glob("?", ""));
        assert!(glob("é?", "éa"));
        // Many stars against a long name that does not match: linear, not exponential.
        let name = "a".repeat(5_000);
        assert!(!glob(&format!("{}b", "*a".repeat(40)), &name));
        assert!(glob(&format!("{}a", "*a".repeat(40)), &name));
    }

    #[test]
    fn the_gates_apply_in_order_and_the_partition_deals_what_passes() {
        use crate::config::{Campaign, PerTool, Selection, ToolOverride};
        use crate::server::ServerSpec;
        use crate::transport::{ConnectOptions, Target};
        use std::time::Duration;
        let cfg = RunConfig {
            server: ServerSpec {
                target: Target::Http {
                    url: "http://x.invalid".into(),
                    headers: Vec::new(),
                    launch: None,
                },
                connect: ConnectOptions {
                    startup_timeout: Duration::from_secs(1),
                    max_response_bytes: 1,
                    max_call_time: Duration::from_secs(1),
                    roots: Vec::new(),
                    client: crate::transport::asks::ClientFeatures::default(),
                    heard: std::sync::Arc::default(),
                    sandbox: None,
                },
                sandboxing: crate::sandbox::SandboxOptions::default(),
                timeout: Duration::from_secs(1),
                spares: std::sync::Arc::default(),
                call_limit: std::sync::Arc::default(),
            },
            seed: 0,
            cases: 1,
            selection: Selection {
                include_destructive: false,
                tools: vec!["get_*".into()],
                skip_tools: vec!["get_secret".into()],
                partition: Some("count:1/2".parse().expect("partition")),
            },
            campaign: Campaign::default(),
            per_tool: PerTool {
                overrides: vec![
                    ToolOverride {
                        tools: "get_old".into(),
                        skip: Some(true),
                        ..Default::default()
                    },
                    ToolOverride {
                        tools: "get_w*".into(),
                        include_destructive: Some(true),
                        ..Default::default()
                    },
                ],
                hints: Vec::new(),
            },
        };
        let mut s = Selector::new(&cfg);
        assert_eq!(s.skip("get_secret", Some(true)), Some(SkipReason::Excluded));
        assert_eq!(s.skip("list", Some(true)), Some(SkipReason::NotSelected));
        assert_eq!(s.skip("get_old", Some(true)), Some(SkipReason::SkippedByConfig));
        assert_eq!(s.skip("get_x", None), Some(SkipReason::NotReadOnly(None)));
        assert_eq!(s.skip("get_a", Some(true)), None, "first dealt tool: shard 1");
        assert!(matches!(s.skip("get_b", Some(true)), Some(SkipReason::NotInPartition(_))));
        assert_eq!(s.skip("get_c", Some(true)), None);
        assert!(matches!(s.skip("get_write", Some(false)), Some(SkipReason::NotInPartition(_))));
        assert_eq!(s.skip("get_wipe", None), None, "include-destructive by override");
    }
}
