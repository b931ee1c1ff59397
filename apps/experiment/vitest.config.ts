import { loomVitest } from '../../vitest.shared';

export default loomVitest;
