"""Gradient accumulation over three micro-batches with Adam; the step sits under a condition and
zeroing follows it; weights start from constants."""

import numpy as np
import torch
import torch.nn as nn

rng = np.random.RandomState(1)
features = torch.from_numpy(rng.randn(36, 4).astype(np.float32))
targets = torch.from_numpy(rng.randn(36, 1).astype(np.float32))
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
for layer in (model[0], model[2]):
    nn.init.constant_(layer.weight, 0.3)
    nn.init.constant_(layer.bias, -0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, betas=(0.8, 0.9), weight_decay=0.01)
total = 0.0
for i in range(12):
    out = model(features[i * 3:(i + 1) * 3])
    loss = ((out - targets[i * 3:(i + 1) * 3]) ** 2).mean() / 3
    loss.backward()
    total += loss.item()
    if (i + 1) % 3 == 0:
        optimizer.step()
        optimizer.zero_grad()
        print(f"update {(i + 1) // 3} loss {total:.6f}")
        total = 0.0
