//! `format`: generators of valid strings per format, canonical examples, invalid examples, and the
//! integer formats (`int32`, `uint32`, `int64`, ...) as numeric ranges.

/// Formats the oracle asserts (with `jsonschema`'s format checks on, for some draft).
pub(crate) fn is_asserted(format: &str) -> bool {
    // The oracle is built without the `idna` feature: internationalised formats pass unchecked.
    regex_of(format).is_some() && !format.starts_with("idn-")
}

/// A regex (generation syntax) whose matches are all valid values of `format`.
fn regex_of(format: &str) -> Option<&'static str> {
    const DATE: &str = "20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])";
    const TIME: &str = "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-](0[0-9]|1[0-2]):[0-5][0-9])";
    Some(match format {
        "date" => DATE,
        "time" => TIME,
        "date-time" => {
            "20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-](0[0-9]|1[0-2]):[0-5][0-9])"
        }
        "duration" => {
            "P[1-9][0-9]{0,2}D|PT[1-9][0-9]{0,2}[HMS]|P[1-9]W|P[1-9]Y[1-9]M|P[1-9]DT[1-9]H"
        }
        "email" | "idn-email" => "[a-z][a-z0-9]{0,8}@[a-z][a-z0-9]{0,8}\\.(com|org|net)",
        "hostname" | "idn-hostname" => "[a-z][a-z0-9]{0,8}(\\.[a-z][a-z0-9]{0,8}){0,2}",
        "ipv4" => {
            "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}"
        }
        "ipv6" => "([0-9a-f]{1,4}:){7}[0-9a-f]{1,4}|::1|fe80::[0-9a-f]{1,4}",
        "uri" | "iri" => "https?://[a-z][a-z0-9]{0,8}\\.(com|org)(/[a-z0-9]{1,8}){0,3}",
        "uri-reference" | "iri-reference" => {
            "https?://[a-z][a-z0-9]{0,8}\\.(com|org)(/[a-z0-9]{1,8}){0,2}|(/[a-z0-9]{1,8}){1,3}|[a-z]{1,8}"
        }
        "uri-template" => "https://[a-z]{1,8}\\.com/\\{[a-z]{1,5}\\}",
        "uuid" => "[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
        "regex" => "[a-z]{0,5}(\\.\\*)?",
        "json-pointer" => "(/([a-z0-9]|~[01]){0,6}){0,4}",
        "relative-json-pointer" => "[0-9](/[a-z]{1,5}){0,3}|[0-9]#",
        _ => return None,
    })
}

/// A proptest regex (already parsed) for `format`, if known.
pub(crate) fn hir_of(format: &str) -> Option<regex_syntax::hir::Hir> {
    regex_of(format)
        .map(|re| regex_syntax::Parser::new().parse(re).expect("built-in format regexes parse"))
}

/// A validator of `format` alone (asserted), for strings generated from a pattern beside it.
pub(crate) fn checker(format: &str) -> Option<jsonschema::Validator> {
    if !is_asserted(format) {
        return None;
    }
    let schema = serde_json::json!({"format": format});
    Some(
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("a format-only schema builds"),
    )
}

/// A small, valid, deterministic example of `format`.
pub(crate) fn example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date" => "2024-01-01",
        "time" => "00:00:00Z",
        "date-time" => "2024-01-01T00:00:00Z",
        "duration" => "P1D",
        "email" | "idn-email" => "a@example.com",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "127.0.0.1",
        "ipv6" => "::1",
        "uri" | "iri" => "https://example.com/",
        "uri-reference" | "iri-reference" => "/a",
        "uri-template" => "https://example.com/{id}",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "regex" => "a",
        "json-pointer" => "",
        "relative-json-pointer" => "0",
        _ => return None,
    })
}

