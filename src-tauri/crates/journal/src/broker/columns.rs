//! Which column holds what: the header names of the common 交割单 / 对账单 exports
//! (华泰, 国泰君安, 中信, 招商, 广发, 东方财富, 同花顺 and the generic ones) mapped to one
//! set of fields. A header cell is compared after dropping spaces and a unit suffix such
//! as `(元)`, so `发生金额(元)` and `发生金额` are the same column.

/// A field a statement row can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Date,
    Time,
    Code,
    Name,
    Business,
    Quantity,
    Price,
    Amount,
    /// The signed (or direction-implied) cash the row moved: 发生金额.
    Net,
    Commission,
    Stamp,
    Transfer,
    /// Exchange and regulator charges booked apart from the commission.
    OtherFee,
    /// 合同编号 / 委托编号: the order.
    Contract,
    /// 成交编号: the fill.
    TradeNo,
    /// 流水号: the cash journal's serial, where a broker prints one.
    Serial,
    SharesBalance,
    CashBalance,
    Currency,
    /// 交易市场: the exchange the row traded on.
    Market,
    /// 股东代码: the exchange account (a letter first in Shanghai, 0 in Shenzhen).
    Holder,
}

/// Each field's header names, most specific first (the first present wins; a statement
/// with both 成交日期 and 交收日期 is read by the trade date).
pub const SYNONYMS: &[(Field, &[&str])] = &[
    (
        Field::Date,
        &[
            "成交日期",
            "交易日期",
            "发生日期",
            "业务日期",
            "交收日期",
            "清算日期",
            "日期",
        ],
    ),
    (Field::Time, &["成交时间", "发生时间", "时间"]),
    (Field::Code, &["证券代码", "股票代码", "证券编码", "代码"]),
    (Field::Name, &["证券名称", "股票名称", "证券简称", "名称"]),
    (
        Field::Business,
        &[
            "业务名称",
            "业务类型",
            "业务标志",
            "摘要",
            "操作",
            "交易类别",
            "交易类型",
            "委托类别",
            "买卖标志",
            "买卖方向",
            "买卖类别",
            "委托方向",
        ],
    ),
    (
        Field::Quantity,
        &["成交数量", "成交股数", "发生数量", "数量"],
    ),
    (Field::Price, &["成交价格", "成交均价", "成交价", "价格"]),
    (Field::Amount, &["成交金额", "成交额"]),
    (
        Field::Net,
        &[
            "发生金额",
            "清算金额",
            "收付金额",
            "资金发生数",
            "发生额",
            "变动金额",
        ],
    ),
    (Field::Commission, &["佣金", "手续费", "净佣金"]),
    (Field::Stamp, &["印花税"]),
    (Field::Transfer, &["过户费"]),
    (
        Field::OtherFee,
        &[
            "其他费",
            "其他费用",
            "其它费用",
            "规费",
            "交易规费",
            "经手费",
            "证管费",
            "附加费",
            "交易所清算费",
            "结算费",
        ],
    ),
    (
        Field::Contract,
        &["合同编号", "委托编号", "合同号", "委托号"],
    ),
    (Field::TradeNo, &["成交编号", "成交序号"]),
    (Field::Serial, &["流水号", "资金流水号"]),
    (
        Field::SharesBalance,
        &[
            "股份余额",
            "剩余数量",
            "股票余额",
            "本次股份余额",
            "库存数量",
        ],
    ),
    (
        Field::CashBalance,
        &[
            "资金余额",
            "资金本次余额",
            "本次资金余额",
            "剩余金额",
            "资金剩余",
            "本次余额",
        ],
    ),
    (Field::Currency, &["币种"]),
    (
        Field::Market,
        &[
            "交易市场",
            "市场名称",
            "市场",
            "交易所",
            "交易所名称",
            "股东账户类别",
        ],
    ),
    (
        Field::Holder,
        &[
            "股东代码",
            "股东账号",
            "股东帐号",
            "股东账户",
            "股东帐户",
            "证券账户",
        ],
    ),
];

/// Fields whose every matching column counts (their values add up).
const SUMMED: &[Field] = &[Field::OtherFee];

/// A header cell as compared: no spaces, no unit suffix.
pub fn normalise(cell: &str) -> String {
    let mut t: String = cell
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '\u{3000}')
        .collect();
    for unit in [
        "(元)",
        "（元）",
        "(股)",
        "（股）",
        "(人民币)",
        "（人民币）",
        "(张)",
        "（张）",
    ] {
        if let Some(s) = t.strip_suffix(unit) {
            t = s.to_owned();
        }
    }
    t
}

