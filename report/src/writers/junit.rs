//! JUnit XML: the `<testsuites>` / `<testsuite>` / `<testcase>` dialect that Jenkins, GitLab,
//! GitHub test reporters, Azure Pipelines and CircleCI read.
//!
//! Build a [`TestSuites`], push [`TestSuite`]s holding [`TestCase`]s, and call
//! [`TestSuites::to_xml`]. Counts (`tests`, `failures`, `errors`, `skipped`) are computed from the
//! cases, so they cannot disagree with them. Every string is escaped with [`escape`], which also
//! makes characters that XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF) visible as `\u{..}`
//! instead of producing a document no parser accepts.
//!
//! ```text
//! let mut suite = TestSuite::new("echo");
//! suite.cases.push(TestCase::new("echo", "no-crash").failed("exited", "the server died", "..."));
//! let xml = TestSuites::new("mcp-fuzz").with_suite(suite).to_xml();
//! ```

use std::fmt::Write as _;

/// How one test case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It passed.
    Passed,
    /// A check failed (`<failure>`): the thing under test is wrong.
    Failure {
        /// One line (the `message` attribute).
        message: String,
        /// A category (the `type` attribute), e.g. a finding kind.
        kind: String,
        /// Details, as the element's text.
        body: String,
    },
    /// The test could not run properly (`<error>`).
    Error {
        /// One line (the `message` attribute).
        message: String,
        /// A category (the `type` attribute).
        kind: String,
        /// Details, as the element's text.
        body: String,
    },
    /// Not run (`<skipped>`), with why.
    Skipped {
        /// Why it was not run.
        message: String,
    },
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    /// The `classname` attribute (CI systems group by it).
    pub classname: String,
    /// The `name` attribute.
    pub name: String,
    /// Seconds, when known.
    pub time: Option<f64>,
    /// How it ended.
    pub verdict: Verdict,
    /// `<system-out>` text, when any.
    pub system_out: Option<String>,
}

impl TestCase {
    /// A passed case.
    #[must_use]
    pub fn new(classname: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            classname: classname.into(),
            name: name.into(),
            time: None,
            verdict: Verdict::Passed,
            system_out: None,
        }
    }

    /// The same case, failed.
    #[must_use]
    pub fn failed(
        mut self,
        kind: impl Into<String>,
        message: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        self.verdict =
            Verdict::Failure { message: message.into(), kind: kind.into(), body: body.into() };
        self
    }

    /// The same case, skipped.
    #[must_use]
    pub fn skipped(mut self, message: impl Into<String>) -> Self {
        self.verdict = Verdict::Skipped { message: message.into() };
        self
    }

    /// The same case with `<system-out>` text.
    #[must_use]
    pub fn with_output(mut self, text: impl Into<String>) -> Self {
        self.system_out = Some(text.into());
        self
    }
}

/// One `<testsuite>`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestSuite {
    /// The `name` attribute.
    pub name: String,
    /// `<properties>`, in order.
    pub properties: Vec<(String, String)>,
    /// The test cases, in the order they are written.
    pub cases: Vec<TestCase>,
    /// Seconds, when known.
    pub time: Option<f64>,
}

impl TestSuite {
    /// An empty suite.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    fn counts(&self) -> Counts {
        let mut c = Counts { tests: self.cases.len(), ..Counts::default() };
        for case in &self.cases {
            match case.verdict {
                Verdict::Passed => {}
                Verdict::Failure { .. } => c.failures += 1,
                Verdict::Error { .. } => c.errors += 1,
                Verdict::Skipped { .. } => c.skipped += 1,
            }
        }
        c
    }
}

/// The `<testsuites>` root.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestSuites {
    /// The `name` attribute.
    pub name: String,
    /// The test suites, in the order they are written.
    pub suites: Vec<TestSuite>,
    /// Seconds, when known.
    pub time: Option<f64>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Self) {
        self.tests += o.tests;
        self.failures += o.failures;
        self.errors += o.errors;
        self.skipped += o.skipped;
    }
}

impl TestSuites {
    /// An empty document.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// The same document with one more suite.
    #[must_use]
    pub fn with_suite(mut self, suite: TestSuite) -> Self {
        self.suites.push(suite);
        self
    }

    /// The XML document (UTF-8, with declaration, ending in a newline).
    #[must_use]
    pub fn to_xml(&self) -> String {
        let mut total = Counts::default();
        for s in &self.suites {
            total += s.counts();
        }
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = write!(x, "<testsuites name=\"{}\"", escape(&self.name));
        counts_attrs(&mut x, total, self.time);
        x.push_str(">\n");
        for s in &self.suites {
            let _ = write!(x, "  <testsuite name=\"{}\"", escape(&s.name));
            counts_attrs(&mut x, s.counts(), s.time);
            x.push_str(">\n");
            if !s.properties.is_empty() {
                x.push_str("    <properties>\n");
                for (k, v) in &s.properties {
                    let _ = writeln!(
                        x,
                        "      <property name=\"{}\" value=\"{}\"/>",
                        escape(k),
                        escape(v)
                    );
                }
                x.push_str("    </properties>\n");
            }
            for c in &s.cases {
                write_case(&mut x, c);
            }
            x.push_str("  </testsuite>\n");
        }
        x.push_str("</testsuites>\n");
        x
    }
}

fn counts_attrs(x: &mut String, c: Counts, time: Option<f64>) {
    let _ = write!(
        x,
        " tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"",
        c.tests, c.failures, c.errors, c.skipped
    );
    if let Some(t) = time.filter(|t| t.is_finite() && *t >= 0.0) {
        let _ = write!(x, " time=\"{t:.3}\"");
    }
}

