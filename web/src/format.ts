/** How times read in the console: local clock time, and ages as "3m 20s". */
export const clock = (iso: string | null): string => (iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : '–');

export function age(iso: string | null, now = Date.now()): string {
  if (!iso) return '–';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86400)}d`;
}
