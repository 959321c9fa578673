-- wyckoff-market: series blobs move to the compact version-2 layout (src/series.rs). SQL
-- cannot re-encode them, so this only leaves a marker; the crate converts every version-1
-- blob on the next open, in one transaction, and removes the marker.
INSERT OR REPLACE INTO market_meta (key, value) VALUES ('series_v2_pending', '1');
