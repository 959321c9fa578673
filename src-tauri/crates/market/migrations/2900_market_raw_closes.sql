-- wyckoff-market: unadjusted closes beside the forward-adjusted bars. Series blobs of
-- version 4 (src/series.rs) carry each bar's raw close as its source gave it; blobs written
-- before stay as they are and read back with every raw close unknown, so nothing is rewritten
-- here.
--
-- Per series: the days that still had no raw close after the last fetch of raw prices that
-- answered (the source had none for them), so a sync asks for them again only when that
-- set changes (new bars without one), not on every run.
CREATE TABLE IF NOT EXISTS market_raw_asked (
    kind          TEXT    NOT NULL CHECK (kind IN ('stock', 'index')),
    code          TEXT    NOT NULL,   -- '601318.SH'
    missing_first INTEGER NOT NULL,   -- YYYYMMDD
    missing_last  INTEGER NOT NULL,
    missing_count INTEGER NOT NULL,
    asked_at      TEXT    NOT NULL,   -- RFC 3339 UTC, injected clock
    PRIMARY KEY (kind, code)
);
