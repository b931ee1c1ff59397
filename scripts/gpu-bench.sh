#!/usr/bin/env bash
# WebGPU figures on a machine with a real GPU, in one run of at most 8 minutes:
#   pnpm bench generate --backend webgpu   on random llama2.c models of the stories15M and stories110M shapes,
#   pnpm bench train --backend webgpu.
# The models come from ../shared/peers/make_random_llama.py (python3 with numpy), or, when that is missing,
# from Loom's own random initialisation written with writeLlama2cFile. Printed figures go to stdout and,
# when $OUT is set, to $OUT/gpu-bench.txt (with each suite's JSON next to it).
#
# Usage: scripts/gpu-bench.sh        (from anywhere; needs node, pnpm and the workspace's node_modules)
# Env:   GPU_BENCH_CAP_S   total cap in seconds (default 480)
#        GPU_BENCH_TOKENS  decode tokens per measurement (default 128)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cap="${GPU_BENCH_CAP_S:-480}"
tokens="${GPU_BENCH_TOKENS:-128}"
started=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="${OUT:-}"
log="$work/gpu-bench.txt"
[ -n "$out" ] && mkdir -p "$out" && log="$out/gpu-bench.txt"
: >"$log"

say() { printf '%s\n' "$*" | tee -a "$log"; }
left() { echo $((cap - (SECONDS - started))); }

# Runs a command under what is left of the cap (keeping `reserve` seconds for what follows), logging its output.
step() {
  local reserve="$1"
  shift
  local budget=$(($(left) - reserve))
  if [ "$budget" -lt 20 ]; then
    say "skipped (time cap of ${cap}s): $*"
    return 0
  fi
  say "\$ $* (limit ${budget}s)"
  timeout --signal=INT --kill-after=10 "$budget" "$@" 2>&1 | grep -v 'artificially reduced' | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 0 ] && say "exit status $rc"
  return 0
}

say "gpu-bench: $(date -u +%FT%TZ) on $(uname -n); node $(node --version)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"

# name dim hidden layers heads
shapes=("rand15M 288 768 6 6" "rand110M 768 2048 12 12")
peers="$root/../shared/peers/make_random_llama.py"
[ -f "$peers" ] || peers="/work/shared/peers/make_random_llama.py"

for shape in "${shapes[@]}"; do
  read -r name dim hidden layers heads <<<"$shape"
  file="$work/$name.bin"
  if [ -f "$peers" ] && python3 -c 'import numpy' 2>/dev/null; then
    python3 "$peers" "$file" --dim "$dim" --hidden "$hidden" --layers "$layers" --heads "$heads" \
      --kv-heads "$heads" --vocab 32000 --seq-len 256 --seed 1 >/dev/null
  else
    (cd "$root/apps/bench" && node --conditions=@loom/source --import tsx --input-type=module -e "
      import { writeLlama2cFile, tensorsFromTransformer } from '@loom/models';
      import { makeConfig, TransformerLM } from '@loom/nn';
      const config = makeConfig('llama', { vocabSize: 32000, dim: $dim, hiddenDim: $hidden, numLayers: $layers,
        numHeads: $heads, maxSeqLen: 256, tiedEmbeddings: true });
      const model = new TransformerLM(config);
      writeLlama2cFile('$file', config, await tensorsFromTransformer(model));
    ")
  fi
  if [ ! -s "$file" ]; then
    say "could not write the $name model"
    continue
  fi
  say "model $name: dim $dim, hidden $hidden, $layers layers, $heads heads, vocab 32000 ($(stat -c %s "$file") bytes)"
done

json() { [ -n "$out" ] && echo "--json=$out/$1.json"; }
cd "$root" || exit 1
# 15M first (quick), then 110M, then training; each keeps time for those after it.
[ -s "$work/rand15M.bin" ] && step 300 pnpm bench generate --backend webgpu --model "$work/rand15M.bin" --tokens "$tokens" $(json generate-15M)
[ -s "$work/rand110M.bin" ] && step 150 pnpm bench generate --backend webgpu --model "$work/rand110M.bin" --tokens "$tokens" $(json generate-110M)
step 0 pnpm bench train --backend webgpu $(json train)
say "gpu-bench: done in $((SECONDS - started))s"
