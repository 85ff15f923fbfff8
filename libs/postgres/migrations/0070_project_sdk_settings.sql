-- What the browser SDK is told to collect (posthog_team's fields of the same names; PostHog:
-- posthog/models/remote_config.py builds the remote config from them). Everything but
-- autocapture is off by default here: session recording and surveys have no endpoint in
-- Sightline, so they are not columns at all and the remote config always turns them off.
ALTER TABLE projects
    ADD COLUMN IF NOT EXISTS autocapture_opt_out boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS autocapture_exceptions_opt_in boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS autocapture_web_vitals_opt_in boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS capture_performance_opt_in boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS capture_dead_clicks boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS heatmaps_opt_in boolean NOT NULL DEFAULT false;
