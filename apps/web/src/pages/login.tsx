import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api } from '../api';
import { navigate } from '../router';

/**
 * The e-mail and password form both sign-in pages are: it posts them (with `extra`) to `path`,
 * shows the API's refusal (a wrong password, a throttled address, a used link) and then calls `onDone`.
 */
function CredentialsForm({
  titleId,
  title,
  intro,
  path,
  extra,
  passwordLabel,
  newPassword,
  submit,
  busySubmit,
  onDone,
}: {
  titleId: string;
  title: string;
  intro?: ComponentChildren;
  path: string;
  extra?: Record<string, string>;
  passwordLabel: string;
  /** A password being chosen: the browser may suggest one, at least 8 characters. */
  newPassword: boolean;
  submit: string;
  busySubmit: string;
  onDone: () => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api(path, { method: 'POST', body: { ...extra, email, password } });
      onDone();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth" id="main">
      <form class="card" onSubmit={send} aria-labelledby={titleId}>
        <h1 id={titleId}>{title}</h1>
        {intro}
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          {passwordLabel}
          <input
            type="password"
            name="password"
            autoComplete={newPassword ? 'new-password' : 'current-password'}
            minLength={newPassword ? 8 : undefined}
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
          {busy ? busySubmit : submit}
        </button>
      </form>
    </main>
  );
}

export function LoginPage({ onSignedIn }: { onSignedIn: () => void }) {
  return (
    <CredentialsForm
      titleId="login-title"
      title="Sign in to Sightline"
      path="/api/login/"
      passwordLabel="Password"
      newPassword={false}
      submit="Sign in"
      busySubmit="Signing in…"
      onDone={onSignedIn}
    />
  );
}

/** The first-start link's page: choose the first user's password, then sign in with it. */
export function SetupPage({ token, onDone }: { token: string; onDone: () => void }) {
  return (
    <CredentialsForm
      titleId="setup-title"
      title="Set up your account"
      intro={<p>This link works once. Choose the e-mail and password you will sign in with.</p>}
      path="/api/password_setup/"
      extra={{ token }}
      passwordLabel="Password (at least 8 characters)"
      newPassword
      submit="Save and sign in"
      busySubmit="Saving…"
      onDone={() => {
        navigate('/events', true);
        onDone();
      }}
    />
  );
}
