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

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  save: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export function authHeaders(token = session.token()): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

export async function api<T>(method: string, path: string, body?: unknown, token = session.token()): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: { ...authHeaders(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : null;
  if (!response.ok) {
    const envelope = (json ?? {}) as Envelope;
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
