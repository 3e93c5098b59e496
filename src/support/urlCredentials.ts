/**
 * A connection URL as it may be shown in a log line or an error: its user information (`user:password@`) replaced
 * with `***@`. The URLs of the stores (`esdb://admin:changeit@host:2113`, `redis://:secret@host`) carry their
 * credentials, and a refusal that quoted the URL as given printed the password on the server's stderr.
 */
export const withoutCredentials = (url: string): string => url.replace(/^([^/]*\/\/)[^@/?#]*@/, '$1***@');
