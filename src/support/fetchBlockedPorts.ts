/**
 * The ports that fetch refuses to connect to (the Fetch standard's "bad ports", https://fetch.spec.whatwg.org/#port-blocking):
 * browsers and Node.js's fetch fail a request to one of them at once ("bad port") without opening a connection. A
 * mailbox served on one (MAILBOX_PORT=6667) answered curl, but the mailbox CLI, `mailbox mcp`, the console, /docs and
 * the image's health check could not reach it, and the CLI said "is `mailbox serve` running?" of a server that was.
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113,
  115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556,
  563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
  6668, 6669, 6679, 6697, 10080,
]);

/** What fetch's refusal of such a port means, said after the port: "port 6667 is one that fetch ...". */
export const FETCH_BLOCKED_PORT_REASON =
  'one that fetch refuses to connect to (a "bad port" of the Fetch standard, blocked by browsers and Node.js alike)';
