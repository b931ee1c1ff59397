/** A sampler or stopping setting outside its valid range; `field` names the setting. */
export class SamplerConfigError extends Error {
  override readonly name = 'SamplerConfigError';

  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}
