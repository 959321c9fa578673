-- Alerts checked during the session on the day's partial bar (a live quote).
-- A fired alert says it was intraday and at what quote time (Beijing 'YYYY-MM-DD HH:MM');
-- NULL for a check on daily closes.
ALTER TABLE alert_fired ADD COLUMN intraday_at TEXT;

-- One intraday check per slot of the session, whichever process (the app, the daemon)
-- claims it first: slot = elapsed session minutes / the interval.
CREATE TABLE IF NOT EXISTS alert_intraday_slots (
    day        TEXT    NOT NULL,  -- YYYY-MM-DD, Beijing
    slot       INTEGER NOT NULL,
    interval_m INTEGER NOT NULL,  -- the interval in minutes the slot was counted in
    claimed_at TEXT    NOT NULL,  -- RFC 3339
    PRIMARY KEY (day, slot, interval_m)
);
