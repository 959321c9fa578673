-- Forward tracking (issue 27): every saved screen run and its candidates. Figures are not
-- stored: they are computed from the cached bars each time, so a late sync fills them.
CREATE TABLE IF NOT EXISTS track_screen (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The trading day screened, YYYYMMDD.
    as_of INTEGER NOT NULL,
    -- When it was saved, RFC 3339 UTC.
    saved_at TEXT NOT NULL,
    -- cli, tool (the window, the agent, schedules) or backfill.
    origin TEXT NOT NULL,
    board TEXT NOT NULL,
    -- 水温 (RISK_ON …); NULL when it was not known.
    regime TEXT
);
CREATE INDEX IF NOT EXISTS track_screen_as_of ON track_screen (as_of);

CREATE TABLE IF NOT EXISTS track_candidate (
    screen_id INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    -- JSON array of L4 trigger kinds.
    triggers TEXT NOT NULL,
    track TEXT NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (screen_id, rank)
);
