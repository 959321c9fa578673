-- Two-way chat bots: each bot, the senders the owner paired with it, the pairing codes
-- waiting for the owner, one conversation per chat (per sender in a group), each
-- sender's tokens per day, every update seen (so none is answered twice), the one-time
-- codes of approval requests a bot's turn queued, and the bots' own audit lines.
CREATE TABLE IF NOT EXISTS bot (
    name TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    api_url TEXT,
    daily_tokens INTEGER NOT NULL,
    per_minute INTEGER NOT NULL,
    -- Telegram's getUpdates offset: the next update id wanted.
    next_update INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS bot_sender (
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    sender_id TEXT NOT NULL,
    label TEXT NOT NULL,
    approver INTEGER NOT NULL DEFAULT 0,
    paired_at TEXT NOT NULL,
    PRIMARY KEY (bot, sender_id)
);

CREATE TABLE IF NOT EXISTS bot_pairing (
    code TEXT PRIMARY KEY NOT NULL,
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    sender_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    -- pending, approved
    status TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX IF NOT EXISTS bot_pairing_bot ON bot_pairing (bot, status);

CREATE TABLE IF NOT EXISTS bot_chat (
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    chat_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    PRIMARY KEY (bot, chat_id, sender_id)
);
CREATE INDEX IF NOT EXISTS bot_chat_conversation ON bot_chat (conversation_id);

CREATE TABLE IF NOT EXISTS bot_usage (
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    sender_id TEXT NOT NULL,
    -- Beijing date, YYYY-MM-DD
    day TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bot, sender_id, day)
);

CREATE TABLE IF NOT EXISTS bot_update (
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    update_id INTEGER NOT NULL,
    sender_id TEXT NOT NULL,
    at TEXT NOT NULL,
    -- the message went on to the model (counted by the rate limit)
    admitted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bot, update_id)
);
CREATE INDEX IF NOT EXISTS bot_update_sender ON bot_update (bot, sender_id, at);

CREATE TABLE IF NOT EXISTS bot_approval (
    request_id TEXT PRIMARY KEY NOT NULL,
    bot TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    code TEXT NOT NULL,
    created_at TEXT NOT NULL,
    used_at TEXT
);

CREATE TABLE IF NOT EXISTS bot_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    sender_id TEXT,
    chat_id TEXT,
    -- secrets masked
    detail TEXT NOT NULL
);
