-- The account ledger: every entry of the account's history (trades, bank transfers,
-- dividends and interest, taxes, bonus and rights shares, reverse repos, notes). `body`
-- is the entry's kind as tagged JSON (money in integer fen, prices in millionths); `code`
-- and `kind` repeat what it says for lookups. `identity` makes a re-imported statement row
-- recognisable. The fills recorded so far move in with their ids; journal_fill stays as
-- it was (no longer written).
CREATE TABLE IF NOT EXISTS journal_entry (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    portfolio_id   TEXT    NOT NULL,
    trade_date     INTEGER NOT NULL,               -- YYYYMMDD
    trade_time     INTEGER,                        -- HHMMSS when known
    kind           TEXT    NOT NULL,               -- the body's "type"
    code           TEXT,                           -- 6 digits, when the kind has one
    name           TEXT    NOT NULL DEFAULT '',
    body           TEXT    NOT NULL,               -- EntryKind as JSON
    fees_computed  INTEGER NOT NULL DEFAULT 0,     -- 1: by the backtest's fee rules
    source         TEXT    NOT NULL,               -- manual / cli / agent / import / opening
    identity       TEXT,
    created_at     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_entry_date ON journal_entry (portfolio_id, trade_date, id);
CREATE INDEX IF NOT EXISTS journal_entry_code ON journal_entry (portfolio_id, code, trade_date, id);
CREATE UNIQUE INDEX IF NOT EXISTS journal_entry_identity
    ON journal_entry (portfolio_id, identity) WHERE identity IS NOT NULL;

INSERT INTO journal_entry (id, portfolio_id, trade_date, trade_time, kind, code, name, body,
                           fees_computed, source, identity, created_at)
SELECT id, portfolio_id, trade_date, NULL, side, code, name,
       CASE side
         WHEN 'opening' THEN json_object('type', 'opening', 'code', code, 'shares', shares,
                                         'price_e6', price_e6)
         ELSE json_object('type', side, 'code', code, 'shares', shares, 'price_e6', price_e6,
                          'amount_fen', amount_fen,
                          'fees', json_object('commission_fen', commission_fen,
                                              'stamp_fen', stamp_fen,
                                              'transfer_fen', transfer_fen))
       END,
       fees_computed, source, NULL, created_at
FROM journal_fill
WHERE id NOT IN (SELECT id FROM journal_entry);
