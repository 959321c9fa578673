-- Chart notes (issue 27 item 4): what the agent (annotate_chart) or the user drew on a
-- stock's chart. The shape is a tagged JSON object (box / line / text), validated before
-- it is stored.
CREATE TABLE IF NOT EXISTS chart_annotation (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Six digits.
    code TEXT NOT NULL,
    -- day, week or month: the chart the note belongs to.
    period TEXT NOT NULL,
    shape TEXT NOT NULL,
    -- 'user', or 'agent' with the conversation it came from.
    author TEXT NOT NULL,
    conversation TEXT,
    -- RFC 3339 UTC.
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chart_annotation_code ON chart_annotation (code, period);
