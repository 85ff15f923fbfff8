-- The longest one ClickHouse query of the project's analytics may run (max_execution_time), in
-- seconds; null: the server's ANALYTICS_QUERY_TIMEOUT_SECONDS. Queries run with the lower of the
-- two, so a project can only shorten its own queries, never lengthen them past the server's bound.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS query_timeout_seconds integer CHECK (query_timeout_seconds > 0);