fn write_case(x: &mut String, c: &TestCase) {
    let _ = write!(
        x,
        "    <testcase classname=\"{}\" name=\"{}\"",
        escape(&c.classname),
        escape(&c.name)
    );
    if let Some(t) = c.time.filter(|t| t.is_finite() && *t >= 0.0) {
        let _ = write!(x, " time=\"{t:.3}\"");
    }
    if c.verdict == Verdict::Passed && c.system_out.is_none() {
        x.push_str("/>\n");
        return;
    }
    x.push_str(">\n");
    match &c.verdict {
        Verdict::Passed => {}
        Verdict::Failure { message, kind, body } | Verdict::Error { message, kind, body } => {
            let tag =
                if matches!(c.verdict, Verdict::Failure { .. }) { "failure" } else { "error" };
            let _ = writeln!(
                x,
                "      <{tag} message=\"{}\" type=\"{}\">{}</{tag}>",
                escape(message),
                escape(kind),
                escape(body)
            );
        }
        Verdict::Skipped { message } => {
            let _ = writeln!(x, "      <skipped message=\"{}\"/>", escape(message));
        }
    }
    if let Some(out) = &c.system_out {
        let _ = writeln!(x, "      <system-out>{}</system-out>", escape(out));
    }
    x.push_str("    </testcase>\n");
}

/// Escapes text for XML 1.0 element content and (double- or single-quoted) attribute values.
///
/// `& < > " '` become entities; tab, newline and carriage return become character references
/// (so attribute values keep them instead of being normalised to spaces); every other character
/// that XML 1.0 does not allow at all (C0 controls, U+FFFE, U+FFFF) becomes the visible text
/// `\u{XX}`, since not even a character reference may name it.
#[must_use]
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if is_forbidden(c) => {
                let _ = write!(out, "\\u{{{:X}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters XML 1.0 forbids outright (`Char` production), other than those escaped above.
fn is_forbidden(c: char) -> bool {
    matches!(u32::from(c), 0x00..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F | 0xFFFE | 0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(escape(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
    }

    #[test]
    fn keeps_whitespace_as_references_and_makes_forbidden_controls_visible() {
        assert_eq!(escape("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
        assert_eq!(escape("\u{0}\u{1b}[31m\u{7}"), "\\u{0}\\u{1B}[31m\\u{7}");
        assert_eq!(escape("\u{FFFE}\u{FFFF}"), "\\u{FFFE}\\u{FFFF}");
        // DEL and C1 controls are allowed by XML 1.0 and pass through; so does non-ASCII.
        assert_eq!(escape("\u{7f}\u{85}é😀"), "\u{7f}\u{85}é😀");
    }

    #[test]
    fn escaped_text_has_no_forbidden_characters() {
        let all: String = (0u32..0x80).filter_map(char::from_u32).collect();
        let e = escape(&all);
        assert!(e.chars().all(|c| !is_forbidden(c) && !matches!(c, '<' | '>' | '"' | '\'')));
        assert!(!e.contains(['\t', '\n', '\r']));
    }

    #[test]
    fn counts_come_from_the_cases() {
        let mut s = TestSuite::new("t<1>");
        s.properties.push(("seed".into(), "7".into()));
        s.cases.push(TestCase::new("t<1>", "ok"));
        s.cases.push(TestCase::new("t<1>", "crash").failed(
            "exited",
            "died \"hard\"",
            "line1\nline2",
        ));
        s.cases.push(TestCase::new("t<1>", "later").skipped("not selected"));
        s.cases.push(TestCase {
            verdict: Verdict::Error { message: "m".into(), kind: "k".into(), body: String::new() },
            ..TestCase::new("t<1>", "broken")
        });
        let xml = TestSuites::new("run").with_suite(s).to_xml();
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"run\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\">"), "{xml}");
        assert!(xml.contains("<testsuite name=\"t&lt;1&gt;\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\">"), "{xml}");
        assert!(xml.contains("<property name=\"seed\" value=\"7\"/>"));
        assert!(xml.contains("<testcase classname=\"t&lt;1&gt;\" name=\"ok\"/>"));
        assert!(xml.contains(
            "<failure message=\"died &quot;hard&quot;\" type=\"exited\">line1&#10;line2</failure>"
        ));
        assert!(xml.contains("<skipped message=\"not selected\"/>"));
        assert!(xml.contains("<error message=\"m\" type=\"k\"></error>"));
        assert!(xml.ends_with("</testsuites>\n"));
    }

    #[test]
    fn time_is_written_only_when_meaningful() {
        let mut s = TestSuite::new("s");
        s.time = Some(1.23456);
        s.cases.push(TestCase { time: Some(f64::NAN), ..TestCase::new("s", "c") });
        let xml = TestSuites::new("r").with_suite(s).to_xml();
        assert!(xml.contains("time=\"1.235\""));
        assert!(!xml.contains("NaN"));
        assert!(xml.contains("<testcase classname=\"s\" name=\"c\"/>"));
    }

    #[test]
    fn system_out_is_escaped() {
        let c = TestCase::new("s", "c").with_output("x < y\u{1}");
        let xml = TestSuites::new("r")
            .with_suite(TestSuite { cases: vec![c], ..TestSuite::new("s") })
            .to_xml();
        assert!(xml.contains("<system-out>x &lt; y\\u{1}</system-out>"), "{xml}");
    }
}
