//! Tokens for the FTS5 indexes. SQLite's unicode61 tokenizer treats a run of Chinese as
//! one token, so a search for 茅台 would never hit 贵州茅台. We index instead a column we
//! fill from Rust: every CJK character bigram of each Chinese run (a lone character is
//! kept as is), lower-cased ASCII words, and digit runs (a stock code among them),
//! separated by spaces. A query is tokenised the same way, so any 2-character Chinese
//! query is exactly one indexed token.

/// A run of characters of one kind, as the tokenizer sees the text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Run {
    Cjk(Vec<char>),
    Word(String),
    Digits(String),
}

pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}')
}

/// Full-width ASCII (Ａ-Ｚ, ０-９ …) folded to ASCII, so "６００５１９" is indexed as 600519.
fn fold_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

fn runs(text: &str) -> Vec<Run> {
    let mut out = Vec::new();
    let mut cur: Option<Run> = None;
    for raw in text.chars() {
        let c = fold_width(raw);
        let kind = if is_cjk(c) {
            1
        } else if c.is_ascii_digit() {
            2
        } else if c.is_alphanumeric() {
            3
        } else {
            0
        };
        let same = matches!(
            (&cur, kind),
            (Some(Run::Cjk(_)), 1) | (Some(Run::Digits(_)), 2) | (Some(Run::Word(_)), 3)
        );
        if !same && let Some(run) = cur.take() {
            out.push(run);
        }
        match kind {
            1 => match &mut cur {
                Some(Run::Cjk(v)) => v.push(c),
                _ => cur = Some(Run::Cjk(vec![c])),
            },
            2 => match &mut cur {
                Some(Run::Digits(s)) => s.push(c),
                _ => cur = Some(Run::Digits(c.to_string())),
            },
            3 => {
                let lower = c.to_lowercase();
                match &mut cur {
                    Some(Run::Word(s)) => s.extend(lower),
                    _ => cur = Some(Run::Word(lower.collect())),
                }
            }
            _ => {}
        }
    }
    if let Some(run) = cur {
        out.push(run);
    }
    out
}

fn bigrams(chars: &[char]) -> impl Iterator<Item = String> + '_ {
    chars.windows(2).map(|w| w.iter().collect())
}

/// One index token: a CJK bigram as its two characters, any other token as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    Bigram(char, char),
    Text(&'a str),
}

/// Calls `f` with each index token of `text`, in order, without allocating one string per
/// token (recall checks the tokens of every candidate on every turn). Same runs as
/// `runs`: a CJK run yields its bigrams (a lone character as itself), a word or digit
/// run yields itself (folded and lower-cased). With `text_tokens` false only the bigrams
/// are visited, and nothing else is built.
pub fn visit_index_tokens(text: &str, text_tokens: bool, mut f: impl FnMut(Token<'_>)) {
    if !text_tokens {
        // Full-width folding never makes or unmakes a CJK character, so the CJK runs are
        // the runs of CJK characters of the text itself.
        let mut prev = None;
        for c in text.chars() {
            if is_cjk(c) {
                if let Some(p) = prev {
                    f(Token::Bigram(p, c));
                }
                prev = Some(c);
            } else {
                prev = None;
            }
        }
        return;
    }
    // kind of the current run: 0 none, 1 CJK, 2 digits, 3 word (as in `runs`)
    let mut kind = 0u8;
    let mut run_chars = 0usize;
    let mut prev = '\0';
    let mut word = String::new();
    fn flush(
        kind: u8,
        run_chars: usize,
        prev: char,
        word: &mut String,
        f: &mut impl FnMut(Token<'_>),
    ) {
        match kind {
            1 if run_chars == 1 => f(Token::Text(prev.encode_utf8(&mut [0u8; 4]))),
            2 | 3 => f(Token::Text(word)),
            _ => {}
        }
        word.clear();
    }
    for raw in text.chars() {
        let c = fold_width(raw);
        let k = if is_cjk(c) {
            1
        } else if c.is_ascii_digit() {
            2
        } else if c.is_alphanumeric() {
            3
        } else {
            0
        };
        if k != kind {
            flush(kind, run_chars, prev, &mut word, &mut f);
            kind = k;
            run_chars = 0;
        }
        match k {
            1 => {
                if run_chars > 0 {
                    f(Token::Bigram(prev, c));
                }
                prev = c;
            }
            2 => word.push(c),
            3 => word.extend(c.to_lowercase()),
            _ => {}
        }
        run_chars += 1;
    }
    flush(kind, run_chars, prev, &mut word, &mut f);
}

/// [`visit_index_tokens`] with every token as text.
pub fn for_each_index_token(text: &str, mut f: impl FnMut(&str)) {
    visit_index_tokens(text, true, |t| match t {
        Token::Bigram(a, b) => {
            let mut pair = [0u8; 8];
            let n = a.encode_utf8(&mut pair).len();
            let m = b.encode_utf8(&mut pair[n..]).len();
            if let Ok(bigram) = std::str::from_utf8(&pair[..n + m]) {
                f(bigram);
            }
        }
        Token::Text(s) => f(s),
    });
}

/// The two characters of `term` when it is one CJK bigram (what [`Token::Bigram`] holds).
pub fn as_bigram(term: &str) -> Option<(char, char)> {
    let mut chars = term.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(a), Some(b), None) if is_cjk(a) && is_cjk(b) => Some((a, b)),
        _ => None,
    }
}