/// Tricky but valid members of `format`: the spellings a hand-written parser on the server
/// tends to get wrong (a `+tag` or quoted local part, a port, an IPv6 literal, userinfo, percent
/// escapes, an offset, a fraction, a leap day). Each is confirmed valid by the oracle's format
/// check in the tests below: a member it rejects is removed from the list, not special-cased.
///
/// The edges of hypothesis' `dates()`, `times()` and `datetimes()` (what hypothesis-jsonschema
/// and schemathesis draw these formats from: years 0001 to 9999, microseconds, the odd offsets of
/// real zones) and the leap seconds and unknown-offset spelling RFC 3339 allows, which
/// Python's `datetime` and many hand-written parsers reject, are members here too (issue 30
/// item 6).
///
/// See: <https://www.rfc-editor.org/rfc/rfc5321#section-4.1.2>,
/// <https://www.rfc-editor.org/rfc/rfc3986#section-3>,
/// <https://www.rfc-editor.org/rfc/rfc3339#section-5.6>,
/// <https://www.rfc-editor.org/rfc/rfc3339#appendix-A>,
/// <https://hypothesis.readthedocs.io/en/latest/reference/strategies.html#hypothesis.strategies.datetimes>.
pub(crate) fn tricky_examples(format: &str) -> &'static [&'static str] {
    match format {
        "date" => &["2024-02-29", "2000-02-29", "1970-01-01", "9999-12-31", "0001-01-01"],
        "time" => &[
            "23:59:59.999999Z",
            "00:00:00+14:00",
            "12:34:56-23:59",
            "23:59:60Z",
            "08:30:06z",
            "12:00:00-00:00",
            "05:45:00+05:45",
        ],
        "date-time" => &[
            "2024-02-29T23:59:59.999999+05:30",
            "2000-02-29T00:00:00-12:00",
            "2024-12-31t23:59:59z",
            "1970-01-01T00:00:00.000Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z",
            "1998-12-31T23:59:60Z",
            "2024-06-30T12:00:00-09:30",
        ],
        "duration" => &["PT0S", "P0D", "P1W", "P1Y2M10DT2H30M5S", "PT36H"],
        "email" | "idn-email" => &[
            "first.last+tag@example.com",
            "\"quoted.local\"@example.com",
            "user@mail.sub.example.co.uk",
            "o'brien_x-y@example.org",
        ],
        "hostname" | "idn-hostname" => {
            &["localhost", "xn--bcher-kva.example", "a-b.c-d.example", "a.b.c.d.e.f.example.com"]
        }
        "ipv4" => &["0.0.0.0", "255.255.255.255", "192.168.1.1"],
        "ipv6" => {
            &["::", "::ffff:192.0.2.1", "2001:db8::1", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"]
        }
        "uri" | "iri" => &[
            "https://user:p%40ss@example.com:8443/a%20b?q=1&r=%E2%82%AC#frag",
            "http://[::1]:8080/",
            "urn:isbn:0451450523",
            "file:///tmp/x",
        ],
        "uri-reference" | "iri-reference" => &["//example.com:8080/a", "?q=%20", "#frag", "../a/b"],
        _ => &[],
    }
}

/// Strings that are not of `format` (the oracle confirms before any is labelled invalid).
pub(crate) fn invalid_examples(format: &str) -> &'static [&'static str] {
    match format {
        "date" => &["2024-13-45", "not-a-date"],
        "time" => &["25:61:61", "not-a-time"],
        "date-time" => &["2024-13-45T25:61:61Z", "not-a-date-time"],
        "duration" => &["1D", "P"],
        "email" | "idn-email" => &["not-an-email", "@"],
        "hostname" | "idn-hostname" => &["-bad-.host-", "a..b"],
        "ipv4" => &["256.256.256.256", "1.2.3"],
        "ipv6" => &["12345::", ":::"],
        "uri" | "iri" => &["not a uri", "//no-scheme"],
        "uri-reference" | "iri-reference" => &["\\\\bad ref", "http://[bad"],
        "uri-template" => &["{unclosed"],
        "uuid" => &["not-a-uuid", "00000000-0000-0000-0000"],
        "regex" => &["[unclosed", "(a"],
        "json-pointer" => &["no-leading-slash", "/bad~2"],
        "relative-json-pointer" => &["/absolute", "-1"],
        _ => &[],
    }
}

/// The inclusive range of an integer format, as floats (the bound keywords' representation).
#[expect(clippy::cast_precision_loss, reason = "bounds at 2^63 are approximate in f64 by nature")]
pub(crate) fn int_range(format: &str) -> Option<(f64, f64)> {
    Some(match format {
        "int8" => (f64::from(i8::MIN), f64::from(i8::MAX)),
        "int16" => (f64::from(i16::MIN), f64::from(i16::MAX)),
        "int32" => (f64::from(i32::MIN), f64::from(i32::MAX)),
        "int64" => (i64::MIN as f64, i64::MAX as f64),
        "uint8" => (0.0, f64::from(u8::MAX)),
        "uint16" => (0.0, f64::from(u16::MAX)),
        "uint32" => (0.0, f64::from(u32::MAX)),
        "uint64" => (0.0, u64::MAX as f64),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::{Strategy, ValueTree};

    const FORMATS: &[&str] = &[
        "date",
        "time",
        "date-time",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "uri-template",
        "uuid",
        "regex",
        "json-pointer",
        "relative-json-pointer",
    ];

    fn checker(format: &str) -> jsonschema::Validator {
        let schema = serde_json::json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string", "format": format});
        jsonschema::options().should_validate_formats(true).build(&schema).expect("builds")
    }

    #[test]
    fn generated_and_example_values_are_valid_and_invalid_examples_are_not() {
        let mut runner = crate::seeded_runner(1);
        for f in FORMATS {
            let v = checker(f);
            let strategy = proptest::string::string_regex_parsed(&hir_of(f).expect("known"))
                .expect("generates");
            for _ in 0..200 {
                let s = strategy.new_tree(&mut runner).expect("tree").current();
                assert!(v.is_valid(&serde_json::json!(s)), "{f}: generated {s:?} is invalid");
            }
            for tricky in tricky_examples(f) {
                assert!(
                    v.is_valid(&serde_json::json!(tricky)),
                    "{f}: tricky {tricky:?} is invalid"
                );
            }
            let ex = example(f).expect("example");
            assert!(v.is_valid(&serde_json::json!(ex)), "{f}: example {ex:?} is invalid");
            for bad in invalid_examples(f) {
                assert!(!v.is_valid(&serde_json::json!(bad)), "{f}: {bad:?} should be invalid");
            }
        }
    }

    #[test]
    fn integer_formats_have_ranges() {
        assert_eq!(int_range("uint32"), Some((0.0, 4_294_967_295.0)));
        assert_eq!(int_range("int32").map(|r| r.0), Some(-2_147_483_648.0));
        assert!(int_range("float").is_none());
    }
}
