//! Tool argument validation against the tool's JSON Schema, before anything runs.
//!
//! Supports the subset of JSON Schema that tool definitions use: `type` (one or a list),
//! `properties`, `required`, `additionalProperties`, `enum`, `const`, `anyOf`/`oneOf`,
//! `items`, `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`.
//! Strings are coerced where nothing can be lost ("12" → 12 for an integer, "1.5" →
//! 1.5 for a number, "yes" → true for a boolean); anything else that does not fit is an
//! error the model can read and correct.

use serde_json::{Map, Number, Value};

/// Validates `args` against `schema` (the tool's `parameters`) and returns the
/// arguments with safe coercions applied. The error lists every problem found.
pub fn validate_args(schema: &Value, args: &Value) -> Result<Value, String> {
    let args = match args {
        // Vendors send no arguments at all for parameterless calls.
        Value::Null => Value::Object(Map::new()),
        other => other.clone(),
    };
    if !args.is_object() {
        return Err(format!(
            "arguments must be a JSON object, got {}",
            type_name(&args)
        ));
    }
    let mut errors = Vec::new();
    let out = check(schema, args, "", &mut errors);
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors.join("; "))
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn label(path: &str) -> String {
    if path.is_empty() {
        "arguments".to_owned()
    } else {
        format!("argument {path}")
    }
}

/// Validates one value; returns the (possibly coerced) value and pushes errors.
fn check(schema: &Value, value: Value, path: &str, errors: &mut Vec<String>) -> Value {
    let Some(schema) = schema.as_object() else {
        // `true` or a missing schema accepts anything.
        return value;
    };

    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            return check_any_of(schema, branches, value, path, errors);
        }
    }

    let value = match schema.get("type") {
        Some(Value::String(t)) => match coerce(t, value, path) {
            Ok(v) => v,
            Err(e) => {
                errors.push(e);
                return Value::Null;
            }
        },
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            // Exact type matches first, so a union with "string" keeps strings as strings.
            if names.iter().any(|t| matches_exactly(t, &value)) {
                value
            } else if let Some(v) = names
                .iter()
                .find_map(|t| coerce(t, value.clone(), path).ok())
            {
                v
            } else {
                errors.push(format!(
                    "{} must be {}, got {}",
                    label(path),
                    names.join(" or "),
                    type_name(&value)
                ));
                return Value::Null;
            }
        }
        _ => value,
    };

    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.iter().any(|a| json_eq(a, &value))
    {
        let list: Vec<String> = allowed
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| a.to_string())
            })
            .collect();
        errors.push(format!(
            "{} must be one of: {}",
            label(path),
            list.join(", ")
        ));
    }
    if let Some(c) = schema.get("const")
        && !json_eq(c, &value)
    {
        errors.push(format!("{} must be {c}", label(path)));
    }

    match value {
        Value::Number(ref n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                errors.push(format!("{} must be >= {min}", label(path)));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                errors.push(format!("{} must be <= {max}", label(path)));
            }
            value
        }
        Value::String(ref s) => {
            let len = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                errors.push(format!("{} must be at least {min} characters", label(path)));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                errors.push(format!("{} must be at most {max} characters", label(path)));
            }
            value
        }
        Value::Array(items) => check_array(schema, items, path, errors),
        Value::Object(map) => check_object(schema, map, path, errors),
        other => other,
    }
}

fn check_any_of(
    schema: &Map<String, Value>,
    branches: &[Value],
    value: Value,
    path: &str,
    errors: &mut Vec<String>,
) -> Value {
    // Sibling keywords (e.g. a description or an enum next to anyOf) still apply; merge
    // them into each branch.
    let siblings: Map<String, Value> = schema
        .iter()
        .filter(|(k, _)| k.as_str() != "anyOf" && k.as_str() != "oneOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let merged: Vec<Value> = branches
        .iter()
        .map(|b| match b.as_object() {
            Some(obj) => {
                let mut m = siblings.clone();
                m.extend(obj.iter().map(|(k, v)| (k.clone(), v.clone())));
                Value::Object(m)
            }
            None => b.clone(),
        })
        .collect();

    // Prefer a branch that accepts the value without coercion, so ["a","b"] stays an
    // array and "a" stays a string when both are allowed.
    for exact in [true, false] {
        for branch in &merged {
            if exact && !branch_type_matches_exactly(branch, &value) {
                continue;
            }
            let mut branch_errors = Vec::new();
            let out = check(branch, value.clone(), path, &mut branch_errors);
            if branch_errors.is_empty() {
                return out;
            }
        }
    }
    let kinds: Vec<String> = merged.iter().map(describe_schema).collect();
    errors.push(format!(
        "{} must match one of: {} (got {})",
        label(path),
        kinds.join(" | "),
        type_name(&value)
    ));
    Value::Null
}

fn branch_type_matches_exactly(branch: &Value, value: &Value) -> bool {
    match branch.get("type") {
        Some(Value::String(t)) => matches_exactly(t, value),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| matches_exactly(t, value)),
        _ => true,
    }
}

