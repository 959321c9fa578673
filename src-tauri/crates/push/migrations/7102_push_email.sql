-- An e-mail channel's sender, recipients and SMTP user (the password lives in the keychain).
ALTER TABLE push_channels ADD COLUMN email_json TEXT;
