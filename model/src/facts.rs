//! What the judge and the steps after it learned about a finding, as typed facts.
//!
//! The judge makes a finding from one case's outcome and says how it saw it ([`Said`]). Each
//! later step adds a [`Fact`] instead of rewriting the finding: a timeout settled as a hang or as
//! slow work, a hang whose time follows a number of its input, re-runs that did not fail on a
//! fresh process, the earlier calls it needs, the state it left its process in, a slowness the
//! config file expects. The finding's kind, severity and message are derived from these in one
//! place, the engine's `judge::words`, each time a fact is added: no step edits another step's
//! words.
//!
//! Facts live while the run does; a report keeps the words they gave.

use std::time::Duration;

/// How the judge saw a finding it made from one case: what its message says around the
/// outcome's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// Invalid input answered in a way that is neither graceful nor acceptance: `label` is the
    /// case in words (`wrong-type at /n`).
    OnInvalid {
        /// The case's label, in words.
        label: String,
    },
    /// Valid input answered with a failure; `fed` is the case's label when it was built from
    /// another tool's result (it then says which).
    OnValid {
        /// The label of a fed case, in words.
        fed: Option<String>,
    },
    /// A valid call whose result breaks the tool's `outputSchema`.
    OutputSchema,
    /// Slow work or an unreachable upstream: a note, not a judgement of input handling.
    Unjudged,
}

/// A call that got no answer within its timeout, watched until `--max-call-time`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Settled {
    /// Some call was not answered while it was watched: how long the longest was watched
    /// (`None`: it was not watched at all).
    Hang {
        /// Seconds the longest unanswered call was watched.
        watched: Option<f64>,
        /// `--timeout`, in seconds.
        timeout: f64,
    },
    /// Every call was answered, late.
    Slow {
        /// Seconds the slowest answer took.
        longest: f64,
        /// `--timeout`, in seconds.
        timeout: f64,
    },
}

/// How the time of a call follows one number of its input: smaller values of it, all else
/// equal, were answered in times that fall on one line with it. The evidence that a "hang" is
/// work the input asked for (`duration: 821` seconds) rather than a call that never ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// JSON pointer of the number in the arguments (`/duration`).
    pub pointer: String,
    /// `(value, seconds)` of the answered calls, the largest value first.
    pub points: Vec<(f64, f64)>,
    /// The value in the case that got no answer.
    pub value: f64,
    /// The time that case would take on that line, in seconds.
    pub estimate: f64,
}

/// How far apart the fastest and the slowest of the three timed calls must be, in seconds.
const MIN_SPREAD: f64 = 0.06;

impl Scaling {
    /// Fits a line through three answered calls (values decreasing): the two slopes must agree
    /// (within a factor of about 1.4) and be positive, and the times must differ by a margin
    /// that timer noise does not reach.
    #[must_use]
    pub fn fit(pointer: String, points: [(f64, f64); 3], value: f64) -> Option<Self> {
        let [(v1, t1), (v2, t2), (v3, t3)] = points;
        if !(value > v1 && v1 > v2 && v2 > v3) || t1 - t3 < MIN_SPREAD {
            return None;
        }
        let (s1, s2) = ((t1 - t2) / (v1 - v2), (t2 - t3) / (v2 - v3));
        if s1 <= 0.0 || s2 <= 0.0 || !(0.7..=1.45).contains(&(s1 / s2)) {
            return None;
        }
        let slope = (t1 - t3) / (v1 - v3);
        let estimate = t1 + slope * (value - v1);
        Some(Self { pointer, points: points.to_vec(), value, estimate })
    }
}

/// Re-runs of a failure's minimal case that never failed on a fresh server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reruns {
    /// Re-runs that failed the same way (none of them on a fresh process).
    pub reproduced: u32,
    /// Re-runs in all, one of them at least on a fresh process.
    pub of: u32,
}

/// A failure replayed from a fresh process with the calls its process had been sent: it fails
/// the same way every time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsCalls {
    /// Calls of the minimal sequence, the failing one included.
    pub steps: usize,
    /// Calls before the failing one in the process's history.
    pub before: usize,
}

/// One thing a step learned about a finding.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    /// Its timeout was settled: hang or slow.
    Settled(Settled),
    /// Its hang is slow work the input asked for; `max_call_time` is `--max-call-time`.
    SlowByInput {
        /// The line the time follows.
        scaling: Scaling,
        /// `--max-call-time`.
        max_call_time: Duration,
    },
    /// It did not fail on a fresh process: it needs earlier calls (a `flaky` warning).
    NeedsHistory(Reruns),
    /// Replayed with its process's calls, it fails every time (a failure again).
    NeedsCalls(NeedsCalls),
    /// It failed again only on a fresh process: later valid calls on the process it first
    /// failed on answered this (the first line of the first answer).
    Poisoned(String),
    /// The config file expects the tool to be slow (`expected-slow = true`).
    ExpectedSlow,
    /// A fresh process failed another way than the process it was first seen on, which had
    /// served earlier calls: the fresh failure became the finding, and this is what the other
    /// process answered (the first line).
    LongLived(String),
    /// Replayed from a fresh process with its calls, it fails every time, but only after calls
    /// that failed on an unreachable upstream (the others worked): what the server does once its
    /// upstream failed (a circuit breaker, a retry limit), not a bug of these calls.
    AfterUpstream,
}

