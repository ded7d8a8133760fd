//! One bug, one finding, across tools: failures with one cause seen on several tools become one
//! server-wide finding naming the tools, and the deaths on a call number proved to be the
//! server's call limit (the engine's `limit` proof), whatever the calls were, one `dies-after-calls`
//! finding.
//!
//! Pure functions over findings: the run calls [`by_cause`] on its findings, and `report merge`
//! on all the shards' findings together. A server-wide finding keeps the per-tool findings it
//! stands for (`members`), so that merging first takes it apart and two shards' halves of one
//! cause meet again.
//!
//! See: <https://nexte.st/docs/features/flaky/> (one result per cause, not per attempt).

use crate::finding::{FindingKind, Severity};
use crate::outcome::Outcome;
use crate::report::Finding;
use crate::template;
use std::collections::BTreeMap;

/// Fresh processes that must each die on exactly the candidate call number.
///
/// Why: the worst case is a server that dies at random right after a warm-up, with the
/// candidate the first call past it (fx-flaky: a death per call of 1 in 3 after 20 calls, so
/// the candidate is often call 21). Each process then dies on call 21 one time in three, and
/// six in a row happen one time in 729; two (the old count) passed one run in nine. A real
/// limit costs six times N calls to prove, which a fast server answers in milliseconds and
/// the proof's deadline (`limit::prove`) bounds for a slow one.
pub const CALL_LIMIT_PROCESSES: usize = 6;

/// Regroups `findings` by cause across tools; `limit` is a call limit proved by
/// the engine's `limit` proof (`None` when merging shards: their `dies-after-calls` findings carry theirs).
/// Idempotent, and the same on a run's findings as on the findings of its shards put together
/// (`report merge`): groups made earlier are taken apart first.
#[must_use]
pub fn by_cause(findings: Vec<Finding>, limit: Option<u64>) -> Vec<Finding> {
    let mut flat: Vec<Finding> = Vec::new();
    let mut limits: Vec<u64> = limit.into_iter().collect();
    for f in findings {
        // Protocol checks grouped by their phase stay as they are (no tool to group by).
        if f.tool.is_none() && !f.members.is_empty() && f.check.is_none() {
            limits.extend(f.at_call.filter(|_| f.kind == FindingKind::DiesAfterCalls));
            flat.extend(f.members);
        } else {
            flat.push(f);
        }
    }
    match limits.into_iter().min() {
        Some(n) => shared(dying(flat, n)),
        None => shared(flat),
    }
}

/// Deaths that a fresh process did not repeat, on call `n` of their processes (or the next,
/// for a request the server counts that is not a call, such as a `ping` to a slow server): one
/// `dies-after-calls` finding, where the first of them was.
fn dying(findings: Vec<Finding>, n: u64) -> Vec<Finding> {
    let near = |c: &&u64| (n..=n + 1).contains(*c);
    let on_limit = |f: &Finding| flaky_deaths(f).iter().any(|c| near(&c));
    let Some(at) = findings.iter().position(on_limit) else { return findings };
    let (members, mut rest): (Vec<Finding>, Vec<Finding>) =
        findings.into_iter().partition(on_limit);
    let deaths = members.iter().flat_map(|m| flaky_deaths(m).iter().filter(near)).count();
    rest.insert(at, dies_after_calls(members, n, deaths as u64));
    rest
}

/// The call numbers of a finding's deaths that a fresh process did not repeat.
pub fn flaky_deaths(f: &Finding) -> &[u64] {
    if f.kind == FindingKind::Flaky && matches!(f.outcome, Some(Outcome::Exited { .. })) {
        &f.death_calls
    } else {
        &[]
    }
}

/// The one server-wide finding for deaths on call `n`.
fn dies_after_calls(mut members: Vec<Finding>, n: u64, deaths: u64) -> Finding {
    members.sort_by(|a, b| a.tool.cmp(&b.tool));
    let tools = tool_names(&members);
    // Deaths on several tools' inputs show that any call counts; the proof repeats one input.
    let whatever = if tools.len() > 1 { " whatever the calls are" } else { "" };
    let message = format!(
        "the server process dies on its call number {n}{whatever}: {deaths} death(s) on that call \
         of a process while calling {}, whose inputs a fresh process answers; confirmed on {} \
         fresh processes, each of which answered {} calls of that input and died on call {n}",
        list(&tools),
        CALL_LIMIT_PROCESSES,
        n.saturating_sub(1)
    );
    Finding {
        outcome: members.iter().find_map(|m| m.outcome.clone()),
        tools,
        members,
        at_call: Some(n),
        occurrences: deaths.max(1),
        ..Finding::general(None, FindingKind::DiesAfterCalls, Severity::Failure, message)
    }
}

