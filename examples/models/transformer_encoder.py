"""A small transformer encoder over token ids: embeddings plus learned
positions, two pre-norm encoder layers (4 heads, width 128, GELU
feed-forward of 512) and a final layer norm and classifier over the first
token (a BERT-style classification token)."""

import torch


class TransformerEncoder(torch.nn.Module):
    def __init__(
        self,
        vocab_size: int = 1000,
        max_length: int = 128,
        width: int = 128,
        heads: int = 4,
        layers: int = 2,
        num_classes: int = 10,
    ):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, width)
        self.positions = torch.nn.Parameter(torch.randn(max_length, width) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(
            width,
            heads,
            4 * width,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = torch.nn.TransformerEncoder(
            layer, layers, enable_nested_tensor=False
        )
        self.norm = torch.nn.LayerNorm(width)
        self.classifier = torch.nn.Linear(width, num_classes)

    def forward(self, tokens):
        x = self.embedding(tokens) + self.positions[: tokens.shape[1]]
        x = self.norm(self.encoder(x))
        return self.classifier(x[:, 0])


def transformer_encoder():
    return TransformerEncoder(), (torch.randint(0, 1000, (1, 64)),)
