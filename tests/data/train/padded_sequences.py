"""Variable-length sequences of feature vectors classified from their mean: a dataset that stores its
samples as tuples, a collate function that pads a batch and returns the lengths too, a scale kept as a
buffer, SGD groups chosen by parameter name, a label-smoothed cross-entropy the model holds, and one
checkpoint of model, optimizer and epoch."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

CLASSES = 3


class Sequences(Dataset):
    def __init__(self, count):
        rng = np.random.RandomState(11)
        self.samples = [(rng.randn(rng.randint(2, 6), 4).astype(np.float32), np.int64(rng.randint(0, CLASSES)))
                        for _ in range(count)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        return self.samples[index]


def pad(batch):
    longest = max(len(seq) for seq, _ in batch)
    features = np.zeros((len(batch), longest, 4), dtype=np.float32)
    lengths = np.zeros((len(batch), 1), dtype=np.float32)
    labels = np.zeros(len(batch), dtype=np.int64)
    for row, (seq, label) in enumerate(batch):
        features[row, :len(seq)] = seq
        lengths[row, 0] = len(seq)
        labels[row] = label
    return torch.from_numpy(features), torch.from_numpy(lengths), torch.from_numpy(labels)


class MeanClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.head = nn.Linear(8, CLASSES)
        self.register_buffer("scale", torch.full((1, 4), 0.5))
        self.criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        for layer in (self.hidden, self.head):
            nn.init.constant_(layer.weight, 0.1)
            nn.init.zeros_(layer.bias)

    def forward(self, features, lengths):
        summed = self.hidden(features * self.scale).sum(dim=1)
        return self.head(torch.tanh(summed / lengths))

    def loss(self, features, lengths, labels):
        return self.criterion(self(features, lengths), target=labels)


def main():
    model = MeanClassifier()
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 0.05},
                                 {"params": no_decay, "weight_decay": 0.0}], lr=0.5, momentum=0.9)
    loader = DataLoader(Sequences(20), batch_size=4, collate_fn=pad)
    for epoch in range(2):
        for features, lengths, labels in loader:
            loss = model.loss(features, lengths, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"epoch {epoch} loss {loss.item():.6f}")
    print(f"scale {model.scale.sum().item():.6f}")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, "sequences.pt")


if __name__ == "__main__":
    main()
