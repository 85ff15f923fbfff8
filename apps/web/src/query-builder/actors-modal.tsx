import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorState, Loading } from '../components';
import { linkHandler } from '../router';

/** A person (or group) as the legacy actors routes answer it (persons/funnel/ …). */
export interface Actor {
  type?: 'person' | 'group';
  id: string;
  uuid?: string;
  name?: string;
  distinct_ids?: string[];
  group_key?: string;
  properties?: Record<string, unknown>;
}

interface ActorsPage {
  results: { people: Actor[]; count: number }[];
  next: string | null;
}

/**
 * Where the actors come from: a legacy actors route (a funnel step's people URL, paged by its
 * `next`), or the query API with an actors node (an InsightActorsQuery), paged by offset.
 */
export type ActorsSource = { url: string } | { projectId: number; node: Record<string, unknown> };

/** A person as the query API's ActorsQuery answers it (its `person` column). */
interface QueryPerson {
  id: string;
  properties?: Record<string, unknown>;
  distinct_ids?: string[];
}

const QUERY_PAGE = 100;

/** One page of actors from either source; `next` says how to read the following one. */
async function readPage(source: ActorsSource, next: string | number | null): Promise<{ actors: Actor[]; next: string | number | null }> {
  if ('url' in source) {
    const page = await api<ActorsPage>(typeof next === 'string' ? next : source.url);
    return { actors: page.results[0]?.people ?? [], next: page.next ? samePath(page.next) : null };
  }
  const offset = typeof next === 'number' ? next : 0;
  const answer = await api<{ results: [QueryPerson][]; hasMore: boolean }>(`/api/environments/${source.projectId}/query/`, {
    method: 'POST',
    body: { query: { kind: 'ActorsQuery', select: ['person'], limit: QUERY_PAGE, offset, source: source.node } },
  });
  const actors = answer.results.map(([person]) => ({
    type: 'person' as const,
    id: person.id,
    uuid: person.id,
    name: String(person.properties?.['email'] ?? person.properties?.['name'] ?? person.distinct_ids?.[0] ?? person.id),
    distinct_ids: person.distinct_ids ?? [],
    properties: person.properties,
  }));
  return { actors, next: answer.hasMore ? offset + QUERY_PAGE : null };
}

/** How many actors the CSV holds at most (pages of the route's own size are read until then). */
const CSV_LIMIT = 10_000;

/** A next-page address as a same-origin path: the server answers it absolute. */
const samePath = (url: string) => {
  const parsed = new URL(url, location.origin);
  return `${parsed.pathname}${parsed.search}`;
};

function csvCell(value: unknown): string {
  const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function actorsCsv(actors: Actor[]): string {
  const rows = [['id', 'name', 'distinct_ids', 'email']];
  for (const a of actors) rows.push([a.uuid ?? a.id, a.name ?? a.group_key ?? '', (a.distinct_ids ?? []).join(' '), String(a.properties?.['email'] ?? '')]);
  return rows.map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/**
 * PostHog's actors modal: the persons behind a number (a funnel step's converted or dropped-off
 * persons, a trend point's), page by page, each linked to its page, and the whole list as CSV.
 */
export function ActorsModal({ title, source, onClose }: { title: string; source: ActorsSource; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [actors, setActors] = useState<Actor[] | null>(null);
  const [next, setNext] = useState<string | number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [exporting, setExporting] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
    let current = true;
    readPage(source, null)
      .then((page) => {
        if (!current) return;
        setActors(page.actors);
        setNext(page.next);
      })
      .catch((failure) => current && setError(failure));
    return () => {
      current = false;
    };
  }, []);
  const more = async () => {
    if (next === null) return;
    try {
      const page = await readPage(source, next);
      setActors([...(actors ?? []), ...page.actors]);
      setNext(page.next);
    } catch (failure) {
      setError(failure);
    }
  };
  const download = async () => {
    setExporting(true);
    try {
      const all: Actor[] = [];
      let page = await readPage(source, null);
      all.push(...page.actors);
      while (page.next !== null && all.length < CSV_LIMIT) {
        page = await readPage(source, page.next);
        all.push(...page.actors);
      }
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([actorsCsv(all.slice(0, CSV_LIMIT))], { type: 'text/csv' }));
      link.download = `${title.replace(/[^\w -]+/g, '').trim() || 'persons'}.csv`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    } catch (failure) {
      setError(failure);
    } finally {
      setExporting(false);
    }
  };
  return (
    <dialog ref={dialog} class="actors-modal" aria-labelledby="actors-title" data-testid="actors-modal" onClose={onClose}>
      <div class="tile-head">
        <h2 id="actors-title">{title}</h2>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      {error ? (
        <ErrorState error={error} />
      ) : actors === null ? (
        <Loading what="the persons" />
      ) : actors.length === 0 ? (
        <Empty>Nobody here.</Empty>
      ) : (
        <>
          <div class="table-scroll">
            <table class="list" data-testid="actors-table">
              <caption class="sr-only">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Distinct ids</th>
                </tr>
              </thead>
              <tbody>
                {actors.map((actor) => {
                  const id = actor.uuid ?? actor.id;
                  const path = actor.type === 'group' ? null : `/persons/${encodeURIComponent(id)}`;
                  return (
                    <tr key={id} data-actor-id={id}>
                      <td>
                        {path ? (
                          <a href={path} onClick={linkHandler(path)}>
                            {actor.name ?? id}
                          </a>
                        ) : (
                          (actor.group_key ?? id)
                        )}
                      </td>
                      <td>{(actor.distinct_ids ?? []).join(', ')}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {next !== null ? (
            <button type="button" class="secondary" onClick={more}>
              Load more
            </button>
          ) : null}{' '}
          <button type="button" class="secondary" onClick={download} disabled={exporting}>
            {exporting ? 'Preparing the CSV…' : 'Download CSV'}
          </button>
        </>
      )}
    </dialog>
  );
}
