/**
 * A message id is a UUID (as a send returns it); upper and lower case name the same message, so ids are lower-cased
 * at the edge, before anything compares them. A thread id of this form is held to the same case (events/threadIdCase.ts).
 */
import { z } from 'zod';

export const messageId = (onArray = 'must be one message id, a UUID string, as returned by a send') =>
  z
    .uuid({ error: (issue) => (Array.isArray(issue.input) ? onArray : 'must be a message id: a UUID, as returned by a send') })
    .toLowerCase();
export const messageIdSchema = messageId();
