import { Empty, ErrorState, Loading } from '../components';
import { linkHandler } from '../router';
import { usePost } from '../use-post';

interface Actor {
  id: string;
  properties?: Record<string, unknown>;
  distinct_ids?: string[];
  group_key?: string;
}

/** The persons (or groups) behind one bar of a stickiness or lifecycle chart: a page of 500 from an ActorsQuery over `source`. */
export function BarPersons({ projectId, source, title, testId }: { projectId: number; source: Record<string, unknown>; title: string; testId: string }) {
  const body = JSON.stringify({ query: { kind: 'ActorsQuery', select: ['actor'], limit: 500, source } });
  const { answer, error } = usePost<{ results: [Actor][]; hasMore: boolean }>(`/api/environments/${projectId}/query/`, body);
  return (
    <section class="cell-persons" aria-labelledby={`${testId}-title`} data-testid={testId}>
      <h2 id={`${testId}-title`}>Persons: {title}</h2>
      {error ? (
        <ErrorState error={error} />
      ) : answer === null ? (
        <Loading what="the persons" />
      ) : answer.results.length === 0 ? (
        <Empty>Nobody here.</Empty>
      ) : (
        <>
          {answer.hasMore ? <p class="hint">The first 500 are listed.</p> : null}
          <ul class="person-list">
            {answer.results.map(([actor]) => {
              if (actor.group_key !== undefined)
                return (
                  <li key={actor.id} data-actor={actor.id}>
                    {actor.group_key}
                  </li>
                );
              const name = String(actor.properties?.['email'] ?? actor.distinct_ids?.[0] ?? actor.id);
              const path = `/persons/${encodeURIComponent(actor.id)}`;
              return (
                <li key={actor.id} data-actor={actor.id}>
                  <a href={path} onClick={linkHandler(path)}>
                    {name}
                  </a>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}
