//! Skills: named prompt templates invoked as `/name args`.
//!
//! Five built-ins (REFERENCE §8, prompts verbatim) plus user skills from
//! `$WYCKOFF_HOME/skills/*.md` with a front matter (`name`, `description`). The file name
//! is the skill name (seed §8: 文件名即 Skill 名); a front-matter `name` that differs is
//! reported, not obeyed. A user skill overrides a built-in of the same name. A malformed
//! file is skipped with a warning that names it; it never hides the other skills. [`SkillCatalog`] re-reads the folder when a
//! file or the folder changes, so edits apply without a restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SkillSource {
    Builtin,
    User { path: PathBuf },
}

/// One skill: `prompt` may contain `{user_input}`, replaced by the text after `/name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub prompt: String,
    pub source: SkillSource,
}

/// A user skill file that was skipped or loaded with a problem, and what it was.
/// `message` is self-contained: it says whether the file was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillWarning {
    pub path: PathBuf,
    pub message: String,
}

/// A skill file that parsed, and what in it was not obeyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSkill {
    pub skill: Skill,
    /// Set when the front matter's `name` differs from the file name (which wins).
    pub name_mismatch: Option<String>,
}

/// The skills in effect (sorted by name) and the files that were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub warnings: Vec<SkillWarning>,
}

/// What `/name args` became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillExpansion {
    pub skill: String,
    pub source: SkillSource,
    /// What the user typed.
    pub typed: String,
    /// The user message sent to the model.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    #[error("unknown command /{name}; available skills: {available}")]
    Unknown { name: String, available: String },
}

const BUILTINS: [(&str, &str, &str); 5] = [
    (
        "screen",
        "全市场漏斗筛选，发现结构性机会",
        "执行全市场威科夫五层漏斗筛选：\n1. 调用 screen_stocks(board=\"{user_input}\") 执行筛选（若用户未指定 board 则用 \"all\"；普通聊天默认快扫，用户明确要求全量时传 limit=0）\n2. 对筛选出的每只股票，调用 analyze_stock(code=..., mode=\"diagnose\") 做深度诊断\n3. 按健康度排序，给出 Top 5 推荐及理由\n4. 用表格展示：代码 | 名称 | 阶段 | 触发信号 | 健康度 | 推荐理由",
    ),
    (
        "checkup",
        "持仓全面体检，综合诊断建议",
        "执行持仓全面体检：\n1. 调用 portfolio(mode=\"diagnose\") 获取持仓诊断数据\n2. 调用 get_market_overview() 了解大盘环境\n3. 综合分析每只持仓的威科夫阶段、健康度、风险\n4. 给出具体操作建议（持有/减仓/加仓/清仓）及理由",
    ),
    (
        "report",
        "AI 深度研报，三阵营分类",
        "生成 AI 深度研报：\n1. 调用 generate_ai_report(stock_codes=[{user_input}]) 生成报告\n2. 将报告内容按三阵营（进攻/防守/观察）分类展示\n3. 对每只股票给出核心逻辑和风险点",
    ),
    (
        "strategy",
        "攻防决策，持仓去留指令",
        "生成攻防决策：\n1. 调用 generate_strategy_decision() 获取策略决策\n2. 清晰展示去留指令：哪些持有、哪些清仓、哪些加仓\n3. 如有新推荐买入标的，说明入场逻辑和仓位建议",
    ),
    (
        "backtest",
        "回测威科夫策略历史表现",
        "运行策略回测：\n1. 调用 run_backtest({user_input}) 执行回测\n   （若用户未指定参数则使用默认值）\n2. 展示关键指标：总收益率、年化、最大回撤、胜率、盈亏比\n3. 对策略表现给出简要评价和改进建议",
    ),
];

/// The five built-in skills.
pub fn builtin_skills() -> Vec<Skill> {
    BUILTINS
        .iter()
        .map(|(name, description, prompt)| Skill {
            name: (*name).to_string(),
            description: (*description).to_string(),
            prompt: (*prompt).to_string(),
            source: SkillSource::Builtin,
        })
        .collect()
}

/// `^[a-z][a-z0-9_-]{0,63}$`
pub fn is_valid_skill_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && name.len() <= 64
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
}

