-- Signing in to the web app. A user's password is an argon2id PHC string (null: none chosen yet,
-- so the user cannot sign in). Session and password-setup tokens are stored only as SHA-256
-- hashes, like personal API keys: a copy of this table signs nobody in.
ALTER TABLE users ADD COLUMN password_hash text;

CREATE TABLE user_sessions (
    id serial PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    -- Sent to the page in a readable cookie; every write made with the session must echo it.
    csrf_token text NOT NULL,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

-- One-time links that let a user choose a password: the first start prints one, and
-- `npm run admin` will issue them for password resets.
CREATE TABLE password_setup_tokens (
    token_hash text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
);
