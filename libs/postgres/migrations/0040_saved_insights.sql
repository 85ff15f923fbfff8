-- Saved insights as PostHog's Insight resource has them (posthog/models/insight.py): tags,
-- favourite, order, who changed it last, and the views that feed my_last_viewed
-- (posthog_insightviewed). Dashboards gain pinned, tags and updated_at.
ALTER TABLE insights
    ADD COLUMN IF NOT EXISTS tags text[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS favorited boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS "order" integer,
    ADD COLUMN IF NOT EXISTS last_modified_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS last_modified_by_id integer REFERENCES users (id),
    ADD COLUMN IF NOT EXISTS last_refresh timestamptz;

CREATE TABLE insight_views (
    team_id integer NOT NULL REFERENCES projects (id),
    user_id integer NOT NULL REFERENCES users (id),
    insight_id integer NOT NULL REFERENCES insights (id) ON DELETE CASCADE,
    last_viewed_at timestamptz NOT NULL,
    PRIMARY KEY (team_id, user_id, insight_id)
);
CREATE INDEX insight_views_recent ON insight_views (team_id, user_id, last_viewed_at DESC);

ALTER TABLE dashboards
    ADD COLUMN IF NOT EXISTS pinned boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS tags text[] NOT NULL DEFAULT '{}';
