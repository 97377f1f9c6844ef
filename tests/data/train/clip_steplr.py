"""Regression trained with SGD (momentum, nesterov), clipping by norm, a StepLR stepped every step and
a logging line; weights start from constants so torch and the MindSpore port start alike."""

import numpy as np
import torch
import torch.nn as nn

rng = np.random.RandomState(0)
features = torch.from_numpy(rng.randn(40, 5).astype(np.float32))
targets = torch.from_numpy(rng.randn(40, 2).astype(np.float32))
model = nn.Linear(5, 2)
nn.init.constant_(model.weight, 0.1)
nn.init.zeros_(model.bias)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
model.train()
for step in range(8):
    x = features[step * 5:(step + 1) * 5]
    y = targets[step * 5:(step + 1) * 5]
    optimizer.zero_grad()
    prediction = model(x)
    loss = criterion(prediction, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    optimizer.step()
    scheduler.step()
    print(f"step {step} loss {loss.item():.6f} first {prediction[0, 0].item():.6f}")
