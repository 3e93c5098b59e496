/** Plain HTTP calls to an API server a test started on its own (buildApiServer on a port): JSON in, JSON or text out. */

export interface ApiAnswer {
  status: number;
  body: any;
}

/** A caller of the API at `url`: method, path, bearer token, and a JSON body when given. */
export const apiCaller =
  (url: () => string) =>
  async (method: string, path: string, token: string, body?: unknown): Promise<ApiAnswer> => {
    const response = await fetch(url() + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };

/** The value of one unlabelled series in GET /metrics (e.g. mailbox_unwoken_messages). */
export async function metricValue(url: string, name: string): Promise<number> {
  const line = (await (await fetch(`${url}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line!.split(' ')[1]);
}
