import torch
import torch.nn as nn

F = torch.nn.functional
act = nn.ReLU
linear_cls = torch.nn.Linear
zeros = torch.zeros

y = F.relu(torch.ones(3))
layer = act()
fc = linear_cls(3, 4)
t = zeros(4)
