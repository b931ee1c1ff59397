#!/usr/bin/env node
// Plants small, realistic bugs in copies of the CPU backend's kernels and asserts that the
// conformance kit fails for each: a kit that cannot fail checks nothing. The repository's work
// tree (without .git and node_modules) is copied to a scratch folder and installed there from
// pnpm's store (offline); each mutation edits that copy, runs the conformance groups it
// targets on the CPU backend (f32, WebAssembly SIMD, and f64, JavaScript), and is undone.
// Prints which case caught which mutation; exits 1 if a mutation survives, the unmutated
// baseline fails, or a mutation's target text is no longer in the source (so this cannot rot).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The wide register tiles (the packed product's 6-row panels) whatever the engine: Node 20's V8, which spills them,
 * builds the narrow ones unless told.
 */
const WIDE_TILES = { LOOM_WASM_WIDE_TILES: '1' };

/** The plain SIMD kernels whatever the engine: products of many rows then decode quantized weights to f32. */
const PLAIN_SIMD = { LOOM_WASM_RELAXED_SIMD: '0' };

/** The byte dot product's i16 form whatever the engine would pick (every engine with relaxed SIMD has it exact). */
const I16_BYTE_DOT = { LOOM_WASM_BYTE_DOT: 'i16' };

/**
 * Each mutation: one exact text replacement in one kernel file, the conformance groups that must catch it, and the
 * environment they run in when the mutated code needs one (`env`).
 */
