import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure, apiPostText, type Page } from '../api';
import { Empty, useSaveStatus } from '../components';
import { formatNumber } from '../format';
import { RowsTable, type ColumnTypes } from '../rows-table';
import { errorPosition, lineAndColumn, type QueryPosition } from '../sql-position';

/** PostHog's HogQLQueryResponse as the page reads it; `types` are [name, type] pairs (EventsQuery's are bare types). */
interface SqlAnswer {
  columns: string[];
  types?: ColumnTypes;
  results: unknown[][];
  hasMore?: boolean;
}

interface RunFailure {
  message: string;
  position: QueryPosition | null;
}

const FIRST_QUERY = 'SELECT event, count() AS events\nFROM events\nWHERE timestamp > now() - INTERVAL 7 DAY\nGROUP BY event\nORDER BY events DESC\nLIMIT 100';

/** The HogQL query node the page runs and saves. */
const hogqlQuery = (text: string) => ({ kind: 'HogQLQuery', query: text });

/**
 * The SQL page: HogQL typed in an editor with line numbers, run with Ctrl/Cmd+Enter through the
 * query API, its rows in a table headed by each column's type, exported as CSV, and saved as an
 * insight (PostHog's DataVisualizationNode around the HogQLQuery), optionally on a dashboard.
 * An error the API places in the query is shown at its line and column, and the editor's cursor
 * moved there.
 */
export function SqlPage({ projectId, url }: { projectId: number; url: URL }) {
  // A saved SQL insight opens here with its query in the address (`?q=`).
  const [text, setText] = useState(url.searchParams.get('q') ?? FIRST_QUERY);
  const [answer, setAnswer] = useState<{ data: SqlAnswer; ms: number; text: string } | null>(null);
  const [failure, setFailure] = useState<RunFailure | null>(null);
  const [running, setRunning] = useState(false);
  const [exporting, setExporting] = useState('');
  const editor = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLPreElement>(null);
  const queryUrl = `/api/environments/${projectId}/query/`;

  const run = async () => {
    if (running) return;
    setRunning(true);
    setFailure(null);
    const started = performance.now();
    try {
      const data = await api<SqlAnswer>(queryUrl, { method: 'POST', body: { query: hogqlQuery(text), refresh: true } });
      setAnswer({ data, ms: Math.round(performance.now() - started), text });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const position = error instanceof ApiFailure ? errorPosition(error.body, message, text) : null;
      setAnswer(null);
      setFailure({ message, position });
      if (position && editor.current) {
        editor.current.focus();
        editor.current.setSelectionRange(position.start, Math.min(text.length, position.start + 1));
      }
    } finally {
      setRunning(false);
    }
  };

  const exportCsv = async () => {
    setExporting('Exporting…');
    try {
      const csv = await apiPostText(`${queryUrl}?format=csv`, { query: hogqlQuery(text) });
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = 'query.csv';
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setExporting('Exported query.csv.');
    } catch (error) {
      setExporting(error instanceof Error ? error.message : String(error));
    }
  };

  const lines = text.split('\n').length;
  return (
    <section aria-labelledby="sql-title">
      <h1 id="sql-title">SQL</h1>
      <p class="hint">
        HogQL over this project's <code>events</code>, <code>persons</code> and their fields. Run with Ctrl+Enter (⌘+Enter on a Mac).
      </p>
      <div class="sql-editor">
        <pre class="sql-gutter" aria-hidden="true" ref={gutter}>
          {Array.from({ length: lines }, (_, i) => `${i + 1}\n`).join('')}
        </pre>
        <textarea
          ref={editor}
          aria-label="SQL query"
          aria-invalid={failure?.position ? 'true' : undefined}
          aria-describedby={failure ? 'sql-error' : undefined}
          spellcheck={false}
          wrap="off"
          rows={Math.max(8, Math.min(lines + 1, 30))}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void run();
            }
          }}
        />
      </div>
      <div class="filters">
        <button type="button" onClick={() => void run()} disabled={running}>
          {running ? 'Running…' : 'Run'}
        </button>
        <button type="button" class="secondary" onClick={() => void exportCsv()}>
          Export CSV
        </button>
        <span role="status" aria-live="polite">
          {exporting}
        </span>
      </div>
      {failure ? <SqlError failure={failure} text={text} /> : null}
      {answer ? <SqlResult answer={answer.data} ms={answer.ms} /> : null}
      {!answer && !failure && !running ? <Empty>Run the query to see its rows.</Empty> : null}
      <SaveSql projectId={projectId} text={text} />
    </section>
  );
}

