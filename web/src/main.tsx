/** The operator console: sign in with an admin or auditor token, then the panels. */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, errorText, session, type Whoami } from './api';
import { Shell } from './shell';
import './styles.css';

/** What the form says of a token it will not send: blank, or with whitespace inside (a token is one word). */
function tokenProblem(token: string): string | null {
  if (token.trim() === '')
    return "Enter a token: this one is only spaces. Paste the admin token (MAILBOX_ADMIN_TOKEN) or an auditor's (mailbox agent add @ops --role auditor).";
  if (/\s/.test(token.trim()))
    return 'A token has no spaces in it: paste the token alone, without "Bearer " or anything around it.';
  return null;
}

function SignIn({ onSignedIn, notice }: { onSignedIn: (who: Whoami) => void; notice: string | null }) {
  const [token, setToken] = useState('');
  // A token is pasted with a space, a tab or a line break around it more often than not: the field drops them as the
  // token comes in and says so, so what is sent is what the field shows.
  const [trimmed, setTrimmed] = useState(false);
  // Why the tab is at the sign-in again (its token refused), until the next try says something else.
  const [error, setError] = useState<string | null>(notice);
  const enter = (value: string) => {
    const bare = value.trim();
    const trims = bare !== '' && bare !== value;
    setTrimmed(trims);
    setToken(trims ? bare : value);
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = tokenProblem(token);
    setError(problem);
    if (problem) return;
    try {
      const who = await api<Whoami>('GET', '/v1/whoami', undefined, token);
      if (who.role === 'agent') {
        setError(`That is the token of agent ${who.identity}; the console takes an admin or auditor token.`);
        return;
      }
      session.save(token);
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
          onInput={(e) => enter((e.target as HTMLInputElement).value)}
          required
        />
        {trimmed && (
          <p class="hint" data-testid="token-trimmed">
            Removed the spaces around the pasted token (a token has none).
          </p>
        )}
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
