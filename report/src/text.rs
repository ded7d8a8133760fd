//! Small text helpers shared by the renderers.

/// Characters of a detail shown on one line before it is cut.
const CLIP: usize = 160;

/// `s`, cut to [`CLIP`] characters with an ellipsis.
#[must_use]
pub fn clip(s: &str) -> String {
    if s.chars().count() > CLIP {
        format!("{}…", s.chars().take(CLIP).collect::<String>())
    } else {
        s.to_owned()
    }
}
