import { booleanField, charField, choiceField, dictField, integerField, listField, objectBody } from '../http/body-fields';
import { CREATION_CONTEXTS, EVALUATION_RUNTIMES } from './flag-input';

/** The fields parseFlagInput reads, in its order (PostHog's FeatureFlagSerializer). */
const flagFields = {
  name: charField('What the flag is for'),
  key: charField('Letters, numbers, hyphens and underscores; unique in the project'),
  filters: dictField('Release conditions: {groups: [{properties, rollout_percentage, variant}], multivariate, payloads, aggregation_group_type_index}'),
  deleted: booleanField,
  active: booleanField,
  ensure_experience_continuity: booleanField,
  rollback_conditions: { description: 'Stored as given' },
  performed_rollback: booleanField,
  tags: listField(charField()),
  analytics_dashboards: listField(integerField, 'Ids of dashboards of the project'),
  has_enriched_analytics: booleanField,
  creation_context: choiceField(CREATION_CONTEXTS),
  evaluation_runtime: choiceField(EVALUATION_RUNTIMES),
  _should_create_usage_dashboard: booleanField,
  version: integerField,
  original_flag: { description: 'The flag as the client last read it, for conflict detection' },
};

/** POST and PUT name the key; PATCH changes what it names. */
export const createFlagBody = objectBody(flagFields, ['key']);
export const changeFlagBody = objectBody(flagFields);