/// Failures of one shared cause ([`Outcome::shared_cause`]) on two tools or more become one
/// finding, where the first of them was.
fn shared(findings: Vec<Finding>) -> Vec<Finding> {
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        if let Some(key) = shared_key(f) {
            by_key.entry(key).or_default().push(i);
        }
    }
    let mut groups: BTreeMap<usize, (String, Vec<usize>)> = BTreeMap::new();
    for (key, mut at) in templates_absorb(by_key) {
        at.sort_unstable();
        let mut tools: Vec<&str> = at.iter().filter_map(|&i| findings[i].tool.as_deref()).collect();
        tools.dedup();
        if tools.len() >= 2 {
            groups.insert(at[0], (key, at));
        }
    }
    if groups.is_empty() {
        return findings;
    }
    let mut slots: Vec<Option<Finding>> = findings.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for i in 0..slots.len() {
        if let Some((key, at)) = groups.remove(&i) {
            let members: Vec<Finding> = at.iter().filter_map(|&j| slots[j].take()).collect();
            out.push(one_cause(key, members));
        } else if let Some(f) = slots[i].take() {
            out.push(f);
        }
    }
    out
}

/// Keys that fit another key's template ([`crate::template`]) join its findings: one template
/// is one cause whatever the values it echoed.
fn templates_absorb(by_key: BTreeMap<String, Vec<usize>>) -> BTreeMap<String, Vec<usize>> {
    let keys: Vec<String> = by_key.keys().cloned().collect();
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (key, at) in by_key {
        let template = keys.iter().find(|t| template::fits(t, &key)).unwrap_or(&key);
        out.entry(template.clone()).or_default().extend(at);
    }
    out
}

/// What groups a finding with other tools' findings, if anything does.
fn shared_key(f: &Finding) -> Option<String> {
    if f.tool.is_none() || f.severity != Severity::Failure || !f.members.is_empty() {
        return None;
    }
    let outcome = f.outcome.as_ref()?;
    match &f.arguments {
        Some(args) => outcome.without_echoes(args).shared_cause(),
        None => outcome.shared_cause(),
    }
}

/// The server-wide finding of one cause: the case shown is the simplest of its members'.
fn one_cause(key: String, mut members: Vec<Finding>) -> Finding {
    // By tool name, so that shards merged in any order give the same finding.
    members.sort_by(|a, b| a.tool.cmp(&b.tool));
    let size = |f: &Finding| {
        f.smallest_arguments().map_or(0, |a| serde_json::to_string(a).map_or(0, |s| s.len()))
    };
    let first = (0..members.len()).min_by_key(|&i| size(&members[i])).unwrap_or(0);
    members[..=first].rotate_right(1);
    let tools = tool_names(&members);
    let shown = &members[0];
    let message = format!("in {} tools ({}): {}", tools.len(), list(&tools), shown.message);
    Finding {
        tool: None,
        message,
        cause: Some(key),
        occurrences: members.iter().map(|m| m.occurrences).sum(),
        other_cases: Vec::new(),
        tools,
        evidence: shown.evidence.clone(),
        members: Vec::new(),
        ..shown.clone()
    }
    .with_members(members)
}

impl Finding {
    fn with_members(mut self, members: Vec<Finding>) -> Self {
        self.members = members;
        self
    }
}

/// The members' tools, each once, in order.
fn tool_names(members: &[Finding]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for t in members.iter().filter_map(|m| m.tool.as_ref()) {
        if !tools.contains(t) {
            tools.push(t.clone());
        }
    }
    tools
}