fn describe_schema(s: &Value) -> String {
    match s.get("type") {
        Some(Value::String(t)) if t == "array" => {
            match s.get("items").and_then(|i| i.get("type")) {
                Some(Value::String(it)) => format!("array of {it}"),
                _ => "array".to_owned(),
            }
        }
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None => "any".to_owned(),
    }
}

fn check_array(
    schema: &Map<String, Value>,
    items: Vec<Value>,
    path: &str,
    errors: &mut Vec<String>,
) -> Value {
    let n = items.len() as u64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && n < min
    {
        errors.push(format!("{} must have at least {min} items", label(path)));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && n > max
    {
        errors.push(format!("{} must have at most {max} items", label(path)));
    }
    let out = match schema.get("items") {
        Some(item_schema) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| check(item_schema, v, &format!("{path}[{i}]"), errors))
            .collect(),
        None => items,
    };
    Value::Array(out)
}

fn check_object(
    schema: &Map<String, Value>,
    map: Map<String, Value>,
    path: &str,
    errors: &mut Vec<String>,
) -> Value {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Tool schemas describe every argument; unknown keys are rejected unless the schema
    // explicitly allows extra properties.
    let extra = schema.get("additionalProperties");
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };

    let mut out = Map::new();
    for (key, value) in map {
        match props.get(&key) {
            Some(prop_schema) => {
                if value.is_null() && !required.contains(&key.as_str()) {
                    // An explicit null for an optional argument means "not given".
                    continue;
                }
                let v = check(prop_schema, value, &join(&key), errors);
                out.insert(key, v);
            }
            None => match extra {
                Some(Value::Bool(true)) => {
                    out.insert(key, value);
                }
                Some(extra_schema @ Value::Object(_)) => {
                    let v = check(extra_schema, value, &join(&key), errors);
                    out.insert(key, v);
                }
                _ => errors.push(format!("unexpected argument: {}", join(&key))),
            },
        }
    }
    for key in required {
        if !out.contains_key(key) {
            errors.push(format!("missing required argument: {}", join(key)));
        }
    }
    Value::Object(out)
}

fn matches_exactly(t: &str, v: &Value) -> bool {
    match (t, v) {
        ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("number", Value::Number(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        ("null", Value::Null) => true,
        _ => false,
    }
}

/// Converts `v` to type `t` when that is lossless, or explains why not.
fn coerce(t: &str, v: Value, path: &str) -> Result<Value, String> {
    if matches_exactly(t, &v) {
        return Ok(v);
    }
    let fail = |v: &Value| format!("{} must be {t}, got {}", label(path), type_name(v));
    match (t, &v) {
        ("integer", Value::Number(n)) => match n.as_f64() {
            // 12.0 is an integer written as a float; 12.5 is not.
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::from(f as i64)),
            _ => Err(fail(&v)),
        },
        ("integer", Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{} must be integer, got string {s:?}", label(path))),
        ("number", Value::String(s)) => {
            let trimmed = s.trim();
            if let Ok(i) = trimmed.parse::<i64>() {
                return Ok(Value::from(i));
            }
            trimmed
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("{} must be number, got string {s:?}", label(path)))
        }
        ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "y" | "on" => Ok(Value::Bool(true)),
            "false" | "0" | "no" | "n" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("{} must be boolean, got string {s:?}", label(path))),
        },
        _ => Err(fail(&v)),
    }
}

