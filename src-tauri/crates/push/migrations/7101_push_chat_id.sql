-- Telegram's chat id (not a secret; the bot token lives in the keychain).
ALTER TABLE push_channels ADD COLUMN chat_id TEXT;
