// First: the user and the page's query are asked for while the rest of the bundle is evaluated.
import { takeEarlyMe } from './early-requests';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiFailure, hasSessionCookie, type Me } from './api';
import { ErrorState, Loading, NotFound, OfflineBanner } from './components';
import { useFocusOnNavigation } from './focus-on-navigation';
import { ActionPage, ActionsPage } from './pages/actions';
import { CohortPage, CohortsPage } from './pages/cohorts';
import { DashboardPage, DashboardsPage } from './pages/dashboards';
import { DefinitionPage, DefinitionsPage } from './pages/definitions';
import { EventsPage } from './pages/events';
import { FlagDetailPage, FlagsPage } from './pages/flags';
import { FunnelsPage } from './pages/funnels';
import { GroupDetailPage, GroupsPage } from './pages/groups';
import { InsightPage, InsightsPage } from './pages/insights';
import { LoginPage, SetupPage } from './pages/login';
import { PathsPage } from './pages/paths';
import { PersonDetailPage, PersonsPage } from './pages/persons';
import { LifecyclePage } from './pages/lifecycle';
import { RetentionPage } from './pages/retention';
import { StickinessPage } from './pages/stickiness';
import { SettingsPage } from './pages/settings';
import { SqlPage } from './pages/sql';
import { TrendsPage } from './pages/trends';
import { linkHandler, navigate, useLocation } from './router';
import './styles.css';

const NAV = [
  { path: '/events', label: 'Events' },
  { path: '/dashboards', label: 'Dashboards' },
  { path: '/insights', label: 'Insights' },
  { path: '/trends', label: 'Trends' },
  { path: '/funnels', label: 'Funnels' },
  { path: '/sql', label: 'SQL' },
  { path: '/retention', label: 'Retention' },
  { path: '/stickiness', label: 'Stickiness' },
  { path: '/lifecycle', label: 'Lifecycle' },
  { path: '/paths', label: 'Paths' },
  { path: '/persons', label: 'Persons' },
  { path: '/groups', label: 'Groups' },
  { path: '/cohorts', label: 'Cohorts' },
  { path: '/actions', label: 'Actions' },
  { path: '/definitions', label: 'Definitions' },
  { path: '/feature_flags', label: 'Feature flags' },
  { path: '/settings', label: 'Settings' },
];

function App() {
  const url = useLocation();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const loadMe = useCallback(() => {
    setError(null);
    if (!hasSessionCookie()) {
      setMe(null);
      return;
    }
    (takeEarlyMe() ?? api<Me>('/api/users/@me/'))
      .then(setMe)
      .catch((failure) => (failure instanceof ApiFailure && failure.status === 401 ? setMe(null) : setError(failure)));
  }, []);
  useEffect(loadMe, [loadMe]);

  if (url.pathname === '/setup') return <SetupPage token={url.searchParams.get('token') ?? ''} onDone={loadMe} />;
  if (error) return <ErrorState error={error} retry={loadMe} />;
  if (me === undefined) return <Loading what="Sightline" />;
  if (me === null) return <LoginPage onSignedIn={loadMe} />;
  if (url.pathname === '/' || url.pathname === '/login') {
    navigate('/events', true);
    return null;
  }
  return <Shell me={me} url={url} onSignedOut={() => setMe(null)} onProjectChanged={loadMe} />;
}

function Shell({ me, url, onSignedOut, onProjectChanged }: { me: Me; url: URL; onSignedOut: () => void; onProjectChanged: () => void }) {
  const projectId = me.team.id;
  const timezone = me.team.timezone;
  const signOut = async () => {
    await api('/api/logout/', { method: 'POST' }).catch(() => undefined);
    onSignedOut();
    navigate('/login', true);
  };
  const path = url.pathname;
  // On a narrow screen the nav is behind the menu button; going to a page closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  useFocusOnNavigation(path);
  let page;
  if (path === '/events') page = <EventsPage projectId={projectId} timezone={timezone} />;
  else if (path === '/trends') page = <TrendsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/dashboards') page = <DashboardsPage projectId={projectId} />;
  else if (path.startsWith('/dashboards/')) page = <DashboardPage projectId={projectId} id={path.slice(12)} timezone={timezone} />;
  else if (path === '/insights') page = <InsightsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path.startsWith('/insights/')) page = <InsightPage projectId={projectId} timezone={timezone} id={path.slice(10)} />;
  else if (path === '/sql') page = <SqlPage projectId={projectId} url={url} />;
  else if (path === '/funnels') page = <FunnelsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/retention') page = <RetentionPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/stickiness') page = <StickinessPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/lifecycle') page = <LifecyclePage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/paths') page = <PathsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path === '/persons') page = <PersonsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (path.startsWith('/persons/')) page = <PersonDetailPage projectId={projectId} timezone={timezone} uuid={decodeURIComponent(path.slice(9))} />;
  else if (path === '/groups') page = <GroupsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (/^\/groups\/[0-4]\/./.test(path))
    page = <GroupDetailPage projectId={projectId} timezone={timezone} index={Number(path[8])} encodedKey={path.slice(10)} />;
  else if (path === '/settings') page = <SettingsPage projectId={projectId} timezone={timezone} onProjectChanged={onProjectChanged} />;
  else if (path === '/feature_flags') page = <FlagsPage projectId={projectId} url={url} />;
  else if (path.startsWith('/feature_flags/')) page = <FlagDetailPage projectId={projectId} id={path.slice(15)} timezone={timezone} />;
  else if (path === '/definitions') page = <DefinitionsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (/^\/definitions\/(events|properties)\/[^/]+$/.test(path))
    page = <DefinitionPage projectId={projectId} timezone={timezone} kind={path.split('/')[2] as 'events' | 'properties'} id={path.split('/')[3]!} />;
  else if (path === '/cohorts') page = <CohortsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (/^\/cohorts\/[^/]+$/.test(path)) page = <CohortPage projectId={projectId} timezone={timezone} id={path.slice(9)} />;
  else if (path === '/actions') page = <ActionsPage projectId={projectId} timezone={timezone} url={url} />;
  else if (/^\/actions\/[^/]+$/.test(path)) page = <ActionPage projectId={projectId} id={path.slice(9)} />;
  else
    page = (
      <NotFound
        what={
          <>
            There is no page at <code>{path}</code>.
          </>
        }
        back={{ href: '/events', label: 'Go to Events' }}
      />
    );
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Sightline</span>
        <button type="button" class="secondary menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" class={menuOpen ? 'open' : undefined}>
          {NAV.map((item) => (
            <a key={item.path} href={item.path} onClick={linkHandler(item.path)} aria-current={path.startsWith(item.path) ? 'page' : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
        <span class="meta" data-testid="timezone" title={`Project: ${me.team.name}`}>
          Times in {timezone}
        </span>
        <button type="button" class="secondary sign-out" onClick={signOut} title={`Signed in as ${me.email}`}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <OfflineBanner />
        {page}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
