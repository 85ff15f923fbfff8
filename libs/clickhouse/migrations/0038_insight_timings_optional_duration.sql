-- API range (0030–0039, shared). POST /insights/timing takes Insight fields, and a report may
-- leave out time_to_see_data_ms: it is stored as NULL, not as a made-up zero.
ALTER TABLE insight_timings MODIFY COLUMN IF EXISTS time_to_see_data_ms Nullable(Float64);
