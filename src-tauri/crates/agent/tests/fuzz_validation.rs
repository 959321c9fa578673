//! Tool-argument validation under hostile input. Any schema with any
//! arguments gives coerced arguments or a readable error (no panic, no hang); what passes
//! once passes again unchanged (coercion is stable); arguments that fit a tool's schema
//! pass untouched. Cases per property: 512; `PROPTEST_CASES=N` for more.

#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

use proptest::prelude::*;
use serde_json::{Value, json};
use wyckoff_agent::validation::validate_args;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1_000_000i64..1_000_000).prop_map(|c| Value::from(c as f64 / 100.0)),
        "\\PC{0,10}".prop_map(Value::String),
        "-?[0-9]{1,6}(\\.[0-9]{1,3})?".prop_map(Value::String),
        prop_oneof![
            Just("yes"),
            Just("no"),
            Just("true"),
            Just("false"),
            Just("")
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Schemas built from the keywords the validator understands, nested, with hostile
/// values (wrong types for keywords, negative bounds, empty enums).
fn schema() -> impl Strategy<Value = Value> {
    let type_name = prop_oneof![
        Just("string"),
        Just("integer"),
        Just("number"),
        Just("boolean"),
        Just("object"),
        Just("array"),
        Just("null"),
        Just("bogus"),
    ];
    let leaf = prop_oneof![
        type_name.clone().prop_map(|t| json!({"type": t})),
        proptest::collection::vec(type_name, 1..3).prop_map(|t| json!({"type": t})),
        proptest::collection::vec(json_value(), 0..4).prop_map(|e| json!({"enum": e})),
        json_value().prop_map(|c| json!({"const": c})),
        (any::<i32>(), any::<i32>())
            .prop_map(|(a, b)| json!({"type": "integer", "minimum": a, "maximum": b})),
        (0u32..20, 0u32..20)
            .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
        json_value(),
        Just(json!(true)),
        Just(json!(false)),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        prop_oneof![
            (
                proptest::collection::btree_map("[a-z]{1,6}", inner.clone(), 0..4),
                proptest::collection::vec("[a-z]{1,6}", 0..3),
                any::<bool>(),
            )
                .prop_map(|(props, required, additional)| json!({
                    "type": "object",
                    "properties": props,
                    "required": required,
                    "additionalProperties": additional,
                })),
            (inner.clone(), 0u32..4)
                .prop_map(|(items, min)| json!({"type": "array", "items": items, "minItems": min})),
            proptest::collection::vec(inner.clone(), 0..3).prop_map(|s| json!({"anyOf": s})),
            proptest::collection::vec(inner, 0..3).prop_map(|s| json!({"oneOf": s})),
        ]
    })
}

fn analyze_stock_schema() -> Value {
    json!({"type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 6, "maxLength": 9},
            "days": {"type": "integer", "minimum": 30, "maximum": 1000},
            "mode": {"type": "string", "enum": ["brief", "full"]},
            "include_chart": {"type": "boolean"},
            "price": {"type": "number", "minimum": 0}
        },
        "required": ["code"],
        "additionalProperties": false})
}

proptest! {
    #![proptest_config(config())]

    /// Any schema, any arguments: coerced arguments (an object) or a readable error.
    #[test]
    fn any_schema_any_args_gives_an_object_or_an_error(schema in schema(), args in json_value()) {
        match validate_args(&schema, &args) {
            Ok(out) => prop_assert!(out.is_object(), "non-object passed: {out}"),
            Err(e) => prop_assert!(e.len() > 5, "unclear error {e:?}"),
        }
    }

    /// Coercion is stable: what passed once passes again, unchanged.
    #[test]
    fn validation_is_idempotent(schema in schema(), args in json_value()) {
        if let Ok(once) = validate_args(&schema, &args) {
            prop_assert_eq!(validate_args(&schema, &once), Ok(once));
        }
    }

    /// Arguments that fit the tool schema pass exactly as given.
    #[test]
    fn fitting_args_pass_untouched(
        code in "[0-9]{6}",
        days in proptest::option::of(30i64..=1000),
        mode in proptest::option::of(prop_oneof![Just("brief"), Just("full")]),
        chart in proptest::option::of(any::<bool>()),
        cents in proptest::option::of(0i64..10_000_000),
    ) {
        let mut args = json!({"code": code});
        if let Some(d) = days { args["days"] = json!(d); }
        if let Some(m) = mode { args["mode"] = json!(m); }
        if let Some(c) = chart { args["include_chart"] = json!(c); }
        if let Some(c) = cents { args["price"] = json!(c as f64 / 100.0); }
        prop_assert_eq!(validate_args(&analyze_stock_schema(), &args), Ok(args));
    }

    /// Numeric strings for an integer field coerce to the same number; out of range or
    /// unknown fields are errors that name the field.
    #[test]
    fn numeric_strings_coerce_and_errors_name_the_field(days in -5000i64..5000, extra in "[a-z]{3,8}") {
        let schema = analyze_stock_schema();
        let result = validate_args(&schema, &json!({"code": "600519", "days": days.to_string()}));
        if (30..=1000).contains(&days) {
            prop_assert_eq!(result, Ok(json!({"code": "600519", "days": days})));
        } else {
            let err = result.unwrap_err();
            prop_assert!(err.contains("days"), "{err}");
        }
        prop_assume!(!["code", "days", "mode", "price"].contains(&extra.as_str()));
        let err = validate_args(&schema, &json!({"code": "600519", extra.clone(): 1})).unwrap_err();
        prop_assert!(err.contains(&extra), "{err}");
    }
}
