/**
 * The version of the read model's rules: what a log's views hold. Bump it with every change to the rules
 * (evolve.ts, ledgerRules.ts, taskRules.ts, and the Redis apply script that equals them) that makes the same log
 * fold to other views. Views that record another version were built by other rules: a store that keeps its views
 * across upgrades (Redis) has them rebuilt from the log, beside the ones served, when a mailbox of this version
 * starts on them (src/application/olderRules.ts). The SQLite views file has its own schema version, which covers
 * its rules too (sqliteViewsSchema.ts: a file of another schema is rebuilt at open).
 *
 * test/unit/readModel/readModelVersion.unit.test.ts folds a fixed log with the rules and compares a digest of the views: a change
 * to the rules fails it until this version (and the digest there) is moved on.
 */
export const READ_MODEL_VERSION = '9';
// 9: a task the mailbox expired at its deadline is dated at the deadline (updatedAt, and tasksWaitingSince's time), and
//    one whose lease lapsed at the lease's end (updatedAt), as get_task and every read before the sweep say, not at the
//    sweep's time: Redis views of 8 are rebuilt.
// 8: the id of each task event that made a line in its task's history names that task (taskOfHistoryLine), for
//    get_message and get_task given such an id on EventStoreDB: Redis views of 7 have none, so they are rebuilt.
// 7: each identity's heartbeat counts keep tasksWaitingSince, the last change that made a task begin waiting on it
//    (position, time, task; none while no task waits): Redis views of 6 have none, so they are rebuilt.
// 6: only the recipients due a wake at the send count toward clearing an unwoken message by seeing or reading it (the
//    others are marked wakeNotDue): mail to [@c, @ghost] that @c read is no longer unwoken.
// 5: a ledger expects a wake only when some recipient (not a broadcast's sender) is a registered agent, not retired,
//    at the send: mail to an identity nobody registered (or retired) is not unwoken.
// 4: a thread id of a message id's form is held in lower case (an older log's, stored as typed, was unfilterable).
// 3: a message every recipient saw or read is no longer unwoken (ledgers count the recipients that saw or read it).
// 2: a list's task is not a broadcast (isBroadcast for AGENT:* only); a paused task shows no lease; lapsedClaimant
//    shows only while the lapse stands. Redis views began to record their version here: views without one are of 1.
// 1: (unrecorded) the rules before.
