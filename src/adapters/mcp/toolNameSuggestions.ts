/**
 * The tool a model most likely meant when it called one that is not (DESIGN section 2, layer 3: suggest, never
 * substitute): names models guess for the mailbox's tools (send_message, get_inbox, mark_as_read...), near spellings
 * (list_message), and a real tool's name behind a prefix a host added (mailbox__add_message). The call is refused
 * all the same: a guessed name is never run as the tool suggested.
 */
import { editDistance } from '../../commands/suggestions';

/** `send_message`, `sendMessage` and `send-message` are the same word to whoever typed it. */
const squash = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

const COMMON: ReadonlyArray<[string, readonly string[]]> = [
  [
    'add_message',
    ['send', 'send_message', 'send_mail', 'post_message', 'create_message', 'write_message', 'message', 'reply', 'broadcast'],
  ],
  [
    'list_messages',
    [
      'read_messages',
      'get_messages',
      'get_inbox',
      'inbox',
      'check_inbox',
      'read_inbox',
      'list_inbox',
      'fetch_messages',
      'check_messages',
      'receive',
    ],
  ],
  ['get_message', ['read_message', 'read', 'open_message', 'fetch_message', 'show_message']],
  ['mark_read', ['mark_as_read', 'mark_message_read', 'mark_messages_read', 'ack', 'acknowledge']],
  ['archive_message', ['archive', 'delete_message', 'delete']],
  ['unarchive_message', ['unarchive', 'restore_message']],
  ['list_agents', ['agents', 'get_agents', 'list_users', 'who']],
  ['unread_count', ['unread', 'count_unread', 'get_unread_count', 'unread_messages']],
  ['get_delivery', ['delivery', 'receipts', 'get_receipts', 'read_receipts']],
  ['claim_task', ['claim', 'take_task', 'accept_task']],
  [
    'update_task',
    ['complete_task', 'finish_task', 'transition_task', 'move_task', 'reject_task', 'cancel_task', 'fail_task', 'task_status'],
  ],
  ['list_tasks', ['tasks', 'get_tasks', 'my_tasks']],
  ['get_task', ['read_task', 'show_task', 'task']],
];

const MEANT = new Map(COMMON.flatMap(([tool, names]) => names.map((name) => [squash(name), tool] as const)));

const MAX_SUGGESTIONS = 2;

/** The tools `name` most likely meant, the likeliest first; none when nothing is near. */
export function toolsMeant(name: string, tools: readonly string[]): string[] {
  const found: string[] = [];
  const add = (tool: string | undefined) => {
    if (tool !== undefined && tools.includes(tool) && !found.includes(tool)) found.push(tool);
  };
  add(tools.find((tool) => name.split(/__|[./:]/).at(-1) === tool)); // mailbox__add_message, functions.add_message
  const typed = squash(name);
  add(tools.find((tool) => squash(tool) === typed)); // markRead, list-messages
  add(MEANT.get(typed));
  const budget = Math.max(1, Math.floor(typed.length / 5));
  tools
    .map((tool) => ({ tool, distance: editDistance(typed, squash(tool)) }))
    .filter(({ distance }) => distance <= budget)
    .sort((a, b) => a.distance - b.distance)
    .forEach(({ tool }) => add(tool));
  return found.slice(0, MAX_SUGGESTIONS);
}
