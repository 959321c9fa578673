//! A row's business (业务名称 / 摘要 / 操作 / 买卖标志) as the ledger understands it. One
//! ordered table: the first rule whose any word the text contains decides, so
//! 股息红利差异扣税 is a tax before it is a dividend, 融券购回 a repo's return before
//! 回购 makes it a lend, and 红股入账 shares before 红利 makes it cash.

use serde::Serialize;

/// What a row's business says it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Business {
    Buy,
    Sell,
    /// 红股入账 / 送股 / 转增.
    BonusShares,
    /// 股息入账 / 红利入账.
    Dividend,
    /// 股息红利差异扣税 and other taxes.
    Tax,
    /// 利息归本.
    Interest,
    /// 银行转证券.
    CashIn,
    /// 证券转银行.
    CashOut,
    /// 配股缴款: the subscription paid (under the rights code).
    RightsPaid,
    /// 配股入账: the rights shares arriving in the stock.
    RightsListed,
    /// 融券回购 / 逆回购: cash lent.
    RepoLend,
    /// 融券购回 / 拆出质押购回 / 逆回购到期: cash back with interest.
    RepoReturn,
    /// 新股中签 / 中签缴款: the allotment paid.
    Allotted,
    /// 新股入账: allotted shares arriving in the stock.
    NewSharesListed,
    /// 新股申购 / 配号 / 申购还款: no money moves since prepayment ended.
    Subscription,
    /// A charge outside a trade.
    Fee,
    /// 指定交易 / 撤指 / 撤单 …: recorded, moves nothing.
    Note,
    Unknown,
}

/// The rules, in order.
const RULES: &[(Business, &[&str])] = &[
    (
        Business::Tax,
        &[
            "扣税",
            "红利税",
            "股息税",
            "差异税",
            "税款",
            "补缴税",
            "利息税",
        ],
    ),
    (
        Business::RepoReturn,
        &["购回", "回购到期", "逆回购到期", "质押回购到期"],
    ),
    (
        Business::RepoLend,
        &[
            "融券回购",
            "逆回购",
            "拆出质押",
            "质押回购拆出",
            "新质押回购",
            "回购拆出",
        ],
    ),
    (
        Business::RightsPaid,
        &["配股缴款", "配股认购", "配股申购", "配售缴款"],
    ),
    (
        Business::RightsListed,
        &["配股入账", "配股入帐", "配股上市", "配股到账", "配股到帐"],
    ),
    (
        Business::BonusShares,
        &["红股入账", "红股入帐", "红股", "送股", "转增", "股份转增"],
    ),
    (
        Business::Dividend,
        &[
            "股息入账",
            "股息入帐",
            "红利入账",
            "红利入帐",
            "股息",
            "红利",
            "派息",
            "分红",
        ],
    ),
    (Business::Interest, &["利息归本", "利息", "结息"]),
    (
        Business::CashOut,
        &[
            "证券转银行",
            "银证转出",
            "转账取出",
            "转出到银行",
            "银行转取",
            "资金转出",
            "取款",
        ],
    ),
    (
        Business::CashIn,
        &[
            "银行转证券",
            "银证转入",
            "转账存入",
            "银行转存",
            "银行转入",
            "资金转入",
            "存款",
        ],
    ),
    (
        Business::NewSharesListed,
        &["新股入账", "新股入帐", "新股上市", "新股到账"],
    ),
    (Business::Allotted, &["中签"]),
    (
        Business::Subscription,
        &[
            "新股申购",
            "申购配号",
            "配号",
            "申购还款",
            "申购返款",
            "申购款",
            "申购",
        ],
    ),
    (
        Business::Note,
        &[
            "指定", "撤指", "撤销", "撤单", "登记", "开户", "冻结", "解冻", "挂失",
        ],
    ),
    (Business::Buy, &["买入", "买"]),
    (Business::Sell, &["卖出", "卖"]),
    (
        Business::Fee,
        &["年费", "扣费", "收费", "管理费", "手续费", "费用"],
    ),
];

pub fn classify(text: &str) -> Business {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some((b, _)) = RULES
        .iter()
        .find(|(_, words)| words.iter().any(|w| t.contains(w)))
    {
        return *b;
    }
    match t.to_ascii_lowercase().as_str() {
        "b" | "buy" => Business::Buy,
        "s" | "sell" => Business::Sell,
        _ => Business::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn business_names_of_real_exports() {
        for (text, want) in [
            ("证券买入", Business::Buy),
            ("买入", Business::Buy),
            ("担保品买入", Business::Buy),
            ("证券卖出", Business::Sell),
            ("卖", Business::Sell),
            ("B", Business::Buy),
            ("sell", Business::Sell),
            ("红股入账", Business::BonusShares),
            ("送股", Business::BonusShares),
            ("转增股入帐", Business::BonusShares),
            ("股息入账", Business::Dividend),
            ("红利入账", Business::Dividend),
            ("股息红利差异扣税", Business::Tax),
            ("红利差异税扣税", Business::Tax),
            ("利息归本", Business::Interest),
            ("银行转证券", Business::CashIn),
            ("银证转入", Business::CashIn),
            ("证券转银行", Business::CashOut),
            ("银证转出", Business::CashOut),
            ("配股缴款", Business::RightsPaid),
            ("配股入账", Business::RightsListed),
            ("融券回购", Business::RepoLend),
            ("逆回购", Business::RepoLend),
            ("融券购回", Business::RepoReturn),
            ("拆出质押购回", Business::RepoReturn),
            ("逆回购到期", Business::RepoReturn),
            ("新股申购", Business::Subscription),
            ("申购配号", Business::Subscription),
            ("申购还款", Business::Subscription),
            ("新股中签", Business::Allotted),
            ("中签缴款", Business::Allotted),
            ("新股入账", Business::NewSharesListed),
            ("指定交易", Business::Note),
            ("撤指", Business::Note),
            ("撤销指定", Business::Note),
            ("账户管理费", Business::Fee),
            ("股份转出", Business::Unknown),
            ("融资利息", Business::Interest),
            ("", Business::Unknown),
        ] {
            assert_eq!(classify(text), want, "{text}");
        }
    }
}
