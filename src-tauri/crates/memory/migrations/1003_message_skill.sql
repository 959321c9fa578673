-- A user message a skill expanded: {name, builtin, typed} as JSON (the message itself
-- holds the expansion the model got). NULL for every other message, old ones included.
ALTER TABLE conversation_message ADD COLUMN skill TEXT;
