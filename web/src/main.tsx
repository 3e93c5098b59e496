/** The operator console: sign in with an admin or auditor token, then the panels. */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, errorText, session, type Whoami } from './api';
import { Shell } from './shell';
import './styles.css';

function SignIn({ onSignedIn }: { onSignedIn: (who: Whoami) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const who = await api<Whoami>('GET', '/v1/whoami', undefined, token.trim());
      if (who.role === 'agent') {
        setError(`That is the token of agent ${who.identity}; the console takes an admin or auditor token.`);
        return;
      }
      session.save(token.trim());
      setToken('');
      onSignedIn(who);
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 401 ? `Refused: ${failure.envelope.message}` : errorText(failure),
      );
    }
  };
  return (
    <main class="signin">
      <h1>agent-mailbox console</h1>
      <form onSubmit={submit} data-testid="signin">
        <label for="token">Admin or auditor token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit">Sign in</button>
        <p class="hint">Kept in this tab's session storage only; signing out or closing the tab forgets it.</p>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function App() {
  const [who, setWho] = useState<Whoami | null>(null);
  const [checked, setChecked] = useState(session.token() === null);
  if (!checked) {
    // A reload in the same tab: the stored token is checked again, never trusted blindly.
    api<Whoami>('GET', '/v1/whoami').then(
      (found) => (found.role === 'agent' ? session.clear() : setWho(found), setChecked(true)),
      () => (session.clear(), setChecked(true)),
    );
    return <p class="loading">Checking your session…</p>;
  }
  if (!who) return <SignIn onSignedIn={setWho} />;
  return (
    <Shell
      who={who}
      onSignOut={() => {
        session.clear();
        setWho(null);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);
