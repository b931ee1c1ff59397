export { MambaBlock } from './block';
export {
  innerDim,
  type MambaConfig,
  type MambaConfigInput,
  makeMambaConfig,
  mambaConfigProblems,
  mambaParameterCount,
  validateMambaConfig,
} from './config';
export { causalConv } from './conv';
export { MambaMixer } from './mixer';
export { MambaLM, type MambaModelOptions } from './model';
export { scanFrom } from './scan-state';
export { type MambaLayerState, MambaState } from './state';
