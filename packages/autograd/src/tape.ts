import type { DataId, Tensor, TensorInfo } from '@loom/tensor';

/**
 * Input gradients of one recorded op, given the gradient of its output and which inputs need
 * one (`needs[i]`); an input that needs none may get undefined, and rules skip its work.
 */
export type BackwardFn = (grad: Tensor, needs: readonly boolean[]) => readonly (Tensor | undefined)[];

/** One recorded op: what it read, what it wrote, and how to send gradients back. */
export interface TapeNode {
  readonly op: string;
  readonly inputs: readonly TensorInfo[];
  readonly output: TensorInfo;
  readonly backward: BackwardFn;
}

/** The ops recorded during one forward pass, in order. */
export class Tape {
  readonly nodes: TapeNode[] = [];
  /** Storage that requires a gradient: watched parameters and outputs of recorded ops. */
  readonly requiresGrad = new Set<DataId>();
  /** Storage the tape reads during backward; its release waits until the tape is done. */
  readonly referenced = new Set<DataId>();
  /** Fresh storage that writeSlice filled with values requiring gradients (e.g. concat). */
  readonly writeTargets = new Set<DataId>();

  record(node: TapeNode): void {
    this.nodes.push(node);
    this.requiresGrad.add(node.output.id);
    for (const input of node.inputs) this.referenced.add(input.id);
    this.referenced.add(node.output.id);
  }

  needsGrad(...inputs: TensorInfo[]): boolean {
    return inputs.some((t) => this.requiresGrad.has(t.id));
  }
}
