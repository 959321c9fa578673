-- wyckoff-market: minute bars (5/15/30/60 minutes), one compact BLOB per stock and period
-- (layout in src/minute.rs), apart from the daily series; and how far back each source's
-- reply reached when it was last asked for all it has.
CREATE TABLE IF NOT EXISTS market_minute_series (
    code       TEXT    NOT NULL,          -- '600519'
    period     INTEGER NOT NULL CHECK (period IN (5, 15, 30, 60)),
    first_time INTEGER NOT NULL,          -- YYYYMMDDHHMM, bar end, Beijing time
    last_time  INTEGER NOT NULL,
    bars       INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    UNIQUE (code, period)
);
CREATE TABLE IF NOT EXISTS market_minute_reach (
    source   TEXT    NOT NULL,
    period   INTEGER NOT NULL,
    code     TEXT    NOT NULL,            -- the stock it was asked about
    earliest INTEGER NOT NULL,            -- YYYYMMDDHHMM
    latest   INTEGER NOT NULL,
    bars     INTEGER NOT NULL,
    asked_at TEXT    NOT NULL,
    PRIMARY KEY (source, period)
);
