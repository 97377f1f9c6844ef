"""A word-level language model trained on a hand-batched token stream, with truncated back-propagation
windows, SGD with momentum and gradient clipping by norm (written for torch2ms's training checks)."""

import math

import numpy as np
import torch
import torch.nn as nn

BPTT = 8
VOCAB = 50


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data[:nbatch * bsz]
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


class WindowLM(nn.Module):
    """Each position sees its own embedding and the previous one's, through a tanh layer."""

    def __init__(self, ntoken, ninp, nhid, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.hidden = nn.Linear(2 * ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.ntoken = ntoken

    def forward(self, tokens):
        emb = self.drop(self.encoder(tokens))
        previous = torch.cat([torch.zeros_like(emb[:1]), emb[:-1]], dim=0)
        h = torch.tanh(self.hidden(torch.cat([emb, previous], dim=-1)))
        return self.decoder(self.drop(h)).view(-1, self.ntoken)


def main():
    torch.manual_seed(3)
    rng = np.random.RandomState(3)
    stream = torch.tensor(rng.randint(0, VOCAB, size=2000), dtype=torch.long)
    train_data = batchify(stream, 10)
    model = WindowLM(VOCAB, 16, 32)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
    for epoch in range(2):
        model.train()
        total_loss = 0.0
        for batch, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
            data, targets = get_batch(train_data, i)
            output = model(data)
            loss = criterion(output, targets)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()
            scheduler.step()
            total_loss += loss.item()
            if batch % 10 == 0:
                print(f"epoch {epoch} batch {batch} loss {loss.item():.4f} ppl {math.exp(loss.item()):.2f}")
        print(f"epoch {epoch} mean loss {total_loss / (batch + 1):.4f}")


if __name__ == "__main__":
    main()
