-- Long-term memory (seed §4). Owned by wyckoff-memory; other crates keep their own
-- migrations in the same database, so every name here is specific to memory.

CREATE TABLE agent_memory (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_type TEXT NOT NULL
        CHECK (memory_type IN ('preference', 'session', 'stock_opinion', 'decision', 'market_view')),
    content TEXT NOT NULL,
    -- comma-separated 6-digit stock codes
    codes TEXT NOT NULL DEFAULT '',
    -- UTC, fixed-width RFC 3339 with milliseconds, so text order is time order
    created_at TEXT NOT NULL,
    source_ref TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    -- CJK bigrams, ASCII words and codes, space-separated, computed in Rust; the FTS
    -- index reads this column because unicode61 cannot split Chinese on its own
    content_tokens TEXT NOT NULL DEFAULT ''
);

-- exact duplicates (same type and content) are stored once
CREATE UNIQUE INDEX agent_memory_type_content ON agent_memory(memory_type, content);
CREATE INDEX agent_memory_type_created ON agent_memory(memory_type, created_at);
CREATE INDEX agent_memory_created ON agent_memory(created_at);

-- one row per (code, memory) so exact code recall is an index lookup, not a LIKE scan
CREATE TABLE agent_memory_code (
    code TEXT NOT NULL,
    memory_id INTEGER NOT NULL,
    PRIMARY KEY (code, memory_id)
) WITHOUT ROWID;
CREATE INDEX agent_memory_code_memory ON agent_memory_code(memory_id);

CREATE VIRTUAL TABLE agent_memory_fts USING fts5(
    content_tokens,
    content = 'agent_memory',
    content_rowid = 'id',
    tokenize = 'unicode61'
);

CREATE TRIGGER agent_memory_ai AFTER INSERT ON agent_memory BEGIN
    INSERT INTO agent_memory_fts(rowid, content_tokens) VALUES (new.id, new.content_tokens);
END;

CREATE TRIGGER agent_memory_ad AFTER DELETE ON agent_memory BEGIN
    INSERT INTO agent_memory_fts(agent_memory_fts, rowid, content_tokens)
        VALUES ('delete', old.id, old.content_tokens);
    DELETE FROM agent_memory_code WHERE memory_id = old.id;
END;

CREATE TRIGGER agent_memory_au AFTER UPDATE OF content_tokens ON agent_memory BEGIN
    INSERT INTO agent_memory_fts(agent_memory_fts, rowid, content_tokens)
        VALUES ('delete', old.id, old.content_tokens);
    INSERT INTO agent_memory_fts(rowid, content_tokens) VALUES (new.id, new.content_tokens);
END;
