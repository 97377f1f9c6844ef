"""A training step written as a function (RMSprop, clipping by value) called from a loop; the output is
returned next to the loss."""

import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
nn.init.constant_(model.weight, 0.1)
nn.init.zeros_(model.bias)
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, alpha=0.9)


def train_step(x, y):
    optimizer.zero_grad()
    out = model(x)
    loss = nn.functional.mse_loss(out, y)
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
    optimizer.step()
    return loss.item(), out


rng = np.random.RandomState(0)
for i in range(4):
    loss, out = train_step(torch.from_numpy(rng.randn(4, 3).astype(np.float32)), torch.ones(4, 2))
    print(f"{loss:.6f} {out[0, 0].item():.6f}")
