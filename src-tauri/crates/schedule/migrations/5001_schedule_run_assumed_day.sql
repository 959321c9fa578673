-- The run's due day was past the known trading calendar: a weekday was assumed to be a
-- trading day, and the run says so.
ALTER TABLE schedule_run ADD COLUMN assumed_trading_day INTEGER NOT NULL DEFAULT 0;
