-- A conversation forked from another (issue 23 item 5): the source conversation and the
-- message (its seq) the fork was taken at. No foreign key: a fork keeps saying where it
-- came from after its source is deleted. NULL on every other conversation, old ones too.
ALTER TABLE conversation ADD COLUMN forked_from_conversation TEXT;
ALTER TABLE conversation ADD COLUMN forked_from_message INTEGER;
