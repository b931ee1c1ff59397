"""Tiny random Qwen2 and Qwen3 checkpoints with their logits, from a forward pass written from the models' definitions.

Run from the repository root (torch and numpy come from Debian through the peer environment):

    bash /work/shared/peers/torch_env.sh /usr/bin/python3 packages/models/scripts/qwen_reference.py
    (cd packages/models && npx biome format --write test/fixtures/hf-qwen2 test/fixtures/hf-qwen3 test/fixtures/hf-qwen3-sharded)

It writes packages/models/test/fixtures/hf-qwen2/ and hf-qwen3/ (config.json, model.safetensors, logits.json) and
hf-qwen3-sharded/ (the same Qwen3 weights in two shards with model.safetensors.index.json). The forward pass follows
transformers' modeling_qwen2.py / modeling_qwen3.py: RMSNorm, q/k/v projections (biased in Qwen2), per-head RMSNorm
of q and k before RoPE (Qwen3), rotate-half RoPE, grouped-query causal attention, o_proj, SwiGLU, final norm and the
output layer (tied or not). It runs in float64 on the float32 weights that are stored; the logits are what a correct
float32 implementation should match within 1e-4. The safetensors files are written by hand (an 8-byte little-endian
header length, a JSON header, then the raw little-endian bytes), so the `safetensors` package is not needed.
"""

import json
import os
import struct

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures")
TOKENS = [1, 5, 9, 30, 2, 17, 4, 4, 22, 11, 0, 31]

QWEN2 = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "vocab_size": 32,
    "hidden_size": 16,
    "intermediate_size": 24,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "use_sliding_window": False,
    "sliding_window": 32,
    "max_window_layers": 2,
    "attention_dropout": 0.0,
    "rope_scaling": None,
    "torch_dtype": "float32",
}

QWEN3 = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "vocab_size": 32,
    "hidden_size": 16,
    "intermediate_size": 24,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 64,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "tie_word_embeddings": False,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_window_layers": 2,
    "attention_dropout": 0.0,
    "rope_scaling": None,
    "torch_dtype": "float32",
}


def head_dim(config):
    return config.get("head_dim", config["hidden_size"] // config["num_attention_heads"])


def random_weights(config, seed):
    """Named float32 tensors under Hugging Face names, far enough from their initial values to matter."""
    g = torch.Generator().manual_seed(seed)
    d, hd = config["hidden_size"], head_dim(config)
    heads, kv, inner, vocab = (
        config["num_attention_heads"],
        config["num_key_value_heads"],
        config["intermediate_size"],
        config["vocab_size"],
    )
    qwen2 = config["model_type"] == "qwen2"

    def normal(*shape, std=0.3):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * std).float()

    def norm(size):
        return (1 + torch.randn(size, generator=g, dtype=torch.float64) * 0.2).float()

    w = {"model.embed_tokens.weight": normal(vocab, d, std=0.5)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(d)
        w[p + "self_attn.q_proj.weight"] = normal(heads * hd, d)
        w[p + "self_attn.k_proj.weight"] = normal(kv * hd, d)
        w[p + "self_attn.v_proj.weight"] = normal(kv * hd, d)
        if qwen2:
            w[p + "self_attn.q_proj.bias"] = normal(heads * hd)
            w[p + "self_attn.k_proj.bias"] = normal(kv * hd)
            w[p + "self_attn.v_proj.bias"] = normal(kv * hd)
        else:
            w[p + "self_attn.q_norm.weight"] = norm(hd)
            w[p + "self_attn.k_norm.weight"] = norm(hd)
        w[p + "self_attn.o_proj.weight"] = normal(d, heads * hd)
        w[p + "post_attention_layernorm.weight"] = norm(d)
        w[p + "mlp.gate_proj.weight"] = normal(inner, d)
        w[p + "mlp.up_proj.weight"] = normal(inner, d)
        w[p + "mlp.down_proj.weight"] = normal(d, inner)
    w["model.norm.weight"] = norm(d)
    if not config["tie_word_embeddings"]:
        w["lm_head.weight"] = normal(vocab, d, std=0.5)
    return w


def rms_norm(x, weight, eps):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(config, weights, tokens):
    """Logits [T, vocab] in float64, following transformers' Qwen2/Qwen3 decoder layers."""
    w = {name: t.double() for name, t in weights.items()}
    eps, hd = config["rms_norm_eps"], head_dim(config)
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    t = len(tokens)
    positions = torch.arange(t, dtype=torch.float64)
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.outer(positions, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # [T, hd]
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]  # [T, 1, hd]
    mask = torch.full((t, t), float("-inf"), dtype=torch.float64).triu(1)
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]  # [T, d]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)

        def project(name):
            out = h @ w[p + f"self_attn.{name}.weight"].T
            bias = w.get(p + f"self_attn.{name}.bias")
            return out if bias is None else out + bias

        q = project("q_proj").view(t, heads, hd)
        k = project("k_proj").view(t, kv, hd)
        v = project("v_proj").view(t, kv, hd)
        if p + "self_attn.q_norm.weight" in w:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = heads // kv
        k = k.repeat_interleave(group, dim=1)  # [T, H, hd]: query head j reads kv head j // group
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q, k) / hd**0.5 + mask
        attn = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v).reshape(t, heads * hd)
        x = x + attn @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
        x = x + (gate * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if config["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def safetensors_bytes(tensors):
    """The safetensors encoding of float32 tensors: header length (u64 LE), JSON header padded to 8, raw data."""
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        data = t.contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def write(path, data):
    """Writes under a temporary name, then renames into place."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_json(path, value):
    write(path, (json.dumps(value, indent=1) + "\n").encode())


def main():
    for name, config, seed in (("hf-qwen2", QWEN2, 2), ("hf-qwen3", QWEN3, 3)):
        weights = random_weights(config, seed)
        logits = forward(config, weights, TOKENS)
        d = os.path.join(ROOT, name)
        write_json(os.path.join(d, "config.json"), config)
        write(os.path.join(d, "model.safetensors"), safetensors_bytes(weights))
        write_json(
            os.path.join(d, "logits.json"),
            {
                "reference": "packages/models/scripts/qwen_reference.py (float64, torch %s)" % torch.__version__,
                "tokens": TOKENS,
                "vocab_size": config["vocab_size"],
                "logits": [round(float(v), 9) for v in logits.flatten()],
            },
        )
        if name == "hf-qwen3":
            names = list(weights)
            shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
                      "model-00002-of-00002.safetensors": names[len(names) // 2:]}
            s = os.path.join(ROOT, "hf-qwen3-sharded")
            weight_map = {}
            for shard, members in shards.items():
                write(os.path.join(s, shard), safetensors_bytes({n: weights[n] for n in members}))
                weight_map.update({n: shard for n in members})
            total = sum(weights[n].numel() * 4 for n in names)
            write_json(os.path.join(s, "config.json"), config)
            write_json(
                os.path.join(s, "model.safetensors.index.json"),
                {"metadata": {"total_size": total}, "weight_map": weight_map},
            )
        print(name, "logits[0, :4] =", [round(float(v), 6) for v in logits[0, :4]])


if __name__ == "__main__":
    main()