/// Equality where 1 and 1.0 are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "股票代码"},
                "mode": {"type": "string", "enum": ["diagnose", "price", "fundamental"]},
                "cost": {"type": "number"},
                "days": {"type": "integer", "minimum": 1, "maximum": 250},
                "include_breadth": {"type": "boolean"},
                "style": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "top_k": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["all"]}]},
                "filter": {"type": "object", "properties": {"min": {"type": "number"}}, "required": ["min"]}
            },
            "required": ["code"]
        })
    }

    #[test]
    fn table() {
        let s = schema();
        // (args, Ok(expected) | Err(substring))
        let cases: Vec<(Value, Result<Value, &str>)> = vec![
            (json!({"code": "000001"}), Ok(json!({"code": "000001"}))),
            (
                json!({"code": "000001", "days": "12"}),
                Ok(json!({"code": "000001", "days": 12})),
            ),
            (json!({"code": "1", "days": "-3"}), Err("must be >= 1")),
            (
                json!({"code": "1", "days": 30.0}),
                Ok(json!({"code": "1", "days": 30})),
            ),
            (
                json!({"code": "1", "days": 30.5}),
                Err("argument days must be integer"),
            ),
            (
                json!({"code": "1", "days": "abc"}),
                Err("argument days must be integer"),
            ),
            (
                json!({"code": "1", "days": true}),
                Err("argument days must be integer, got boolean"),
            ),
            (
                json!({"code": "1", "cost": "1.5"}),
                Ok(json!({"code": "1", "cost": 1.5})),
            ),
            (
                json!({"code": "1", "cost": true}),
                Err("argument cost must be number"),
            ),
            (
                json!({"code": "1", "include_breadth": "yes"}),
                Ok(json!({"code": "1", "include_breadth": true})),
            ),
            (
                json!({"code": "1", "include_breadth": "TRUE"}),
                Ok(json!({"code": "1", "include_breadth": true})),
            ),
            (
                json!({"code": "1", "include_breadth": "off"}),
                Ok(json!({"code": "1", "include_breadth": false})),
            ),
            (
                json!({"code": "1", "include_breadth": "maybe"}),
                Err("must be boolean"),
            ),
            (
                json!({"code": "1", "mode": "price"}),
                Ok(json!({"code": "1", "mode": "price"})),
            ),
            (
                json!({"code": "1", "mode": "bogus"}),
                Err("argument mode must be one of: diagnose, price, fundamental"),
            ),
            (json!({}), Err("missing required argument: code")),
            (
                json!({"code": "1", "colour": "red"}),
                Err("unexpected argument: colour"),
            ),
            (
                json!({"code": 600519}),
                Err("argument code must be string, got integer"),
            ),
            (json!({"code": "1", "mode": null}), Ok(json!({"code": "1"}))),
            // anyOf: the reference treated these as plain strings and rejected arrays.
            (
                json!({"code": "1", "style": ["trend", "pullback"]}),
                Ok(json!({"code": "1", "style": ["trend", "pullback"]})),
            ),
            (
                json!({"code": "1", "style": "trend"}),
                Ok(json!({"code": "1", "style": "trend"})),
            ),
            (
                json!({"code": "1", "style": 5}),
                Err("argument style must match one of: string | array of string"),
            ),
            (
                json!({"code": "1", "style": ["a", 1]}),
                Err("must match one of"),
            ),
            (
                json!({"code": "1", "top_k": "7"}),
                Ok(json!({"code": "1", "top_k": 7})),
            ),
            (
                json!({"code": "1", "top_k": "all"}),
                Ok(json!({"code": "1", "top_k": "all"})),
            ),
            (
                json!({"code": "1", "top_k": "some"}),
                Err("must match one of"),
            ),
            (
                json!({"code": "1", "filter": {"min": "2"}}),
                Ok(json!({"code": "1", "filter": {"min": 2}})),
            ),
            (
                json!({"code": "1", "filter": {}}),
                Err("missing required argument: filter.min"),
            ),
            (
                json!({"code": "1", "filter": {"min": 1, "x": 1}}),
                Err("unexpected argument: filter.x"),
            ),
            (json!(["000001"]), Err("arguments must be a JSON object")),
        ];
        for (args, want) in cases {
            let got = validate_args(&s, &args);
            match (&got, &want) {
                (Ok(v), Ok(w)) => assert_eq!(v, w, "args {args}"),
                (Err(e), Err(w)) => assert!(e.contains(w), "args {args}: error {e:?} lacks {w:?}"),
                _ => panic!("args {args}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn reports_every_problem_at_once() {
        let e = validate_args(&schema(), &json!({"mode": "x", "extra": 1})).unwrap_err();
        assert!(e.contains("missing required argument: code"), "{e}");
        assert!(e.contains("unexpected argument: extra"), "{e}");
        assert!(e.contains("must be one of"), "{e}");
    }

    #[test]
    fn null_args_mean_no_args() {
        let s = json!({"type": "object", "properties": {"mode": {"type": "string"}}});
        assert_eq!(validate_args(&s, &Value::Null).unwrap(), json!({}));
        let e = validate_args(&schema(), &Value::Null).unwrap_err();
        assert!(e.contains("missing required argument: code"));
    }

    #[test]
    fn additional_properties_true_keeps_extras() {
        let s = json!({"type": "object", "properties": {}, "additionalProperties": true});
        assert_eq!(
            validate_args(&s, &json!({"a": 1})).unwrap(),
            json!({"a": 1})
        );
    }
}
