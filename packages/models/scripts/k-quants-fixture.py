#!/usr/bin/env python3
"""Regenerates test/fixtures/k-quants.json: Q4_K and Q6_K blocks written by llama.cpp's own reference quantizer.

It loads ggml's base library from the npm package node-llama-cpp (its prebuilt llama.cpp, nothing built from
source) with ctypes and calls quantize_row_q{4,6}_K_ref and dequantize_row_q{4,6}_K on a few super-blocks of
chosen values (typical weights, outliers, all zero, constant, one-signed, values below ggml's zero threshold).

    npm i --prefix /tmp/nlc node-llama-cpp@3.22.1
    python3 packages/models/scripts/k-quants-fixture.py /tmp/nlc > packages/models/test/fixtures/k-quants.json

The test (test/k-quants.test.ts) then needs neither node-llama-cpp nor Python.
"""
import base64
import ctypes
import json
import sys

import numpy as np

K = 256
prefix = sys.argv[1] if len(sys.argv) > 1 else '/tmp/nlc'
lib = ctypes.CDLL(f'{prefix}/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so')

rng = np.random.default_rng(16)
blocks = [
    rng.normal(0, 0.02, K),                      # a typical weight row
    rng.uniform(-1, 1, K),
    np.zeros(K),                                 # all zero
    np.full(K, 0.5),                             # constant
    np.where(rng.uniform(size=K) < 0.02, 8.0, 1.0) * rng.normal(0, 0.05, K),  # outliers
    np.abs(rng.normal(0, 1, K)),                 # all positive (the Q4_K min clamps to 0)
    -np.abs(rng.normal(0, 1, K)),                # all negative
    rng.normal(0, 1e-17, K),                     # below ggml's GROUP_MAX_EPS
]
x = np.concatenate(blocks).astype(np.float32)
n = x.size


def call(quantize, dequantize, block_bytes):
    out = ctypes.create_string_buffer(n // K * block_bytes)
    getattr(lib, quantize)(x.ctypes.data_as(ctypes.c_void_p), out, ctypes.c_int64(n))
    y = np.zeros(n, dtype=np.float32)
    getattr(lib, dequantize)(out, y.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(n))
    return bytes(out.raw), y


b64 = lambda b: base64.b64encode(b).decode()
q4, y4 = call('quantize_row_q4_K_ref', 'dequantize_row_q4_K', 144)
q6, y6 = call('quantize_row_q6_K_ref', 'dequantize_row_q6_K', 210)
json.dump({
    'about': 'llama.cpp (libggml-base.so of node-llama-cpp@3.22.1, llama.cpp v0.5.0) quantize_row_q4_K_ref / '
             'quantize_row_q6_K_ref and dequantize_row_* on float32 input; regenerate with '
             'packages/models/scripts/k-quants-fixture.py',
    'input_f32': b64(x.tobytes()),
    'Q4_K': {'blocks': b64(q4), 'dequantized_f32': b64(y4.tobytes())},
    'Q6_K': {'blocks': b64(q6), 'dequantized_f32': b64(y6.tobytes())},
}, sys.stdout, indent=2)
sys.stdout.write('\n')
