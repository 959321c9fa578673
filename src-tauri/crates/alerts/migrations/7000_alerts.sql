-- Alert rules and the alerts they fired (issue 25).
CREATE TABLE IF NOT EXISTS alert_rules (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    -- AlertTarget / AlertCondition as tagged JSON
    target_json    TEXT NOT NULL,
    condition_json TEXT NOT NULL,
    cooldown_days  INTEGER NOT NULL DEFAULT 1 CHECK (cooldown_days >= 1),
    enabled        INTEGER NOT NULL DEFAULT 1,
    created_at     TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS alert_fired (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    -- NULL for a holding's stop-loss (from the portfolio, no rule)
    rule_id           INTEGER,
    -- 'rule:ID' or 'stop_loss': what the cooldown counts firings of
    rule_key          TEXT NOT NULL,
    code              TEXT NOT NULL,
    name              TEXT,
    bar_date          TEXT NOT NULL,
    condition_json    TEXT NOT NULL,
    figures_json      TEXT NOT NULL,
    delivered_to_json TEXT NOT NULL DEFAULT '[]',
    delivery          TEXT NOT NULL DEFAULT 'recorded',
    created_at        TEXT NOT NULL,
    -- once per rule, stock and bar, even when two processes check at once
    UNIQUE (rule_key, code, bar_date)
);
