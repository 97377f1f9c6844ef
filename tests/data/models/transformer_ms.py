"""The MindSpore port of transformer_torch.py, written by hand."""

import math
from collections import OrderedDict

import numpy as np
import mindspore
from mindspore import nn


def positions(length, dim):
    pos = np.arange(length, dtype=np.float32)[:, None]
    freq = np.exp(np.arange(0, dim, 2, dtype=np.float32) * (-math.log(10000.0) / dim))
    table = np.zeros((length, dim), np.float32)
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return mindspore.Tensor(table)


class Block(nn.Cell):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm((dim,), epsilon=1e-5)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm((dim,), epsilon=1e-5)
        self.mlp = nn.SequentialCell(OrderedDict([
            ("fc", nn.Dense(dim, hidden)),
            ("act", nn.GELU(approximate=False)),
            ("proj", nn.Dense(hidden, dim)),
        ]))

    def construct(self, x):
        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Cell):
    def __init__(self, vocab=40, dim=16, heads=2, layers=2, hidden=32, max_len=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.register_buffer("pos", positions(max_len, dim))
        self.blocks = nn.CellList([Block(dim, heads, hidden) for _ in range(layers)])
        self.norm = nn.LayerNorm((dim,), epsilon=1e-5)
        self.head = nn.Dense(dim, vocab, has_bias=False)
        self.head.weight = self.embed.embedding_table

    def construct(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
