//! Which listed tools a run calls: `--tool` / `--skip-tool` globs, the `readOnlyHint` gate and
//! the `--partition` share.

use crate::config::Selection;
use crate::finding::SkipReason;

/// A `*`/`?` glob match, in time linear in `pattern.len() * name.len()` at worst: on a
/// mismatch only the last `*` is retried, one character further on (a pattern of many `*`s
/// against a long tool name must not backtrack exponentially).
#[must_use]
pub fn glob(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // The position after the last `*` seen, and the name position it currently covers up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((after, covered)) => {
                    pi = after;
                    ni = covered + 1;
                    star = Some((after, covered + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Deals the listed tools out: for each, in listing order, why it is not called, if it is not.
#[derive(Debug)]
pub struct Selector<'a> {
    selection: &'a Selection,
    /// Tools that passed every other gate so far (`count:M/N` deals over these).
    dealt: u64,
}

impl<'a> Selector<'a> {
    /// A selector for one listing.
    #[must_use]
    pub fn new(selection: &'a Selection) -> Self {
        Self { selection, dealt: 0 }
    }

    /// Why `name` (annotated `readOnlyHint: read_only`) is not called, or `None` to call it.
    /// Call once per tool, in listing order.
    pub fn skip(&mut self, name: &str, read_only: Option<bool>) -> Option<SkipReason> {
        let s = self.selection;
        if s.skip_tools.iter().any(|g| glob(g, name)) {
            return Some(SkipReason::Excluded);
        }
        if !s.tools.is_empty() && !s.tools.iter().any(|g| glob(g, name)) {
            return Some(SkipReason::NotSelected);
        }
        if read_only != Some(true) && !s.include_destructive {
            return Some(SkipReason::NotReadOnly(read_only));
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
        let selection = Selection {
            include_destructive: false,
            tools: vec!["get_*".into()],
            skip_tools: vec!["get_secret".into()],
            partition: Some("count:1/2".parse().expect("partition")),
        };
        let mut s = Selector::new(&selection);
        assert_eq!(s.skip("get_secret", Some(true)), Some(SkipReason::Excluded));
        assert_eq!(s.skip("list", Some(true)), Some(SkipReason::NotSelected));
        assert_eq!(s.skip("get_x", None), Some(SkipReason::NotReadOnly(None)));
        assert_eq!(s.skip("get_a", Some(true)), None, "first dealt tool: shard 1");
        assert!(matches!(s.skip("get_b", Some(true)), Some(SkipReason::NotInPartition(_))));
        assert_eq!(s.skip("get_c", Some(true)), None);
    }
}
