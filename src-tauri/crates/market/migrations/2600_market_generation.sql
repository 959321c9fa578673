-- wyckoff-market: a counter every write to the bars or the stock list moves (triggers, so
-- writes by any process count), for readers that keep the whole market in memory to know
-- with one cheap query whether what they hold is still what is stored.
CREATE TABLE IF NOT EXISTS market_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT OR IGNORE INTO market_generation (id, n) VALUES (1, 0);

CREATE TRIGGER IF NOT EXISTS market_series_written_ins AFTER INSERT ON market_series
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_series_written_upd AFTER UPDATE ON market_series
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_series_written_del AFTER DELETE ON market_series
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_stocks_written_ins AFTER INSERT ON market_stocks
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_stocks_written_upd AFTER UPDATE ON market_stocks
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER IF NOT EXISTS market_stocks_written_del AFTER DELETE ON market_stocks
BEGIN UPDATE market_generation SET n = n + 1 WHERE id = 1; END;
