-- Push channels and the durable outbox (issue 25 item 3). No secret is stored here.
CREATE TABLE IF NOT EXISTS push_channels (
    name          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    url           TEXT NOT NULL,
    allow_private INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS push_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    channel         TEXT NOT NULL,
    -- the fired alert it carries (NULL for a test message)
    alert_id        INTEGER,
    body_json       TEXT NOT NULL,
    -- pending | sent | failed
    status          TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    sent_at         TEXT
);

CREATE INDEX IF NOT EXISTS push_outbox_due ON push_outbox (status, next_attempt_at);
