//! Shrinking a failing case to a minimal input that still fails the same way.
//!
//! Two searches, both against the live server:
//! - a random case's value tree, regenerated from the tool seed and the case's draw index, is
//!   walked with proptest's `simplify`/`complicate` (the generator keeps every value on its side);
//! - then, for every case, structural edits (drop a property or an item, shorten a string,
//!   move a number towards zero) that the generator's oracle accepts: a valid case stays valid,
//!   an invalid one keeps the labelled violation and gains no other.
//!
//! "The same way" is a [`Signature`]: the outcome kind, the JSON-RPC code, and for an exit the
//! status or signal and the panic location when stderr names one. The search is bounded in calls
//! and time; the minimal case is then re-run to tell a deterministic failure from a flaky one.

use crate::config::ShrinkConfig;
use crate::judge::Outcome;
use crate::phase::tools::plan::{Case, CaseLabel, Mode};
use crate::server::{Attempt, Called, Instance, Keep, patience};
use crate::transport::Exchange;
use futures_util::future::join_all;
use mcp_fuzz_generators::pointer::push;
use mcp_fuzz_generators::{Generator, Invalid};
use mcp_fuzz_model::facts::Scaling;
use proptest::strategy::ValueTree;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

pub use mcp_fuzz_model::shrink::{ShrinkStats, Signature};

/// A validation error as `(instance pointer, keyword)`.
type Violation = (String, String);

/// Which inputs a shrunk case may take: the same side of the schema, the same violation.
pub struct Admissible<'g> {
    generator: &'g Generator,
    /// For invalid cases: the labelled violation, and every violation of the original.
    invalid: Option<(Violation, Vec<Violation>)>,
}

impl<'g> Admissible<'g> {
    /// The rule for a case with `label` whose original arguments are `original`.
    #[must_use]
    pub fn new(generator: &'g Generator, label: &CaseLabel, original: &Map<String, Value>) -> Self {
        let invalid = (!label.mode.is_valid()).then(|| {
            (
                (
                    label.pointer.clone().unwrap_or_default(),
                    label.keyword.clone().unwrap_or_default(),
                ),
                generator.violations(&Value::Object(original.clone())),
            )
        });
        Self { generator, invalid }
    }

