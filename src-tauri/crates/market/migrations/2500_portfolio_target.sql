-- A holding's target (take-profit) price beside its stop-loss (issue 25): the alerts check
-- fires when the close reaches it. NULL when unset.
ALTER TABLE portfolio_positions ADD COLUMN target_price REAL;
