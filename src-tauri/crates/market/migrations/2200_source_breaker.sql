-- wyckoff-market: each live source's circuit breaker, shared by every process on this data
-- home, so a source found unreachable is skipped by the next `wyckoff analyze` (or the
-- app) until its cool-down ends instead of being tried again on every call.
CREATE TABLE IF NOT EXISTS market_source_breaker (
    source             TEXT    NOT NULL PRIMARY KEY,  -- 'eastmoney', 'tencent', …
    failures           INTEGER NOT NULL DEFAULT 0,    -- consecutive failures while closed
    open_until_ms      INTEGER,                       -- open until (Unix ms, injected clock); NULL = closed
    announced_until_ms INTEGER                        -- the open period whose skip was already reported
);
