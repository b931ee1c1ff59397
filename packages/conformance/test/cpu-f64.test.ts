import { CpuBackend } from '@loom/backend-cpu';
import { describeConformance } from '../src/index';

describeConformance('cpu f64', () => new CpuBackend({ precision: 'f64' }));
