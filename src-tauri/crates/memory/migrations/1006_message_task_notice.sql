-- A background task's completion notice ({task_id, tool_name, display_name, outcome,
-- summary, error} as JSON) on the notification message the model read, so readers word
-- the notice from its fields instead of the prompt text. NULL for every other message.
ALTER TABLE conversation_message ADD COLUMN task_notice TEXT;
