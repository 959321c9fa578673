-- wyckoff-market: live snapshot quotes, shared by every process on this data home.
-- Each quote source's next free request slot, so the app, the daemon and the CLI together
-- keep to one pace per source (the circuit breakers live in market_source_breaker).
CREATE TABLE IF NOT EXISTS market_quote_pacing (
    source       TEXT    NOT NULL PRIMARY KEY,  -- 'tencent_quote', 'eastmoney_quote'
    next_free_ms INTEGER NOT NULL               -- Unix ms of the next request it may make
);

-- The last quote of each stock, answered again for a few seconds without a request. A
-- quote is never a daily bar: nothing here reaches the bar cache.
CREATE TABLE IF NOT EXISTS market_quote_cache (
    code       TEXT    NOT NULL PRIMARY KEY,  -- six digits
    quote_json TEXT    NOT NULL,              -- the Quote as JSON
    fetched_ms INTEGER NOT NULL               -- Unix ms it was fetched
);
