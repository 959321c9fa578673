-- The balances a broker statement states (资金余额 at a day's end, 股份余额 of a holding at a
-- day's end), kept from each import so the ledger can be reconciled against them at any
-- time. A later import stating the same day and code replaces the figure.
CREATE TABLE IF NOT EXISTS journal_statement_balance (
    portfolio_id TEXT    NOT NULL,
    trade_date   INTEGER NOT NULL,               -- YYYYMMDD
    code         TEXT    NOT NULL DEFAULT '',    -- '' for cash
    line         INTEGER NOT NULL,               -- the statement line that states it
    stated       INTEGER NOT NULL,               -- fen for cash, shares for a holding
    imported_at  TEXT    NOT NULL,
    PRIMARY KEY (portfolio_id, trade_date, code)
);
