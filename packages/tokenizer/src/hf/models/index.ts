import { readObject } from '../../formats/json-read';
import { readType } from '../component-type';
import { type BpeModelJson, compileBpe } from './bpe';
import type { HfModel } from './model';
import { compileUnigram, type UnigramModelJson } from './unigram';
import { compileWordPiece, type WordPieceModelJson } from './wordpiece';

/** The `model` shapes of tokenizer.json that Loom implements. */
export type ModelJson = BpeModelJson | WordPieceModelJson | UnigramModelJson;

const TYPES = ['BPE', 'WordPiece', 'Unigram'] as const satisfies readonly ModelJson['type'][];

/** Compiles the `model` of a tokenizer.json; vocabulary ids must be at most `maxId`. */
export function compileModel(value: unknown, source: string, maxId: number): HfModel {
  const json = readObject(value, source, 'model');
  // Older BPE files leave out the type.
  const type = json.type === undefined && 'merges' in json ? 'BPE' : readType(json, TYPES, source, 'model');
  switch (type) {
    case 'BPE':
      return compileBpe(json, source, 'model', maxId);
    case 'WordPiece':
      return compileWordPiece(json, source, 'model', maxId);
    case 'Unigram':
      return compileUnigram(json, source, 'model');
  }
}
