-- Organisations, users, projects and personal API keys.
CREATE TABLE organizations (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id serial PRIMARY KEY,
    uuid uuid NOT NULL UNIQUE,
    distinct_id text NOT NULL UNIQUE,
    organization_id uuid NOT NULL REFERENCES organizations (id),
    first_name text NOT NULL DEFAULT '',
    last_name text NOT NULL DEFAULT '',
    email text NOT NULL UNIQUE,
    is_email_verified boolean NOT NULL DEFAULT false,
    role_at_organization text,
    hedgehog_config jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A project is also its (single) environment: team_id in ClickHouse is the project id.
CREATE TABLE projects (
    id serial PRIMARY KEY,
    uuid uuid NOT NULL UNIQUE,
    organization_id uuid NOT NULL REFERENCES organizations (id),
    name text NOT NULL,
    api_token text NOT NULL UNIQUE,
    timezone text NOT NULL DEFAULT 'UTC',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Personal API keys are stored only as a hash ("sha256$<hex>"); mask_value is for display.
CREATE TABLE personal_api_keys (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id),
    label text NOT NULL,
    secure_value text NOT NULL UNIQUE,
    mask_value text NOT NULL,
    scopes text[] NOT NULL,
    scoped_teams integer[],
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);

-- Person-event deletions waiting for the weekly job (Sunday 05:00 UTC).
CREATE TABLE queued_deletions (
    id serial PRIMARY KEY,
    team_id integer NOT NULL,
    person_uuid uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    done_at timestamptz
);
CREATE INDEX queued_deletions_pending ON queued_deletions (created_at) WHERE done_at IS NULL;
