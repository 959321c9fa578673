-- wyckoff-market: daily bars of the instruments a ledger holds that are not stocks —
-- exchange-traded funds (ETF / LOF) and listed bonds — apart from the stock series, so no
-- screen, chart or backtest takes a fund for a stock. Prices are unadjusted (as traded):
-- they value money. One row a code and day; a re-fetch of a day replaces it.
CREATE TABLE IF NOT EXISTS market_instrument_bars (
    code        TEXT    NOT NULL,          -- '510300'
    date        INTEGER NOT NULL,          -- YYYYMMDD
    open        REAL    NOT NULL,
    high        REAL    NOT NULL,
    low         REAL    NOT NULL,
    close       REAL    NOT NULL,
    close_e6    INTEGER NOT NULL,          -- the close in millionths of a yuan
    volume_lots REAL    NOT NULL,          -- as the source counts it (手)
    amount      REAL    NOT NULL,          -- yuan
    source      TEXT    NOT NULL,
    fetched_at  TEXT    NOT NULL,          -- RFC 3339 UTC, injected clock
    PRIMARY KEY (code, date)
);
-- The last time each code was asked for, and what came of it (so "how fresh" has an
-- answer even when the source had nothing new).
CREATE TABLE IF NOT EXISTS market_instrument_asked (
    code     TEXT NOT NULL PRIMARY KEY,
    asked_at TEXT NOT NULL,
    outcome  TEXT NOT NULL                 -- 'updated' / 'unchanged' / the error
);
