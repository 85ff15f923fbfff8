import type { EventsSqlPorts } from './events-sql';

/** The project and clock of a query's SQL, with the compilers other modules own. */
export interface QuerySqlPorts extends EventsSqlPorts {
  teamId: number;
  nowMs: number;
}

/** What a query reads beside its SQL: the names of what it names, and the project's first event. */
export interface QueryPorts extends Omit<QuerySqlPorts, 'teamId' | 'nowMs'> {
  /** Names of the actions and cohorts the query names, loaded (and checked) by the caller. */
  actionName(actionId: number): string;
  /** The event names an action's steps name (funnel correlation leaves them out, as it does the steps' events). */
  actionEventNames?(actionId: number): string[];
  cohortName(cohortId: number): string;
  /** The project's earliest event, for `date_from: "all"`. */
  earliestEventMs(): Promise<number | null>;
}
