-- What kind of failure ended an answer (provider, storage, limit, ...), kept
-- with its text so that a reopened conversation shows it as what it was
-- (issue 32). Older answers have none: they read as the provider's.
ALTER TABLE messages ADD COLUMN error_kind TEXT;
