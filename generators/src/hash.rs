//! A stable hash: FNV-1a, 64 bits. The same bytes give the same value on every platform and
//! version (unlike `std`'s `DefaultHasher`), which is what tool seeds, partition shards, case
//! file names and SARIF fingerprints need: they must not move between runs.
//!
//! See: <http://www.isthe.com/chongo/tech/comp/fnv/index.html>.

/// FNV-1a 64 offset basis.
const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64 prime.
const PRIME: u64 = 0x0100_0000_01b3;

/// An FNV-1a 64 hasher.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(OFFSET)
    }
}

impl Fnv1a {
    /// A hasher whose offset basis is mixed with `seed` (the same seed, the same values).
    #[must_use]
    pub fn with_seed(seed: u64) -> Self {
        Self(OFFSET ^ seed)
    }

    /// Feeds `bytes`.
    #[must_use]
    pub fn write(mut self, bytes: &[u8]) -> Self {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
        self
    }

    /// The hash so far.
    #[must_use]
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// FNV-1a 64 of `bytes`.
#[must_use]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    Fnv1a::default().write(bytes).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_pinned() {
        // Pinned: these must not change between versions, or seeds and shards would move.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::default().write(b"a").write(b"b").finish(), fnv1a(b"ab"));
        assert_ne!(Fnv1a::with_seed(1).write(b"a").finish(), fnv1a(b"a"));
    }
}
