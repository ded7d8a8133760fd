//! Sharding: `--partition hash:M/N` or `count:M/N` picks a deterministic share of the tools, so
//! a CI matrix can split one server's tools across N machines and merge the reports afterwards.
//!
//! - `hash:M/N` keeps the tools whose name hashes (FNV-1a 64) to `M-1` modulo `N`: a tool stays
//!   in its shard whatever else the server lists.
//! - `count:M/N` deals the selectable tools (those not skipped for another reason) round-robin in
//!   listing order and keeps every N-th, starting at the M-th: shares differ in size by at most
//!   one tool.
//!
//! Case seeds come from the run seed and the tool name (the engine's `plan::tool_seed`), so a tool
//! sees the same cases whichever shard runs it.

use mcp_fuzz_generators::hash::fnv1a;
use std::fmt;
use std::str::FromStr;

/// How tools are dealt to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// By a hash of the tool name.
    Hash,
    /// Round-robin over the selectable tools, in listing order.
    Count,
}

/// One shard: `M/N` under a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How tools are dealt.
    pub scheme: Scheme,
    /// This shard, 1-based.
    pub shard: u64,
    /// The number of shards.
    pub total: u64,
}

/// A `--partition` value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid partition `{given}`: {why}; expected hash:M/N or count:M/N with 1 <= M <= N (e.g. count:1/3)"
)]
pub struct PartitionError {
    /// What was given.
    pub given: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl FromStr for Partition {
    type Err = PartitionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| PartitionError { given: s.to_owned(), why };
        let (scheme, rest) = s.split_once(':').ok_or_else(|| err("no scheme"))?;
        let scheme = match scheme {
            "hash" => Scheme::Hash,
            "count" => Scheme::Count,
            _ => return Err(err("unknown scheme")),
        };
        let (m, n) = rest.split_once('/').ok_or_else(|| err("no `/` between M and N"))?;
        let shard: u64 = m.parse().map_err(|_| err("M is not a positive integer"))?;
        let total: u64 = n.parse().map_err(|_| err("N is not a positive integer"))?;
        if total == 0 || shard == 0 || shard > total {
            return Err(err("M must be between 1 and N"));
        }
        Ok(Self { scheme, shard, total })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.scheme {
            Scheme::Hash => "hash",
            Scheme::Count => "count",
        };
        write!(f, "{scheme}:{}/{}", self.shard, self.total)
    }
}

/// A partition is written as its text (`count:1/3`), in `mcp-fuzz.toml` as on the command line.
impl<'de> serde::Deserialize<'de> for Partition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

impl Partition {
    /// Whether the tool `name`, the `dealt`-th selectable tool (0-based), is in this shard.
    #[must_use]
    pub fn contains(&self, name: &str, dealt: u64) -> bool {
        let slot = match self.scheme {
            Scheme::Hash => fnv1a(name.as_bytes()) % self.total,
            Scheme::Count => dealt % self.total,
        };
        slot == self.shard - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let p: Partition = "hash:2/3".parse().expect("valid");
        assert_eq!(p, Partition { scheme: Scheme::Hash, shard: 2, total: 3 });
        assert_eq!(p.to_string(), "hash:2/3");
        assert_eq!("count:1/1".parse::<Partition>().expect("valid").to_string(), "count:1/1");
        for bad in [
            "",
            "hash",
            "hash:1",
            "hash:0/2",
            "hash:3/2",
            "hash:1/0",
            "mod:1/2",
            "count:a/2",
            "count:1/-2",
        ] {
            let e = bad.parse::<Partition>().expect_err(bad);
            assert!(e.to_string().contains("expected hash:M/N"), "{e}");
        }
    }

    #[test]
    fn every_tool_is_in_exactly_one_shard() {
        let names: Vec<String> = (0..50).map(|i| format!("tool_{i}")).collect();
        for scheme in [Scheme::Hash, Scheme::Count] {
            let mut sizes = [0u32; 4];
            for (i, name) in names.iter().enumerate() {
                let owners: Vec<u64> = (1..=4)
                    .filter(|m| Partition { scheme, shard: *m, total: 4 }.contains(name, i as u64))
                    .collect();
                assert_eq!(owners.len(), 1, "{name} under {scheme:?}: {owners:?}");
                sizes[(owners[0] - 1) as usize] += 1;
            }
            assert!(sizes.iter().all(|s| *s > 0), "{scheme:?}: {sizes:?}");
            if scheme == Scheme::Count {
                assert_eq!(sizes, [13, 13, 12, 12]);
            }
        }
    }

    #[test]
    fn hash_shards_depend_on_the_name_only() {
        let p = Partition { scheme: Scheme::Hash, shard: 1, total: 3 };
        assert_eq!(p.contains("echo", 0), p.contains("echo", 17));
        // Pinned: the hash must not change between versions, or shards would move.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