const mutations = [
  {
    name: 'tanh scaled by 1.01',
    file: 'packages/backend-cpu/src/unary.ts',
    from: 'out[i] = Math.tanh(x[i]);',
    to: 'out[i] = 1.01 * Math.tanh(x[i]);',
    groups: ['tanh'],
  },
  {
    name: 'softmax reads the next row',
    file: 'packages/backend-cpu/src/fused/softmax.ts',
    from: '    const o = r * cols;\n    const { max, sum }',
    to: '    const o = Math.min(r + 1, rows - 1) * cols;\n    const { max, sum }',
    groups: ['softmax', 'logSoftmax'],
  },
  {
    name: "softmax's backward multiplies g by itself in its dot product (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/softmax-kernel.ts',
    from: "f.set(product, mul(simdLoad('v128.load', at(g)), simdLoad('v128.load', at(y))));",
    to: "f.set(product, mul(simdLoad('v128.load', at(g)), simdLoad('v128.load', at(g))));",
    groups: ['softmaxGrad'],
  },
  {
    name: "softmax's backward subtracts the dot product twice (JavaScript)",
    file: 'packages/backend-cpu/src/fused/softmax.ts',
    from: 'out[o + i] = y[o + i] * (g[o + i] - dot);',
    to: 'out[o + i] = y[o + i] * (g[o + i] - 2 * dot);',
    groups: ['softmaxGrad'],
  },
  {
    name: 'the packed product adds the first four bias values to every group of four columns (WebAssembly)',
    file: 'packages/backend-cpu/src/wasm/gemm-kernel.ts',
    from: "simdLoad('v128.load', at), simdLoad('v128.load', add(bias, bytes(col)))",
    to: "simdLoad('v128.load', at), simdLoad('v128.load', bias)",
    groups: ['linear'],
  },
  {
    name: "the packed product's 6-row panels of A swap the steps of their last pair of rows (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/gemm-kernel.ts',
    from: "lane('f64x2.extract_lane', l.t[q >> 1], q & 1)",
    to: "lane('f64x2.extract_lane', l.t[q >> 1], (q + 1) & 1)",
    groups: ['matmul'],
    env: WIDE_TILES,
  },
  {
    name: "the packed product's 6-row panels of a transposed A read their last pair of values one early (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/gemm-kernel.ts',
    from: "load('f64.load', l.s, 16 * quads)",
    to: "load('f64.load', l.s, 16 * quads - 4)",
    groups: ['matmul'],
    env: WIDE_TILES,
  },
  {
    name: 'the bias is added again after the packed product that added it',
    file: 'packages/backend-cpu/src/matmul.ts',
    from: 'if (bias && !plan.addsBias)',
    to: 'if (bias)',
    groups: ['linear'],
  },
  {
    name: 'matmul ignores transB (WebAssembly GEMM plan)',
    file: 'packages/backend-cpu/src/wasm/matmul-plan.ts',
    from: 'const [rsB, csB] = transB ? [1, k] : [n, 1];',
    to: 'const [rsB, csB] = [n, 1];',
    groups: ['matmul'],
  },
  {
    name: 'matmul ignores transA (JavaScript kernel)',
    file: 'packages/backend-cpu/src/matmul.ts',
    from: 'const [rsA, csA] = transA ? [1, m] : [k, 1];',
    to: 'const [rsA, csA] = [k, 1];',
    groups: ['matmul'],
  },
  {
    name: 'RoPE rotates the other way (sign of sin flipped)',
    file: 'packages/backend-cpu/src/fused/rope.ts',
    from: 'sin[p * half + i] = scale * Math.sin(angle);',
    to: 'sin[p * half + i] = -scale * Math.sin(angle);',
    groups: ['rope'],
  },
  {
    name: 'causal mask shifted by one (each query sees the next key)',
    file: 'packages/tensor/src/ops/attention-mask.ts',
    from: "mask.kind === 'causal' ? position + 1 :",
    to: "mask.kind === 'causal' ? position + 2 :",
    groups: ['attention'],
  },
  {
    name: 'KV offset off by one (each query misses its own key)',
    file: 'packages/tensor/src/ops/attention-mask.ts',
    from: "mask.kind === 'causal' ? position + 1 :",
    to: "mask.kind === 'causal' ? position :",
    groups: ['attention'],
  },
  {
    name: 'sliding window one key too wide',
    file: 'packages/tensor/src/ops/attention-mask.ts',
    from: 'Math.max(0, position - spec.window + 1)',
    to: 'Math.max(0, position - spec.window)',
    groups: ['attention'],
  },
  {
    name: "attention query by query (WebAssembly) reads values from the batch row's first key, not the block's first",
    file: 'packages/backend-cpu/src/wasm/attention-rows-kernel.ts',
    from: 'const [matrix, keys] = g ? [matrixBytes, kr] : [0, add(kr, vMinusK)];',
    to: 'const [matrix, keys] = g ? [matrixBytes, kr] : [0, add(add(c.k, kb), vMinusK)];',
    groups: ['attention'],
  },
  {
    name: "attention query by query (WebAssembly) lets each row of a block see the keys up to the block's last",
    file: 'packages/backend-cpu/src/wasm/attention-rows-kernel.ts',
    from: "simd('i32x4.lt_s', keyIndex, row.own.endKeys),",
    to: "simd('i32x4.lt_s', keyIndex, simd('i32x4.splat', u1)),",
    groups: ['attention'],
  },
  {
    name: "attention's backward (WebAssembly) leaves out softmax's Σ p dp",
    file: 'packages/backend-cpu/src/wasm/attention-rows-kernel.ts',
    from: "f.set(m, simd('f32x4.splat', op('f32.mul', laneSum(b), total)));",
    to: 'f.set(m, v128Zero);',
    groups: ['attentionGrad'],
  },
  {
    name: "attention's backward (WebAssembly) adds dv only for the first query head of a kv head",
    file: 'packages/backend-cpu/src/wasm/attention-rows-kernel.ts',
    from: 'keyMajor(c.work, add(g.grad, blockAt), add(g.dv, kb));',
    to: "f.if(op('i32.eq', head, 0), () => keyMajor(c.work, add(g.grad, blockAt), add(g.dv, kb)));",
    groups: ['attentionGrad'],
  },
  {
    name: "attention's backward (WebAssembly) adds a block's odd last row to dq twice",
    file: 'packages/backend-cpu/src/wasm/attention-rows-kernel.ts',
    from: "f.if(op('i32.lt_s', row, row2), () => store(vectors, oi2, inverse));",
    to: 'store(vectors, oi2, inverse);',
    groups: ['attentionGrad'],
  },
  {
    name: "attention's backward (JavaScript) weighs dv by ds instead of p",
    file: 'packages/backend-cpu/src/fused/attention-grad.ts',
    from: 'dv[kv + d] += p[j] * grad[qo + d];',
    to: 'dv[kv + d] += ds[j] * grad[qo + d];',
    groups: ['attentionGrad'],
  },
  {
    name: "LayerNorm's parameter gradient (WebAssembly) forgets to centre x",
    file: 'packages/backend-cpu/src/wasm/norm-param-grad-kernel.ts',
    from: 'mul(g, mul(sub(at(r, x), mean), inv))',
    to: 'mul(g, mul(at(r, x), inv))',
    groups: ['layernormParamGrad'],
  },
  {
    name: "RMSNorm's weight gradient (WebAssembly) leaves x unnormalised",
    file: 'packages/backend-cpu/src/wasm/norm-param-grad-kernel.ts',
    from: 'mul(at(r, grad), mul(at(r, x), inv))',
    to: 'mul(at(r, grad), at(r, x))',
    groups: ['rmsnormWeightGrad'],
  },
  {
    name: "the norms' parameter gradients (JavaScript) forget to centre x",
    file: 'packages/backend-cpu/src/fused/norm-param-grad.ts',
    from: 'sums[i] += grad[o + i] * (x[o + i] - mean) * inv;',
    to: 'sums[i] += grad[o + i] * x[o + i] * inv;',
    groups: ['layernormParamGrad'],
  },
  {
    name: 'selective scan forgets the state between steps (Mamba)',
    file: 'packages/backend-cpu/src/fused/selective-scan.ts',
    from: 'h[k] = Math.exp(dt * a[di * n + k]) * h[k] + u * bIn[row + k];',
    to: 'h[k] = u * bIn[row + k];',
    groups: ['selectiveScan'],
  },
  {
    name: 'softmax row stride one element too long (WebAssembly SIMD kernel)',
    file: 'packages/backend-cpu/src/wasm/softmax-kernel.ts',
    from: "f.set(x, op('i32.add', x, rowBytes));",
    to: "f.set(x, op('i32.add', x, op('i32.add', rowBytes, 4)));",
    groups: ['softmax'],
  },
  {
    name: 'the row exp-sums (WebAssembly) step one row too short',
    file: 'packages/backend-cpu/src/wasm/softmax-kernel.ts',
    from: "f.set(x, op('i32.add', x, loops.rowBytes));",
    to: "f.set(x, op('i32.add', x, op('i32.sub', loops.rowBytes, 4)));",
    groups: ['softmaxCrossEntropy'],
  },
  {
    name: "the cross-entropy's gradient forgets to subtract the target's one",
    file: 'packages/backend-cpu/src/fused/cross-entropy.ts',
    from: 'out[start + target] -= 1;',
    to: 'out[start + target] -= 0;',
    groups: ['softmaxCrossEntropyGrad'],
  },
  {
    name: "the matrix-vector product's later parts of W start k's scalar tail where the previous part left x (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/gemv-kernel.ts',
    from: 'f.set(xq, add(x, bytes(kVec)));',
    to: '',
    groups: ['matmul'],
  },
  {
    name: "decode attention's later chunks of values start from zero instead of the sums so far (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/decode-attention-kernel.ts',
    from: "for (let u = 0; u < vectors; u++) f.set(acc[u], simdLoad('v128.load', add(oh, d), 16 * u));",
    to: 'clear(vectors);',
    groups: ['attention'],
  },
  {
    name: 'Q4_0 reads the nibbles at bit 4 twice (WebAssembly, plain SIMD)',
    file: 'packages/backend-cpu/src/wasm/quant-dot-kernel.ts',
    from: 'dot(2, nibble(8))',
    to: 'dot(2, nibble(4))',
    groups: ['quantizedMatmul'],
    env: PLAIN_SIMD,
  },
  {
    name: "Q4_0 drops the nibbles' offset of 8 (activation quantizer)",
    file: 'packages/backend-cpu/src/wasm/quantize-x-kernel.ts',
    from: 'mul(total, -2)',
    to: 'mul(total, 0)',
    groups: ['quantizedMatmul'],
  },
  {
    name: 'Q4_K adds the mins instead of subtracting them (WebAssembly)',
    file: 'packages/backend-cpu/src/wasm/q4k-dot-kernel.ts',
    from: "simd('f32x4.sub', acc[t]",
    to: "simd('f32x4.add', acc[t]",
    groups: ['quantizedMatmul'],
  },
  {
    name: 'Q4_K swaps the nibble halves of each chunk (JavaScript)',
    file: 'packages/backend-cpu/src/fused/decode-blocks.ts',
    from: 'const shift = 4 * (sub & 1);',
    to: 'const shift = 4 * ((sub + 1) & 1);',
    groups: ['quantizedMatmul', 'weightRows'],
  },
  {
    name: "Q4_K's decoded panel takes each sub-block's min from its neighbour (WebAssembly, 16 rows or more)",
    file: 'packages/backend-cpu/src/wasm/dequant-gemm-kernel.ts',
    from: 'fmul(dmin, sixBits(8 + s))',
    to: 'fmul(dmin, sixBits(8 + (s ^ 1)))',
    groups: ['quantizedMatmul'],
    env: PLAIN_SIMD,
  },
  {
    name: "Q6_K reads each code's high bit pair one bit off (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/q6k-dot-kernel.ts',
    from: 'shift(high, 4 - 2 * k)',
    to: 'shift(high, 3 - 2 * k)',
    groups: ['quantizedMatmul'],
  },
  {
    name: "Q6_K's i16 byte dot products scale each group's second sub-block by the first's scale (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/q6k-dot-kernel.ts',
    from: 'wordSplat(words, 2 * k + part)',
    to: 'wordSplat(words, 2 * k)',
    groups: ['quantizedMatmul'],
    env: I16_BYTE_DOT,
  },
  {
    name: "Q4_K's i16 byte dot products swap the scales of a pair of sub-blocks (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/q4k-dot-kernel.ts',
    from: 'wordSplat(scaleWords[t], j + h)',
    to: 'wordSplat(scaleWords[t], j + 1 - h)',
    groups: ['quantizedMatmul'],
    env: I16_BYTE_DOT,
  },
  {
    name: "Q8_0's i16 byte dot products add x's negative part instead of taking it off (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/quant-dot-kernel.ts',
    from: "simd('i16x8.sub', wordDot(codes",
    to: "simd('i16x8.add', wordDot(codes",
    groups: ['quantizedMatmul'],
    env: I16_BYTE_DOT,
  },
  {
    name: 'Q6_K reads its sub-block scales unsigned (JavaScript)',
    file: 'packages/backend-cpu/src/fused/decode-blocks.ts',
    from: 'const s = (bytes[base + (v >> 4)] << 24) >> 24;',
    to: 'const s = bytes[base + (v >> 4)];',
    groups: ['quantizedMatmul', 'weightRows'],
  },
  {
    name: 'binary16 weights keep a copy of their sign in the exponent (WebAssembly, both 16-bit products)',
    file: 'packages/backend-cpu/src/wasm/half-dot-kernel.ts',
    from: 'f.constantBits(0x8fffe000)',
    to: 'f.constantBits(0x9fffe000)',
    groups: ['halfMatmul'],
  },
  {
    name: "bfloat16's odd values keep the even value's sign as a fraction bit (WebAssembly, both 16-bit products)",
    file: 'packages/backend-cpu/src/wasm/half-dot-kernel.ts',
    from: 'f.constantBits(0x0000ffff)',
    to: 'f.constantBits(0x00007fff)',
    groups: ['halfMatmul'],
  },
  {
    name: "the 16-bit dot kernel multiplies odd weights by x's even values (WebAssembly, few rows)",
    file: 'packages/backend-cpu/src/wasm/half-dot-kernel.ts',
    from: 'mulAdd(features, odd, xOdd,',
    to: 'mulAdd(features, odd, xEven,',
    groups: ['halfMatmul'],
  },
  {
    name: 'the binary16 dot kernel scales rows of large x one power of two too little (WebAssembly, few rows)',
    file: 'packages/backend-cpu/src/wasm/half-dot-kernel.ts',
    from: 'sub(exponentField, 127 + 15)',
    to: 'sub(exponentField, 127 + 17)',
    groups: ['halfMatmul'],
  },
  {
    name: "a 16-bit weight's decoded panel swaps the values of each last half pair (WebAssembly, many rows)",
    file: 'packages/backend-cpu/src/wasm/dequant-gemm-kernel.ts',
    from: 'shuffle32(even, odd, [2, 6, 3, 7])',
    to: 'shuffle32(even, odd, [3, 7, 2, 6])',
    groups: ['halfMatmul'],
  },
  {
    name: 'an embedding lookup widens f16 rows as bf16 and bf16 rows as f16',
    file: 'packages/backend-cpu/src/fused/weight-rows.ts',
    from: "format === 'bf16' ? bf16ToF32(halves) : f16ToF32(halves)",
    to: "format === 'bf16' ? f16ToF32(halves) : bf16ToF32(halves)",
    groups: ['weightRows'],
  },
  {
    name: "GELU's clamped exp has its constant term 1% high (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/vector-exp.ts',
    from: '  1.0000001192092896,\n];',
    to: '  1.01,\n];',
    groups: ['gelu', 'geluGrad'],
  },
  {
    name: "SwiGLU's backward takes 1 - s as e^-gate, not e^-gate · s (WebAssembly)",
    file: 'packages/backend-cpu/src/wasm/activation-kernel.ts',
    from: "simd('f32x4.pmin', f.constant(1), mul(e, s))",
    to: "simd('f32x4.pmin', f.constant(1), e)",
    groups: ['swigluGrad'],
  },
  {
    name: "SwiGLU's backward scales d gate by up twice instead of grad and up (JavaScript)",
    file: 'packages/backend-cpu/src/activation.ts',
    from: 'ov[i] = gv[i] * uv[i] * (s + av[i] * s * (1 - s));',
    to: 'ov[i] = uv[i] * uv[i] * (s + av[i] * s * (1 - s));',
    groups: ['swigluGrad'],
  },
  {
    name: 'exp polynomial constant term 1% low (WebAssembly)',
    file: 'packages/backend-cpu/src/wasm/vector-exp.ts',
    from: '  1, 1,\n];',
    to: '  1, 0.99,\n];',
    groups: ['exp', 'sigmoid', 'silu'],
  },
  {
    name: 'norm row sums drop lanes 2-3 (WebAssembly)',
    file: 'packages/backend-cpu/src/wasm/norm-kernel.ts',
    from: "f.set(low, simd('f64x2.add', low, high));",
    to: "f.set(low, simd('f64x2.add', low, low));",
    groups: ['layernorm', 'layernormGrad', 'rmsnorm', 'rmsnormGrad'],
  },
  {
    name: "a decode step's keys rotated for the next position (JavaScript)",
    file: 'packages/backend-cpu/src/fused/attention-step.ts',
    from: 'const positions = new Array<number>(b).fill(offset);',
    to: 'const positions = new Array<number>(b).fill(offset + 1);',
    groups: ['attentionStep'],
  },
  {
    name: "a decode step's residual skips the first element (JavaScript)",
    file: 'packages/backend-cpu/src/fused/attention-step.ts',
    from: 'for (let i = 0; i < ov.length; i++) ov[i] += xv[i];',
    to: 'for (let i = 1; i < ov.length; i++) ov[i] += xv[i];',
    groups: ['attentionStep'],
  },
];

