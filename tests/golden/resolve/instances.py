import torch
import torch.nn as nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


model = Net()
model.train()
params = model.parameters()
optimizer = torch.optim.Adam(params, lr=1e-3)
scheduler = StepLR(optimizer, step_size=1)
loader = DataLoader([], batch_size=2)
for inputs, targets in loader:
    outputs = model(inputs)
    loss = nn.functional.mse_loss(outputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
scheduler.step()
model.eval()
state = model.state_dict()
