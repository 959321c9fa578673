//! OpenAI strict-mode tool schemas (seed §2: one schema, three wire forms; OpenAI's
//! structured-output rules).
//!
//! With `"strict": true` OpenAI requires every object to list all its properties in
//! `required` and to set `additionalProperties: false`; an optional property becomes
//! nullable instead. [`strict_schema`] rewrites a tool's portable schema that way, or says
//! why it cannot (an open object, a keyword strict mode does not take); such a tool is sent
//! non-strict. The [`NullPlan`] it returns records which properties were made nullable, so
//! a `null` the model sends for one of them is removed again ([`strip_added_nulls`]): the
//! tool sees the argument as absent, as with every other provider.
//!
//! Validation keywords strict mode may reject (`minimum`, `pattern`, `default`, …) are
//! dropped from the wire form only: the registry still validates arguments against the
//! tool's own schema.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// OpenAI's nesting limit for strict schemas.
const MAX_DEPTH: usize = 10;

/// Keywords kept in the strict wire form; everything else either cannot be expressed
/// (see [`UNSUPPORTED`]) or is a validation hint dropped from the wire form.
const STRUCTURAL: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "description",
];

/// Keywords whose meaning strict mode cannot carry: such a schema is sent non-strict.
const UNSUPPORTED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedProperties",
    "propertyNames",
];

/// Why a schema was sent non-strict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not expressible in strict mode at {path}: {reason}")]
pub struct NotStrict {
    pub path: String,
    pub reason: String,
}

/// Where the strict form added `null`, to undo it on the model's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NullPlan {
    /// Properties that were optional (and not nullable) in the tool's schema.
    optional: BTreeSet<String>,
    /// Every property of an object schema, with the plan for its value.
    props: BTreeMap<String, NullPlan>,
    items: Option<Box<NullPlan>>,
    branches: Vec<NullPlan>,
}

impl NullPlan {
    fn is_empty(&self) -> bool {
        self.optional.is_empty()
            && self.props.values().all(NullPlan::is_empty)
            && self.items.as_deref().is_none_or(NullPlan::is_empty)
            && self.branches.iter().all(NullPlan::is_empty)
    }
}

/// A tool schema in strict form with its null plan.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictSchema {
    pub schema: Value,
    pub plan: NullPlan,
}

/// Rewrites a tool's `parameters` for OpenAI strict mode.
pub fn strict_schema(parameters: &Value) -> Result<StrictSchema, NotStrict> {
    let root = match parameters {
        Value::Object(o) => o,
        _ => return Err(not_strict("", "the parameters are not an object schema")),
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(not_strict("", "the root is not of type object"));
    }
    let mut root = root.clone();
    // A root without properties is a tool without arguments (the registry accepts none).
    if !root.contains_key("properties") && root.get("additionalProperties").is_none() {
        root.insert("properties".into(), json!({}));
    }
    let mut plan = NullPlan::default();
    let schema = convert(&Value::Object(root), "", 0, &mut plan)?;
    Ok(StrictSchema { schema, plan })
}

fn not_strict(path: &str, reason: &str) -> NotStrict {
    NotStrict {
        path: if path.is_empty() {
            "(root)".into()
        } else {
            path.into()
        },
        reason: reason.into(),
    }
}

