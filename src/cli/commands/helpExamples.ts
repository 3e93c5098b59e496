/**
 * An example at the end of each command's --help, the line an operator or an agent's author pastes first. Most commands
 * had none (serve, heartbeat, audit, projections, backup, inbox, watch...): only send, agent add, agent token, task move
 * and mcp did, in their own help text, and they keep it. Keyed by the command's path (`audit verify`).
 */
import type { Command } from 'commander';

export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  serve: [
    'mailbox serve                                          # ./data, http://127.0.0.1:7420',
    'mailbox serve --port 8080 --data-dir /var/lib/mailbox',
    'MAILBOX_REDIS_URL=redis://127.0.0.1:6379 mailbox serve --heartbeat',
  ],
  agent: [
    'mailbox agent add @neo-gpt',
    'mailbox agent list',
    'mailbox agent retire @neo-gpt',
    'mailbox agent token @neo-gpt   # a new token: the old one stops working',
  ],
  'agent list': ['mailbox agent list', 'mailbox agent list --json'],
  'agent retire': ['mailbox agent retire @neo-gpt'],
  inbox: [
    'mailbox inbox --status unread',
    'mailbox inbox --from @neo-gpt --priority high --limit 10',
    'mailbox inbox --outbox --to @neo-gpt',
  ],
  read: [
    'mailbox read <messageId>',
    'mailbox read <messageId> --peek      # show it, leave it unread',
    'mailbox read --all --from @neo-gpt   # mark all you have seen from @neo-gpt read',
  ],
  unarchive: ['mailbox unarchive <messageId> [<messageId>...]'],
  archive: ['mailbox archive <messageId> [<messageId>...]'],
  delivery: ['mailbox delivery <messageId>', 'mailbox delivery <messageId> --json'],
  task: ['mailbox task list --view claimable', 'mailbox task claim <taskId>', 'mailbox task move <taskId> completed'],
  'task list': ['mailbox task list', 'mailbox task list --view sent --state Working,InputRequired'],
  'task show': ['mailbox task show <taskId>', 'mailbox task show <taskId> --json   # the A2A Task object'],
  'task claim': ['mailbox task claim <taskId> --lease 600   # again before it lapses, to renew it'],
  watch: ['mailbox watch', 'mailbox watch --count 1 && mailbox inbox --status unread   # wait for the next wake, then read'],
  heartbeat: [
    'mailbox heartbeat                                      # the daemon, metrics on 127.0.0.1:7421',
    `mailbox heartbeat --idle 5m --cooldown 30m --hook '["/usr/local/bin/notify-agent"]'`,
    'mailbox heartbeat --once --stall-after 30s             # from cron: exit 1 stalled, 3 a nudge failed',
  ],
  audit: ['mailbox audit verify', 'mailbox audit message <messageId>', 'mailbox audit agent @neo-gpt'],
  'audit replay': [
    'mailbox audit replay --type MessageSent,ReceiptRead --json',
    'MAILBOX_AUDIT_TOKEN=<auditor token> mailbox audit replay --url http://127.0.0.1:7420',
  ],
  'audit message': ['mailbox audit message <messageId>'],
  'audit unwoken': ['mailbox audit unwoken --sla 30s'],
  'audit agent': ['mailbox audit agent @neo-gpt --json'],
  'audit verify': ['mailbox audit verify', 'mailbox audit verify --json'],
  projections: ['mailbox projections status', 'mailbox projections rebuild'],
  'projections rebuild': [
    'mailbox projections rebuild',
    'mailbox projections rebuild --keep-previous   # keep the previous generation',
  ],
  'projections status': ['mailbox projections status'],
  'projections drop': ['mailbox projections drop g2   # a generation kept by rebuild --keep-previous'],
  backup: ['mailbox backup /backups/events-$(date +%F).sqlite', 'mailbox backup --json /backups/events.sqlite'],
};

/** Adds its examples to each command of `program` (and their subcommands) that has some. */
export function addHelpExamples(program: Command, path: readonly string[] = []): void {
  for (const command of program.commands) {
    const at = [...path, command.name()];
    const examples = HELP_EXAMPLES[at.join(' ')];
    if (examples)
      command.addHelpText(
        'after',
        `\n${examples.length === 1 ? 'Example' : 'Examples'}:\n${examples.map((line) => `  ${line}`).join('\n')}`,
      );
    addHelpExamples(command, at);
  }
}
