-- The background tasks a bot's turn started (a screen, a backtest, a report): the chat is
-- told of each once its conversation answered the completion. A task whose completion was
-- answered inside the turn the chat already got is told with it (told_at set at once).
CREATE TABLE IF NOT EXISTS bot_task (
    task_id TEXT PRIMARY KEY NOT NULL,
    bot TEXT NOT NULL REFERENCES bot (name) ON DELETE CASCADE,
    chat_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    started_at TEXT NOT NULL,
    told_at TEXT
);
CREATE INDEX IF NOT EXISTS bot_task_untold ON bot_task (bot) WHERE told_at IS NULL;
