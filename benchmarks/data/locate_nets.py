"""Two networks for benchmarks/locate_faults.py: a convolutional one (BatchNorm, pooling, a residual
block, LayerNorm) and a sequence one (Embedding, a layer of its own with a Parameter, a gate)."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.act = nn.ReLU()

    def forward(self, x):
        y = self.bn(self.conv(x))
        return self.act(y + x)


class ConvNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=1, padding=1)
        self.norm = nn.BatchNorm2d(8)
        self.act = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.block = Block(8)
        self.drop = nn.Dropout(0.2)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(8 * 4 * 4, 32)
        self.act2 = nn.GELU()
        self.ln = nn.LayerNorm(32)
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = self.pool(self.act(self.norm(self.stem(x))))
        x = self.block(x)
        x = self.flat(self.drop(x))
        x = self.ln(self.act2(self.fc(x)))
        return self.head(x)


class Mix(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, d) * 0.3)

    def forward(self, x):
        return x @ self.w


class SeqNet(nn.Module):
    def __init__(self, vocab=30, d=16, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)
        self.mix = Mix(d)
        self.act = nn.LeakyReLU(0.01)
        self.gate = nn.Linear(2 * d, d)
        self.sig = nn.Sigmoid()
        self.out = nn.Linear(d, classes)
        self.soft = nn.Softmax(dim=-1)

    def forward(self, tokens):
        h = self.embed(tokens)
        a = self.act(self.proj(h))
        b = self.mix(h)
        g = self.sig(self.gate(torch.cat([a, b], dim=-1)))
        h = (g * a + (1 - g) * b).mean(dim=1)
        return self.soft(self.out(h))
