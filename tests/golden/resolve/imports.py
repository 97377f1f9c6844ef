import torch
import torch as th
import torch.nn as nn
import torch.nn.functional as F
from torch import nn as tnn, optim
from torch.nn import functional as Fn
from torch.nn import Conv2d
from torch.nn.modules.conv import Conv2d as PrivateConv
import torch.nn.functional

a = torch.zeros(2, 3)
b = th.ones(2, 3)
c = nn.Linear(3, 4)
d = F.relu(a)
e = tnn.ReLU()
f = optim.SGD([a], lr=0.1)
g = Fn.softmax(a, dim=1)
h = Conv2d(3, 8, 3)
i = PrivateConv(3, 8, 3)
j = torch.nn.functional.interpolate(a)
