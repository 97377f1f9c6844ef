"""A sequence tagger over variable-length synthetic sentences: a custom Dataset, a collate function that
pads each batch, a GRU-free bag-of-neighbours model, Adam with a MultiStepLR stepped per epoch and a
masked loss (written for torch2ms's training checks)."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB, TAGS, PAD = 30, 3, 0


class Sentences(Dataset):
    def __init__(self, count, seed):
        rng = np.random.RandomState(seed)
        self.items = []
        for _ in range(count):
            length = rng.randint(3, 9)
            words = rng.randint(1, VOCAB, size=length)
            self.items.append((words.astype(np.int64), (words % TAGS).astype(np.int64)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


def pad_batch(samples):
    longest = max(len(words) for words, _ in samples)
    words = np.full((len(samples), longest), PAD, dtype=np.int64)
    tags = np.full((len(samples), longest), -100, dtype=np.int64)
    for row, (w, t) in enumerate(samples):
        words[row, :len(w)] = w
        tags[row, :len(t)] = t
    return torch.from_numpy(words), torch.from_numpy(tags)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.mix = nn.Linear(48, 32)
        self.out = nn.Linear(32, TAGS)

    def forward(self, words):
        e = self.embed(words)
        left = torch.cat([torch.zeros_like(e[:, :1]), e[:, :-1]], dim=1)
        right = torch.cat([e[:, 1:], torch.zeros_like(e[:, :1])], dim=1)
        return self.out(torch.relu(self.mix(torch.cat([left, e, right], dim=-1))))


def main():
    torch.manual_seed(5)
    loader = DataLoader(Sentences(48, 5), batch_size=6, shuffle=True, collate_fn=pad_batch)
    model = Tagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 2], gamma=0.5)
    criterion = nn.CrossEntropyLoss(ignore_index=-100)
    for epoch in range(3):
        model.train()
        for words, tags in loader:
            optimizer.zero_grad()
            logits = model(words)
            loss = criterion(logits.reshape(-1, TAGS), tags.reshape(-1))
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