/// The header's columns: for each field, the column indices that hold it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    found: Vec<(Field, Vec<usize>)>,
    /// Header cells no synonym matches (kept to tell the user what was not read).
    pub unread: Vec<String>,
}

impl Columns {
    pub fn of_header(header: &[String]) -> Columns {
        let names: Vec<String> = header.iter().map(|c| normalise(c)).collect();
        let mut used = vec![false; names.len()];
        let mut found = Vec::new();
        for (field, synonyms) in SYNONYMS {
            let mut cols = Vec::new();
            if SUMMED.contains(field) {
                for (i, n) in names.iter().enumerate() {
                    if !used[i] && synonyms.contains(&n.as_str()) {
                        cols.push(i);
                    }
                }
            } else if let Some(i) = synonyms
                .iter()
                .find_map(|s| (0..names.len()).find(|i| !used[*i] && names[*i] == *s))
            {
                cols.push(i);
            }
            for i in &cols {
                used[*i] = true;
            }
            if !cols.is_empty() {
                found.push((*field, cols));
            }
        }
        let unread = names
            .iter()
            .zip(&used)
            .filter(|(n, u)| !**u && !n.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        Columns { found, unread }
    }

    /// The one column of `f` (the most specific header present).
    pub fn get(&self, f: Field) -> Option<usize> {
        self.all(f).first().copied()
    }

    /// Every column of `f`.
    pub fn all(&self, f: Field) -> &[usize] {
        self.found
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, c)| c.as_slice())
            .unwrap_or(&[])
    }

    pub fn has(&self, f: Field) -> bool {
        !self.all(f).is_empty()
    }

    /// A header names at least a date, a business and something to place (a code or an
    /// amount): enough to tell it from a title or an account line above it.
    pub fn is_header(&self) -> bool {
        self.has(Field::Date)
            && self.has(Field::Business)
            && (self.has(Field::Code) || self.has(Field::Net) || self.has(Field::Amount))
    }

    /// Whether any fee column is present (else a trade's fees come from its 发生金额 or
    /// the fee rules).
    pub fn has_fees(&self) -> bool {
        [
            Field::Commission,
            Field::Stamp,
            Field::Transfer,
            Field::OtherFee,
        ]
        .iter()
        .any(|f| self.has(*f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(s: &str) -> Vec<String> {
        s.split(',').map(str::to_owned).collect()
    }

    #[test]
    fn synonyms_map_to_one_field_each() {
        let c = Columns::of_header(&header(
            "发生日期,成交时间,业务名称,证券代码,证券名称,成交价格,成交数量,成交金额,股份余额,手续费,印花税,过户费,经手费,证管费,发生金额(元),资金本次余额,合同编号,股东代码,交易市场,备注",
        ));
        assert!(c.is_header());
        for (f, col) in [
            (Field::Date, 0),
            (Field::Time, 1),
            (Field::Business, 2),
            (Field::Code, 3),
            (Field::Name, 4),
            (Field::Price, 5),
            (Field::Quantity, 6),
            (Field::Amount, 7),
            (Field::SharesBalance, 8),
            (Field::Commission, 9),
            (Field::Stamp, 10),
            (Field::Transfer, 11),
            (Field::Net, 14),
            (Field::CashBalance, 15),
            (Field::Contract, 16),
            (Field::Holder, 17),
            (Field::Market, 18),
        ] {
            assert_eq!(c.get(f), Some(col), "{f:?}");
        }
        assert_eq!(c.all(Field::OtherFee), [12, 13]);
        assert_eq!(c.unread, ["备注"]);
    }

    #[test]
    fn the_most_specific_name_wins() {
        // 交收日期 and 成交日期 both present: the trade date; 业务名称 over 买卖标志
        let c = Columns::of_header(&header("交收日期,买卖标志,成交日期,业务名称,证券代码"));
        assert_eq!(c.get(Field::Date), Some(2));
        assert_eq!(c.get(Field::Business), Some(3));
        // a title line is not a header
        assert!(!Columns::of_header(&header("资金账号：12345,币种：人民币")).is_header());
        assert_eq!(normalise(" 发生金额（元） "), "发生金额");
    }
}
