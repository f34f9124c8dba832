"""A tiny Llama-shaped causal LM in plain torch (token embedding, RMSNorm,
rotary attention with grouped KV heads, SwiGLU, output head) without a KV
cache: forward(tokens [1, n]) -> logits [1, n, vocab]. The LLM runner tests
export it with our exir and compare greedy generation with eager."""

import torch
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.ffn_norm = nn.RMSNorm(dim, eps=1e-5)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    @staticmethod
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, x, cos, sin):
        b, n, _ = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, n, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        repeat = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(attn.transpose(1, 2).reshape(b, n, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab, dim=64, n_layers=2, n_heads=4, n_kv_heads=2,
                 hidden=128, max_seq_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            Block(dim, n_heads, n_kv_heads, hidden) for _ in range(n_layers)
        )
        self.norm = nn.RMSNorm(dim, eps=1e-5)
        self.output = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // n_heads
        freqs = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_seq_len).float(), freqs)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embed(tokens)
        cos, sin = self.cos[:n], self.sin[:n]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x))


def make_model(vocab, seed=0, **kwargs):
    """A TinyLlama with random weights scaled so that greedy choices are
    clear (no near-ties between the top logits)."""
    torch.manual_seed(seed)
    model = TinyLlama(vocab, **kwargs).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    return model


def greedy(model, prompt, new_tokens):
    """Eager greedy decoding (what Hugging Face generate does with
    do_sample=False): the prompt then `new_tokens` argmax tokens."""
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            logits = model(torch.tensor([tokens]))
            tokens.append(int(logits[0, -1].argmax()))
    return tokens
