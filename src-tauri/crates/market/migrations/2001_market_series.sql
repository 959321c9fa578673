-- wyckoff-market: bars as one columnar BLOB per symbol (see src/series.rs), so the whole
-- market reads back in one row per stock. The per-bar rows of 2000 are moved here by the
-- crate on open (Rust decodes and encodes them); the old tables then stay empty.
CREATE TABLE IF NOT EXISTS market_series (
    kind       TEXT    NOT NULL CHECK (kind IN ('stock', 'index')),
    code       TEXT    NOT NULL,          -- '600519.SH'
    first_date INTEGER NOT NULL,          -- YYYYMMDD, for coverage without decoding
    last_date  INTEGER NOT NULL,
    bars       INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    UNIQUE (kind, code)
);
