import { showShape, sizeOf } from '@loom/tensor';
import { bytesOf } from '../bytes';
import { f32ToBf16Bits, f32ToF16Bits } from '../half';
import type { StoredTensor } from '../tensor';
import { SAFETENSORS_DTYPE_BYTES, type SafetensorsDType, type SafetensorsFloatDType } from './dtype';
import { METADATA_KEY } from './read';

export interface SafetensorsWriteOptions {
  /** Stored in the header's `__metadata__` map. */
  metadata?: Readonly<Record<string, string>>;
  /** How float tensors are stored (default F32); F16 and BF16 round to nearest even. Int tensors stay I32. */
  floatDType?: SafetensorsFloatDType;
}

function encode(tensor: StoredTensor, dtype: SafetensorsDType): Uint8Array {
  const { data } = tensor;
  if (data instanceof Int32Array || dtype === 'F32') return bytesOf(data);
  const bits = new Uint16Array(data.length);
  const narrow = dtype === 'F16' ? f32ToF16Bits : f32ToBf16Bits;
  for (let i = 0; i < data.length; i++) bits[i] = narrow(data[i]);
  return bytesOf(bits);
}

/**
 * Serialises tensors as a safetensors file, in the given order. The JSON header is padded with spaces so that the
 * data begins at a multiple of 8 bytes, as the reference implementation does.
 */
export function serializeSafetensors(
  tensors: readonly StoredTensor[],
  options: SafetensorsWriteOptions = {},
): Uint8Array {
  const floatDType = options.floatDType ?? 'F32';
  const header: Record<string, unknown> = {};
  if (options.metadata !== undefined) header[METADATA_KEY] = { ...options.metadata };
  const seen = new Set<string>();
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const tensor of tensors) {
    if (tensor.name === METADATA_KEY || seen.has(tensor.name)) {
      throw new Error(
        `cannot write tensor "${tensor.name}": ${tensor.name === METADATA_KEY ? 'the name is reserved for metadata' : 'the name appears twice'}; give each tensor a unique name`,
      );
    }
    seen.add(tensor.name);
    if (sizeOf(tensor.shape) !== tensor.data.length) {
      throw new Error(
        `cannot write tensor "${tensor.name}": shape ${showShape(tensor.shape)} holds ${sizeOf(tensor.shape)} elements but its data has ${tensor.data.length}`,
      );
    }
    const dtype: SafetensorsDType = tensor.data instanceof Int32Array ? 'I32' : floatDType;
    const size = tensor.data.length * SAFETENSORS_DTYPE_BYTES[dtype];
    header[tensor.name] = { dtype, shape: [...tensor.shape], data_offsets: [offset, offset + size] };
    chunks.push(encode(tensor, dtype));
    offset += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerBytes = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerBytes + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes), true);
  out.fill(0x20, 8, 8 + headerBytes);
  out.set(json, 8);
  let position = 8 + headerBytes;
  for (const chunk of chunks) {
    out.set(chunk, position);
    position += chunk.length;
  }
  return out;
}
