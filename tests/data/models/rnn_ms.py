"""The MindSpore port of rnn_torch.py, written by hand."""

from mindspore import nn


class TextRNN(nn.Cell):
    def __init__(self, vocab=50, embed=16, hidden=12, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.norm = nn.LayerNorm((hidden,), epsilon=1e-5)
        self.fc = nn.Dense(hidden, classes)

    def construct(self, tokens):
        x = self.embed(tokens)
        x, _ = self.lstm(x)
        x, h = self.gru(x)
        return self.fc(self.norm(x[:, -1])), h
