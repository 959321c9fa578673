-- Every audit row of an inbox call names both the inbox request and the model's call: the
-- queued row used to carry only the call id and the decided row only the request id, so
-- the two rows of one call could not be matched.
ALTER TABLE approval_audit ADD COLUMN request_id TEXT;
-- Decided rows stored the request id in `call_id`: move it and put the call id back.
UPDATE approval_audit
SET request_id = call_id,
    call_id = COALESCE((SELECT i.call_id FROM approval_inbox i WHERE i.id = approval_audit.call_id), call_id)
WHERE call_id IN (SELECT id FROM approval_inbox);
UPDATE approval_audit
SET request_id = (
    SELECT i.id FROM approval_inbox i
    WHERE i.conversation_id = approval_audit.conversation_id AND i.call_id = approval_audit.call_id
    ORDER BY i.rowid DESC LIMIT 1)
WHERE decision = 'queued' AND request_id IS NULL;
-- Why a request was denied: its conversation may be told later (no model at the time),
-- and the notice it gets then says the same as it would have at once.
ALTER TABLE approval_inbox ADD COLUMN reason TEXT;
