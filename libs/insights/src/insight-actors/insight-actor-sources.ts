import { pathsActorsSource } from '../paths/paths-actors.source';

/** The insight kinds whose actors an InsightActorsQuery lists, by the source's kind (InsightActorsSource): one line each. */
export const INSIGHT_ACTOR_SOURCES = {
  PathsQuery: pathsActorsSource,
};
