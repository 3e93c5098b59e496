/** `mailbox agent add|list|retire|token` (admin token for add, retire and token). */
import { Option, type Command } from 'commander';
import {
  action,
  adminTokenFallback,
  asAdmin,
  clientFrom,
  print,
  printJson,
  printWarnings,
  withClientOptions,
  type ClientOptions,
} from './clientOptions';
import { formatAgents } from './format';

/**
 * Where an admin command finds the admin token (clientOptions.ts asAdmin), said in each one's --help: only `agent add`
 * said it, and as ./data/admin.token, while MAILBOX_DATA_DIR moves it (a server on /var/lib/mailbox keeps it there).
 */
export const ADMIN_TOKEN_SOURCES =
  '\nThe admin token comes from --token, MAILBOX_TOKEN, MAILBOX_ADMIN_TOKEN, MAILBOX_ADMIN_TOKEN_FILE or the ' +
  "server's\n$MAILBOX_DATA_DIR/admin.token (./data/admin.token by default: run it on the server's machine, from its directory).";

/** The argument a refusal of `identity` names (flagTerms.ts): `mailbox agent add: '<identity>' must be an identity`. */
const IDENTITY_ARGUMENT = { identity: '<identity>' };

/**
 * Other tools' words for agent's subcommands, by the one meant. Commander suggests by edit distance only, and told
 * `mailbox agent rotate @a` (the event is AgentTokenRotated, the library's call rotateToken) "Did you mean retire?":
 * a retirement is for good (the identity can never be registered again), a new token is `token`.
 */
const MEANT_SUBCOMMANDS: ReadonlyArray<{ words: readonly string[]; say: string }> = [
  {
    words: ['rotate', 'rotate-token', 'new-token', 'reissue', 'regenerate', 'reset', 'reset-token', 'renew'],
    say: 'Did you mean token? mailbox agent token <identity> gives the agent a new token; retire ends the agent for good',
  },
  { words: ['register', 'create', 'new'], say: 'Did you mean add?' },
];

/** Says the subcommand meant (MEANT_SUBCOMMANDS) in place of commander's near-miss suggestion. */
function suggestMeantSubcommand(agent: Command): void {
  const error = agent.error.bind(agent);
  agent.error = (message, options) => {
    const word = /^error: unknown command '([^']*)'/.exec(message)?.[1];
    const meant = MEANT_SUBCOMMANDS.find(({ words }) => words.includes(word?.toLowerCase() ?? ''));
    if (options?.code !== 'commander.unknownCommand' || meant === undefined) return error(message, options);
    return error(`error: unknown command '${word}'\n(${meant.say})`, options);
  };
}

export function registerAgentCommands(program: Command): void {
  const agent = program.command('agent').description('register, list and retire agents, and issue one a new token');
  suggestMeantSubcommand(agent);

  withClientOptions(agent.command('add <identity>'))
    .description('register an agent (admin); prints its token once')
    .addOption(
      new Option('--role <role>', 'agent, or auditor (reads everything, writes nothing)')
        .choices(['agent', 'auditor'])
        .default('agent'),
    )
    .addHelpText('after', `${ADMIN_TOKEN_SOURCES}\nExample: mailbox agent add @neo-gpt`)
    .action(
      action(async (identity: string, options: ClientOptions & { role: 'agent' | 'auditor' }, command: Command) => {
        const registration = await asAdmin(options, command, (client) => client.registerAgent(identity, options.role));
        if (options.json) return printJson(registration);
        print(
          `Registered ${registration.identity} (${registration.role}) at ${registration.registeredAt}.\n` +
            `Token (shown only now; give it to the agent as MAILBOX_TOKEN):\n  ${registration.token}`,
        );
        printWarnings(registration);
      }, IDENTITY_ARGUMENT),
    );

  withClientOptions(agent.command('list'))
    .description('list registered agents')
    .action(
      action(async (options: ClientOptions) => {
        const { agents } = await clientFrom(options, options.token || adminTokenFallback()).listAgents();
        if (options.json) return printJson({ agents });
        print(formatAgents(agents));
      }),
    );

  withClientOptions(agent.command('retire <identity>'))
    .description(
      'retire an agent (admin): its token stops working, later broadcasts skip it, the AGENT:* and list tasks it holds ' +
        'unfinished go back to their audiences (claimable again), and the tasks it sent that have not ended are canceled ' +
        '(reason "sender retired"); a task sent directly to it stays as it is',
    )
    .addHelpText('after', ADMIN_TOKEN_SOURCES)
    .action(
      action(async (identity: string, options: ClientOptions, command: Command) => {
        const retired = await asAdmin(options, command, (client) => client.retireAgent(identity));
        if (options.json) return printJson(retired);
        if (retired.changed === false) print(`${retired.identity} was already retired at ${retired.retiredAt}; nothing changed.`);
        else print(`Retired ${retired.identity} at ${retired.retiredAt}.`);
        const released = retired.releasedTasks ?? [];
        if (released.length) print(`Returned ${released.length} task(s) it held to their audiences: ${released.join(', ')}.`);
        const canceled = retired.canceledTasks ?? [];
        if (canceled.length)
          print(`Canceled ${canceled.length} task(s) it sent (reason "sender retired"): ${canceled.join(', ')}.`);
        printWarnings(retired);
      }, IDENTITY_ARGUMENT),
    );

  withClientOptions(agent.command('token <identity>'))
    .description('issue an agent a new token (admin), e.g. when it was lost or leaked: the old token stops working at once')
    .addHelpText('after', `${ADMIN_TOKEN_SOURCES}\nExample: mailbox agent token @neo-gpt`)
    .action(
      action(async (identity: string, options: ClientOptions, command: Command) => {
        const rotated = await asAdmin(options, command, (client) => client.rotateToken(identity));
        if (options.json) return printJson(rotated);
        print(
          `New token for ${rotated.identity} at ${rotated.rotatedAt}; the old one no longer works.\n` +
            `Token (shown only now; give it to the agent as MAILBOX_TOKEN):\n  ${rotated.token}`,
        );
        printWarnings(rotated);
      }, IDENTITY_ARGUMENT),
    );
}
