import type { OpGroup } from './case';
import { creationGroups } from './cases/creation';
import { binaryGroups, castGroup, compareGroups, unaryGroups, whereGroup } from './cases/elementwise';
import { fusedGroups } from './cases/fused';
import { indexingGroups } from './cases/indexing';
import { matmulGroup } from './cases/matmul';
import { movementGroups } from './cases/movement';
import { reduceGroups } from './cases/reduce';

/** Every op group of the kit, in the order the suite runs them. */
export const allGroups: readonly OpGroup[] = [
  ...creationGroups,
  ...unaryGroups,
  ...binaryGroups,
  ...compareGroups,
  whereGroup,
  castGroup,
  ...reduceGroups,
  matmulGroup,
  ...movementGroups,
  ...indexingGroups,
  ...fusedGroups,
];
