import type { HalfWeight, ProductWeight, QuantizedWeight, Tensor } from '@loom/tensor';

/**
 * A layer's optional compact copy (quantized blocks or 16-bit halves) of its f32 weight parameter, which its kernels
 * read in the parameter's place: owned (freed when replaced or disposed), checked against the parameter's shape when
 * set, and able to free the parameter for inference. `layer` names the layer's class in errors.
 */
export class CompactCopy {
  #copy: QuantizedWeight | HalfWeight | undefined = undefined;

  constructor(
    private readonly layer: string,
    private readonly param: Tensor,
  ) {}

  /** The compact copy, if any. */
  get copy(): QuantizedWeight | HalfWeight | undefined {
    return this.#copy;
  }

  /** The weight the kernels read: the compact copy where there is one, else the f32 parameter. */
  get read(): ProductWeight {
    return this.#copy ?? this.param;
  }

  /** Takes `w` (the parameter's shape) as the copy, freeing the one it replaces. */
  use(w: QuantizedWeight | HalfWeight): void {
    const [rows, cols] = w.shape;
    const [paramRows, paramCols] = this.param.shape;
    if (rows !== paramRows || cols !== paramCols) {
      throw new Error(
        `${this.layer}.useQuantized: weight [${rows}, ${cols}] does not match the layer's [${paramRows}, ${paramCols}]`,
      );
    }
    this.#copy?.dispose();
    this.#copy = w;
  }

  /** Frees the f32 parameter, which keeps its name and shape, disposed; throws when there is no copy to read instead. */
  releaseParam(): void {
    if (this.#copy === undefined) {
      throw new Error(
        `${this.layer}.releaseWeight: the layer [${this.param.shape.join(', ')}] has no quantized weight to read instead; call useQuantized first`,
      );
    }
    this.param.dispose();
  }

  dispose(): void {
    this.#copy?.dispose();
    this.#copy = undefined;
  }
}
