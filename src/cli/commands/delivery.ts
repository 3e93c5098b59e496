/** `mailbox delivery <messageId>`: the delivery ledger of a message you sent (auditors and admins: any message). */
import type { Command } from 'commander';
import { action, clientFrom, print, printJson, withClientOptions, type ClientOptions } from './clientOptions';
import { deliveryQuerySchema } from '../../commands/schemas';
import { formatDelivery } from './deliveryFormat';
import { checkLimitFlag } from './limitFlag';

export function registerDeliveryCommand(program: Command): void {
  withClientOptions(program.command('delivery <messageId>'))
    .description('per recipient: in view, woken, seen, read, replied, with the count of each (your sends; auditors: any)')
    .option('--after <identity>', 'the recipients after this one (the next page, from the previous output)')
    .option('--limit <n>', 'recipients per page (1-1000, default 100)')
    .action(
      action(
        async (messageId: string, options: ClientOptions & { after?: string; limit?: string }) => {
          checkLimitFlag(options.limit, deliveryQuerySchema.shape.limit, 'mailbox delivery');
          const ledger = await clientFrom(options).getDelivery({
            messageId,
            ...(options.after !== undefined ? { after: options.after } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
          });
          if (options.json) return printJson(ledger);
          print(formatDelivery(ledger));
        },
        { messageId: '<messageId>', after: '--after', limit: '--limit' },
      ),
    );
}
