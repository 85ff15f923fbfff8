-- Decide's read of stored persons (libs/persons/src/flag-person-reads.ts, readStoredPersons): the
-- persons behind a list of distinct ids, each with its static cohorts and hash-key overrides, then
-- the requested groups. As a prepared statement PostgreSQL planned it again on every execution (a
-- custom plan knows each array's length, so the generic plan always looked costlier), which was
-- most of its cost: on PGlite about 0.7 ms of 0.9 ms for one person. Inside this function the plan
-- is made once per session and kept (plan_cache_mode applies while the function runs only); its
-- index lookups per element suit any batch size decide sends (at most 500 distinct ids).
CREATE FUNCTION flags_stored_persons(team integer, distinct_ids text[], group_indexes integer[], group_keys text[])
RETURNS TABLE (i integer, uuid text, properties jsonb, cohort_ids integer[], overrides jsonb, group_index integer, group_key text)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $fn$
BEGIN
  RETURN QUERY
    SELECT r.i::int, p.uuid::text, p.properties,
           ARRAY(SELECT c.cohort_id FROM cohort_people c WHERE c.person_id = p.id),
           (SELECT jsonb_object_agg(h.feature_flag_key, h.hash_key)
              FROM feature_flag_hash_key_overrides h WHERE h.team_id = team AND h.person_id = p.id),
           NULL::int, NULL::text
      FROM unnest(distinct_ids) WITH ORDINALITY AS r(distinct_id, i)
      LEFT JOIN person_distinct_ids d ON d.team_id = team AND d.distinct_id = r.distinct_id
      LEFT JOIN persons p ON p.id = d.person_id
    UNION ALL
    SELECT NULL::int, NULL::text, g.group_properties, NULL::integer[], NULL::jsonb, g.group_type_index::int, g.group_key
      FROM groups g JOIN unnest(group_indexes, group_keys) AS r(idx, key) ON g.group_type_index = r.idx AND g.group_key = r.key
     WHERE g.team_id = team;
END
$fn$;
