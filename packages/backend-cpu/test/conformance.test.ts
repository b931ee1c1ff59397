import { describeConformance } from '@loom/conformance';
import { CpuBackend } from '../src/index';

describeConformance('cpu', () => new CpuBackend());