/// Parses one skill file. `stem` is the file name without `.md`, lower-cased: it is the
/// skill's name. A front-matter `name` that differs is reported in
/// [`ParsedSkill::name_mismatch`]. Returns the reason when the file must be skipped.
pub fn parse_skill(stem: &str, text: &str, path: &Path) -> Result<ParsedSkill, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = match split_front_matter(text) {
        Some((front, body)) => (parse_front_matter(front)?, body),
        None => (BTreeMap::new(), text),
    };
    let name = stem.trim().to_lowercase();
    if !is_valid_skill_name(&name) {
        return Err(format!(
            "the file name {name:?} is not an allowed skill name (lower-case letter first, then a-z 0-9 _ -, at most 64); rename the file"
        ));
    }
    let name_mismatch = front
        .get("name")
        .map(|n| n.trim())
        .filter(|n| !n.is_empty() && n.to_lowercase() != name)
        .map(|declared| {
            format!(
                "front matter says name {declared:?}, but the file name is the skill name: loaded as /{name} (rename the file to change it)"
            )
        });
    let prompt = body.trim().to_string();
    if prompt.is_empty() {
        return Err("the skill has no prompt after the front matter".to_string());
    }
    Ok(ParsedSkill {
        skill: Skill {
            name,
            description: front.get("description").cloned().unwrap_or_default(),
            prompt,
            source: SkillSource::User {
                path: path.to_path_buf(),
            },
        },
        name_mismatch,
    })
}

/// `---\n<front>\n---\n<body>`; `None` when the text does not open with a front matter.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?;
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// The front matter as flat `key: value` scalars (the only shape a skill needs); quotes
/// around a value are removed. Anything else is reported rather than guessed at.
fn parse_front_matter(front: &str) -> Result<BTreeMap<String, String>, String> {
    let mut fields = BTreeMap::new();
    for (index, line) in front.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            return Err(format!(
                "front matter line {}: expected `key: value`, got {trimmed:?}",
                index + 2
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("front matter line {}: bad key {key:?}", index + 2));
        }
        let value = value.trim();
        let value = unquote(value).ok_or_else(|| {
            format!(
                "front matter line {}: unbalanced quotes in {value:?}",
                index + 2
            )
        })?;
        fields.insert(key.to_string(), value);
    }
    Ok(fields)
}

fn unquote(value: &str) -> Option<String> {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            return inner.strip_suffix(quote).map(str::to_string);
        }
    }
    Some(value.to_string())
}

/// Built-ins overridden by the user skills in `dir` (`*.md`, read in name order).
/// A missing folder means no user skills.
pub fn load_skills(dir: &Path) -> SkillSet {
    let mut by_name: BTreeMap<String, Skill> = builtin_skills()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let mut warnings = Vec::new();
    for path in skill_files(dir, &mut warnings) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let parsed = std::fs::read(&path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string()))
            .and_then(|text| parse_skill(&stem, &text, &path));
        match parsed {
            Ok(ParsedSkill {
                skill,
                name_mismatch,
            }) => {
                if let Some(message) = name_mismatch {
                    tracing::warn!(path = %path.display(), %message, "skill name differs from its file name");
                    warnings.push(SkillWarning {
                        path: path.clone(),
                        message,
                    });
                }
                if let Some(Skill {
                    source: SkillSource::User { path: earlier },
                    ..
                }) = by_name.get(&skill.name)
                {
                    warnings.push(SkillWarning {
                        path: path.clone(),
                        message: format!(
                            "skill /{} is also defined in {}; this file wins (later in name order)",
                            skill.name,
                            earlier.display()
                        ),
                    });
                }
                by_name.insert(skill.name.clone(), skill);
            }
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason, "skill file skipped");
                warnings.push(SkillWarning {
                    path,
                    message: format!("skipped: {reason}"),
                });
            }
        }
    }
    SkillSet {
        skills: by_name.into_values().collect(),
        warnings,
    }
}

fn skill_files(dir: &Path, warnings: &mut Vec<SkillWarning>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(SkillWarning {
                path: dir.to_path_buf(),
                message: format!("cannot list the skills folder: {e}"),
            });
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md") && path.is_file())
        .collect();
    files.sort();
    files
}

impl SkillSet {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// `Ok(None)` when `input` is not a `/name ...` command (plain text, or a path such
    /// as `/tmp/x`); an unknown name is an error so it is never sent to the model.
    pub fn expand(&self, input: &str) -> Result<Option<SkillExpansion>, SkillError> {
        let trimmed = input.trim_start();
        let Some(command) = trimmed.strip_prefix('/') else {
            return Ok(None);
        };
        let (word, args) = match command.find(char::is_whitespace) {
            Some(at) => (&command[..at], command[at..].trim()),
            None => (command, ""),
        };
        if word.is_empty() || word.contains('/') {
            return Ok(None);
        }
        let Some(skill) = self.get(word) else {
            return Err(SkillError::Unknown {
                name: word.to_string(),
                available: self
                    .skills
                    .iter()
                    .map(|s| format!("/{}", s.name))
                    .collect::<Vec<_>>()
                    .join(" "),
            });
        };
        Ok(Some(SkillExpansion {
            skill: skill.name.clone(),
            source: skill.source.clone(),
            typed: input.to_string(),
            message: skill
                .prompt
                .replace("{user_input}", args)
                .trim()
                .to_string(),
        }))
    }
}

