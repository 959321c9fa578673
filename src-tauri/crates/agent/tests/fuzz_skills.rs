//! Skill files, fuzzed: any text as a skill file parses or is skipped
//! with a reason — never a panic — and a parsed skill always has a valid name; a
//! well-formed file round-trips its name, description and prompt. 512 cases per property
//! (`PROPTEST_CASES` for more).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use proptest::prelude::*;
use wyckoff_agent::skills::{is_valid_skill_name, parse_skill};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_text_parses_or_is_skipped_with_a_reason(
        stem in "[a-zA-Z0-9_ -]{0,20}",
        text in prop_oneof![
            any::<String>(),
            "---\n(name|description|x): [^\n]{0,40}\n---\n[\\s\\S]{0,80}",
            "(---\n){1,3}[\\s\\S]{0,60}",
        ],
    ) {
        match parse_skill(&stem, &text, Path::new("skills/x.md")) {
            Ok(parsed) => {
                let skill = parsed.skill;
                prop_assert!(is_valid_skill_name(&skill.name), "{:?}", skill.name);
                prop_assert!(!skill.prompt.trim().is_empty());
            }
            Err(reason) => prop_assert!(!reason.trim().is_empty()),
        }
    }

    #[test]
    fn a_well_formed_file_round_trips(
        name in "[a-z][a-z0-9_-]{0,20}",
        description in "[a-zA-Z0-9 \u{4e00}-\u{4e2f}]{0,30}",
        prompt in "[a-zA-Z0-9\u{4e00}-\u{4e2f}][a-zA-Z0-9 {}_\u{4e00}-\u{4e2f}\n]{0,60}[a-zA-Z0-9\u{4e00}-\u{4e2f}]",
    ) {
        let text = format!("---\nname: {name}\ndescription: {description}\n---\n{prompt}\n");
        // the file name is the skill name (seed §8); the front matter agrees here
        let parsed = parse_skill(&name, &text, Path::new("skills/x.md")).unwrap();
        prop_assert_eq!(parsed.name_mismatch, None);
        let skill = parsed.skill;
        prop_assert_eq!(skill.name, name);
        prop_assert_eq!(skill.description, description.trim());
        prop_assert_eq!(skill.prompt, prompt.trim());
    }
}
