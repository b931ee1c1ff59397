import { AutodiffBackend } from '@loom/autograd';
import { CpuBackend } from '@loom/backend-cpu';
import { setBackend } from '@loom/tensor';

/** Makes the default backend the CPU one with gradients recorded (every experiment trains on it). */
export function useTrainingBackend(): void {
  setBackend(new AutodiffBackend(new CpuBackend()));
}
