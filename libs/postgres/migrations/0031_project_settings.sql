-- Project settings the analysts' side reads (posthog_team): the first day of the week for
-- weekly buckets (0 Sunday, 1 Monday; null means Sunday, PostHog's default) and the filters
-- that `filter_test_accounts` ANDs into a query.
ALTER TABLE projects
    ADD COLUMN IF NOT EXISTS week_start_day smallint CHECK (week_start_day IN (0, 1)),
    ADD COLUMN IF NOT EXISTS test_account_filters jsonb NOT NULL DEFAULT '[]';
