-- wyckoff-market: trading days learned after the bundled calendar's end, each with where
-- it came from (the SSE Composite's cached bars after the fact: a weekday with a bar is
-- open, one without is a holiday). Weekends are not stored: they are closed.
CREATE TABLE IF NOT EXISTS trading_calendar_day (
    day INTEGER PRIMARY KEY,
    open INTEGER NOT NULL,
    source TEXT NOT NULL,
    learned_at TEXT NOT NULL
);
