//! What a chat message asks for, parsed without I/O. The same on every platform: a
//! command is `/name` (Telegram may add `@botname`), everything else is plain text for the
//! conversation (a `/skill` the desk knows included).

/// A parsed chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BotCommand {
    /// `/analyze CODE`: one stock's Wyckoff analysis.
    Analyze { code: String },
    /// `/screen`: the whole-market funnel.
    Screen,
    /// `/portfolio`: the holdings' diagnosis.
    Portfolio,
    /// `/alerts`: the alert rules and what fired.
    Alerts,
    /// `/approve ID CODE`: allow an approval request with its one-time code.
    Approve { id: String, code: Option<String> },
    /// `/deny ID CODE`: refuse it.
    Deny { id: String, code: Option<String> },
    /// `/new`: the next message starts a fresh conversation.
    New,
    /// `/start`, `/help`: what the bot understands.
    Help,
    /// Anything else, for the conversation as typed.
    Text(String),
    /// A command given wrong: what to say.
    Usage(String),
}

/// The help text for a paired sender.
pub const HELP: &str = "可用命令：\n/analyze 代码 — 个股威科夫分析\n/screen — 全市场筛选\n/portfolio — 持仓诊断\n/alerts — 提醒规则\n/approve 请求ID 审批码 — 批准（仅审批人）\n/deny 请求ID 审批码 — 拒绝（仅审批人）\n/new — 开始新对话\n其他文字直接提问，例如：分析 000001";

/// Parses one message's text.
pub fn parse(text: &str) -> BotCommand {
    let text = text.trim();
    let Some(rest) = text.strip_prefix('/') else {
        return BotCommand::Text(text.to_owned());
    };
    let mut words = rest.split_whitespace();
    let head = words.next().unwrap_or_default();
    // `/analyze@DeskBot` in a group names the bot it is for.
    let name = head
        .split('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let args: Vec<&str> = words.collect();
    match name.as_str() {
        "analyze" => match args.as_slice() {
            [code] if is_code(code) => BotCommand::Analyze {
                code: (*code).to_owned(),
            },
            _ => BotCommand::Usage("用法：/analyze 六位股票代码，例如 /analyze 000001".into()),
        },
        "screen" => BotCommand::Screen,
        "portfolio" => BotCommand::Portfolio,
        "alerts" => BotCommand::Alerts,
        "new" => BotCommand::New,
        "start" | "help" => BotCommand::Help,
        "approve" | "deny" => {
            let Some(id) = args.first() else {
                return BotCommand::Usage(format!("用法：/{name} 请求ID 审批码"));
            };
            let id = (*id).to_owned();
            let code = args.get(1).map(|c| (*c).to_owned());
            if name == "approve" {
                BotCommand::Approve { id, code }
            } else {
                BotCommand::Deny { id, code }
            }
        }
        // A skill (or an unknown name, which the desk refuses with its own message).
        _ => BotCommand::Text(text.to_owned()),
    }
}

/// A six-digit A-share code.
fn is_code(text: &str) -> bool {
    text.len() == 6 && text.bytes().all(|b| b.is_ascii_digit())
}

/// What the conversation is asked for a command (plain text as typed).
pub fn prompt(command: &BotCommand) -> Option<String> {
    match command {
        BotCommand::Analyze { code } => Some(format!("分析 {code}")),
        BotCommand::Screen => Some("用威科夫漏斗筛选全市场，列出候选股和理由".into()),
        BotCommand::Portfolio => Some("诊断我的持仓".into()),
        BotCommand::Alerts => Some("列出我的提醒规则和最近触发的提醒".into()),
        BotCommand::Text(text) if !text.is_empty() => Some(text.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse_to_their_commands() {
        let cases: Vec<(&str, BotCommand)> = vec![
            (
                "/analyze 000001",
                BotCommand::Analyze {
                    code: "000001".into(),
                },
            ),
            (
                "/analyze@DeskBot 600519",
                BotCommand::Analyze {
                    code: "600519".into(),
                },
            ),
            (
                "/analyze 茅台",
                BotCommand::Usage("用法：/analyze 六位股票代码，例如 /analyze 000001".into()),
            ),
            (
                "/analyze",
                BotCommand::Usage("用法：/analyze 六位股票代码，例如 /analyze 000001".into()),
            ),
            ("/screen", BotCommand::Screen),
            ("/Portfolio", BotCommand::Portfolio),
            ("/alerts", BotCommand::Alerts),
            ("/new", BotCommand::New),
            ("/start", BotCommand::Help),
            (
                "/approve ab12 K7PQ2M",
                BotCommand::Approve {
                    id: "ab12".into(),
                    code: Some("K7PQ2M".into()),
                },
            ),
            (
                "/deny ab12",
                BotCommand::Deny {
                    id: "ab12".into(),
                    code: None,
                },
            ),
            (
                "/approve",
                BotCommand::Usage("用法：/approve 请求ID 审批码".into()),
            ),
            ("  分析 000001 ", BotCommand::Text("分析 000001".into())),
            ("/review 000001", BotCommand::Text("/review 000001".into())),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), want, "{text}");
        }
    }

    #[test]
    fn commands_become_prompts_and_control_commands_do_not() {
        let cases = [
            (
                BotCommand::Analyze {
                    code: "000001".into(),
                },
                Some("分析 000001"),
            ),
            (BotCommand::Text("我的持仓".into()), Some("我的持仓")),
            (BotCommand::Text(String::new()), None),
            (BotCommand::New, None),
            (BotCommand::Help, None),
            (
                BotCommand::Approve {
                    id: "x".into(),
                    code: None,
                },
                None,
            ),
        ];
        for (command, want) in cases {
            assert_eq!(prompt(&command).as_deref(), want, "{command:?}");
        }
    }
}
