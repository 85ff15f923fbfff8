-- Live actions of a project have distinct names (PostHog's ActionSerializer refuses a second
-- non-deleted action with a name). The API checked before inserting, so concurrent creates could
-- both pass; the database now refuses the second. Soft-deleted actions keep their names and do
-- not count. Live duplicates left by such races keep the oldest action's name; each later one is
-- renamed "<name> (<id>)" (with a further "-<n>" if even that is taken) so the index can be built.
DO $$
DECLARE
    duplicate RECORD;
    candidate text;
    attempt integer;
BEGIN
    FOR duplicate IN
        SELECT a.id, a.team_id, a.name FROM actions a
         WHERE NOT a.deleted
           AND EXISTS (SELECT 1 FROM actions b WHERE b.team_id = a.team_id AND b.name = a.name AND NOT b.deleted AND b.id < a.id)
         ORDER BY a.id
    LOOP
        attempt := 0;
        LOOP
            candidate := duplicate.name || ' (' || duplicate.id || CASE WHEN attempt > 0 THEN '-' || attempt ELSE '' END || ')';
            EXIT WHEN NOT EXISTS (SELECT 1 FROM actions WHERE team_id = duplicate.team_id AND name = candidate AND NOT deleted);
            attempt := attempt + 1;
        END LOOP;
        UPDATE actions SET name = candidate, updated_at = now() WHERE id = duplicate.id;
    END LOOP;
END $$;

CREATE UNIQUE INDEX actions_team_live_name ON actions (team_id, name) WHERE NOT deleted;
