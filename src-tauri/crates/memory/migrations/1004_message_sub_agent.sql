-- A delegate call's result message: its sub-agent's progress steps ([{kind, text}] as
-- JSON), so a reopened conversation shows the sub-agent's tool rows. NULL for every
-- other message, old ones included.
ALTER TABLE conversation_message ADD COLUMN sub_agent TEXT;
