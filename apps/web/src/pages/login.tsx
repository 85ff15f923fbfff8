import { useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';

export function LoginPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('/api/login/', { method: 'POST', body: { email, password } });
      onSignedIn();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to Sightline</h1>
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/** The first-start link's page: choose the first user's password, then sign in with it. */
export function SetupPage({ token, onDone }: { token: string; onDone: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await api('/api/password_setup/', { method: 'POST', body: { token, email, password } });
      navigate('/events', true);
      onDone();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <main class="auth" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="setup-title">
        <h1 id="setup-title">Set up your account</h1>
        <p>This link works once. Choose the e-mail and password you will sign in with.</p>
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password (at least 8 characters)
          <input
            type="password"
            name="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Save and sign in</button>
      </form>
    </main>
  );
}
