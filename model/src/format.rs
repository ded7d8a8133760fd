//! The formats every document is written in (`run`, `diff`, `clients`, `report merge`): one
//! type for the command line, the config file and the renderers.

use serde::{Deserialize, Deserializer};
use std::fmt;
use std::str::FromStr;

/// A document format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// For people: a table and the findings; stdout only.
    Human,
    /// The versioned JSON document.
    Json,
    /// JUnit XML.
    Junit,
    /// SARIF 2.1.0.
    Sarif,
    /// Markdown, for a pull-request comment or a CI job summary.
    Markdown,
}

impl Format {
    /// Every format, in `--output-dir` order.
    pub const ALL: [Format; 5] =
        [Format::Human, Format::Json, Format::Junit, Format::Sarif, Format::Markdown];

    /// The format's name on the command line.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Json => "json",
            Self::Junit => "junit",
            Self::Sarif => "sarif",
            Self::Markdown => "markdown",
        }
    }

    /// The file a format is written to under `--output-dir` (none for `human`).
    #[must_use]
    pub fn file_name(self) -> Option<&'static str> {
        match self {
            Self::Human => None,
            Self::Json => Some("report.json"),
            Self::Junit => Some("report.junit.xml"),
            Self::Sarif => Some("report.sarif"),
            Self::Markdown => Some("report.md"),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
        write!(f, "unknown format `{}`; the formats are {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|f| f.as_str() == name).ok_or_else(|| UnknownFormat(name.into()))
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_read_back_by_name() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
        }
        let e = "xml".parse::<Format>().expect_err("not a format");
        assert_eq!(
            e.to_string(),
            "unknown format `xml`; the formats are human, json, junit, sarif, markdown"
        );
    }
}
