-- Actions (posthog_action): named event definitions made of steps, each an event name with
-- optional URL, element and property conditions. Steps are stored as PostHog's ActionStepJSON
-- list. Deleting is soft (deleted = true), as PostHog's API does it.
CREATE TABLE actions (
    id serial PRIMARY KEY,
    team_id integer NOT NULL REFERENCES projects (id),
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    tags text[] NOT NULL DEFAULT '{}',
    steps jsonb NOT NULL DEFAULT '[]',
    post_to_slack boolean NOT NULL DEFAULT false,
    slack_message_format text NOT NULL DEFAULT '',
    deleted boolean NOT NULL DEFAULT false,
    created_by_id integer REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX actions_team ON actions (team_id) WHERE NOT deleted;
