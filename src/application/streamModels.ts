/** How a message's and a task's streams fold into the state the deciders read (shared by every command side). */
import { foldMessage, initialMessageState, type MessageState } from '../commands/message';
import { foldTask, initialTaskLog, type TaskLog } from '../commands/tasks/taskState';
import type { MessageEvent, TaskEvent } from '../events/types';
import type { StreamModel } from './streamLoader';

export const messageModel: StreamModel<MessageState, MessageEvent> = { initial: initialMessageState, fold: foldMessage };
export const taskModel: StreamModel<TaskLog, TaskEvent> = { initial: initialTaskLog, fold: foldTask };
