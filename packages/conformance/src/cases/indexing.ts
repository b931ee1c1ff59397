import { gather, scatterAdd, type Tensor } from '@loom/tensor';
import type { OpGroup } from '../case';
import { EXACT, REDUCTION } from '../tolerance';

export const indexingGroups: OpGroup[] = [
  {
    op: 'gather',
    cases: [
      { table: [10, 4], ids: [6], high: 9 },
      { table: [512, 64], ids: [2, 3], high: 511 },
      { table: [32_000, 288], ids: [5], high: 31_999 },
      { table: [7], ids: [20], high: 6 },
      { table: [5, 3, 2], ids: [4], high: 4 },
      { table: [6, 65], ids: [9], high: 8 },
    ].map(({ table, ids, high }) => ({
      name: `gather [${table.join(', ')}] by ids [${ids.join(', ')}] in [${high >= table[0] ? -1 : 0}, ${high}]`,
      inputs: [
        { shape: table },
        { shape: ids, dist: { kind: 'ints', low: high >= table[0] ? -1 : 0, high } as const },
      ],
      run: ([t, i]: Tensor[]) => gather(t, i),
      tol: EXACT,
    })),
  },
  {
    op: 'scatterAdd',
    cases: [
      { src: [6, 4], ids: [6], rows: 3 },
      { src: [2, 50, 64], ids: [2, 50], rows: 17 },
      { src: [300, 7], ids: [300], rows: 5 },
      { src: [9, 65], ids: [9], rows: 8 },
    ].map(({ src, ids, rows }) => ({
      name: `scatterAdd [${src.join(', ')}] into ${rows} rows (repeated and out-of-range ids)`,
      inputs: [{ shape: src }, { shape: ids, dist: { kind: 'ints', low: -1, high: rows } as const }],
      run: ([s, i]: Tensor[]) => scatterAdd(s, i, rows),
      tol: REDUCTION,
    })),
  },
];
