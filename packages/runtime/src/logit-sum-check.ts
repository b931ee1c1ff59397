/**
 * Throws when `sum`, the sum of a row of logits, is NaN or +Infinity, which it is whenever a logit is: the check a
 * caller that reads back only the argmax makes instead of reading the row (one more float). `context` names the
 * caller in the message.
 */
export function checkLogitSum(sum: number, context: string): void {
  if (Number.isNaN(sum) || sum === Number.POSITIVE_INFINITY) {
    throw new Error(
      `${context}: the logits hold NaN or +Infinity (their sum is ${sum}); the model produced an invalid value — its weights or a kernel are broken`,
    );
  }
}
