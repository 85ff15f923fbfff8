/** The project's two most common events (event definitions by volume): what a new funnel starts from. */
export const TOP_EVENTS_PATH = (projectId: number | '@current') => `/api/projects/${projectId}/event_definitions/?limit=2`;
