-- wyckoff-market: bar cache, stock list, sync metadata, portfolio.
-- Numbered from 2000: other crates keep their own migrations in the same wyckoff.db.

-- Daily bars by (symbol, date). symbol is '600519.SH'; stocks and indices live in
-- separate tables because 000001 is both Ping An Bank (SZ) and the SSE index (SH).
CREATE TABLE IF NOT EXISTS market_bars (
    code     TEXT    NOT NULL,
    date     INTEGER NOT NULL,          -- YYYYMMDD
    open     REAL    NOT NULL,
    high     REAL    NOT NULL,
    low      REAL    NOT NULL,
    close    REAL    NOT NULL,
    volume   REAL    NOT NULL,          -- shares
    amount   REAL,                      -- CNY; NULL when the source does not give it
    turnover REAL,                      -- percent; NULL when unknown
    source   TEXT    NOT NULL,
    PRIMARY KEY (code, date)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS market_index_bars (
    code     TEXT    NOT NULL,
    date     INTEGER NOT NULL,
    open     REAL    NOT NULL,
    high     REAL    NOT NULL,
    low      REAL    NOT NULL,
    close    REAL    NOT NULL,
    volume   REAL    NOT NULL,
    amount   REAL,
    turnover REAL,
    source   TEXT    NOT NULL,
    PRIMARY KEY (code, date)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS market_stocks (
    code       TEXT PRIMARY KEY,        -- 6 digits
    exchange   TEXT NOT NULL,
    name       TEXT NOT NULL,
    board      TEXT NOT NULL,
    list_date  INTEGER,
    industry   TEXT,
    market_cap REAL,                    -- CNY
    source     TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Last successful sync per symbol and source.
CREATE TABLE IF NOT EXISTS market_sync (
    code       TEXT NOT NULL,
    source     TEXT NOT NULL,
    first_date INTEGER,
    last_date  INTEGER,                 -- as-of: last bar date received
    synced_at  TEXT NOT NULL,           -- RFC 3339 UTC
    PRIMARY KEY (code, source)
);

CREATE TABLE IF NOT EXISTS market_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS portfolio (
    id         TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS portfolio_positions (
    portfolio_id TEXT    NOT NULL REFERENCES portfolio(id) ON DELETE CASCADE,
    code         TEXT    NOT NULL,      -- 6 digits
    name         TEXT    NOT NULL,
    shares       INTEGER NOT NULL CHECK (shares > 0),
    cost_price   REAL    NOT NULL CHECK (cost_price > 0),
    buy_dt       TEXT    NOT NULL,      -- YYYY-MM-DD
    stop_loss    REAL,
    updated_at   TEXT    NOT NULL,
    PRIMARY KEY (portfolio_id, code)
);

CREATE TABLE IF NOT EXISTS portfolio_cash (
    portfolio_id TEXT PRIMARY KEY REFERENCES portfolio(id) ON DELETE CASCADE,
    free_cash    REAL NOT NULL CHECK (free_cash >= 0),
    updated_at   TEXT NOT NULL
);
