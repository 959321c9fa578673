-- The exchange a broker statement names for a code (its 交易市场 or 股东代码 column), kept
-- for the codes whose digits do not settle it (bonds 10xxxx / 13xxxx are listed on either
-- exchange), so the ledger values them from the right exchange's closes. A later
-- statement naming the code again replaces it.
CREATE TABLE IF NOT EXISTS journal_code_exchange (
    portfolio_id TEXT    NOT NULL,
    code         TEXT    NOT NULL,
    exchange     TEXT    NOT NULL,               -- SH / SZ
    line         INTEGER NOT NULL,               -- the statement line that names it
    imported_at  TEXT    NOT NULL,
    PRIMARY KEY (portfolio_id, code)
);
