"""Regression with gradient accumulation: a TensorDataset and DataLoader of synthetic features, Adam,
four micro-batches per optimizer step, a cosine schedule per step, and a checkpoint of model and
optimizer (written for torch2ms's training checks)."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

ACCUMULATE = 4


def make_data(count):
    rng = np.random.RandomState(7)
    features = rng.randn(count, 6).astype(np.float32)
    weights = rng.randn(6, 1).astype(np.float32)
    targets = np.tanh(features @ weights) + 0.05 * rng.randn(count, 1).astype(np.float32)
    return torch.from_numpy(features), torch.from_numpy(targets.astype(np.float32))


def main():
    torch.manual_seed(0)
    features, targets = make_data(320)
    loader = DataLoader(TensorDataset(features, targets), batch_size=4, shuffle=False, drop_last=True)
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.99), weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)
    model.train()
    running = 0.0
    for step, (x, y) in enumerate(loader):
        prediction = model(x)
        loss = criterion(prediction, y) / ACCUMULATE
        loss.backward()
        running += loss.item()
        if (step + 1) % ACCUMULATE == 0:
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()
            print(f"update {(step + 1) // ACCUMULATE}: loss {running:.5f}")
            running = 0.0
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "regression.pt")


if __name__ == "__main__":
    main()
