import { distributedReadsWithoutGlobal } from './cluster-sql';

describe('distributedReadsWithoutGlobal', () => {
  it.each([
    [
      'a local join of a replicated table',
      'SELECT count() FROM events AS e LEFT JOIN (SELECT distinct_id FROM person_distinct_id2) AS pdi ON pdi.distinct_id = e.distinct_id',
    ],
    ['a GLOBAL join of the events', 'SELECT 1 FROM events AS e GLOBAL LEFT JOIN (SELECT s FROM events GROUP BY s) AS s ON s.s = e.s'],
    ['a GLOBAL IN over the events', 'SELECT 1 FROM events WHERE distinct_id GLOBAL IN (SELECT distinct_id FROM events WHERE event = {e:String})'],
    ['a GLOBAL NOT IN over the events', 'SELECT 1 FROM events WHERE distinct_id GLOBAL NOT IN (SELECT distinct_id FROM events)'],
    ['an IN over a replicated table', 'SELECT 1 FROM events AS e WHERE if(e.x IN (SELECT id FROM person WHERE team_id = 1), 1, 0)'],
    ['a join on the initiator of two distributed subqueries', 'SELECT 1 FROM (SELECT a FROM events) AS x LEFT JOIN (SELECT a FROM events) AS y ON x.a = y.a'],
    ['a scalar subquery', 'WITH (SELECT groupArray(e) FROM events) AS top SELECT has(top, event) FROM events'],
    ['text that only looks like SQL', "SELECT 'x IN (SELECT 1 FROM events)' FROM events AS e LEFT JOIN person AS p ON p.id = e.person_id"],
    ['a query over replicated tables only', 'SELECT 1 FROM person WHERE id IN (SELECT person_id FROM person_distinct_id2)'],
  ])('passes %s', (_name, sql) => {
    expect(distributedReadsWithoutGlobal(sql)).toEqual([]);
  });

  it.each([
    ['a local join of a subquery over the events', 'SELECT 1 FROM events AS e LEFT JOIN (SELECT s FROM events GROUP BY s) AS s ON s.s = e.s', 'JOIN'],
    ['a local join of the events table itself', 'SELECT 1 FROM events AS e INNER JOIN events AS f ON f.uuid = e.uuid', 'JOIN of the distributed table'],
    ['a local IN in an expression', "SELECT 1 FROM events AS e WHERE if(e.distinct_id IN (SELECT distinct_id FROM events WHERE event = 'x'), 1, 0)", 'IN'],
    ['a local NOT IN', 'SELECT 1 FROM events WHERE distinct_id NOT IN (SELECT distinct_id FROM events)', 'IN'],
    ['a nested read of the events under a local join', 'SELECT 1 FROM events AS e LEFT JOIN (SELECT a FROM (SELECT a FROM events)) AS x ON x.a = e.a', 'JOIN'],
    ['a problem inside a subquery', 'SELECT * FROM (SELECT 1 FROM events AS e LEFT JOIN (SELECT s FROM events) AS s ON s.s = e.s) UNION ALL SELECT 2', 'JOIN'],
    ['a problem after UNION ALL', 'SELECT 1 FROM person UNION ALL SELECT 1 FROM events WHERE x IN (SELECT x FROM events)', 'IN'],
    ['GLOBAL on another join only', 'SELECT 1 FROM events AS e GLOBAL LEFT JOIN (SELECT 1 AS a) AS a ON 1 LEFT JOIN (SELECT s FROM events) AS s ON 1', 'JOIN'],
  ])('finds %s', (_name, sql, kind) => {
    const problems = distributedReadsWithoutGlobal(sql);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(kind);
  });
});
