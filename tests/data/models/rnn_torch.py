"""A recurrent text classifier (torch): Embedding, a 2-layer bidirectional LSTM, a GRU, LayerNorm."""

import torch.nn as nn


class TextRNN(nn.Module):
    def __init__(self, vocab=50, embed=16, hidden=12, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.norm = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):
        x = self.embed(tokens)
        x, _ = self.lstm(x)
        x, h = self.gru(x)
        return self.fc(self.norm(x[:, -1])), h