/// Index tokens of `text`: CJK bigrams (lone CJK characters as themselves), ASCII words
/// and digit runs, in order of appearance (repeats kept so bm25 sees term frequency).
pub fn index_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_index_token(text, |t| out.push(t.to_string()));
    out
}

/// The text stored in an FTS-indexed column: tokens of `text`, plus `extra` tokens (e.g.
/// codes attached to a memory but not written in its content).
pub fn index_text(text: &str, extra: &[String]) -> String {
    let mut tokens = index_tokens(text);
    tokens.extend(extra.iter().cloned());
    tokens.join(" ")
}

/// Single characters that carry no topic (REFERENCE §4.6 list). A bigram containing one is
/// dropped: they work as separators between content words.
const STOP_CHARS: &str = "的了吗呢啊哦呀吧嘛是不在有我你他它这那都也就要会";

/// Two-character stopwords (REFERENCE §4.6 list): generic asks and trading verbs that
/// every other message contains.
const STOP_WORDS: [&str; 30] = [
    "可以", "一个", "什么", "怎么", "如何", "看看", "一下", "帮我", "请问", "能否", "可否", "这个",
    "那个", "我的", "你的", "现在", "我想", "想建", "建仓", "买入", "卖出", "加仓", "减仓", "补仓",
    "清仓", "持仓", "止盈", "止损", "么样", "分析",
];

fn is_stop_bigram(b: &str) -> bool {
    b.chars().any(|c| STOP_CHARS.contains(c)) || STOP_WORDS.contains(&b)
}

/// Short English words that would match half of all memories.
const STOP_ASCII: [&str; 12] = [
    "the", "and", "for", "with", "is", "are", "to", "of", "in", "on", "a", "an",
];

/// Chinese 2-gram keywords of a message, after stopwords, deduplicated, in order, at most
/// `limit` (the seed uses 5).
pub fn keywords(text: &str, limit: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for run in runs(text) {
        if let Run::Cjk(chars) = run {
            for b in bigrams(&chars) {
                if out.len() >= limit {
                    return out;
                }
                if !is_stop_bigram(&b) && !out.contains(&b) {
                    out.push(b);
                }
            }
        }
    }
    out
}

/// Terms for an FTS query built from free text: stock codes, ASCII words (two letters or
/// more, minus a few English stopwords) and stopword-filtered CJK bigrams; deduplicated,
/// at most `limit`. Lone CJK characters are not terms (too unspecific for recall).
pub fn query_terms(text: &str, limit: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |t: String, out: &mut Vec<String>| {
        if out.len() < limit && !out.contains(&t) {
            out.push(t);
        }
    };
    for run in runs(text) {
        match run {
            Run::Cjk(chars) => {
                for b in bigrams(&chars) {
                    if !is_stop_bigram(&b) {
                        push(b, &mut out);
                    }
                }
            }
            Run::Digits(d) if d.len() >= 2 => push(d, &mut out),
            Run::Word(w) if w.chars().count() >= 2 && !STOP_ASCII.contains(&w.as_str()) => {
                push(w, &mut out)
            }
            _ => {}
        }
    }
    out
}

