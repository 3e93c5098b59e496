/**
 * The routes nearest to a path that is no route, for the 404's `suggestions`: an agent that guesses a route
 * (`GET /v1/message`, `POST /v1/tasks/{id}/state`, `GET /messages`) is told the valid forms in the answer it already
 * has, rather than sent to `/docs` (an HTML page) to find them. Suggest, never substitute: the request is still 404.
 */
import { editDistance } from '../../commands/suggestions';

const MAX_SUGGESTIONS = 6;

/** `mark_read` and `markRead` are the same word to whoever typed it. */
const normalized = (segment: string) => segment.toLowerCase().replace(/[-_]/g, '');

/**
 * A path's values (a message or task id, an `@identity`) hold a digit or an `@`; a word (`nowhere`, `unread`) is no
 * value, or every path one word short of a route with an id (`/v1/nowhere`: `/v1/messages/{id}`) would be near it.
 */
export const looksLikeValue = (typed: string) => /[0-9@]/.test(typed);

/** What replacing one segment of the path by one of a route costs: 0 the same, 0.5 a near spelling, 1 another word. */
function substitution(typed: string, segment: string): number {
  if (segment.startsWith(':')) return looksLikeValue(typed) ? 0 : 1;
  if (typed === segment) return 0;
  const a = normalized(typed);
  const b = normalized(segment);
  const shorter = Math.min(a.length, b.length);
  // A typo is a letter in four (`message`, `agent`); `send` and `read` are two words two letters apart.
  const near =
    a === b || (shorter >= 4 && (a.includes(b) || b.includes(a))) || editDistance(a, b) <= Math.max(1, Math.floor(shorter / 4));
  return near ? 0.5 : 1;
}

/** Edit distance over segments: a segment added or left out costs 1, a replaced one its substitution. */
function segmentDistance(typed: string[], route: string[]): number {
  let previous = Array.from({ length: route.length + 1 }, (_, j) => j);
  for (let i = 1; i <= typed.length; i++) {
    const current = [i];
    for (let j = 1; j <= route.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution(typed[i - 1], route[j - 1]));
    previous = current;
  }
  return previous[route.length];
}

const segmentsOf = (path: string) => path.split('/').filter((segment) => segment !== '');

/**
 * The routes (as `METHOD /path/{param}`) one segment or less away from `method path`: those taking the same method when
 * there are any, else any; the nearest first, and among equals those sharing more of the path's words.
 */
export function nearRoutes(method: string, path: string, routes: ReadonlyArray<{ method: string; url: string }>): string[] {
  const typed = segmentsOf(path);
  const scored = routes
    .filter((route) => !route.url.includes('*'))
    .map((route) => {
      const segments = segmentsOf(route.url);
      return {
        route,
        distance: segmentDistance(typed, segments),
        shared: typed.filter((segment) => segments.includes(segment)).length,
      };
    })
    .filter((candidate) => candidate.distance <= 1);
  const sameMethod = scored.filter((candidate) => candidate.route.method === method);
  const pool = sameMethod.length > 0 ? sameMethod : scored;
  if (pool.length === 0) return [];
  const nearest = Math.min(...pool.map((candidate) => candidate.distance));
  const closest = pool.filter((candidate) => candidate.distance === nearest);
  const mostShared = Math.max(...closest.map((candidate) => candidate.shared));
  const named = closest
    .filter((candidate) => candidate.shared === mostShared)
    .map(({ route }) => `${route.method} ${route.url.replace(/:([^/]+)/g, '{$1}')}`);
  return [...new Set(named)].slice(0, MAX_SUGGESTIONS);
}
