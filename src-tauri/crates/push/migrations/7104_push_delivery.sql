-- Every outbox row carries a stable delivery id (sent with each attempt, so a receiver can
-- tell a repeat from a new message) and the time a send of it started (cleared when its
-- outcome is recorded: a row still marked after a crash may or may not have arrived).
ALTER TABLE push_outbox ADD COLUMN delivery_id TEXT;
ALTER TABLE push_outbox ADD COLUMN sending_since TEXT;
UPDATE push_outbox SET delivery_id = lower(hex(randomblob(16))) WHERE delivery_id IS NULL;
-- Where a generic webhook's secret (kept in the keychain) goes: 'header:NAME' or
-- 'query:NAME'; NULL is `Authorization: Bearer …`.
ALTER TABLE push_channels ADD COLUMN secret_in TEXT;
