-- wyckoff-market: the user's watchlist (stock page "add to watchlist", Watchlist page).
-- One row per stock; prices are never stored here, they come from the bar cache.
CREATE TABLE IF NOT EXISTS market_watchlist (
    code     TEXT    NOT NULL PRIMARY KEY,  -- six digits, e.g. '000001'
    added_at TEXT    NOT NULL               -- RFC 3339, from the injected clock
);
