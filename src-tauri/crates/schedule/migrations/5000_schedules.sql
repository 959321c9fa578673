-- Schedules (issue 24): when (a tagged rule, see wyckoff_schedule::when) and what (a
-- job). `created_at` is the Beijing minute it was added: earlier occurrences never run.
CREATE TABLE IF NOT EXISTS schedule (
    name TEXT PRIMARY KEY NOT NULL,
    when_json TEXT NOT NULL,
    job_json TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    -- A prompt schedule's conversation, made by its first run and continued after.
    conversation_id TEXT
);

-- Each run. One row per (schedule, occurrence): a second process (the app and a daemon)
-- finds the occurrence taken and leaves it. Manual runs have no occurrence.
CREATE TABLE IF NOT EXISTS schedule_run (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule TEXT NOT NULL,
    occurrence TEXT,
    catch_up INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    summary TEXT,
    error TEXT,
    task_id TEXT,
    conversation_id TEXT,
    owner TEXT,
    UNIQUE (schedule, occurrence)
);
CREATE INDEX IF NOT EXISTS schedule_run_by_schedule ON schedule_run (schedule, id);