/// Modification times of the folder and each `.md` in it: a cheap change detector.
type Fingerprint = Vec<(PathBuf, Option<SystemTime>, u64)>;

fn fingerprint(dir: &Path) -> Fingerprint {
    let stamp = |path: &Path| {
        let meta = std::fs::metadata(path).ok();
        (
            path.to_path_buf(),
            meta.as_ref().and_then(|m| m.modified().ok()),
            meta.map(|m| m.len()).unwrap_or(0),
        )
    };
    let mut print = vec![stamp(dir)];
    let mut ignored = Vec::new();
    print.extend(skill_files(dir, &mut ignored).iter().map(|p| stamp(p)));
    print
}

/// The skills of one folder, re-read only when a file or the folder changed.
#[derive(Debug)]
pub struct SkillCatalog {
    dir: PathBuf,
    cache: Mutex<Option<(Fingerprint, SkillSet)>>,
}

impl SkillCatalog {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            cache: Mutex::new(None),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current skills; re-scans when the folder's or a file's mtime/size changed.
    pub fn current(&self) -> SkillSet {
        let print = fingerprint(&self.dir);
        let mut cache = match self.cache.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((cached_print, set)) = cache.as_ref()
            && *cached_print == print
        {
            return set.clone();
        }
        let set = load_skills(&self.dir);
        *cache = Some((print, set.clone()));
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn builtins_are_the_five_reference_prompts() {
        let names: Vec<String> = builtin_skills().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["screen", "checkup", "report", "strategy", "backtest"]
        );
        let set = load_skills(Path::new("/nonexistent/skills"));
        assert!(set.warnings.is_empty());
        let checkup = set.get("checkup").unwrap();
        assert!(
            checkup
                .prompt
                .starts_with("执行持仓全面体检：\n1. 调用 portfolio(mode=\"diagnose\")")
        );
        assert_eq!(checkup.description, "持仓全面体检，综合诊断建议");
    }

    #[test]
    fn skill_name_rule_table() {
        let cases = [
            ("a", true),
            ("checkup", true),
            ("my-skill_2", true),
            (&"a".repeat(64), true),
            (&"a".repeat(65), false),
            ("", false),
            ("1abc", false),
            ("_abc", false),
            ("Abc", false),
            ("a b", false),
            ("a.b", false),
            ("技能", false),
        ];
        for (name, ok) in cases {
            assert_eq!(is_valid_skill_name(name), ok, "{name:?}");
        }
    }

    #[test]
    fn parse_table() {
        let p = Path::new("/x/s.md");
        let ok = |stem: &str, text: &str| parse_skill(stem, text, p).unwrap().skill;
        let s = ok(
            "weekly",
            "---\nname: weekly\ndescription: \"周复盘\"\n---\n复盘 {user_input}\n",
        );
        assert_eq!(
            (s.name.as_str(), s.description.as_str(), s.prompt.as_str()),
            ("weekly", "周复盘", "复盘 {user_input}")
        );
        // no front matter: the lower-cased stem is the name, the whole text the prompt
        let s = ok("Daily", "  做日报  \n");
        assert_eq!(
            (s.name.as_str(), s.description.as_str(), s.prompt.as_str()),
            ("daily", "", "做日报")
        );
        // front matter without name: the stem
        let s = ok("risk", "---\ndescription: x\n---\nbody");
        assert_eq!(s.name, "risk");
        // an unclosed front matter is plain text
        assert_eq!(ok("x", "---\nname: y\nbody").prompt, "---\nname: y\nbody");

        let bad = |stem: &str, text: &str| parse_skill(stem, text, p).unwrap_err();
        assert!(bad("bad name", "body").contains("not an allowed skill name"));
        assert!(bad("9bad", "---\nname: fine\n---\nb").contains("rename the file"));
        assert!(bad("x", "---\njust words\n---\nb").contains("line 2"));
        assert!(bad("x", "---\nname: \"open\n---\nb").contains("unbalanced"));
        assert!(bad("x", "---\nname: x\n---\n   \n").contains("no prompt"));
    }

