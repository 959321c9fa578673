-- The account journal (issue 28 item 4): every fill behind the portfolio's positions.
-- Money is integer fen, prices integer millionths of a yuan (no float accumulation).
CREATE TABLE IF NOT EXISTS journal_fill (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    portfolio_id   TEXT    NOT NULL,
    code           TEXT    NOT NULL,               -- 6 digits
    name           TEXT    NOT NULL,
    side           TEXT    NOT NULL CHECK (side IN ('buy', 'sell', 'opening')),
    trade_date     INTEGER NOT NULL,               -- YYYYMMDD
    price_e6       INTEGER NOT NULL CHECK (price_e6 > 0),
    shares         INTEGER NOT NULL CHECK (shares >= 0),
    amount_fen     INTEGER NOT NULL CHECK (amount_fen >= 0),
    commission_fen INTEGER NOT NULL CHECK (commission_fen >= 0),
    stamp_fen      INTEGER NOT NULL CHECK (stamp_fen >= 0),
    transfer_fen   INTEGER NOT NULL CHECK (transfer_fen >= 0),
    fees_computed  INTEGER NOT NULL,               -- 1: by the backtest's fee rules
    source         TEXT    NOT NULL,               -- manual / cli / agent / import / opening
    created_at     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_fill_code ON journal_fill (portfolio_id, code, trade_date, id);