/** The API's error, and where in the query it is: line, column and the line itself with a marker under the place. */
function SqlError({ failure, text }: { failure: RunFailure; text: string }) {
  const at = failure.position ? lineAndColumn(text, failure.position.start) : null;
  return (
    <div class="state error" role="alert" id="sql-error" data-testid="sql-error" data-error-start={failure.position?.start}>
      <p>{failure.message}</p>
      {at ? (
        <>
          <p data-testid="sql-error-position">
            Line {at.line}, column {at.column}
          </p>
          <pre class="sql-error-line">
            {at.text}
            {'\n'}
            {' '.repeat(at.column - 1)}^
          </pre>
        </>
      ) : null}
    </div>
  );
}

function SqlResult({ answer, ms }: { answer: SqlAnswer; ms: number }) {
  const count = answer.results.length;
  return (
    <div data-testid="sql-result" data-rows={count} data-has-more={answer.hasMore ? 'true' : 'false'}>
      <p role="status">
        {formatNumber(count)} {count === 1 ? 'row' : 'rows'} in {formatNumber(ms)} ms
        {answer.hasMore ? ' — more rows exist than shown: add a LIMIT (at most 50,000) or an OFFSET to see them.' : ''}
      </p>
      {count === 0 ? (
        <Empty>The query answered no rows.</Empty>
      ) : (
        <RowsTable columns={answer.columns} types={answer.types} results={answer.results} caption="Rows of the query" />
      )}
    </div>
  );
}

/** Saves the query as an insight (a DataVisualizationNode around the HogQLQuery, as PostHog saves SQL), optionally on a dashboard. */
function SaveSql({ projectId, text }: { projectId: number; text: string }) {
  const [name, setName] = useState('');
  const [dashboards, setDashboards] = useState<{ id: number; name: string }[]>([]);
  const [dashboard, setDashboard] = useState('');
  const saving = useSaveStatus();
  useEffect(() => {
    api<Page<{ id: number; name: string }>>(`/api/environments/${projectId}/dashboards/?limit=100`)
      .then((page) => setDashboards(page.results))
      .catch(() => setDashboards([]));
  }, [projectId]);
  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      await api(`/api/environments/${projectId}/insights/`, {
        method: 'POST',
        body: {
          name,
          query: { kind: 'DataVisualizationNode', source: hogqlQuery(text) },
          saved: true,
          dashboards: dashboard ? [Number(dashboard)] : undefined,
        },
      });
      setName('');
      const on = dashboards.find((d) => String(d.id) === dashboard);
      return on ? `Saved as “${name}” on ${on.name}.` : `Saved as “${name}”.`;
    });
  };
  return (
    <form class="filters save-insight" onSubmit={save} aria-label="Save the query as an insight">
      <label>
        Insight name
        <input name="insight_name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {dashboards.length > 0 ? (
        <label>
          Add to dashboard
          <select name="dashboard" value={dashboard} onChange={(e) => setDashboard(e.currentTarget.value)}>
            <option value="">None</option>
            {dashboards.map((d) => (
              <option key={d.id} value={String(d.id)}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <button type="submit" class="secondary">
        Save as insight
      </button>
      {saving.line}
    </form>
  );
}