fn convert(
    schema: &Value,
    path: &str,
    depth: usize,
    plan: &mut NullPlan,
) -> Result<Value, NotStrict> {
    if depth > MAX_DEPTH {
        return Err(not_strict(path, "nested deeper than strict mode allows"));
    }
    let Some(s) = schema.as_object() else {
        return Err(not_strict(path, "a schema that accepts anything"));
    };
    if let Some(k) = UNSUPPORTED.iter().find(|k| s.contains_key(**k)) {
        return Err(not_strict(path, &format!("`{k}` is not supported")));
    }
    let mut out = Map::new();
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = s.get(key) {
            let Some(branches) = branches.as_array().filter(|b| !b.is_empty()) else {
                return Err(not_strict(
                    path,
                    &format!("`{key}` is not a list of schemas"),
                ));
            };
            let mut converted = Vec::with_capacity(branches.len());
            for (i, b) in branches.iter().enumerate() {
                let mut bp = NullPlan::default();
                converted.push(convert(
                    b,
                    &format!("{path}/{key}/{i}"),
                    depth + 1,
                    &mut bp,
                )?);
                plan.branches.push(bp);
            }
            // Strict mode has anyOf only; the registry still checks the tool's oneOf.
            out.insert("anyOf".into(), Value::Array(converted));
        }
    }
    let types = type_names(s.get("type"));
    let has_shape = !types.is_empty()
        || out.contains_key("anyOf")
        || s.contains_key("enum")
        || s.contains_key("const");
    if !has_shape {
        return Err(not_strict(path, "a schema without a type accepts anything"));
    }
    for (k, v) in s {
        if STRUCTURAL.contains(&k.as_str())
            && !matches!(
                k.as_str(),
                "anyOf" | "oneOf" | "properties" | "required" | "additionalProperties" | "items"
            )
        {
            out.insert(k.clone(), v.clone());
        }
    }
    if types.contains(&"object") {
        let extra = s.get("additionalProperties");
        if !matches!(extra, None | Some(Value::Bool(false))) {
            return Err(not_strict(path, "an object open to extra properties"));
        }
        let Some(props) = s.get("properties").and_then(Value::as_object) else {
            return Err(not_strict(path, "an object without its properties"));
        };
        let required: BTreeSet<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut new_props = Map::new();
        for (name, prop) in props {
            let mut pp = NullPlan::default();
            let mut p = convert(prop, &format!("{path}/{name}"), depth + 1, &mut pp)?;
            if !required.contains(name.as_str()) && !accepts_null(&p) {
                p = nullable(p);
                plan.optional.insert(name.clone());
            }
            plan.props.insert(name.clone(), pp);
            new_props.insert(name.clone(), p);
        }
        // Sorted, so the wire form does not depend on the map's key order.
        let mut all: Vec<&String> = new_props.keys().collect();
        all.sort();
        let all: Vec<Value> = all.into_iter().map(|k| json!(k)).collect();
        out.insert("properties".into(), Value::Object(new_props));
        out.insert("required".into(), Value::Array(all));
        out.insert("additionalProperties".into(), json!(false));
    }
    if types.contains(&"array") {
        match s.get("items") {
            Some(items @ Value::Object(_)) => {
                let mut ip = NullPlan::default();
                out.insert(
                    "items".into(),
                    convert(items, &format!("{path}/items"), depth + 1, &mut ip)?,
                );
                plan.items = Some(Box::new(ip));
            }
            _ => {
                return Err(not_strict(
                    path,
                    "an array without one schema for its items",
                ));
            }
        }
    }
    Ok(Value::Object(out))
}

fn type_names(t: Option<&Value>) -> Vec<&str> {
    match t {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a converted schema already lets `null` through.
fn accepts_null(s: &Value) -> bool {
    if let Some(branches) = s.get("anyOf").and_then(Value::as_array) {
        return branches.iter().any(accepts_null);
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e.contains(&Value::Null);
    }
    if let Some(c) = s.get("const") {
        return c.is_null();
    }
    type_names(s.get("type")).contains(&"null")
}

/// `s` or null.
fn nullable(mut s: Value) -> Value {
    let Some(o) = s.as_object_mut() else {
        return s;
    };
    if o.contains_key("anyOf") || o.contains_key("const") {
        let description = o.remove("description");
        let mut wrapped = json!({"anyOf": [s, {"type": "null"}]});
        if let (Some(d), Some(w)) = (description, wrapped.as_object_mut()) {
            w.insert("description".into(), d);
        }
        return wrapped;
    }
    match o.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            o.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(a)) => a.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(e)) = o.get_mut("enum") {
        e.push(Value::Null);
    }
    s
}

/// Removes the `null`s the model sent for properties the strict form made nullable: the
/// tool gets those arguments as absent. Other nulls stay.
pub fn strip_added_nulls(args: &mut Value, plan: &NullPlan) {
    if plan.is_empty() {
        return;
    }
    match args {
        Value::Object(map) => {
            if !plan.branches.is_empty() {
                // The first object branch that knows every key the model sent.
                if let Some(b) = plan
                    .branches
                    .iter()
                    .find(|b| !b.props.is_empty() && map.keys().all(|k| b.props.contains_key(k)))
                {
                    strip_added_nulls(args, b);
                }
                return;
            }
            map.retain(|k, v| !(v.is_null() && plan.optional.contains(k)));
            for (k, v) in map.iter_mut() {
                if let Some(p) = plan.props.get(k) {
                    strip_added_nulls(v, p);
                }
            }
        }
        Value::Array(items) => {
            if let Some(p) = plan.items.as_deref() {
                for v in items {
                    strip_added_nulls(v, p);
                }
            } else if let Some(b) = plan.branches.iter().find_map(|b| b.items.as_deref()) {
                for v in items {
                    strip_added_nulls(v, b);
                }
            }
        }
        _ => {}
    }
}

