/**
 * The console talks to the API with the operator's own bearer token, like any
 * client: no cookie, no back door. The token lives in session storage (gone
 * when the tab closes) and is never put in a URL, so no log or history holds it.
 */
const TOKEN_KEY = 'agent-mailbox-console-token';

export interface Envelope {
  error: string;
  code: string;
  message: string;
  [detail: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: Envelope,
  ) {
    super(envelope.message);
  }
}

/** Told when the server refuses the signed-in token (401: rotated, its auditor retired): the console signs out. */
let onRefused: (message: string) => void = () => undefined;

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  save: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
  /** `listener` hears of every 401 to a request made with the signed-in token, with the server's message. */
  whenRefused: (listener: (message: string) => void) => {
    onRefused = listener;
  },
  /**
   * A 401 to `token`: when it is the signed-in one, no panel can read anything more with it, so the console says why
   * and asks for a token again, rather than stay "signed in" with every panel failing.
   */
  refused: (token: string | null, message: string) => {
    if (token !== null && token === session.token()) onRefused(message);
  },
};

export function authHeaders(token = session.token()): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/**
 * A request that got no answer at all (the server stopped, restarting, or the network gone): the browser says only
 * "Failed to fetch", which names neither the server nor what to do.
 */
export const noAnswer = (error: unknown): string =>
  `no answer from the server at ${location.host} (stopped, restarting or unreachable: ${
    error instanceof Error ? error.message : String(error)
  })`;

export async function api<T>(method: string, path: string, body?: unknown, token = session.token()): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: { ...authHeaders(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    throw new Error(noAnswer(error), { cause: error });
  }
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : null;
  if (!response.ok) {
    const envelope = (json ?? {}) as Envelope;
    if (response.status === 401) session.refused(token, envelope.message ?? `${method} ${path} answered 401`);
    throw new ApiError(response.status, {
      ...envelope,
      error: envelope.error ?? response.statusText,
      code: envelope.code ?? 'HTTP_' + response.status,
      message: envelope.message ?? `${method} ${path} answered ${response.status}`,
    });
  }
  return json as T;
}

export const errorText = (error: unknown): string =>
  error instanceof ApiError
    ? `${error.envelope.code}: ${error.envelope.message}`
    : error instanceof Error
      ? error.message
      : String(error);

export interface Whoami {
  identity: string;
  role: 'admin' | 'auditor' | 'agent';
}
