# Values unpacked item by item keep each item's kind; a layer that may be None is the layer where it is called.
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, drop=None):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.drop = nn.Dropout(drop) if drop is not None else None
        self.scale = dim ** -0.5

    def forward(self, x):
        qkv = self.qkv(x).reshape(2, 3, -1).permute(1, 0, 2)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        if self.drop is not None:
            attn = self.drop(attn)
        return attn.view(attn.size(0), -1)

    def pairs(self, items):
        first, second = items[0], {}
        return second.values()  # expect: none
