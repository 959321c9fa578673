-- wyckoff-market: dated industry membership (Tushare's Shenwan index_member in_date and
-- out_date). A load of source 'tushare_sw' keeps today's members in market_industry_member
-- and every span, past ones too, here, so a past day reads the industry a stock was in then.

CREATE TABLE IF NOT EXISTS market_industry_span (
    load_id     INTEGER NOT NULL REFERENCES market_industry_load(id) ON DELETE CASCADE,
    code        TEXT    NOT NULL,          -- 6 digits
    name        TEXT    NOT NULL,          -- the industry
    in_date     INTEGER NOT NULL,          -- YYYYMMDD, the first day in
    out_date    INTEGER,                   -- YYYYMMDD, the first day out; NULL while in
    PRIMARY KEY (load_id, code, in_date, name)
) WITHOUT ROWID;
