//! `mcp-fuzz report merge`: shard reports (`--partition`) into one report and one score.
//!
//! The shards must come from the same run: the same `reportVersion`, `seed` and `target`
//! (otherwise a usage error, exit 2). Each tool is taken from the shard that called it (a tool
//! called by two shards is an error: the shards overlap); a tool no shard called keeps the first
//! shard's status. Server-wide findings that every shard saw are kept once. The score is
//! recomputed from the merged tools exactly as the engine computes it; calls and restarts add
//! up; the duration is the longest shard's (shards run side by side).

use super::model::{BaselineSummary, Doc, FindingDoc, ScoreDoc, ToolDoc};
use crate::errors::CliError;
use serde_json::{Value, json};

/// Merges shard reports, given with the names to show in errors.
///
/// # Errors
/// No reports, or reports from different runs or with overlapping shards.
pub fn merge(shards: Vec<(String, Doc)>) -> Result<Doc, CliError> {
    let mut iter = shards.into_iter();
    let Some((first_name, mut merged)) = iter.next() else {
        return Err(CliError::Usage("report merge needs at least one report".into()));
    };
    let mut sources = vec![json!({"file": first_name, "partition": merged.partition})];
    let mut owner: Vec<Option<String>> =
        merged.tools.iter().map(|t| t.was_called().then(|| first_name.clone())).collect();
    for (name, doc) in iter {
        let mismatch = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
            CliError::Usage(format!(
                "cannot merge {name} into {first_name}: different {what} ({b} vs {a}); merge only the shards of one run (same --seed, same server, same mcp-fuzz report version)"
            ))
        };
        if doc.report_version != merged.report_version {
            return Err(mismatch("reportVersion", &merged.report_version, &doc.report_version));
        }
        if doc.seed != merged.seed {
            return Err(mismatch("seed", &merged.seed, &doc.seed));
        }
        if doc.target != merged.target {
            return Err(mismatch("target", &merged.target, &doc.target));
        }
        sources.push(json!({"file": name, "partition": doc.partition}));
        for t in doc.tools {
            match merged.tools.iter().position(|m| m.name == t.name) {
                Some(i) if t.was_called() => {
                    if let Some(prev) = &owner[i] {
                        return Err(CliError::Usage(format!(
                            "cannot merge {name}: tool `{}` was also run by {prev}; the shards overlap (use the same --partition scheme and N, with different M)",
                            t.name
                        )));
                    }
                    merged.tools[i] = t;
                    owner[i] = Some(name.clone());
                }
                Some(_) => {}
                None => {
                    owner.push(t.was_called().then(|| name.clone()));
                    merged.tools.push(t);
                }
            }
        }
        for f in doc.findings {
            if !merged.findings.iter().any(|g| same(g, &f)) {
                merged.findings.push(f);
            }
        }
        merged.restarts += doc.restarts;
        merged.calls += doc.calls;
        merged.duration_secs = merged.duration_secs.max(doc.duration_secs);
        merged.baseline = match (merged.baseline.take(), doc.baseline) {
            (Some(a), Some(b)) => Some(BaselineSummary {
                file: a.file,
                known: a.known + b.known,
                new: a.new + b.new,
                stale: {
                    let mut s = a.stale;
                    s.extend(b.stale);
                    s.sort();
                    s.dedup();
                    s
                },
            }),
            (a, b) => a.or(b),
        };
    }
    merged.score = score(&merged.tools);
    merged.partition = None;
    merged.extra.insert("mergedFrom".into(), Value::Array(sources));
    Ok(merged)
}

fn same(a: &FindingDoc, b: &FindingDoc) -> bool {
    a.identity() == b.identity() && a.message == b.message
}

/// The run score from per-tool counts, as the engine computes it.
pub fn score(tools: &[ToolDoc]) -> ScoreDoc {
    let counted = tools.iter().filter(|t| t.status != "unavailable");
    let (graceful, scored) = counted.fold((0, 0), |(g, s), t| (g + t.graceful, s + t.scored));
    #[expect(clippy::cast_precision_loss, reason = "case counts are small")]
    let percent = (scored > 0).then(|| ((graceful as f64 * 1000.0 / scored as f64).round()) / 10.0);
    ScoreDoc {
        graceful,
        scored,
        percent,
        grade: percent.map(|p| mcp_fuzz_engine::run::grade(p).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, status: &str, graceful: u64, scored: u64) -> ToolDoc {
        serde_json::from_value(json!({"name": name, "status": status,
            "cases": {"boundary": 0, "valid": 0, "invalid": scored},
            "graceful": graceful, "scored": scored, "outcomes": {}}))
        .expect("tool")
    }

    #[test]
    fn the_score_leaves_unavailable_tools_out() {
        let s = score(&[
            tool("a", "tested", 2, 3),
            tool("b", "unavailable", 0, 5),
            tool("c", "gave-up", 0, 1),
        ]);
        assert_eq!((s.graceful, s.scored), (2, 4));
        assert_eq!(s.percent, Some(50.0));
        assert_eq!(s.grade.as_deref(), Some("D"));
        assert!(score(&[tool("a", "skipped", 0, 0)]).percent.is_none());
    }

    #[test]
    fn an_empty_merge_is_an_error() {
        assert!(merge(Vec::new()).is_err());
    }
}