/// `` `a`, `b` and `c` ``.
fn list(tools: &[String]) -> String {
    let quoted: Vec<String> = tools.iter().map(|t| format!("`{t}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::ExitInfo;

    fn crash(tool: &str, site: &str, args: &str) -> Finding {
        let outcome = Outcome::Exited {
            exit: ExitInfo { code: Some(101), signal: None },
            stderr: vec![format!("thread 'main' panicked at {site}:"), "boom".into()],
        };
        Finding {
            outcome: Some(outcome),
            arguments: serde_json::from_str(args).ok(),
            ..Finding::general(
                Some(tool.into()),
                FindingKind::Exited,
                Severity::Failure,
                format!("{tool} died"),
            )
        }
    }

    fn flaky_death(tool: &str, at_call: u64) -> Finding {
        Finding {
            kind: FindingKind::Flaky,
            severity: Severity::Warning,
            death_calls: vec![at_call],
            ..crash(tool, "x.rs:1:1", "{}")
        }
    }

    #[test]
    fn one_panic_site_on_several_tools_is_one_server_wide_finding() {
        let findings = vec![
            crash("a", "src/shared.rs:10:5", r#"{"n": 100000}"#),
            crash("b", "src/own.rs:3:1", "{}"),
            crash("c", "src/shared.rs:10:5", r#"{"n": 0}"#),
        ];
        let grouped = by_cause(findings, None);
        assert_eq!(grouped.len(), 2, "{grouped:#?}");
        let g = &grouped[0];
        assert_eq!(
            (g.tool.as_deref(), g.tools.clone()),
            (None, vec!["c".to_owned(), "a".to_owned()])
        );
        assert_eq!(g.case_tool(), Some("c"), "the simplest case is shown");
        assert_eq!(g.members.len(), 2);
        assert!(g.message.starts_with("in 2 tools (`c` and `a`): c died"), "{}", g.message);
        assert!(g.concerns("a") && g.concerns("c") && !g.concerns("b"));
        assert_eq!(g.identity().tool, None);
        assert!(g.identity().cause.is_some_and(|c| c.contains("panic at src/shared.rs:10:5")));
        assert_eq!(grouped[1].tool.as_deref(), Some("b"));
        // Regrouping (as merge does) gives the same findings.
        let again = by_cause(grouped.clone(), None);
        assert_eq!(serde_json::to_value(&again).ok(), serde_json::to_value(&grouped).ok());
    }

    #[test]
    fn one_message_template_is_one_cause_whatever_the_values_it_echoed() {
        let not_found = |tool: &str, args: &str, name: &str| Finding {
            outcome: Some(Outcome::InternalError {
                upstream: false,
                message: format!("Entity with name {name} not found"),
            }),
            arguments: serde_json::from_str(args).ok(),
            ..Finding::general(
                Some(tool.into()),
                FindingKind::InternalError,
                Severity::Failure,
                format!("{tool}: {name}"),
            )
        };
        let findings = vec![
            not_found("update", r#"{"name": 0}"#, "0"),
            not_found("add", r#"{"entityName": "qvyv"}"#, "qvyv"),
            not_found("update", r#"{"name": null}"#, "null"),
            not_found("open", r#"{"names": []}"#, ""),
        ];
        let grouped = by_cause(findings, None);
        assert_eq!(grouped.len(), 1, "{grouped:#?}");
        assert_eq!(grouped[0].tools, vec!["update", "add", "open"], "the simplest case first");
        assert_eq!(grouped[0].members.len(), 4);
    }

    #[test]
    fn general_causes_and_one_tool_are_not_grouped() {
        let timeout = |t: &str| Finding {
            outcome: Some(Outcome::Timeout),
            ..Finding::general(Some(t.into()), FindingKind::Timeout, Severity::Failure, "t".into())
        };
        let bare_exit = |t: &str| Finding {
            outcome: Some(Outcome::Exited {
                exit: ExitInfo { code: Some(1), signal: None },
                stderr: Vec::new(),
            }),
            ..Finding::general(Some(t.into()), FindingKind::Exited, Severity::Failure, "e".into())
        };
        let findings = vec![timeout("a"), timeout("b"), bare_exit("a"), bare_exit("b")];
        assert_eq!(by_cause(findings, None).len(), 4);
        let one_tool = vec![crash("a", "s.rs:1:1", "{}"), crash("a", "s.rs:1:1", "{}")];
        assert!(by_cause(one_tool, None).iter().all(|f| f.tool.is_some()));
    }

    #[test]
    fn deaths_on_a_proved_call_limit_make_one_server_wide_finding() {
        let findings = vec![
            crash("x", "s.rs:1:1", "{}"),
            Finding { death_calls: vec![40, 40], ..flaky_death("a", 40) },
            flaky_death("b", 41),
            flaky_death("c", 7),
        ];
        let json = |f: &[Finding]| serde_json::to_value(f).ok();
        let unproved = by_cause(findings.clone(), None);
        assert_eq!(json(&unproved), json(&findings), "no limit proved: as they were");
        let grouped = by_cause(findings, Some(40));
        assert_eq!(grouped.len(), 3, "{grouped:#?}");
        let d = &grouped[1];
        assert_eq!(d.kind, FindingKind::DiesAfterCalls);
        assert_eq!((d.severity, d.at_call, d.occurrences), (Severity::Failure, Some(40), 3));
        assert_eq!(d.tools, ["a", "b"]);
        assert!(d.message.contains("call number 40") && d.message.contains("`a` and `b`"));
        assert!(
            d.message.contains("answered 39 calls of that input and died on call 40"),
            "{}",
            d.message
        );
        assert_eq!(grouped[2].kind, FindingKind::Flaky, "a death elsewhere stays a warning");
        // Two shards' findings merge into one; the limit travels with the finding.
        let other = by_cause(vec![flaky_death("d", 40)], None);
        let merged = by_cause(grouped.into_iter().chain(other).collect(), None);
        let d: Vec<&Finding> =
            merged.iter().filter(|f| f.kind == FindingKind::DiesAfterCalls).collect();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].at_call, d[0].occurrences, d[0].tools.len()), (Some(40), 4, 3));
        // A deterministic crash never joins it.
        let alone = by_cause(vec![flaky_death("a", 40), crash("b", "s.rs:1:1", "{}")], Some(40));
        assert_eq!(alone[0].kind, FindingKind::DiesAfterCalls);
        assert_eq!(alone[1].kind, FindingKind::Exited);
    }
}
