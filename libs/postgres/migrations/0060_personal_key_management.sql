-- Personal API keys managed through the API: a key may be restricted to organisations as well
-- as projects, and remembers when its value was last rolled.
ALTER TABLE personal_api_keys
    ADD COLUMN IF NOT EXISTS scoped_organizations text[],
    ADD COLUMN IF NOT EXISTS last_rolled_at timestamptz;
CREATE INDEX IF NOT EXISTS personal_api_keys_user ON personal_api_keys (user_id);
