-- wyckoff-market: industry and concept membership, each load kept with the Beijing day it
-- was loaded, so a screen of a past day reads the membership known then (the latest load
-- on or before it) and says when it had to read a later one.

CREATE TABLE IF NOT EXISTS market_industry_load (
    id          INTEGER PRIMARY KEY,
    loaded_on   INTEGER NOT NULL,          -- YYYYMMDD, Beijing day of the import
    source      TEXT    NOT NULL,          -- csv, tdx
    path        TEXT    NOT NULL,          -- what was imported, as given
    stocks      INTEGER NOT NULL,
    industries  INTEGER NOT NULL,
    concepts    INTEGER NOT NULL,
    recorded_at TEXT    NOT NULL,          -- RFC 3339 UTC
    UNIQUE (loaded_on, source)
);

-- One stock in one industry (kind 'industry', at most one per stock and load), concept
-- (block_gn.dat) or style block (block_fg.dat).
CREATE TABLE IF NOT EXISTS market_industry_member (
    load_id     INTEGER NOT NULL REFERENCES market_industry_load(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('industry', 'concept', 'style')),
    code        TEXT    NOT NULL,          -- 6 digits
    name        TEXT    NOT NULL,
    PRIMARY KEY (load_id, kind, code, name)
) WITHOUT ROWID;

-- A resident universe is rebuilt when the membership it was read with changes.
CREATE TRIGGER IF NOT EXISTS market_industry_load_written_ins AFTER INSERT ON market_industry_load
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_industry_load_written_upd AFTER UPDATE ON market_industry_load
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_industry_load_written_del AFTER DELETE ON market_industry_load
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
