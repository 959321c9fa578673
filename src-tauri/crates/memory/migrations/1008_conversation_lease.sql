-- Which process runs a turn (or an inbox-approved call) in a conversation. The app, the
-- daemon, `wyckoff run` and `approvals allow` share one data home: the row is taken before
-- a turn starts and deleted once it is stored, so a second process is refused as busy. A
-- row whose owner process is gone (wyckoff-config::lease) is taken over.
CREATE TABLE conversation_lease (
    conversation_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    turn INTEGER NOT NULL,
    taken_at TEXT NOT NULL
);
