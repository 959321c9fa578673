-- wyckoff-market: stock history as of a date. Names in force from a date (ST status on a
-- past day is read from the name then), listing and delisting dates, and the stock list
-- as each sync fetched it.

-- The name a stock carried from `from_date` until its next row's `from_date`.
-- `first_seen` = 1: the row comes from a stock-list snapshot, so `from_date` is the day a
-- sync first saw the name, not the day it changed (which may be earlier).
CREATE TABLE IF NOT EXISTS market_name_history (
    code        TEXT    NOT NULL,          -- 6 digits
    from_date   INTEGER NOT NULL,          -- YYYYMMDD
    name        TEXT    NOT NULL,
    first_seen  INTEGER NOT NULL CHECK (first_seen IN (0, 1)),
    source      TEXT    NOT NULL,          -- tushare, names-import, snapshot:<list source>
    recorded_at TEXT    NOT NULL,          -- RFC 3339 UTC
    PRIMARY KEY (code, from_date)
) WITHOUT ROWID;

-- Listing status as a source last gave it: L listed, D delisted, P paused (暂停上市).
CREATE TABLE IF NOT EXISTS market_listing (
    code        TEXT    PRIMARY KEY,       -- 6 digits
    name        TEXT    NOT NULL,          -- as that source named it then
    list_status TEXT    NOT NULL CHECK (list_status IN ('L', 'D', 'P')),
    list_date   INTEGER,                   -- YYYYMMDD
    delist_date INTEGER,                   -- YYYYMMDD, the last trading day
    source      TEXT    NOT NULL,
    recorded_at TEXT    NOT NULL
);

-- The stock list a sync fetched, one per Beijing day (a second sync that day replaces
-- it): `data` is gzip of `code<TAB>name` lines.
CREATE TABLE IF NOT EXISTS market_list_snapshot (
    day         INTEGER PRIMARY KEY,       -- YYYYMMDD, Beijing
    source      TEXT    NOT NULL,
    stocks      INTEGER NOT NULL,
    new_names   INTEGER NOT NULL,          -- spans it added to market_name_history
    recorded_at TEXT    NOT NULL,
    data        BLOB    NOT NULL
);

-- A resident universe is rebuilt when the history it was read with changes.
CREATE TRIGGER IF NOT EXISTS market_name_history_written_ins AFTER INSERT ON market_name_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_name_history_written_upd AFTER UPDATE ON market_name_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_name_history_written_del AFTER DELETE ON market_name_history
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_listing_written_ins AFTER INSERT ON market_listing
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_listing_written_upd AFTER UPDATE ON market_listing
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_listing_written_del AFTER DELETE ON market_listing
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
