/** Throws unless `id` is an integer in `[0, vocabSize)`; `context` names the caller (`decode`). */
export function checkId(id: number, vocabSize: number, context: string): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new Error(
      `${context}: id ${id} is out of range for vocabulary size ${vocabSize}; expected an integer in [0, ${vocabSize - 1}]`,
    );
  }
}
