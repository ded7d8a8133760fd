//! `mcp-fuzz report merge`: shard reports (`--partition`) into one report and one score.
//!
//! The shards must come from the same run: the same `reportVersion`, `seed` and `target`
//! (otherwise an error). Each tool is taken from the shard that called it (a tool called by two
//! shards is an error: the shards overlap); a tool no shard called keeps the first shard's
//! status. Server-wide findings that every shard saw are kept once, and failures of one cause
//! on tools of different shards become one finding, as in one run. The score is recomputed from
//! the merged tools with [`Score::of`], as the engine computes it; calls and restarts add up; the
//! duration is the longest shard's (shards run side by side).

use crate::error::ReportError;
use mcp_fuzz_model::report::Score;
use mcp_fuzz_model::report::{BaselineSummary, Finding, MergeSource, Report, StatefulSummary};

/// Merges shard reports, given with the names to show in errors.
///
/// # Errors
/// No reports, or reports from different runs or with overlapping shards.
pub fn merge(shards: Vec<(String, Report)>) -> Result<Report, ReportError> {
    let mut iter = shards.into_iter();
    let Some((first_name, mut merged)) = iter.next() else {
        return Err(ReportError::Merge("report merge needs at least one report".into()));
    };
    let mut sources =
        vec![MergeSource { file: first_name.clone(), partition: merged.partition.clone() }];
    let mut owner: Vec<Option<String>> =
        merged.tools.iter().map(|t| t.status.was_called().then(|| first_name.clone())).collect();
    for (name, report) in iter {
        let mismatch = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
            ReportError::Merge(format!(
                "cannot merge {name} into {first_name}: different {what} ({b} vs {a}); merge only the shards of one run (same --seed, same server, same mcp-fuzz report version)"
            ))
        };
        if report.report_version != merged.report_version {
            return Err(mismatch("reportVersion", &merged.report_version, &report.report_version));
        }
        if report.seed != merged.seed {
            return Err(mismatch("seed", &merged.seed, &report.seed));
        }
        if report.target != merged.target {
            let show = |t: &mcp_fuzz_model::report::TargetInfo| {
                serde_json::to_string(t).unwrap_or_default()
            };
            return Err(mismatch("target", &show(&merged.target), &show(&report.target)));
        }
        sources.push(MergeSource { file: name.clone(), partition: report.partition.clone() });
        for t in report.tools {
            match merged.tools.iter().position(|m| m.name == t.name) {
                Some(i) if t.status.was_called() => {
                    if let Some(prev) = &owner[i] {
                        return Err(ReportError::Merge(format!(
                            "cannot merge {name}: tool `{}` was also run by {prev}; the shards overlap (use the same --partition scheme and N, with different M)",
                            t.name
                        )));
                    }
                    merged.tools[i] = t;
                    owner[i] = Some(name.clone());
                }
                Some(_) => {}
                None => {
                    owner.push(t.status.was_called().then(|| name.clone()));
                    merged.tools.push(t);
                }
            }
        }
        for f in report.findings {
            if !merged.findings.iter().any(|g| same(g, &f)) {
                merged.findings.push(f);
            }
        }
        merged.stateful = match (merged.stateful.take(), report.stateful) {
            (Some(a), Some(b)) => Some(merge_stateful(a, b)),
            (a, b) => a.or(b),
        };
        merged.restarts += report.restarts;
        merged.spares += report.spares;
        merged.recycled += report.recycled;
        merged.calls += report.calls;
        merged.duration_secs = merged.duration_secs.max(report.duration_secs);
        merged.baseline = match (merged.baseline.take(), report.baseline) {
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
    // A cause seen on tools of several shards is one finding again, as in a run of them all.
    merged.findings = mcp_fuzz_model::group::by_cause(merged.findings, None);
    merged.score = Score::of(&merged.tools);
    merged.partition = None;
    merged.merged_from = Some(sources);
    Ok(merged)
}

/// Two shards' sequence phases as one: their walks and calls add up, their tools, families and
/// links are put together.
fn merge_stateful(mut a: StatefulSummary, b: StatefulSummary) -> StatefulSummary {
    a.sequences += b.sequences;
    a.steps += b.steps;
    a.findings += b.findings;
    // Skipped only when every shard skipped it.
    a.skipped = a.skipped.filter(|_| b.skipped.is_some());
    for t in b.tools {
        if !a.tools.contains(&t) {
            a.tools.push(t);
        }
    }
    for f in b.families {
        match a.families.iter_mut().find(|g| g.noun == f.noun) {
            Some(g) => {
                for (mine, theirs) in [
                    (&mut g.creates, f.creates),
                    (&mut g.lists, f.lists),
                    (&mut g.reads, f.reads),
                    (&mut g.updates, f.updates),
                    (&mut g.deletes, f.deletes),
                ] {
                    mine.extend(
                        theirs.into_iter().filter(|t| !mine.contains(t)).collect::<Vec<_>>(),
                    );
                }
            }
            None => a.families.push(f),
        }
    }
    a.families.sort_by(|x, y| x.noun.cmp(&y.noun));
    for l in b.links {
        match a.links.iter_mut().find(|m| (&m.from, &m.to, &m.via) == (&l.from, &l.to, &l.via)) {
            Some(m) => m.calls += l.calls,
            None => a.links.push(l),
        }
    }
    a.links.sort_by(|x, y| (&x.from, &x.to, &x.via).cmp(&(&y.from, &y.to, &y.via)));
    a
}

fn same(a: &Finding, b: &Finding) -> bool {
    a.identity() == b.identity() && a.message == b.message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_merge_is_an_error() {
        assert!(merge(Vec::new()).is_err());
    }
}
