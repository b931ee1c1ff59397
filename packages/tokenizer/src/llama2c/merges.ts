import { PairTable } from '../bpe/pair-table';

/** run.c starts its best score at -1e10, so a merge scoring at or below it never happens. */
const MIN_SCORE = -1e10;

/**
 * run.c's merges for one llama2.c vocabulary as a pair table, so that the byte-pair merge loop of `bpe/merge.ts`
 * reproduces run.c's loop: run.c repeatedly merges the adjacent pair whose concatenated piece has the highest score
 * (the leftmost among equals) until no adjacent pair concatenates to a piece. Here each pair `(left, right)` whose
 * concatenation is a piece maps to that piece, with a priority that ranks the piece's score (0 for the highest
 * score, equal scores equal ranks), so "lowest priority, leftmost among equals" picks run.c's pair at every step.
 * run.c looks each concatenation up by string; here the pairs are looked up by id.
 *
 * `idOfKey` maps each piece (one char per byte) to its id, the first id when pieces repeat; every id merged must be
 * such an id, as run.c's lookups return.
 */
export function scoredPairTable(
  keys: readonly string[],
  idOfKey: ReadonlyMap<string, number>,
  scores: Float32Array,
): PairTable {
  const rankOf = scoreRanks(idOfKey, scores);
  let splits = 0;
  for (const key of keys) splits += Math.max(0, key.length - 1);
  const pairs = new PairTable(splits);
  for (const [key, merged] of idOfKey) {
    const rank = rankOf.get(merged);
    if (rank === undefined) continue;
    // Every way of cutting the piece in two known pieces is a pair that run.c merges into it.
    for (let cut = 1; cut < key.length; cut++) {
      const left = idOfKey.get(key.slice(0, cut));
      const right = idOfKey.get(key.slice(cut));
      if (left !== undefined && right !== undefined) pairs.add(left, right, rank, merged);
    }
  }
  return pairs;
}

/** The rank of each mergeable piece's score, highest score first (0), equal scores sharing a rank. */
function scoreRanks(idOfKey: ReadonlyMap<string, number>, scores: Float32Array): Map<number, number> {
  const ids = [...idOfKey.values()]
    .filter((id) => scores[id] > MIN_SCORE)
    .sort((a, b) => (scores[a] > scores[b] ? -1 : scores[a] < scores[b] ? 1 : 0));
  const ranks = new Map<number, number>();
  let rank = -1;
  ids.forEach((id, i) => {
    if (i === 0 || scores[id] !== scores[ids[i - 1]]) rank++;
    ranks.set(id, rank);
  });
  return ranks;
}
