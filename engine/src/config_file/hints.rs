//! `[hints]`: value hints, in the file's order. A key is a property name, `TOOLS./pointer` (a
//! tool glob, a dot and a JSON pointer) or `format:NAME`; a value is a list of known-good values,
//! one value, or `{ regex = "..." }` / `{ glob = "..." }`.

use crate::config::ToolHint;
use mcp_fuzz_generators::hint::{Hint, Source, Target, check};
use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// The hints of a file, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints(pub Vec<ToolHint>);

/// A key of `[hints]`, parsed: the tools it is for and the place.
struct HintKey(Option<String>, Target);

impl<'de> Deserialize<'de> for HintKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let key = String::deserialize(d)?;
        parse_key(&key).map(|(tools, target)| Self(tools, target)).map_err(D::Error::custom)
    }
}

/// What a hint key names.
fn parse_key(key: &str) -> Result<(Option<String>, Target), String> {
    if let Some(format) = key.strip_prefix("format:") {
        if format.is_empty() {
            return Err("hint key `format:` names no format; write `format:email`".into());
        }
        return Ok((None, Target::Format(format.to_owned())));
    }
    let Some(slash) = key.find('/') else {
        if key.is_empty() {
            return Err("an empty hint key; use a property name, `TOOLS./pointer` or \
                        `format:NAME`"
                .into());
        }
        return Ok((None, Target::Property(key.to_owned())));
    };
    let (tools, pointer) = key.split_at(slash);
    let tools = match tools.strip_suffix('.') {
        _ if tools.is_empty() => None,
        Some(glob) if !glob.is_empty() => Some(glob.to_owned()),
        _ => {
            return Err(format!(
                "hint key `{key}` has a JSON pointer but no `TOOLS.` before it; write it as \
                 \"TOOL-GLOB./pointer\", such as \"git_*./repo_path\" (or \"/pointer\" for \
                 every tool)"
            ));
        }
    };
    Ok((tools, Target::Pointer(pointer.to_owned())))
}

/// A hint's values, read from a TOML value.
fn source(value: toml::Value) -> Result<Source, String> {
    let json = |v: &toml::Value| serde_json::to_value(v).map_err(|e| e.to_string());
    let source = match value {
        toml::Value::Array(items) => {
            Source::Values(items.iter().map(json).collect::<Result<Vec<_>, _>>()?)
        }
        toml::Value::Table(table) => {
            let mut entries = table.into_iter();
            match (entries.next(), entries.next()) {
                (Some((k, toml::Value::String(s))), None) if k == "regex" => Source::Regex(s),
                (Some((k, toml::Value::String(s))), None) if k == "glob" => Source::Glob(s),
                _ => {
                    return Err("a hint is a list of values, one value, or a table with one \
                                key, `regex` or `glob`, whose value is a string (to hint one \
                                object, put it in a list: [{ ... }])"
                        .into());
                }
            }
        }
        scalar => Source::Values(vec![json(&scalar)?]),
    };
    check(&source)?;
    Ok(source)
}

impl<'de> Deserialize<'de> for Hints {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Hints;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of value hints")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hints, A::Error> {
                let mut hints = Vec::new();
                while let Some(HintKey(tools, target)) = map.next_key()? {
                    let value: toml::Value = map.next_value()?;
                    let source = source(value).map_err(A::Error::custom)?;
                    hints.push(ToolHint { tools, hint: Hint { target, source } });
                }
                Ok(Hints(hints))
            }
        }
        d.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Vec<ToolHint>, String> {
        toml::from_str::<Hints>(text).map(|h| h.0).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn keys_and_values_in_the_files_order() {
        let hints = read(
            "path = [\"./a.txt\", \"./b.txt\"]\n\"git_*./repo_path\" = \"./repo\"\n\
             \"format:email\" = [\"a@example.com\"]\nname = { regex = \"[a-z]{3}\" }\n\
             \"/files/*/path\" = { glob = \"./s/*.txt\" }\nid = [1, { a = true }]",
        )
        .expect("reads");
        let got: Vec<(Option<&str>, &Target)> =
            hints.iter().map(|h| (h.tools.as_deref(), &h.hint.target)).collect();
        assert_eq!(
            got,
            [
                (None, &Target::Property("path".into())),
                (Some("git_*"), &Target::Pointer("/repo_path".into())),
                (None, &Target::Format("email".into())),
                (None, &Target::Property("name".into())),
                (None, &Target::Pointer("/files/*/path".into())),
                (None, &Target::Property("id".into())),
            ]
        );
        assert_eq!(hints[1].hint.source, Source::Values(vec![json!("./repo")]));
        assert_eq!(hints[5].hint.source, Source::Values(vec![json!(1), json!({"a": true})]));
        assert_eq!(hints[3].hint.source, Source::Regex("[a-z]{3}".into()));
    }

    #[test]
    fn bad_hints_say_what_to_write() {
        assert!(read("\"git_*/repo\" = [1]").expect_err("no dot").contains("TOOL-GLOB./pointer"));
        assert!(read("\"format:\" = [1]").expect_err("no format").contains("names no format"));
        assert!(read("x = { regex = \"(\" }").expect_err("bad regex").contains("("));
        assert!(read("x = []").expect_err("empty").contains("empty"));
        assert!(read("x = { a = 1 }").expect_err("table").contains("put it in a list"));
        assert!(read("x = { regex = \"a\", glob = \"b\" }").expect_err("two").contains("one key"));
    }
}
