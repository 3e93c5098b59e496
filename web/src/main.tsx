/** The operator console: sign in with an admin or auditor token, then the panels. */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, errorText, session, type Whoami } from './api';
import { Shell } from './shell';
import './styles.css';

function SignIn({ onSignedIn, notice }: { onSignedIn: (who: Whoami) => void; notice: string | null }) {
  const [token, setToken] = useState('');
  // Why the tab is at the sign-in again (its token refused), until the next try says something else.
  const [error, setError] = useState<string | null>(notice);
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
  const [notice, setNotice] = useState<string | null>(null);
  const [checked, setChecked] = useState(session.token() === null);
  // The signed-in token refused by any read (rotated, or its auditor retired): no panel can read with it any more, so
  // the tab forgets it and asks again, saying why, instead of staying "signed in" with every panel failing.
  session.whenRefused((message) => {
    session.clear();
    setWho(null);
    setChecked(true);
    setNotice(`Signed out: the server refused this tab's token: ${message}`);
  });
  if (!checked) {
    // A reload in the same tab: the stored token is checked again, never trusted blindly. A refusal (401) signs out
    // through whenRefused above; no answer keeps the token for the next reload and says so.
    api<Whoami>('GET', '/v1/whoami').then(
      (found) => (found.role === 'agent' ? session.clear() : setWho(found), setChecked(true)),
      (failure: unknown) => {
        if (!(failure instanceof ApiError && failure.status === 401))
          setNotice(`Could not check this tab's saved token: ${errorText(failure)}. Reload to try again, or sign in.`);
        setChecked(true);
      },
    );
    return <p class="loading">Checking your session…</p>;
  }
  if (!who) return <SignIn key={notice} onSignedIn={(found) => (setNotice(null), setWho(found))} notice={notice} />;
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
