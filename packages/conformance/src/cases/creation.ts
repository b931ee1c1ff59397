import { arange, full, rand, randn } from '@loom/tensor';
import type { OpGroup } from '../case';
import { ELEMENTWISE, EXACT } from '../tolerance';

export const creationGroups: OpGroup[] = [
  {
    op: 'fill',
    cases: [
      {
        name: 'fill f32 [3, 65] with -2.5',
        inputs: [],
        run: (_, backend) => full([3, 65], -2.5, { backend }),
        tol: EXACT,
      },
      {
        name: 'fill i32 [1000] with 7',
        inputs: [],
        run: (_, backend) => full([1000], 7, { backend, dtype: 'i32' }),
        tol: EXACT,
      },
      // Zeros a backend allocates at their first use (here, the read).
      {
        name: 'fill f32 [3, 65] with 0',
        inputs: [],
        run: (_, backend) => full([3, 65], 0, { backend }),
        tol: EXACT,
      },
      {
        name: 'fill i32 [1000] with 0',
        inputs: [],
        run: (_, backend) => full([1000], 0, { backend, dtype: 'i32' }),
        tol: EXACT,
      },
    ],
  },
  {
    op: 'arange',
    cases: [
      {
        name: 'arange f32 257 from -3 by 0.5',
        inputs: [],
        run: (_, backend) => arange(257, -3, 0.5, { backend }),
        tol: ELEMENTWISE,
      },
      {
        name: 'arange i32 1000 from 5 by -2',
        inputs: [],
        run: (_, backend) => arange(1000, 5, -2, { backend, dtype: 'i32' }),
        tol: EXACT,
      },
    ],
  },
  {
    op: 'rand',
    cases: [1, 65, 4099].map((n) => ({
      name: `rand [${n}] seed 42 is the same on every backend`,
      inputs: [],
      run: (_, backend) => rand([n], { seed: 42, backend }),
      tol: EXACT,
    })),
  },
  {
    op: 'randn',
    cases: [1, 64, 10_001].map((n) => ({
      name: `randn [${n}] seed 7 is the same on every backend`,
      inputs: [],
      run: (_, backend) => randn([n], { seed: 7, backend }),
      tol: { atol: 1e-5, rtol: 1e-5 },
    })),
  },
];