/// Search terms without stopword filtering: a user typing 持仓 into a search box means it.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in index_tokens(text) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// An FTS5 MATCH expression: every term quoted (terms only hold letters, digits and CJK,
/// but quoting keeps FTS5 operators like AND/NOT/NEAR from being interpreted).
pub fn fts_expression(terms: &[String], joiner: &str) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    let quoted: Vec<String> = terms.iter().map(|t| fts_phrase(t)).collect();
    Some(quoted.join(joiner))
}

/// One term as an FTS5 phrase (quoted, see [`fts_expression`]).
pub fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn index_tokens_table() {
        let cases: &[(&str, &[&str])] = &[
            ("贵州茅台", &["贵州", "州茅", "茅台"]),
            ("茅台", &["茅台"]),
            ("买 茅台", &["买", "茅台"]),
            ("600519贵州茅台", &["600519", "贵州", "州茅", "茅台"]),
            ("sh600519 RSI超买", &["sh", "600519", "rsi", "超买"]),
            ("Wyckoff吸筹,Spring!", &["wyckoff", "吸筹", "spring"]),
            ("６００５１９", &["600519"]),
            ("", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(index_tokens(text), s(want), "text: {text}");
        }
    }

    #[test]
    fn index_tokens_follow_the_runs() {
        // the allocation-free visitor must split exactly like `runs`
        let texts = [
            "贵州茅台600519出现Spring信号，Wyckoff阶段C",
            "买 茅台 a 卖",
            "ＡＢＣ６００５１９ＸＹ中",
            "中Ｘ文，中文ａ中文文",
            "Ǆemo ÉTÉ straße İstanbul 中 文",
            "x1y2 3z 中9国 a",
            "𠀀𠀁 𠀂",
            "",
            "，。！",
        ];
        for text in texts {
            let mut want = Vec::new();
            for run in runs(text) {
                match run {
                    Run::Cjk(chars) if chars.len() == 1 => want.push(chars[0].to_string()),
                    Run::Cjk(chars) => want.extend(bigrams(&chars)),
                    Run::Word(w) | Run::Digits(w) => want.push(w),
                }
            }
            assert_eq!(index_tokens(text), want, "text: {text}");
            let mut all_bigrams = Vec::new();
            visit_index_tokens(text, true, |t| {
                if let Token::Bigram(a, b) = t {
                    all_bigrams.push((a, b));
                }
            });
            let mut bigrams_only = Vec::new();
            visit_index_tokens(text, false, |t| match t {
                Token::Bigram(a, b) => bigrams_only.push((a, b)),
                Token::Text(_) => panic!("text token {t:?}"),
            });
            assert_eq!(bigrams_only, all_bigrams, "text: {text}");
        }
    }

    #[test]
    fn index_text_appends_extra_tokens() {
        assert_eq!(
            index_text("白酒龙头", &s(&["600519"])),
            "白酒 酒龙 龙头 600519"
        );
    }

    #[test]
    fn keywords_drop_stopwords_and_cap_at_limit() {
        let cases: &[(&str, usize, &[&str])] = &[
            ("茅台", 5, &["茅台"]),
            // 看白 is noise that bigrams cannot avoid; it rarely matches anything
            ("帮我看看白酒板块", 5, &["看白", "白酒", "酒板", "板块"]),
            // 的/是 split words; 怎么 is a stopword; 600519 is not a keyword
            ("600519的走势是怎么样", 5, &["走势"]),
            ("我想建仓宁德时代", 5, &["仓宁", "宁德", "德时", "时代"]),
            (
                "半导体芯片光伏新能源",
                5,
                &["半导", "导体", "体芯", "芯片", "片光"],
            ),
            ("茅台茅台", 5, &["茅台", "台茅"]),
            ("hello world", 5, &[]),
        ];
        for (text, limit, want) in cases {
            assert_eq!(keywords(text, *limit), s(want), "text: {text}");
        }
    }

    #[test]
    fn query_terms_mix_codes_words_and_bigrams() {
        assert_eq!(
            query_terms("600519 Wyckoff的Spring信号 is a 白酒", 16),
            s(&["600519", "wyckoff", "spring", "信号", "白酒"])
        );
        assert_eq!(query_terms("一二三四五", 2), s(&["一二", "二三"]));
    }

    #[test]
    fn fts_expression_quotes_terms() {
        assert_eq!(
            fts_expression(&s(&["茅台", "and"]), " OR ").unwrap(),
            "\"茅台\" OR \"and\""
        );
        assert_eq!(fts_expression(&[], " OR "), None);
    }
}
