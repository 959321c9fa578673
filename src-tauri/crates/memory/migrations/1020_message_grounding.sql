-- Where a final answer's numbers and codes came from (the typed Grounding as JSON: counts
-- and each claim's span, class and source), stored with the answer so a reopened
-- conversation and an export mark the same figures. NULL for every other message.
ALTER TABLE conversation_message ADD COLUMN grounding TEXT;