/// Everything learned about one finding, with how the judge first saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// How the judge saw it.
    pub said: Said,
    /// What the later steps learned, in the order they learned it.
    pub learned: Vec<Fact>,
}

impl Facts {
    /// Facts that start with the judge's view.
    #[must_use]
    pub fn new(said: Said) -> Self {
        Self { said, learned: Vec::new() }
    }

    /// How its timeout was settled, if it was.
    #[must_use]
    pub fn settled(&self) -> Option<Settled> {
        self.learned.iter().find_map(|f| match f {
            Fact::Settled(s) => Some(*s),
            _ => None,
        })
    }

    /// The line its time follows, with `--max-call-time`, if a hang proved slow by input.
    #[must_use]
    pub fn slow_by_input(&self) -> Option<(&Scaling, Duration)> {
        self.learned.iter().find_map(|f| match f {
            Fact::SlowByInput { scaling, max_call_time } => Some((scaling, *max_call_time)),
            _ => None,
        })
    }

    /// The re-runs that did not fail on a fresh process, if that is what they showed.
    #[must_use]
    pub fn needs_history(&self) -> Option<Reruns> {
        self.learned.iter().find_map(|f| match f {
            Fact::NeedsHistory(r) => Some(*r),
            _ => None,
        })
    }

    /// The calls it needs, once its history was replayed.
    #[must_use]
    pub fn needs_calls(&self) -> Option<NeedsCalls> {
        self.learned.iter().find_map(|f| match f {
            Fact::NeedsCalls(n) => Some(*n),
            _ => None,
        })
    }

    /// What later calls on its poisoned process answered.
    #[must_use]
    pub fn poisoned(&self) -> Option<&str> {
        self.learned.iter().find_map(|f| match f {
            Fact::Poisoned(first) => Some(first.as_str()),
            _ => None,
        })
    }

    /// What the process that had served earlier calls answered, when a fresh one failed
    /// another way and its failure became the finding.
    #[must_use]
    pub fn long_lived(&self) -> Option<&str> {
        self.learned.iter().find_map(|f| match f {
            Fact::LongLived(first) => Some(first.as_str()),
            _ => None,
        })
    }

    /// Whether it comes only after calls that failed on an unreachable upstream.
    #[must_use]
    pub fn after_upstream(&self) -> bool {
        self.learned.contains(&Fact::AfterUpstream)
    }

    /// Whether the config file expects the tool's slowness.
    #[must_use]
    pub fn expected_slow(&self) -> bool {
        self.learned.contains(&Fact::ExpectedSlow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hang_is_slow_by_input_only_when_its_time_falls_on_a_line_with_one_number() {
        let fit = |points, value| Scaling::fit("/duration".into(), points, value);
        // Proportional (server-everything's `duration`), and affine with a start-up cost.
        let s = fit([(0.8, 0.81), (0.4, 0.41), (0.2, 0.21)], 821.0).expect("a line");
        assert!((s.estimate - 821.0).abs() < 5.0, "{s:?}");
        assert!(fit([(0.8, 1.31), (0.4, 0.91), (0.2, 0.71)], 100.0).is_some(), "affine");
        // A constant time (the hang is a threshold, not work), noise, a time that falls as the
        // number grows, and a curve whose two slopes disagree are not.
        assert!(fit([(0.8, 0.3), (0.4, 0.3), (0.2, 0.3)], 3600.0).is_none(), "constant");
        assert!(fit([(0.8, 0.13), (0.4, 0.11), (0.2, 0.10)], 3600.0).is_none(), "noise");
        assert!(fit([(0.8, 0.2), (0.4, 0.4), (0.2, 0.8)], 100.0).is_none(), "falling");
        assert!(fit([(0.8, 2.0), (0.4, 0.3), (0.2, 0.2)], 100.0).is_none(), "a knee");
        // The hanging value must lie beyond the answered ones.
        assert!(fit([(0.8, 0.81), (0.4, 0.41), (0.2, 0.21)], 0.5).is_none());
    }

    #[test]
    fn facts_are_read_back_by_what_they_say() {
        let mut facts = Facts::new(Said::OnValid { fed: None });
        assert_eq!(facts.settled(), None);
        facts.learned.push(Fact::Settled(Settled::Slow { longest: 2.0, timeout: 1.0 }));
        facts.learned.push(Fact::ExpectedSlow);
        assert_eq!(facts.settled(), Some(Settled::Slow { longest: 2.0, timeout: 1.0 }));
        assert!(facts.expected_slow());
        assert_eq!(facts.needs_history(), None);
    }
}