    /// Whether `candidate` may replace the current smallest case.
    #[must_use]
    pub fn admits(&self, candidate: &Value) -> bool {
        if !candidate.is_object() {
            return false;
        }
        match &self.invalid {
            None => self.generator.is_valid(candidate),
            Some(((pointer, keyword), original)) => {
                let now = self.generator.violations(candidate);
                !now.is_empty()
                    && now.iter().all(|v| original.contains(v))
                    && now.iter().any(|(p, k)| {
                        k == keyword
                            && (p == pointer
                                || pointer.starts_with(&format!("{p}/"))
                                || p.starts_with(&format!("{pointer}/")))
                    })
            }
        }
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn get<'v>(root: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(root, |v, s| match s {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

fn get_mut<'v>(root: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(root, |v, s| match s {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

fn paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                at.push(Step::Key(k.clone()));
                paths(child, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                at.push(Step::Index(i));
                paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// Candidate replacements for one node, simplest first.
fn simpler(v: &Value) -> Vec<Value> {
    match v {
        Value::Bool(true) => vec![Value::Bool(false)],
        Value::Number(n) => {
            let mut out = Vec::new();
            if let Some(i) = n.as_i64() {
                if i != 0 {
                    out.push(Value::from(0));
                    // Towards zero, the biggest jumps first: a bisection across restarts.
                    let mut d = i / 2;
                    while d != 0 {
                        out.push(Value::from(i - d));
                        d /= 2;
                    }
                }
            } else if let Some(u) = n.as_u64() {
                out.push(Value::from(0));
                let mut d = u / 2;
                while d != 0 {
                    out.push(Value::from(u - d));
                    d /= 2;
                }
            } else if let Some(f) = n.as_f64() {
                out.push(Value::from(0));
                if f.trunc() != f {
                    #[expect(clippy::cast_possible_truncation, reason = "bounded by the check")]
                    if f.abs() < 9.0e15 {
                        out.push(Value::from(f.trunc() as i64));
                    }
                }
            }
            out
        }
        Value::String(s) if !s.is_empty() => {
            let n = s.chars().count();
            let mut out = vec![Value::from("")];
            // Shorter, the biggest cuts first (n/2, 3n/4, ..., n-1): a bisection over the
            // length when only long strings fail.
            let mut d = n / 2;
            while d != 0 {
                out.push(Value::from(s.chars().take(n - d).collect::<String>()));
                d /= 2;
            }
            for c in ['a', 'A', '0'] {
                let same: String = std::iter::repeat_n(c, n).collect();
                if &same != s {
                    out.push(Value::from(same));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The `k`-th simpler replacement of a node, simplest first. Containers are enumerated lazily: a
/// large array has as many candidates as items, each as big as the array.
fn nth_simpler(v: &Value, k: usize) -> Option<Value> {
    match v {
        Value::Array(a) if !a.is_empty() => {
            let halves = usize::from(a.len() > 2);
            match k {
                0 => Some(Value::Array(Vec::new())),
                1 if halves == 1 => Some(Value::Array(a[..a.len() / 2].to_vec())),
                _ => {
                    // Then drop one item, the last first.
                    let j = k - 1 - halves;
                    (j < a.len()).then(|| {
                        let mut b = a.clone();
                        b.remove(a.len() - 1 - j);
                        Value::Array(b)
                    })
                }
            }
        }
        Value::Object(m) => m.keys().nth(k).map(|key| {
            let mut n = m.clone();
            n.shift_remove(key);
            Value::Object(n)
        }),
        _ => simpler(v).into_iter().nth(k),
    }
}

/// Every one-edit simplification of `root`, containers before leaves, shallow before deep; made
/// one at a time.
pub fn candidates(root: &Value) -> impl Iterator<Item = Value> + '_ {
    let mut all = Vec::new();
    paths(root, &mut Vec::new(), &mut all);
    // Containers first (dropping a property or an item saves the most), then leaves.
    all.sort_by_key(|p| {
        let container = get(root, p).is_some_and(|v| v.is_object() || v.is_array());
        (!container, p.len())
    });
    all.into_iter().flat_map(move |p| {
        let node = get(root, &p);
        (0..).map_while(move |k| node.and_then(|n| nth_simpler(n, k))).filter_map(move |r| {
            let mut c = root.clone();
            get_mut(&mut c, &p).map(|slot| *slot = r)?;
            Some(c)
        })
    })
}

/// Smaller means fewer JSON bytes, then a smaller absolute number at the first difference.
#[must_use]
pub fn smaller(a: &Value, b: &Value) -> bool {
    let (sa, sb) = (a.to_string(), b.to_string());
    sa.len() < sb.len() || (sa.len() == sb.len() && sa < sb)
}

/// Trees of either side, seen as trees of arguments.
trait Tree {
    /// The current arguments, or `None` when the value left the case's kind (another mutation).
    fn current(&self) -> Option<Value>;
    fn simplify(&mut self) -> bool;
    fn complicate(&mut self) -> bool;
}

struct ValidTree(Box<dyn ValueTree<Value = Value>>);

impl Tree for ValidTree {
    fn current(&self) -> Option<Value> {
        Some(self.0.current())
    }
    fn simplify(&mut self) -> bool {
        self.0.simplify()
    }
    fn complicate(&mut self) -> bool {
        self.0.complicate()
    }
}

struct InvalidTree(Box<dyn ValueTree<Value = Invalid>>, String);

impl Tree for InvalidTree {
    fn current(&self) -> Option<Value> {
        let c = self.0.current();
        (c.label.mutation.as_str() == self.1).then_some(c.value)
    }
    fn simplify(&mut self) -> bool {
        self.0.simplify()
    }
    fn complicate(&mut self) -> bool {
        self.0.complicate()
    }
}

/// The result of shrinking one failing case.
pub(crate) struct Shrunk {
    pub minimal: Map<String, Value>,
    pub stats: ShrinkStats,
    pub flaky: Option<bool>,
    pub exchange: Option<Exchange>,
    pub stderr: Vec<String>,
    pub outcome: Option<Outcome>,
    /// It failed only on a process that had earlier calls; a fresh one answered it cleanly.
    pub needs_history: bool,
    /// It failed again only on a fresh process: the process it first failed on was left in a
    /// state (a breaker opened, a cache poisoned) that answers differently.
    pub poisons: bool,
    /// For a hang: its time follows one number of the input, so it is slow by input, not hung.
    pub scaling: Option<Scaling>,
    /// A fresh process failed another way and never the same way: its failure is the bug, and
    /// the one first seen is a state the earlier calls left (a circuit breaker).
    pub fresh_instead: bool,
}

/// How many numbers of a hanging case are probed for [`Scaling`].
const SCALING_LEAVES: usize = 2;
/// How many eighths down a number is probed (8^5: from an hour to a tenth of a second).
const DESCENT: u32 = 5;

/// What a shrink needs to know about the case.
pub(crate) struct Subject<'a> {
    pub tool: &'a str,
    pub tool_seed: u64,
    pub generator: &'a Generator,
    pub output: Option<&'a jsonschema::Validator>,
    pub case: &'a Case,
    pub outcome: &'a Outcome,
}

struct Search<'s, 'c> {
    slot: &'s mut Instance<'c>,
    subject: &'s Subject<'s>,
    signature: Signature,
    tried: HashMap<String, bool>,
    stats: ShrinkStats,
    limit: Instant,
    max_steps: u32,
    /// Every candidate runs on a fresh server process: the failure does not show on one that
    /// has had earlier calls (a circuit breaker that opened, a poisoned cache).
    fresh: bool,
    /// For a hang: how long a candidate may stay unanswered, while the server answers a
    /// `ping`, to count as hanging too (the minimal one is then re-run with the whole timeout).
    screen: Option<Duration>,
    /// For a hang: what the timing probe found.
    scaling: Option<Scaling>,
}

impl Search<'_, '_> {
    /// Calls the tool once (on a fresh process when `fresh`); `None` if the server could not
    /// be (re)started.
    async fn call(
        &mut self,
        arguments: &Map<String, Value>,
        keep: Keep,
        fresh: bool,
    ) -> Option<Called> {
        if fresh {
            self.slot.renew().await;
        }
        let s = self.subject;
        self.slot.call(s.tool, arguments, s.output, keep).await.ok()
    }

    /// Whether the budget is spent (and records why), or a hang proved slow by input.
    fn spent(&mut self) -> bool {
        if self.stats.exhausted.is_some() || self.scaling.is_some() {
            return true;
        }
        if self.stats.steps >= self.max_steps {
            self.stats.exhausted = Some("steps".into());
        } else if Instant::now() >= self.limit {
            self.stats.exhausted = Some("time".into());
        }
        self.stats.exhausted.is_some()
    }

    /// Whether `candidate` still fails the same way (calling the server at most once per value).
    async fn fails(&mut self, candidate: &Value) -> bool {
        let key = candidate.to_string();
        if let Some(r) = self.tried.get(&key) {
            return *r;
        }
        let Value::Object(arguments) = candidate else { return false };
        self.stats.steps += 1;
        let r = if let Some(screen) = self.screen {
            match self.timed(arguments, screen).await {
                Ok(None) => true,
                Ok(Some((c, _))) => self.signature.matches_call(&c.outcome, arguments),
                Err(()) => {
                    self.stats.exhausted = Some("restart".into());
                    false
                }
            }
        } else {
            match self.call(arguments, Keep::default(), self.fresh).await {
                Some(c) => self.signature.matches_call(&c.outcome, arguments),
                None => {
                    self.stats.exhausted = Some("restart".into());
                    false
                }
            }
        };
        self.tried.insert(key, r);
        if r {
            self.stats.accepted += 1;
        }
        r
    }

    /// One screened call: its answer and how long it took, or `None` when it is still running
    /// after `screen` (it is then abandoned); `Err` when the server could not be (re)started.
    async fn timed(
        &mut self,
        arguments: &Map<String, Value>,
        screen: Duration,
    ) -> Result<Option<(Called, Duration)>, ()> {
        let s = self.subject;
        let start = Instant::now();
        match self.slot.call_patiently(s.tool, arguments, s.output, Keep::default(), screen).await {
            Ok(Attempt::Waiting(w)) => {
                w.abandon();
                Ok(None)
            }
            Ok(Attempt::Done(c)) => Ok(Some((c, start.elapsed()))),
            Err(_) => Err(()),
        }
    }

    /// One timed probe of `candidate` (a step of the search).
    async fn time(&mut self, candidate: &Value, screen: Duration) -> Timing {
        let Value::Object(arguments) = candidate else { return Timing::Failed };
        self.stats.steps += 1;
        match self.timed(arguments, screen).await {
            Ok(None) => Timing::Hung,
            Ok(Some((c, t))) if !c.outcome.is_failure() => Timing::Answered(t),
            Ok(Some(_)) => Timing::Failed,
            Err(()) => {
                self.stats.exhausted = Some("restart".into());
                Timing::Broken
            }
        }
    }

    /// Does the hang's time follow one number of its input (`duration: 821` seconds)? For each
    /// of the first positive numbers of `hanging`, smaller values are sent, an eighth at a time
    /// (so one of them lands between a tenth of the screen and the screen when the time is
    /// proportional), until one is answered; one answered after a tenth of the screen or more
    /// is doubled while its time stays under a third of the screen (a longer time is measured
    /// better), then gets two more calls, at a half and a quarter of its value, and a line
    /// through the three times makes the hang slow by input ([`Scaling`]).
    async fn probe_scaling(&mut self, hanging: &Value) {
        let Some(screen) = self.screen else { return };
        let rule = Admissible::new(
            self.subject.generator,
            &self.subject.case.label,
            &self.subject.case.arguments,
        );
        let mut all = Vec::new();
        paths(hanging, &mut Vec::new(), &mut all);
        let numbers = all.into_iter().filter_map(|p| {
            let v = get(hanging, &p)?.as_f64().filter(|v| *v > 0.0)?;
            Some((p, v))
        });
        for (path, value) in numbers.take(SCALING_LEAVES) {
            let integer = get(hanging, &path).is_some_and(|n| n.is_i64() || n.is_u64());
            let with = |v: f64| {
                let n = if integer {
                    #[expect(clippy::cast_possible_truncation, reason = "a share of an integer")]
                    Value::from(v.floor() as i64)
                } else {
                    Value::from(v)
                };
                let x = n.as_f64().filter(|x| *x > 0.0)?;
                let mut c = hanging.clone();
                *get_mut(&mut c, &path)? = n;
                rule.admits(&c).then_some((c, x))
            };
            let mut v = value;
            let mut lead = None;
            for _ in 0..DESCENT {
                v /= 8.0;
                let Some((c, x)) = with(v) else { break };
                if self.spent() {
                    return;
                }
                match self.time(&c, screen).await {
                    Timing::Hung => v = x,
                    Timing::Answered(t) if t >= screen / 10 => {
                        lead = Some((x, t));
                        break;
                    }
                    Timing::Answered(_) | Timing::Failed => break,
                    Timing::Broken => return,
                }
            }
            let Some((mut x, mut t)) = lead else { continue };
            for _ in 0..2 {
                if t >= screen / 3 {
                    break;
                }
                let Some((c, y)) = with(x * 2.0) else { break };
                match self.time(&c, screen).await {
                    Timing::Answered(u) => (x, t) = (y, u),
                    _ => break,
                }
            }
            let mut points = vec![(x, t.as_secs_f64())];
            for share in [2.0, 4.0] {
                let Some((c, y)) = with(x / share) else { break };
                match self.time(&c, screen).await {
                    Timing::Answered(u) => points.push((y, u.as_secs_f64())),
                    _ => break,
                }
            }
            if let [a, b, c] = points[..] {
                self.scaling = Scaling::fit(pointer(&path), [a, b, c], value);
                if self.scaling.is_some() {
                    return;
                }
            }
        }
    }
}

/// How a timed probe ended.
enum Timing {
    /// Still unanswered after the screen.
    Hung,
    /// Answered, not as a failure, after this long.
    Answered(Duration),
    /// Answered as a failure (or not a call at all).
    Failed,
    /// The server could not be (re)started.
    Broken,
}

/// The JSON pointer of a path.
fn pointer(path: &[Step]) -> String {
    path.iter().fold(String::new(), |p, s| match s {
        Step::Key(k) => push(&p, k),
        Step::Index(i) => push(&p, &i.to_string()),
    })
}

/// `n` re-runs of `arguments` sent at once (those the server serves together run together);
/// a re-run cut off by the server's death is left out.
async fn concurrent_reruns(
    search: &mut Search<'_, '_>,
    arguments: &Map<String, Value>,
    keep: Keep,
    n: u32,
) -> Vec<Called> {
    let s = search.subject;
    let (mut ended, mut waiting) = (Vec::new(), Vec::new());
    for _ in 0..n {
        match search.slot.call_patiently(s.tool, arguments, s.output, keep, Duration::ZERO).await {
            Ok(Attempt::Done(c)) => ended.push(c),
            Ok(Attempt::Waiting(w)) => waiting.push(w),
            Err(_) => break,
        }
    }
    ended.extend(
        join_all(waiting.into_iter().map(|w| w.finish(s.output, keep))).await.into_iter().flatten(),
    );
    ended
}

/// Shrinks a failing case against the live server, then re-runs the minimal case.
pub(crate) async fn shrink(
    slot: &mut Instance<'_>,
    cfg: &ShrinkConfig,
    subject: &Subject<'_>,
    deadline: Option<Instant>,
) -> Shrunk {
    let case = subject.case;
    let limit = deadline.map_or(Instant::now() + cfg.time, |d| d.min(Instant::now() + cfg.time));
    let mut search = Search {
        slot,
        subject,
        signature: Signature::of_call(subject.outcome, &subject.case.arguments),
        tried: HashMap::new(),
        stats: ShrinkStats {
            steps: 0,
            accepted: 0,
            exhausted: None,
            reruns: 0,
            reproduced: 0,
            fresh_reruns: 0,
            fresh_reproduced: 0,
        },
        limit,
        max_steps: cfg.max_steps,
        fresh: false,
        screen: None,
        scaling: None,
    };
    let original = Value::Object(case.arguments.clone());
    search.tried.insert(original.to_string(), true);
    let mut best = original.clone();
    // A hang costs a timeout per call: it is neither probed nor re-run on a fresh process, its
    // candidates are screened with a shorter wait, and its re-runs run at once.
    let timing = matches!(subject.outcome, Outcome::Timeout | Outcome::UpstreamTimeout { .. });
    if timing {
        let timeout = search.slot.timeout();
        search.screen = Some(patience(timeout));
    }
    let shrinkable = cfg.enabled && (timing || search.fails_again().await);
    if shrinkable && timing {
        search.probe_scaling(&original).await;
    }
    if shrinkable {
        if let Some(smaller) = search.walk_tree(&original).await {
            best = smaller;
        }
        best = search.edit(best).await;
    }
    let Value::Object(minimal) = best else { unreachable!("candidates are objects") };
    search.rerun(minimal, timing, cfg.reruns).await
}

/// What the re-runs of the minimal case kept: the evidence for the case file, and whether a
/// fresh process failed another way.
#[derive(Default)]
struct Reran {
    exchange: Option<Exchange>,
    stderr: Vec<String>,
    outcome: Option<Outcome>,
    fresh_clean: bool,
    /// The evidence of a fresh re-run that failed another way.
    fresh_other: Option<(Option<Exchange>, Vec<String>, Outcome)>,
}

impl Search<'_, '_> {
    /// Whether the failure shows again where it was seen, or else on a fresh process (then
    /// every candidate needs one); if neither, there is nothing to shrink against.
    async fn fails_again(&mut self) -> bool {
        let arguments = &self.subject.case.arguments;
        let here = self.call(arguments, Keep::default(), false).await;
        if here.is_some_and(|c| self.signature.matches_call(&c.outcome, arguments)) {
            return true;
        }
        let fresh = self.call(arguments, Keep::default(), true).await;
        self.fresh = fresh.is_some_and(|c| self.signature.matches_call(&c.outcome, arguments));
        self.fresh
    }

    /// Walks the value tree of a random case, regenerated from its draw, with proptest's
    /// `simplify`/`complicate`: the smallest value on it that still fails, if any did.
    async fn walk_tree(&mut self, original: &Value) -> Option<Value> {
        let (case, subject) = (self.subject.case, self.subject);
        let mut sampler = subject.generator.sampler(subject.tool_seed);
        sampler.skip(case.draw?);
        let tree: Option<Box<dyn Tree>> = if case.label.mode == Mode::Invalid {
            let mutation = case.label.mutation.clone().unwrap_or_default();
            sampler.invalid_tree().ok().map(|t| Box::new(InvalidTree(t, mutation)) as Box<dyn Tree>)
        } else {
            sampler.valid_tree().ok().map(|t| Box::new(ValidTree(t)) as Box<dyn Tree>)
        };
        let mut tree = tree.filter(|t| t.current().as_ref() == Some(original))?;
        let mut best = None;
        let mut more = tree.simplify();
        while more && !self.spent() {
            let failed = match tree.current() {
                Some(c) if c.is_object() => self.fails(&c).await,
                _ => false,
            };
            if failed {
                best = tree.current();
                more = tree.simplify();
            } else {
                more = tree.complicate();
            }
        }
        best
    }

    /// Structural edits of `best` that the generator's oracle admits, while one still fails:
    /// the smallest found.
    async fn edit(&mut self, mut best: Value) -> Value {
        let case = self.subject.case;
        let rule = Admissible::new(self.subject.generator, &case.label, &case.arguments);
        loop {
            let mut found = None;
            for c in candidates(&best) {
                if self.spent() {
                    break;
                }
                if smaller(&c, &best) && rule.admits(&c) && self.fails(&c).await {
                    found = Some(c);
                    break;
                }
            }
            match found {
                Some(c) => best = c,
                None => return best,
            }
        }
    }

    /// Re-runs the minimal case: deterministic or flaky, the exchange for the case file, and
    /// whether it needs earlier calls.
    async fn rerun(mut self, mut minimal: Map<String, Value>, timing: bool, reruns: u32) -> Shrunk {
        let case = self.subject.case;
        let keep = Keep { exchange: true, ..Keep::default() };
        let mut kept = Reran { fresh_clean: true, ..Reran::default() };
        if self.scaling.is_some() {
            // Slow by input: the case stands as it was sent, and nothing waits out a timeout
            // again.
            minimal = case.arguments.clone();
        } else if timing {
            // All at once: each waits out the whole timeout. A minimal case that a screened
            // candidate made but that never hangs for the whole timeout gives way to the
            // original.
            for arguments in [minimal.clone(), case.arguments.clone()] {
                for c in concurrent_reruns(&mut self, &arguments, keep, reruns).await {
                    self.judge_rerun(&mut kept, c, &arguments, false);
                }
                minimal = arguments;
                if self.stats.reproduced > 0 || minimal == case.arguments {
                    break;
                }
                self.stats.reruns = 0;
            }
        } else {
            // The last re-run is on a fresh process (unless every one is), and its evidence
            // wins when it fails: it shows the bug without the state earlier calls left.
            let fresh_last = !self.fresh;
            for k in 0..reruns + u32::from(fresh_last) {
                let fresh = self.fresh || (fresh_last && k == reruns);
                let Some(c) = self.call(&minimal, keep, fresh).await else { break };
                self.judge_rerun(&mut kept, c, &minimal, fresh);
            }
        }
        let stats = self.stats;
        let mut flaky = (stats.reruns > 0).then_some(stats.reproduced < stats.reruns);
        let needs_history =
            stats.fresh_reruns > 0 && stats.fresh_reproduced == 0 && kept.fresh_clean;
        // Only an error answer can be a state's answer (a breaker's message); a hang or a
        // breach of the wire stays what it was.
        let answer = matches!(
            self.subject.outcome,
            Outcome::InternalError { .. } | Outcome::RpcError { .. } | Outcome::ToolError { .. }
        );
        let other_answers = kept
            .fresh_other
            .as_ref()
            .is_some_and(|(_, _, o)| !matches!(o, Outcome::Timeout | Outcome::Slow { .. }));
        let fresh_instead = stats.fresh_reproduced == 0 && answer && other_answers;
        if let Some((exchange, stderr, outcome)) = kept.fresh_other.filter(|_| fresh_instead) {
            // The fresh failure is the finding; how often it repeats was not measured.
            (kept.exchange, kept.stderr, kept.outcome) = (exchange, stderr, Some(outcome));
            flaky = None;
        }
        Shrunk {
            minimal,
            stats,
            flaky,
            exchange: kept.exchange,
            stderr: kept.stderr,
            outcome: kept.outcome,
            needs_history,
            poisons: self.fresh,
            scaling: self.scaling,
            fresh_instead,
        }
    }

    /// Counts one re-run and keeps its evidence when it failed the same way (or none is kept
    /// yet).
    fn judge_rerun(
        &mut self,
        kept: &mut Reran,
        c: Called,
        arguments: &Map<String, Value>,
        fresh: bool,
    ) {
        self.stats.reruns += 1;
        self.stats.fresh_reruns += u32::from(fresh);
        let same = self.signature.matches_call(&c.outcome, arguments);
        if same {
            self.stats.reproduced += 1;
            self.stats.fresh_reproduced += u32::from(fresh);
        } else if fresh && c.outcome.fails(self.subject.case.label.mode.is_valid()) {
            // A fresh process that fails another way says nothing about earlier calls: its
            // failure is kept, and wins if no fresh process fails the first way.
            kept.fresh_clean = false;
            kept.fresh_other = Some((c.exchange, c.stderr, c.outcome));
            return;
        }
        if same || kept.outcome.is_none() {
            (kept.exchange, kept.stderr, kept.outcome) = (c.exchange, c.stderr, Some(c.outcome));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ExitInfo;
    use serde_json::json;

    #[test]
    fn signatures_compare_kind_code_exit_and_panic_place() {
        let exit = |code, line: &str| Outcome::Exited {
            exit: ExitInfo { code: Some(code), signal: None },
            stderr: vec![line.to_owned()],
        };
        let a = exit(101, "thread 'main' panicked at src/main.rs:10:5:");
        assert!(
            Signature::of(&a).matches(&exit(101, "thread 'main' panicked at src/main.rs:10:5:"))
        );
        assert!(
            !Signature::of(&a).matches(&exit(101, "thread 'main' panicked at src/main.rs:99:1:"))
        );
        assert!(!Signature::of(&a).matches(&exit(3, "")));
        let rpc =
            |code| Outcome::RpcError { code, message: "x".into(), refusal: false, upstream: false };
        assert!(Signature::of(&rpc(-32000)).matches(&rpc(-32000)));
        assert!(!Signature::of(&rpc(-32000)).matches(&rpc(-32001)));
        assert!(!Signature::of(&Outcome::Timeout).matches(&Outcome::Ok));
    }

    #[test]
    fn signatures_compare_the_breach_and_the_exception_not_only_the_kind() {
        // See: issue 30 item 4.
        let pv = |detail: &str| Outcome::ProtocolViolation { detail: detail.into() };
        let id = pv("a response whose id has the wrong type: `\"7\"` for `7`");
        assert!(
            Signature::of(&id)
                .matches(&pv("a response whose id has the wrong type: `\"9\"` for `9`"))
        );
        assert!(!Signature::of(&id).matches(&pv("a line that is not JSON (at byte 40): `{...`")));
        let exc = |text: &str| Outcome::HandlerException { text: text.into() };
        let key = exc("KeyError: 'a'\n  File \"/app/t.py\", line 12, in f");
        let trace = |e: &str, line: u32| {
            exc(&format!(
                "Traceback (most recent call last):\n  File \"/app/t.py\", line {line}, in f\n{e}"
            ))
        };
        assert!(Signature::of(&trace("KeyError: 'a'", 12)).matches(&trace("KeyError: 'zz'", 12)));
        assert!(!Signature::of(&trace("KeyError: 'a'", 12)).matches(&trace("KeyError: 'a'", 30)));
        assert!(!Signature::of(&trace("KeyError: 'a'", 12)).matches(&trace("IndexError: x", 12)));
        // A case file written before causes were kept matches on the kind as before.
        let old = Signature { cause: None, ..Signature::of(&key) };
        assert!(old.matches(&trace("IndexError: x", 12)));
    }

    #[test]
    fn candidates_drop_shorten_and_move_towards_zero() {
        let c: Vec<Value> = candidates(&json!({"a": [1, 2], "s": "hello", "n": 1001})).collect();
        assert!(c.contains(&json!({"s": "hello", "n": 1001})), "drops a property");
        assert!(c.contains(&json!({"a": [2], "s": "hello", "n": 1001})), "drops an item");
        assert!(c.contains(&json!({"a": [1, 2], "s": "", "n": 1001})), "empties a string");
        assert!(c.contains(&json!({"a": [1, 2], "s": "hello", "n": 501})), "halves towards zero");
        assert!(c.contains(&json!({"a": [1, 2], "s": "hello", "n": 1000})), "steps towards zero");
        let long = "z".repeat(500);
        let cuts: Vec<usize> = simpler(&json!(long))
            .iter()
            .filter_map(Value::as_str)
            .map(str::len)
            .filter(|&n| n > 0 && n < 500)
            .collect();
        assert_eq!(cuts, [250, 375, 438, 469, 485, 493, 497, 499], "a bisection over the length");
    }

    #[test]
    fn invalid_candidates_keep_the_labelled_violation_and_gain_none() {
        let g = Generator::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a", "b"]
        }))
        .expect("compiles");
        let label = CaseLabel {
            mutation: Some("wrong-type".into()),
            pointer: Some("/a".into()),
            keyword: Some("type".into()),
            ..CaseLabel::of(Mode::Invalid)
        };
        let original = json!({"a": "x", "b": "y"});
        let rule = Admissible::new(&g, &label, original.as_object().expect("object"));
        assert!(rule.admits(&json!({"a": "", "b": "y"})));
        assert!(!rule.admits(&json!({"a": 1, "b": "y"})), "no longer invalid");
        assert!(!rule.admits(&json!({"a": "x"})), "a new violation (missing b)");
    }
}
