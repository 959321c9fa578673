-- Which events a channel is sent (comma list of alerts, tasks, schedules, approvals):
-- alerts only unless the user says otherwise.
ALTER TABLE push_channels ADD COLUMN events TEXT NOT NULL DEFAULT 'alerts';
