-- Opaque state a provider attaches to a tool call and wants back unchanged
-- with it in later requests (Gemini's thoughtSignature). NULL: none.
ALTER TABLE tool_calls ADD COLUMN signature TEXT;
