-- The knowledge sources that gave an answer no passages (failed or out of time), and why,
-- kept with the message so that its citations keep naming them (`conversations::Unavailable`).
ALTER TABLE messages ADD COLUMN unavailable TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(unavailable));
