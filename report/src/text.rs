//! Small text helpers shared by the renderers.

/// `s`, cut to the model's one-line length with an ellipsis (`mcp_fuzz_model::text::clip`).
#[must_use]
pub fn clip(s: &str) -> String {
    mcp_fuzz_model::text::clip(s, mcp_fuzz_model::text::LINE)
}

/// The first meaningful line of `s` (not a lone brace of pretty-printed JSON), cut likewise.
#[must_use]
pub fn first_line(s: &str) -> String {
    mcp_fuzz_model::text::first_line(s, mcp_fuzz_model::text::LINE)
}
