/**
 * An unknown option that is the start of a real one (`mailbox send --prio high`: --priority) or a word other tools use
 * for one (`--sender` for --from, `--unread` for --status unread, `--recipient` for send's recipients) was told
 * "unknown option '--prio'" and no more: commander suggests only near misses by edit distance, and for `inbox --unread`
 * it suggested --thread. Such an error now names the option meant, in commander's words ("(Did you mean --priority?)"),
 * or says where the value goes when it is an argument (send's recipients, subject and body). Commander's own near-miss
 * suggestion stays for the rest. The exit code is the command's usage-error code, as before (usageExitCode.ts).
 */
import type { Command } from 'commander';

/** Lower case, without the dashes, `_` and `=value`: `--Thread_Id=x` is `threadid`. */
const bare = (flag: string): string => flag.split('=')[0].replace(/^-+/, '').toLowerCase().replace(/[-_]/g, '');

/**
 * Words for an option, by the option they mean (offered only where the command has it, and, with `commands`, only for
 * those commands: `--after` is replay's --from position, not inbox's sender). `say`: what to write, when more than the
 * option's name (`--status unread`).
 */
const SYNONYMS: ReadonlyArray<{ words: readonly string[]; option: string; say?: string; commands?: readonly string[] }> = [
  { words: ['sender', 'author'], option: '--from', commands: ['inbox', 'read'] },
  { words: ['after', 'position', 'start', 'offset'], option: '--from', commands: ['replay'] },
  { words: ['recipient', 'recipients'], option: '--to' },
  { words: ['unread'], option: '--status', say: '--status unread' },
  { words: ['archived'], option: '--status', say: '--status archived' },
  { words: ['read'], option: '--status', say: '--status read' },
  { words: ['all'], option: '--status', say: '--status all' },
  { words: ['markall', 'allread', 'markread'], option: '--all' },
  { words: ['state'], option: '--status' },
  { words: ['status', 'states'], option: '--state' },
  { words: ['label', 'labels'], option: '--tag' },
  { words: ['inreplyto', 'reply', 'parent'], option: '--reply-to' },
  { words: ['nowake', 'suppresswake', 'nowakeup', 'silent'], option: '--wake-suppressed' },
  { words: ['deadline', 'replyby', 'due', 'dueby'], option: '--expects-reply-by' },
  { words: ['key', 'dedupe', 'dedupekey', 'dedup'], option: '--idempotency-key' },
  { words: ['server', 'endpoint', 'baseurl', 'host', 'address', 'addr'], option: '--url' },
  { words: ['n', 'max', 'pagesize', 'size', 'count'], option: '--limit' },
  { words: ['n', 'max', 'limit'], option: '--count' },
  { words: ['page', 'next', 'nextcursor'], option: '--cursor' },
  { words: ['unseen', 'seen'], option: '--include-unseen' },
  { words: ['until', 'olderthan'], option: '--before' },
  { words: ['dir', 'datadirectory', 'data'], option: '--data-dir' },
];

/** send takes its recipients, subject and body as arguments: where each goes. */
const SEND_ARGUMENTS: ReadonlyArray<{ words: readonly string[]; say: string }> = [
  {
    words: ['to', 'recipient', 'recipients', 'rcpt'],
    say: 'the recipients are the first arguments, not an option: mailbox send @b @c "subject" "body"',
  },
  { words: ['subject', 'title'], say: 'the subject is the argument after the recipients: mailbox send @b "subject" "body"' },
  {
    words: ['body', 'message', 'text', 'content', 'msg'],
    say: 'the body is the argument after the subject (\'-\' reads stdin): mailbox send @b "subject" "body", or --body-file <file>',
  },
];

/** The long options `command` takes (its --help's). */
const longOptions = (command: Command): string[] =>
  command
    .createHelp()
    .visibleOptions(command)
    .map((option) => option.long)
    .filter((long): long is string => long !== undefined);

/**
 * What the unknown `flag` likely meant on `command`, as the line to add, or undefined (commander's own suggestion, if
 * any, is said then).
 */
export function meantOption(command: Command, flag: string): string | undefined {
  const word = bare(flag);
  if (word === '') return undefined;
  if (command.name() === 'send') {
    const argument = SEND_ARGUMENTS.find(({ words }) => words.includes(word));
    if (argument) return `(${argument.say})`;
  }
  const options = longOptions(command);
  const synonym = SYNONYMS.find(
    ({ words, option, commands }) =>
      words.includes(word) && options.includes(option) && (commands === undefined || commands.includes(command.name())),
  );
  if (synonym) return `(Did you mean ${synonym.say ?? synonym.option}?)`;
  if (!flag.startsWith('--')) return undefined;
  // The start of one (`--prio`, `--idem`: every option it starts, up to three) or one with a suffix (`--thread-id`,
  // `--threadId`, `--tags`: the longest, so that `--token-file` is --token's and not --to's).
  const starts = word.length >= 3 ? options.filter((option) => bare(option).startsWith(word)) : [];
  if (starts.length > 0 && starts.length <= 3) return `(Did you mean ${starts.join(' or ')}?)`;
  const written = flag.split('=')[0].replace(/^-+/, '');
  const extended = options
    .filter((option) => withSuffix(written, option.replace(/^-+/, '')))
    .sort((a, b) => b.length - a.length)[0];
  return extended === undefined ? undefined : `(Did you mean ${extended}?)`;
}

/** `written` is `option` with a suffix: after a `-` or `_` (thread-id), a capital (threadId), or s, es, id or ids. */
function withSuffix(written: string, option: string): boolean {
  if (written.length <= option.length || written.slice(0, option.length).toLowerCase() !== option) return false;
  const rest = written.slice(option.length);
  return /^[-_A-Z]/.test(rest) || ['s', 'es', 'id', 'ids'].includes(rest);
}

/** Makes every command under `program` (not the program itself: optionBeforeCommand.ts) say the option meant. */
export function suggestMeantOptions(program: Command): Command {
  const walk = (command: Command) => {
    for (const subcommand of command.commands) {
      // Commander's typings leave unknownOption out; it is the hook its parser calls (lib/command.js).
      const hooked = subcommand as unknown as { unknownOption(flag: string): void };
      const unknownOption = hooked.unknownOption.bind(subcommand);
      hooked.unknownOption = (flag: string) => {
        const meant = meantOption(subcommand, flag);
        if (meant === undefined) return unknownOption(flag);
        subcommand.error(`error: unknown option '${flag}'\n${meant}`, { code: 'commander.unknownOption' });
      };
      walk(subcommand);
    }
  };
  walk(program);
  return program;
}
