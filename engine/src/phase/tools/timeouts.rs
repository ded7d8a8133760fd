//! A tool's calls that got no answer within their timeout, watched for a late answer: their
//! findings are settled as hangs or slow work (the judge's [`settled`]) once the watches know,
//! and the case a timeout finding shows is the first one still unanswered.

use crate::config::RunConfig;
use crate::finding::FindingKind;
use crate::judge::{Found, learn, settled};
use crate::transport::{Late, LateWatch};
use futures_util::future::join_all;
use mcp_fuzz_model::case::Case;
use mcp_fuzz_model::facts::Fact;
use std::time::{Duration, Instant};

/// How long a tool's end waits for late answers before shrinking its timeouts.
pub(super) const LATE_GRACE: Duration = Duration::from_secs(2);

/// Settles the tool's `timeout` findings with what the watches on its unanswered calls know by
/// `by`; unless `last`, a finding with a call still unanswered stays a `timeout` for now.
pub(super) async fn settle(
    findings: &mut [Found],
    late: &[LateWatch],
    by: Instant,
    last: bool,
    cfg: &RunConfig,
) {
    if !findings.iter().any(|(f, _)| f.kind == FindingKind::Timeout) {
        return;
    }
    let lates: Vec<Late> = join_all(late.iter().map(|w| async {
        match w.settle(by).await {
            Late::Waiting => Late::Unanswered(w.watched()),
            l => l,
        }
    }))
    .await;
    let waiting = late.iter().any(|w| w.now() == Late::Waiting);
    if !last && waiting {
        return;
    }
    let how = settled(&lates, cfg.server.timeout);
    for (f, _) in findings.iter_mut().filter(|(f, _)| f.kind == FindingKind::Timeout) {
        learn(f, Fact::Settled(how));
    }
}

/// A timeout finding stands for all the tool's timeouts; its case is the first of them, which may
/// since have been answered (late). The case shrunk and shown is then the first one still
/// unanswered, the one that may be a hang.
pub(super) fn hang_first(
    findings: &mut [Found],
    late: &[LateWatch],
    late_case: &[usize],
    cases: &[Case],
) {
    let unanswered =
        late.iter().zip(late_case).find(|(w, _)| !matches!(w.now(), Late::Answered(_)));
    let Some((_, &j)) = unanswered else { return };
    for (f, origin) in findings.iter_mut() {
        let Some(i) = *origin else { continue };
        let answered = late_case
            .iter()
            .position(|&c| c == i)
            .is_some_and(|k| matches!(late[k].now(), Late::Answered(_)));
        if f.kind != FindingKind::Timeout || i == j || !answered {
            continue;
        }
        if let Some(label) = f.other_cases.iter_mut().find(|l| **l == cases[j].label) {
            *label = cases[i].label.clone();
        }
        f.case = Some(cases[j].label.clone());
        f.arguments = Some(cases[j].arguments.clone());
        *origin = Some(j);
    }
}

/// Resolves once every watched call has been answered; never, if one is not.
pub(super) async fn all_answered(late: &[LateWatch]) {
    for w in late {
        if !matches!(w.settle(w.limit()).await, Late::Answered(_)) {
            std::future::pending::<()>().await;
        }
    }
}

/// The moment a call is called hung: once watched for `--max-call-time` (twice its timeout
/// unless set; shrinking usually took longer) from the latest start among `late`.
pub(super) fn hung_by(late: &[LateWatch], cfg: &RunConfig) -> Instant {
    let t = cfg.server.timeout;
    let watched = cfg.server.connect.max_call_time.max(t + Duration::from_secs(1));
    late.iter().map(|w| w.sent() + watched).max().unwrap_or_else(Instant::now)
}

/// Calls still unanswered are not watched past the tool: the server is told to stop them.
pub(super) async fn give_up(late: &[LateWatch]) {
    for w in late {
        w.give_up();
    }
    join_all(late.iter().map(|w| w.settle(w.limit()))).await;
}
