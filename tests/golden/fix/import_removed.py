import os, torch
import torch.nn as nn
import torch.nn.functional as F
from torch import cat, zeros as z, no_grad
import torch.utils.data  # kept: torch is still used


def f(a, b):
    with no_grad():
        c = cat([a, b]) + z(3)
    return F.relu(c), os.getcwd(), nn.Linear(2, 2)


def g():
    return torch.nonzero(torch.ones(3))
