-- Which process serves each chat bot (the app or the daemon, never both: a platform gives
-- each update to one poller, and two would answer in turn), and which decisions made
-- outside the chat (the app, the CLI, expiry) the chat was told of.
CREATE TABLE IF NOT EXISTS bot_serving (
    bot TEXT PRIMARY KEY NOT NULL,
    -- the process lease id (wyckoff-config's run/<owner>.lock)
    owner TEXT NOT NULL,
    -- app, daemon or cli: what the settings panel says serves the bot
    front TEXT NOT NULL,
    taken_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS bot_approval_told (
    request_id TEXT PRIMARY KEY NOT NULL,
    told_at TEXT NOT NULL
);

-- Requests decided in a chat before this table existed were answered there.
INSERT OR IGNORE INTO bot_approval_told (request_id, told_at)
    SELECT request_id, used_at FROM bot_approval WHERE used_at IS NOT NULL;
