"""A small language model (torch): tied input and output embeddings, a position buffer, a ModuleList of
pre-norm blocks with MultiheadAttention and an OrderedDict Sequential."""

import math
from collections import OrderedDict

import torch
import torch.nn as nn


def positions(length, dim):
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(OrderedDict([
            ("fc", nn.Linear(dim, hidden)),
            ("act", nn.GELU()),
            ("proj", nn.Linear(hidden, dim)),
        ]))

    def forward(self, x):
        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=16, heads=2, layers=2, hidden=32, max_len=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.register_buffer("pos", positions(max_len, dim))
        self.blocks = nn.ModuleList([Block(dim, heads, hidden) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