/// Whether tools go out strict by default: only OpenAI's own API. OpenAI-compatible
/// vendors (DeepSeek, Qwen, Kimi, Ollama, local servers) take the schema as it is.
pub fn strict_by_default(kind: crate::ProviderKind, base_url: &str) -> bool {
    use crate::ProviderKind;
    if !matches!(kind, ProviderKind::Openai | ProviderKind::OpenaiCompatible) {
        return false;
    }
    let Some(rest) = base_url.trim().strip_prefix("https://") else {
        return false;
    };
    let host = rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.strip_suffix(":443").unwrap_or(&host);
    host == "api.openai.com"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProviderKind;

    fn ok(input: Value) -> StrictSchema {
        strict_schema(&input).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    #[test]
    fn table_of_schemas_in_strict_form() {
        let cases: Vec<(&str, Value, Value)> = vec![
            (
                "optional becomes nullable and required; validation hints leave the wire form",
                json!({"type": "object", "properties": {
                    "code": {"type": "string", "description": "6-digit code", "pattern": "^\\d{6}$"},
                    "days": {"type": "integer", "minimum": 1, "default": 120}},
                    "required": ["code"]}),
                json!({"type": "object", "properties": {
                    "code": {"type": "string", "description": "6-digit code"},
                    "days": {"type": ["integer", "null"]}},
                    "required": ["code", "days"], "additionalProperties": false}),
            ),
            (
                "an optional enum gets null among its values",
                json!({"type": "object", "properties": {
                    "mode": {"type": "string", "enum": ["view", "add"]}}}),
                json!({"type": "object", "properties": {
                    "mode": {"type": ["string", "null"], "enum": ["view", "add", null]}},
                    "required": ["mode"], "additionalProperties": false}),
            ),
            (
                "an already nullable optional stays as it is",
                json!({"type": "object", "properties": {"note": {"type": ["string", "null"]}}}),
                json!({"type": "object", "properties": {"note": {"type": ["string", "null"]}},
                    "required": ["note"], "additionalProperties": false}),
            ),
            (
                "no arguments",
                json!({"type": "object"}),
                json!({"type": "object", "properties": {}, "required": [],
                    "additionalProperties": false}),
            ),
            (
                "anyOf and oneOf become anyOf, wrapped with null when optional",
                json!({"type": "object", "properties": {
                    "style": {"description": "one or many", "oneOf": [
                        {"type": "string"}, {"type": "array", "items": {"type": "string"}}]}},
                    "required": []}),
                json!({"type": "object", "properties": {
                    "style": {"description": "one or many", "anyOf": [
                        {"anyOf": [{"type": "string"},
                                   {"type": "array", "items": {"type": "string"}}]},
                        {"type": "null"}]}},
                    "required": ["style"], "additionalProperties": false}),
            ),
        ];
        for (what, input, want) in cases {
            assert_eq!(ok(input).schema, want, "{what}");
        }
    }

    /// A typical MCP server schema: nested objects, arrays of objects, enums, optional
    /// fields at every level, `$schema` and titles.
    fn mcp_schema() -> Value {
        json!({
            "type": "object",
            "title": "create_issue",
            "properties": {
                "repo": {"type": "string", "title": "Repo"},
                "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                "assignee": {"type": "object", "properties": {
                    "login": {"type": "string"},
                    "team": {"type": "string", "enum": ["core", "docs"]}},
                    "required": ["login"]},
                "tasks": {"type": "array", "items": {"type": "object", "properties": {
                    "title": {"type": "string"}, "done": {"type": "boolean", "default": false}},
                    "required": ["title"], "additionalProperties": false}},
                "priority": {"type": "integer", "enum": [1, 2, 3]}
            },
            "required": ["repo", "assignee"]
        })
    }

    #[test]
    fn an_mcp_schema_with_nested_objects_arrays_and_enums() {
        let s = ok(mcp_schema());
        assert_eq!(
            s.schema,
            json!({
                "type": "object",
                "properties": {
                    "repo": {"type": "string"},
                    "labels": {"type": ["array", "null"], "items": {"type": "string"}},
                    "assignee": {"type": "object", "properties": {
                        "login": {"type": "string"},
                        "team": {"type": ["string", "null"], "enum": ["core", "docs", null]}},
                        "required": ["login", "team"], "additionalProperties": false},
                    "tasks": {"type": ["array", "null"], "items": {"type": "object", "properties": {
                        "title": {"type": "string"}, "done": {"type": ["boolean", "null"]}},
                        "required": ["done", "title"], "additionalProperties": false}},
                    "priority": {"type": ["integer", "null"], "enum": [1, 2, 3, null]}
                },
                "required": ["assignee", "labels", "priority", "repo", "tasks"],
                "additionalProperties": false
            })
        );
        // The model fills every field; the nulls it had to send for optional ones go.
        let mut args = json!({"repo": "a/b", "labels": null, "priority": null,
            "assignee": {"login": "li", "team": null},
            "tasks": [{"title": "x", "done": null}, {"title": "y", "done": true}]});
        strip_added_nulls(&mut args, &s.plan);
        assert_eq!(
            args,
            json!({"repo": "a/b", "assignee": {"login": "li"},
                "tasks": [{"title": "x"}, {"title": "y", "done": true}]})
        );
    }

    #[test]
    fn schemas_strict_mode_cannot_express_are_refused() {
        let cases = [
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            json!({"type": "object", "properties": {"meta": {"type": "object"}}}),
            json!({"type": "object", "properties": {
                "meta": {"type": "object", "additionalProperties": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"x": {}}}),
            json!({"type": "object", "properties": {"x": {"allOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}}),
            json!({"type": "object", "properties": {"x": {"type": "array"}}}),
            json!({"anyOf": [{"type": "object", "properties": {}}]}),
            json!("not a schema"),
        ];
        for c in cases {
            assert!(strict_schema(&c).is_err(), "{c} should be sent non-strict");
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..12 {
            deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        }
        assert!(strict_schema(&deep).is_err());
    }

    #[test]
    fn only_nulls_the_strict_form_added_are_stripped() {
        let s = ok(json!({"type": "object", "properties": {
            "code": {"type": "string"},
            "note": {"type": ["string", "null"]},
            "days": {"type": "integer"},
            "pick": {"anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                 "required": ["a"]},
                {"type": "string"}]}},
            "required": ["code", "pick"]}));
        let mut args = json!({"code": null, "note": null, "days": null,
                              "pick": {"a": "1", "b": null}});
        strip_added_nulls(&mut args, &s.plan);
        // `code` is required (a null there is the model's error to hear about) and `note`
        // was nullable in the tool's own schema.
        assert_eq!(
            args,
            json!({"code": null, "note": null, "pick": {"a": "1"}})
        );
    }

    #[test]
    fn strict_only_for_openais_own_api() {
        let cases = [
            (ProviderKind::Openai, "https://api.openai.com/v1", true),
            (ProviderKind::Openai, "https://API.openai.com:443/v1/", true),
            (
                ProviderKind::OpenaiCompatible,
                "https://api.openai.com/v1",
                true,
            ),
            (ProviderKind::Openai, "http://api.openai.com/v1", false),
            (ProviderKind::Openai, "http://127.0.0.1:8080/v1", false),
            (
                ProviderKind::Openai,
                "https://api.openai.com.evil.example/v1",
                false,
            ),
            (ProviderKind::Openai, "https://openrouter.ai/api/v1", false),
            (ProviderKind::Deepseek, "https://api.deepseek.com/v1", false),
            (
                ProviderKind::Qwen,
                "https://dashscope.aliyuncs.com/compatible-mode/v1",
                false,
            ),
            (ProviderKind::Kimi, "https://api.moonshot.cn/v1", false),
            (ProviderKind::Ollama, "http://localhost:11434/v1", false),
            (ProviderKind::Claude, "https://api.openai.com/v1", false),
        ];
        for (kind, url, want) in cases {
            assert_eq!(strict_by_default(kind, url), want, "{kind:?} {url}");
        }
    }
}
