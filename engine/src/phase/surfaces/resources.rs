//! Resources and templates: every page of `resources/list` and `resources/templates/list`; a
//! read of each listed resource (at most [`MAX_READS`]), of unknown URIs (a graceful error
//! expected), and of each template expanded with plausible values (completions first) and with
//! odd ones per variable (empty, very long, `..`, percent escapes, unicode, delimiters).

use super::listed::{Completed, Listed, label};
use super::shape::Shape;
use super::{Intent, SurfaceCase, SurfacesRun};
use crate::report::{SurfaceKind, SurfaceRef};
use mcp_fuzz_generators::uri_template::{UriTemplate, odd_values, plausible_values};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Listed resources read, at most.
///
/// Why: a server may list thousands (a file tree); twenty reads show how reads are served
/// without turning the phase into a crawl. Sizes are bounded by `--max-response-bytes`.
pub(crate) const MAX_READS: usize = 20;

/// Reads both listings.
pub(super) async fn list(phase: &mut SurfacesRun<'_, '_>) -> Listed {
    let mut listed = Listed::default();
    let resources = phase.list_all("resources/list", "resources").await;
    for (i, r) in resources.iter().enumerate() {
        let uri = r.get("uri").and_then(Value::as_str).ok_or("it has no string `uri`");
        if let Some(u) = phase.usable(i, "resources/list", uri.map_err(str::to_owned)) {
            listed.resources.push(u.to_owned());
        }
    }
    let templates = phase.list_all("resources/templates/list", "resourceTemplates").await;
    for (i, t) in templates.iter().enumerate() {
        let parsed = t
            .get("uriTemplate")
            .and_then(Value::as_str)
            .ok_or_else(|| "it has no string `uriTemplate`".to_owned())
            .and_then(|s| {
                UriTemplate::parse(s)
                    .map(|p| (s.to_owned(), p))
                    .map_err(|e| format!("`uriTemplate` {s:?} is not an RFC 6570 template: {e}"))
            });
        if let Some(t) = phase.usable(i, "resources/templates/list", parsed) {
            listed.templates.push(t);
        }
    }
    listed
}

/// Reads listed resources, unknown URIs, and expanded templates.
pub(super) async fn run(phase: &mut SurfacesRun<'_, '_>, listed: &Listed, completed: &Completed) {
    for uri in listed.resources.iter().take(MAX_READS) {
        let item = phase.item(SurfaceKind::Resource, uri);
        let surface = SurfaceRef { kind: SurfaceKind::Resource, name: uri.clone(), argument: None };
        phase.probe(read(surface, item, uri, Intent::Listed, "listed".into())).await;
    }
    let unknown = "unknown URIs";
    let item = phase.item(SurfaceKind::Resource, unknown);
    for uri in unknown_uris(listed) {
        let surface =
            SurfaceRef { kind: SurfaceKind::Resource, name: unknown.into(), argument: None };
        phase.probe(read(surface, item, &uri, Intent::Odd, uri.clone())).await;
    }
    for (text, template) in &listed.templates {
        let item = phase.item(SurfaceKind::ResourceTemplate, text);
        let vars: Vec<String> = template.variables().into_iter().map(str::to_owned).collect();
        let plausible = |var: &str| -> Vec<String> {
            let mut v: Vec<String> =
                completed.first(SurfaceKind::ResourceTemplate, text, var).into_iter().collect();
            v.extend(plausible_values());
            v
        };
        let base: Map<String, Value> =
            vars.iter().map(|v| (v.clone(), Value::String(plausible(v).remove(0)))).collect();
        let mut cases = vec![(base.clone(), Intent::Valid, "plausible values".to_owned())];
        for var in &vars {
            for value in plausible(var).into_iter().skip(1) {
                let mut m = base.clone();
                m.insert(var.clone(), Value::String(value.clone()));
                cases.push((m, Intent::Valid, format!("{var} = {}", label(&value))));
            }
            for value in odd_values() {
                let mut m = base.clone();
                m.insert(var.clone(), Value::String(value.clone()));
                cases.push((m, Intent::Odd, format!("{var} = {}", label(&value))));
            }
        }
        let surface =
            SurfaceRef { kind: SurfaceKind::ResourceTemplate, name: text.clone(), argument: None };
        for (values, intent, label) in cases {
            let probe = SurfaceCase {
                surface: surface.clone(),
                item,
                method: "resources/read",
                params: expanded(&surface.name, &values),
                shape: Shape::Read,
                intent,
                label,
                shrink: Some((values, |p, m| expanded(&p.surface.name, m))),
            };
            phase.probe(probe).await;
        }
    }
}

/// A read of `uri`.
fn read(surface: SurfaceRef, item: usize, uri: &str, intent: Intent, label: String) -> SurfaceCase {
    SurfaceCase {
        surface,
        item,
        method: "resources/read",
        params: json!({"uri": uri}),
        shape: Shape::Read,
        intent,
        label,
        shrink: None,
    }
}

/// The params of a read of `template` expanded with `values`.
fn expanded(template: &str, values: &Map<String, Value>) -> Value {
    let values: BTreeMap<String, String> = values
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    let uri = UriTemplate::parse(template).map(|t| t.expand(&values)).unwrap_or_default();
    json!({"uri": uri})
}

/// URIs nobody listed: one of a scheme of our own, and one per scheme the server uses (at most
/// three), each naming nothing.
fn unknown_uris(listed: &Listed) -> Vec<String> {
    let mut uris = vec!["mcp-fuzz://no-such-resource/7f3a".to_owned()];
    let schemes = listed
        .resources
        .iter()
        .map(String::as_str)
        .chain(listed.templates.iter().map(|(t, _)| t.as_str()))
        .filter_map(|u| u.split_once("://").map(|(s, _)| s.to_owned()));
    for scheme in schemes {
        let uri = format!("{scheme}://mcp-fuzz-no-such-resource-7f3a");
        if uris.len() < 4 && !uris.contains(&uri) && !scheme.contains(['{', '}']) {
            uris.push(uri);
        }
    }
    uris
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_uris_use_the_servers_schemes_once() {
        let listed = Listed {
            resources: vec!["mem://a".into(), "mem://b".into(), "file:///x".into()],
            templates: vec![(
                "mem://n/{id}".into(),
                UriTemplate::parse("mem://n/{id}").expect("ok"),
            )],
        };
        assert_eq!(
            unknown_uris(&listed),
            [
                "mcp-fuzz://no-such-resource/7f3a",
                "mem://mcp-fuzz-no-such-resource-7f3a",
                "file://mcp-fuzz-no-such-resource-7f3a"
            ]
        );
    }

    #[test]
    fn a_template_read_expands_its_values() {
        let m: Map<String, Value> = serde_json::from_value(json!({"id": "a b"})).expect("map");
        assert_eq!(expanded("mem://notes/{id}", &m), json!({"uri": "mem://notes/a%20b"}));
    }
}
