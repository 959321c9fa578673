-- The process (lease id, wyckoff-config::lease) running a turn: at start-up only turns
-- whose owner is gone are marked interrupted, never a live app's or CLI's.
ALTER TABLE conversation_turn ADD COLUMN owner TEXT;
