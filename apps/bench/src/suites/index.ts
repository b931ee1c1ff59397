import type { Suite } from '../suite';
import { attentionSuite } from './attention';
import { generateSuite } from './generate';
import { matmulSuite } from './matmul';
import { memorySuite } from './memory';
import { ropeScalingSuite } from './rope-scaling';
import { serveSuite } from './serve';
import { tokenizerSuite } from './tokenizer';
import { trainSuite } from './train';

/** Every benchmark suite, by the name given on the command line. */
export const suites: readonly Suite[] = [
  tokenizerSuite,
  matmulSuite,
  generateSuite,
  memorySuite,
  trainSuite,
  serveSuite,
  ropeScalingSuite,
  attentionSuite,
];
