//! A tool's timeouts, settled: a call past its timeout is a hang only if it stays unanswered
//! while it is watched (at most one more `--timeout`, never past `--max-call-time` from its
//! start); a tool whose timed-out calls were all answered late is slow, not hung.

use crate::transport::Late;
use mcp_fuzz_model::facts::Settled;
use std::time::Duration;

/// How the watched calls of a tool that timed out ended: a hang when one of them was not
/// answered, else slow work (`timeout` is `--timeout`).
#[must_use]
pub fn settled(lates: &[Late], timeout: Duration) -> Settled {
    let secs = |pick: fn(&Late) -> Option<Duration>| {
        lates.iter().filter_map(pick).map(|d| d.as_secs_f64()).reduce(f64::max)
    };
    let watched = secs(|l| match l {
        Late::Unanswered(d) => Some(*d),
        _ => None,
    });
    let answered = secs(|l| match l {
        Late::Answered(d) => Some(*d),
        _ => None,
    });
    let timeout = timeout.as_secs_f64();
    match (watched, answered) {
        (None, Some(longest)) => Settled::Slow { longest, timeout },
        (watched, _) => Settled::Hang { watched, timeout },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_unanswered_call_makes_a_hang() {
        let t = Duration::from_secs(10);
        let answered = Late::Answered(Duration::from_millis(12_500));
        let unanswered = Late::Unanswered(Duration::from_secs(20));
        assert_eq!(settled(&[answered], t), Settled::Slow { longest: 12.5, timeout: 10.0 });
        assert_eq!(
            settled(&[answered, unanswered], t),
            Settled::Hang { watched: Some(20.0), timeout: 10.0 }
        );
        assert_eq!(settled(&[], t), Settled::Hang { watched: None, timeout: 10.0 });
    }
}
