-- Opening a long conversation reads its tree (each message's id and parent) from the index
-- alone, without loading the rows that hold the text.
DROP INDEX messages_by_conversation;
CREATE INDEX messages_by_conversation ON messages(conversation_id, id, parent_id);
