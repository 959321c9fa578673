-- Conversation store: conversations, turns, messages (protocol Message JSON), and the
-- archive of messages that compaction removed from the live context.

CREATE TABLE conversation (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    archived INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX conversation_updated ON conversation(updated_at);

CREATE TABLE conversation_turn (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    outcome TEXT CHECK (outcome IN ('done', 'cancelled', 'failed', 'interrupted')),
    usage TEXT
);
CREATE INDEX conversation_turn_conversation ON conversation_turn(conversation_id);
CREATE INDEX conversation_turn_open ON conversation_turn(ended_at) WHERE ended_at IS NULL;

CREATE TABLE conversation_message (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn_id TEXT REFERENCES conversation_turn(id) ON DELETE SET NULL,
    role TEXT NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'interrupted')),
    created_at TEXT NOT NULL,
    -- same CJK-bigram tokens as agent_memory, for search
    text_tokens TEXT NOT NULL DEFAULT '',
    UNIQUE (conversation_id, seq)
);
CREATE INDEX conversation_message_turn ON conversation_message(turn_id);

CREATE VIRTUAL TABLE conversation_message_fts USING fts5(
    text_tokens,
    content = 'conversation_message',
    content_rowid = 'id',
    tokenize = 'unicode61'
);

CREATE TRIGGER conversation_message_ai AFTER INSERT ON conversation_message BEGIN
    INSERT INTO conversation_message_fts(rowid, text_tokens) VALUES (new.id, new.text_tokens);
END;

CREATE TRIGGER conversation_message_ad AFTER DELETE ON conversation_message BEGIN
    INSERT INTO conversation_message_fts(conversation_message_fts, rowid, text_tokens)
        VALUES ('delete', old.id, old.text_tokens);
END;

CREATE TRIGGER conversation_message_au AFTER UPDATE OF text_tokens ON conversation_message BEGIN
    INSERT INTO conversation_message_fts(conversation_message_fts, rowid, text_tokens)
        VALUES ('delete', old.id, old.text_tokens);
    INSERT INTO conversation_message_fts(rowid, text_tokens) VALUES (new.id, new.text_tokens);
END;

CREATE TABLE conversation_archive (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    -- JSON array of protocol Message
    messages TEXT NOT NULL
);
CREATE INDEX conversation_archive_conversation ON conversation_archive(conversation_id);
