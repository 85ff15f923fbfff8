import { compileActionMatch } from '../actions/action-match.sql';
import { cohortMembershipSql, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import type { QuerySqlPorts } from '../common/query-ports';

// What the SQL builders' tests give them for project 1 at a fixed time: one action (an element
// click with a person filter), a static cohort and a dynamic one that refers to it, and a stand-in
// for the HogQL compiler. Test support only: nothing outside *.test.ts imports it.
const COHORTS = new Map<number, CohortDefinition>([
  [1, { id: 1, name: 'static', isStatic: true, properties: null }],
  [
    2,
    {
      id: 2,
      name: 'pro',
      isStatic: false,
      properties: {
        type: 'OR',
        values: [
          { key: 'plan', value: 'pro', type: 'person' },
          { key: 'id', value: 1, type: 'cohort' },
        ],
      },
    },
  ],
]);
export const SQL_TEST_PORTS: QuerySqlPorts = {
  teamId: 1,
  nowMs: Date.parse('2024-01-10T15:00:00Z'),
  actionMatch: (_id, ctx) =>
    compileActionMatch(
      {
        id: 1,
        name: 'a',
        steps: [
          {
            event: 'click',
            url: 'x',
            url_matching: 'contains',
            selector: 'div .btn',
            text: 'Buy',
            text_matching: 'exact',
            href: null,
            href_matching: null,
            tag_name: null,
            properties: [{ key: 'plan', value: 'pro', type: 'person' }],
          },
        ],
      },
      { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' },
      ctx,
    ),
  cohortMembership: (id, personIdSql, params) => cohortMembershipSql(id, COHORTS, personIdSql, { params, teamParam: params.add(1, 'Int64'), nowMs: 0 }),
  // Stands in for the HogQL compiler: an aggregate where the math needs one, a condition elsewhere.
  hogql: (_expression, _params, options) => (options.allowAggregations ? 'count()' : "toString(e.event) != ''"),
};
