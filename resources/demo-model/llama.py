"""A Llama decoder in plain PyTorch that computes what Hugging Face's
LlamaForCausalLM computes (transformers' modeling_llama.py): RMSNorm with the
mean square in float32, rotate-half rotary embeddings, grouped-query
attention, a SiLU-gated MLP, no biases, and an output head that may share the
embedding matrix. Parameter names are the Hugging Face ones, so a state dict
is a model.safetensors once cast to FP16.

Shared by train.py, sample.py and export.py.
"""

import json
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class LlamaConfig:
    vocab_size: int = 4096
    hidden_size: int = 256
    intermediate_size: int = 768
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    max_position_embeddings: int = 256
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = True

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotary_tables(config, positions, dtype):
    """cos and sin [T, head_dim] for the given positions, as
    LlamaRotaryEmbedding builds them (frequencies repeated, not interleaved)."""
    d = config.head_dim
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = positions.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, d = config.hidden_size, config.head_dim
        self.heads, self.kv_heads, self.head_dim = (
            config.num_attention_heads, config.num_key_value_heads, d)
        self.q_proj = nn.Linear(h, self.heads * d, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Grouped-query attention: each K/V head serves heads/kv_heads query heads.
        groups = self.heads // self.kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = (probs @ v).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = Attention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = MLP(config)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.reset_parameters()

    def reset_parameters(self):
        # transformers' initializer_range 0.02 for every matrix; the two
        # projections that write into the residual stream are scaled down by
        # sqrt(2 * layers) (as GPT-2 does) so the stream's variance does not
        # grow with depth at the start of training.
        residual_std = 0.02 / math.sqrt(2 * self.config.num_hidden_layers)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = residual_std if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def hidden_states(self, ids, start=0):
        """Final normed hidden states [B, T, H] for token ids [B, T] whose
        first token sits at position `start`."""
        t = ids.shape[1]
        x = self.model.embed_tokens(ids)
        positions = torch.arange(start, start + t)
        cos, sin = rotary_tables(self.config, positions, x.dtype)
        mask = torch.full((t, t), float("-inf")).triu(1).to(x.dtype)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        return self.model.norm(x)

    def forward(self, ids):
        return self.lm_head(self.hidden_states(ids))

    def count_parameters(self):
        # Shared tensors (the tied head) count once.
        return sum(p.numel() for p in {id(p): p for p in self.parameters()}.values())

    def export_state_dict(self):
        """Tensors under Hugging Face names, the tied head left out as
        save_pretrained leaves it out."""
        state = self.state_dict()
        if self.config.tie_word_embeddings:
            state.pop("lm_head.weight", None)
        return state


def hf_config(config, bos_id=1, eos_id=2):
    """config.json as transformers writes it for this model."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "intermediate_size": config.intermediate_size,
        "hidden_act": "silu",
        "vocab_size": config.vocab_size,
        "rms_norm_eps": config.rms_norm_eps,
        "rope_theta": config.rope_theta,
        "max_position_embeddings": config.max_position_embeddings,
        "attention_bias": False,
        "mlp_bias": False,
        "initializer_range": 0.02,
        "tie_word_embeddings": config.tie_word_embeddings,
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
        "torch_dtype": "float16",
    }


def load_checkpoint(path):
    """(model in float32, checkpoint dict) from a train.py checkpoint."""
    checkpoint = torch.load(path, map_location="cpu")
    config = LlamaConfig(**checkpoint["config"])
    model = LlamaForCausalLM(config)
    model.load_state_dict(checkpoint["model"])
    model.eval()
    return model, checkpoint


def dump_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
