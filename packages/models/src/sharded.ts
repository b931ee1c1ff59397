import { basename, join } from 'node:path';
import { readObject, readString } from '@loom/tokenizer';
import { withFileSource } from './file-source';
import { checkFiniteWeights } from './finite';
import { parseHfConfig } from './hf/config';
import { fromHfTensors } from './hf/names';
import { readJsonFile } from './json-file';
import type { LoadedModel } from './parse-model';
import { readSafetensors } from './safetensors/read';
import type { StoredTensor } from './tensor';

/** The index of a sharded Hugging Face checkpoint: which shard file holds each tensor. */
export const SHARD_INDEX = 'model.safetensors.index.json';

/** Each shard's name and the tensors the index says it holds, in the order the shards are first named. */
function readWeightMap(indexPath: string): Map<string, Set<string>> {
  const index = readObject(readJsonFile(indexPath, 'a sharded checkpoint index'), indexPath, '(top level)');
  const weightMap = readObject(index.weight_map, indexPath, 'weight_map');
  const shards = new Map<string, Set<string>>();
  for (const [tensor, value] of Object.entries(weightMap)) {
    const shard = readString(value, indexPath, `weight_map["${tensor}"]`);
    // A shard is a file beside the index: a bare name, so that the index cannot point anywhere else.
    if (shard !== basename(shard) || shard === '.' || shard === '..' || !shard.endsWith('.safetensors')) {
      throw new Error(
        `${indexPath}: key "weight_map["${tensor}"]" is ${JSON.stringify(shard)}; expected the name of a .safetensors file beside the index`,
      );
    }
    let names = shards.get(shard);
    if (names === undefined) {
      names = new Set();
      shards.set(shard, names);
    }
    names.add(tensor);
  }
  if (shards.size === 0) throw new Error(`${indexPath}: key "weight_map" lists no tensors`);
  return shards;
}

/**
 * Loads a sharded Hugging Face safetensors checkpoint (`model.safetensors.index.json`, its shards and config.json
 * in `dir`): each shard is read by position like a single file, and must hold exactly the tensors the index gives
 * it — none missing, none extra, none in two shards — before the tensors are checked against the config.
 */
export function loadShardedSafetensors(dir: string): LoadedModel {
  const indexPath = join(dir, SHARD_INDEX);
  const config = parseHfConfig(
    readJsonFile(join(dir, 'config.json'), 'a model config.json'),
    join(dir, 'config.json'),
  );
  const tensors: StoredTensor[] = [];
  const seen = new Map<string, string>();
  for (const [shard, expected] of readWeightMap(indexPath)) {
    const path = join(dir, shard);
    const contents = withFileSource(path, `a shard listed in ${indexPath}`, (file) => readSafetensors(file));
    for (const tensor of contents.tensors) {
      const other = seen.get(tensor.name);
      if (other !== undefined) {
        throw new Error(
          `${path}: tensor "${tensor.name}" is also in ${other}; each tensor belongs to one shard`,
        );
      }
      if (!expected.has(tensor.name)) {
        throw new Error(
          `${path}: holds tensor "${tensor.name}", which ${indexPath} does not place in this shard`,
        );
      }
      seen.set(tensor.name, shard);
      tensors.push(tensor);
    }
    const missing = [...expected].filter((name) => !seen.has(name));
    if (missing.length > 0) {
      throw new Error(`${path}: lacks ${missing.slice(0, 6).join(', ')}, which ${indexPath} places in it`);
    }
  }
  const loaded: LoadedModel = { format: 'hf', config, tensors: fromHfTensors(config, tensors, indexPath) };
  checkFiniteWeights(loaded.tensors, indexPath);
  return loaded;
}
