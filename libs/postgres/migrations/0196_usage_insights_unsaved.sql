-- Flag usage dashboards' generated insights are not saved insights (PostHog's template tiles leave
-- `saved` false); earlier builds saved them, filling the insights list with two per flag. Those
-- still as generated (never edited by a person) become unsaved; they stay on their dashboard.
UPDATE insights SET saved = false
 WHERE saved
   AND last_modified_by_id IS NULL
   AND name IN ('Feature Flag Called Total Volume', 'Feature Flag calls made by unique users per variant',
                'Feature Interaction Total Volume', 'Feature Viewed Total Volume')
   AND id IN (SELECT t.insight_id FROM dashboard_tiles t JOIN feature_flags f ON f.usage_dashboard_id = t.dashboard_id);