    /// Seed §8: 文件名即 Skill 名. The file name is the name; a front-matter `name` that
    /// differs (even one that is not a valid name) is a warning, never the name.
    #[test]
    fn the_file_name_is_the_skill_name_table() {
        let cases: [(&str, &str, &str, Option<&str>); 6] = [
            // (stem, front-matter name line, loaded as, mismatch names)
            ("weekly", "", "weekly", None),
            ("weekly", "name: weekly", "weekly", None),
            ("weekly", "name: '  Weekly '", "weekly", None),
            ("weekly", "name: review", "weekly", Some("\"review\"")),
            ("dcf", "name: Bad Name", "dcf", Some("\"Bad Name\"")),
            ("dcf", "name: 9bad", "dcf", Some("\"9bad\"")),
        ];
        for (stem, name_line, want, mismatch) in cases {
            let text = format!("---\n{name_line}\ndescription: d\n---\nbody");
            let parsed = parse_skill(stem, &text, Path::new("/x/s.md")).unwrap();
            assert_eq!(parsed.skill.name, want, "{stem} / {name_line}");
            match (mismatch, &parsed.name_mismatch) {
                (None, None) => {}
                (Some(declared), Some(message)) => {
                    assert!(message.contains(declared), "{message}");
                    assert!(message.contains(&format!("loaded as /{want}")), "{message}");
                }
                (want_mismatch, got) => {
                    panic!("{stem} / {name_line}: want {want_mismatch:?}, got {got:?}")
                }
            }
        }
    }

    #[test]
    fn user_skills_override_builtins_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let own = write(
            dir.path(),
            "checkup.md",
            "---\ndescription: 我的体检\n---\n只看 {user_input}",
        );
        let weekly = write(dir.path(), "weekly.md", "---\nname: review\n---\n复盘");
        let broken = write(dir.path(), "Bad Name.md", "---\nname: fine\n---\nx");
        std::fs::write(dir.path().join("binary.md"), [0xff, 0xfe, 0x00]).unwrap();
        write(dir.path(), "notes.txt", "ignored");

        let set = load_skills(dir.path());
        let names: Vec<&str> = set.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "backtest", "checkup", "report", "screen", "strategy", "weekly"
            ]
        );
        let checkup = set.get("checkup").unwrap();
        assert_eq!(checkup.source, SkillSource::User { path: own });
        assert_eq!(checkup.description, "我的体检");
        assert_eq!(set.warnings.len(), 3, "{:?}", set.warnings);
        assert!(
            set.warnings
                .iter()
                .any(|w| w.path == broken && w.message.starts_with("skipped: "))
        );
        // loaded under its file name; the differing front-matter name is a warning
        assert!(set.warnings.iter().any(|w| w.path == weekly
            && w.message.contains("\"review\"")
            && !w.message.starts_with("skipped")));
        assert!(
            set.warnings
                .iter()
                .any(|w| w.path.ends_with("binary.md") && w.message.contains("UTF-8"))
        );
    }

    #[test]
    fn expansion_table() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "echo.md", "说 {user_input} 两次：{user_input}");
        let set = load_skills(dir.path());

        let expanded = |input: &str| set.expand(input).unwrap().map(|e| e.message);
        assert_eq!(expanded("/echo  你好 "), Some("说 你好 两次：你好".into()));
        assert_eq!(expanded("/echo"), Some("说  两次：".into()));
        assert_eq!(expanded("分析 600519"), None);
        assert_eq!(expanded("/tmp/file 在哪"), None);
        assert_eq!(expanded("/ 空"), None);
        let report = expanded("/report 600519, 000001").unwrap();
        assert!(report.contains("generate_ai_report(stock_codes=[600519, 000001])"));
        let e = set.expand("/checkup").unwrap().unwrap();
        assert_eq!(
            (e.skill.as_str(), e.typed.as_str(), e.source),
            ("checkup", "/checkup", SkillSource::Builtin)
        );

        let err = set.expand("/nosuch 1").unwrap_err();
        assert!(err.to_string().contains("unknown command /nosuch"));
        assert!(err.to_string().contains("/checkup"));
    }

    #[test]
    fn catalog_rereads_when_files_change() {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join("skills");
        let catalog = SkillCatalog::new(&skills);
        assert!(catalog.current().get("mine").is_none());

        std::fs::create_dir(&skills).unwrap();
        let path = write(&skills, "mine.md", "first");
        assert_eq!(catalog.current().get("mine").unwrap().prompt, "first");

        // same length, different content and mtime
        std::fs::write(&path, "again and more").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(
            catalog.current().get("mine").unwrap().prompt,
            "again and more"
        );

        std::fs::remove_file(&path).unwrap();
        assert!(catalog.current().get("mine").is_none());
    }
}
