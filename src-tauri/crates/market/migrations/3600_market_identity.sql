-- wyckoff-market: a random identity for this database, made once. Files derived from the
-- database and kept beside it (the screen's tail cache) record it with the write
-- generation, so a file left from another database is never taken for this one's.
INSERT OR IGNORE INTO market_meta (key, value) VALUES ('identity', lower(hex(randomblob(16))));
