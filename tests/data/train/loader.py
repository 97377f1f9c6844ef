"""A user dataset of NumPy samples and a dataset of tensors, each read through a loader (batch size,
drop_last), one SGD step per batch, and the model's state saved and read back into a new model."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Pairs(Dataset):
    def __init__(self, count):
        rng = np.random.RandomState(2)
        self.x = rng.randn(count, 3).astype(np.float32)
        self.y = (self.x.sum(axis=1, keepdims=True) > 0).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


model = nn.Linear(3, 1)
nn.init.constant_(model.weight, 0.2)
nn.init.zeros_(model.bias)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
for loader in (DataLoader(Pairs(18), batch_size=4, drop_last=True),
               DataLoader(TensorDataset(torch.ones(6, 3), torch.zeros(6, 1)), batch_size=3)):
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"batch of {x.shape[0]} loss {loss.item():.6f}")
torch.save(model.state_dict(), "linear.pt")
copy = nn.Linear(3, 1)
copy.load_state_dict(torch.load("linear.pt"))
print(f"restored {copy.weight[0, 0].item():.6f}")
