-- A decided approval-inbox request's notice ({request_id, tool_name, display_name, status,
-- decided_by, summary, reason} as JSON) on the notification message the model read (issue
-- 24). NULL for every other message.
ALTER TABLE conversation_message ADD COLUMN approval_notice TEXT;