function log(line) {
  process.stdout.write(`${line}\n`);
}

/** A scratch copy of the work tree, installed from the local pnpm store. */
function scratchCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'loom-mutation-'));
  const skip = new Set(['.git', 'node_modules', '.turbo', 'dist', '.tools']);
  cpSync(root, dir, {
    recursive: true,
    filter: (source) =>
      !relative(root, source)
        .split('/')
        .some((part) => skip.has(part)),
  });
  execFileSync('pnpm', ['install', '--offline', '--frozen-lockfile', '--loglevel', 'error'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
}

/** Runs the CPU conformance suites on the named groups; returns the failed cases' messages by group. */
function runConformance(dir, groups, env = {}) {
  const report = join(dir, 'mutation-report.json');
  const pattern = `^conformance: cpu( f64)? (${groups.join('|')})$`;
  spawnSync(
    'npx',
    [
      'vitest',
      'run',
      'test/cpu.test.ts',
      'test/cpu-f64.test.ts',
      '-t',
      pattern,
      '--reporter=json',
      `--outputFile=${report}`,
    ],
    { cwd: join(dir, 'packages/conformance'), stdio: 'ignore', env: { ...process.env, ...env, CI: 'true' } },
  );
  if (!existsSync(report)) throw new Error('mutation check: vitest wrote no report');
  const results = JSON.parse(readFileSync(report, 'utf8'));
  rmSync(report);
  const caught = [];
  let ran = 0;
  for (const file of results.testResults) {
    for (const test of file.assertionResults) {
      if (test.status === 'passed' || test.status === 'failed') ran++;
      if (test.status !== 'failed') continue;
      const message = (test.failureMessages[0] ?? '').split('\n')[0];
      const kase = /^(?:AssertionError: )?([^:]+:[^:]+?):/.exec(message)?.[1] ?? message.slice(0, 80);
      caught.push(`${test.fullName.replace(/^conformance: /, '')} — ${kase}`);
    }
  }
  return { ran, caught };
}

const dir = scratchCopy();
let failures = 0;
try {
  // The unmutated kit passes in every environment a mutation runs in.
  for (const env of new Set([undefined, ...mutations.map((m) => m.env)])) {
    const groups = [...new Set(mutations.filter((m) => m.env === env).flatMap((m) => m.groups))];
    const baseline = runConformance(dir, groups, env);
    const where = env === undefined ? '' : ` with ${JSON.stringify(env)}`;
    if (baseline.ran === 0 || baseline.caught.length > 0) {
      log(
        `baseline${where}: ${baseline.ran} groups ran, ${baseline.caught.length} failed (${baseline.caught.join('; ')})`,
      );
      process.exit(1);
    }
    log(`baseline${where}: the ${baseline.ran} targeted groups pass on cpu and cpu f64`);
  }
  log('');
  log('| mutation | file | caught | by |');
  log('|---|---|---|---|');
  for (const m of mutations) {
    const path = join(dir, m.file);
    const original = readFileSync(path, 'utf8');
    if (!original.includes(m.from)) {
      log(`| ${m.name} | ${m.file} | ERROR | target text not found: update this mutation |`);
      failures++;
      continue;
    }
    writeFileSync(path, original.replace(m.from, m.to));
    try {
      const { caught } = runConformance(dir, m.groups, m.env);
      if (caught.length === 0) failures++;
      log(`| ${m.name} | ${m.file} | ${caught.length > 0 ? 'yes' : 'NO'} | ${caught.join('<br>') || '—'} |`);
    } finally {
      writeFileSync(path, original);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
log(
  failures === 0
    ? '\nevery mutation was caught'
    : `\n${failures} mutation(s) survived or could not be applied`,
);
process.exitCode = failures === 0 ? 0 : 1;
