-- wyckoff-market: market caps as of past days, for the size gates of an as-of screen or a
-- backtest. A stock's samples are one row: `samples` is little-endian (u32 YYYYMMDD,
-- f32 亿元) pairs ascending by date, read with the stock's bars in one pass.
CREATE TABLE IF NOT EXISTS market_cap_history (
    code       TEXT PRIMARY KEY,          -- 6 digits
    samples    BLOB NOT NULL,
    updated_at TEXT NOT NULL              -- RFC 3339 UTC
) WITHOUT ROWID;

-- The days whose whole-market caps were recorded, and from where: a history sync asks
-- only for the days not here.
CREATE TABLE IF NOT EXISTS market_cap_day (
    day         INTEGER PRIMARY KEY,      -- YYYYMMDD
    source      TEXT    NOT NULL,         -- tushare, list:<stock-list source>
    stocks      INTEGER NOT NULL,
    recorded_at TEXT    NOT NULL
);

-- A resident universe is rebuilt when the caps it was read with change.
CREATE TRIGGER IF NOT EXISTS market_cap_history_written_ins AFTER INSERT ON market_cap_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_cap_history_written_upd AFTER UPDATE ON market_cap_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_cap_history_written_del AFTER DELETE ON market_cap_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
