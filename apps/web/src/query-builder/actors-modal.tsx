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
 * persons), read from the actors route the answer names, page by page, each linked to its page,
 * and the whole list as CSV.
 */
export function ActorsModal({ title, url, onClose }: { title: string; url: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [actors, setActors] = useState<Actor[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [exporting, setExporting] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
    const controller = new AbortController();
    api<ActorsPage>(url, { signal: controller.signal })
      .then((page) => {
        setActors(page.results[0]?.people ?? []);
        setNext(page.next ? samePath(page.next) : null);
      })
      .catch((failure) => (failure as Error).name !== 'AbortError' && setError(failure));
    return () => controller.abort();
  }, [url]);
  const more = async () => {
    if (!next) return;
    try {
      const page = await api<ActorsPage>(next);
      setActors([...(actors ?? []), ...(page.results[0]?.people ?? [])]);
      setNext(page.next ? samePath(page.next) : null);
    } catch (failure) {
      setError(failure);
    }
  };
  const download = async () => {
    setExporting(true);
    try {
      const all: Actor[] = [];
      let page: string | null = url;
      while (page && all.length < CSV_LIMIT) {
        const answer: ActorsPage = await api<ActorsPage>(page);
        all.push(...(answer.results[0]?.people ?? []));
        page = answer.next ? samePath(answer.next) : null;
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
          {next ? (
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
