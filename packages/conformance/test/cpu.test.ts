import { CpuBackend } from '@loom/backend-cpu';
import { describeConformance } from '../src/index';

describeConformance('cpu', () => new CpuBackend());
