-- The process (lease id, wyckoff-config::lease) that runs a task: at start-up only tasks
-- whose owner is gone are marked interrupted, never those of a live app or CLI.
ALTER TABLE agent_background_task ADD COLUMN owner TEXT;
