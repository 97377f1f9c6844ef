"""Network scope: forward and what it calls get TMS20x; data processing gets TMS25x."""
import torch
import torch.nn as nn
from torch.utils.data import Dataset


def select_positive(x: torch.Tensor):
    return x[x > 0]  # TMS203: called from forward


def positives_then_unique(x: torch.Tensor):
    return torch.unique(select_positive(x))  # TMS201: reached through Block.forward


class Block(nn.Module):
    def forward(self, x):
        y = self.pick(x)
        return positives_then_unique(y)

    def pick(self, x):
        def inner(t: torch.Tensor):
            return t.nonzero()  # TMS201: a nested function of a network method

        return inner(x) if x.numel() else self.deeper(x)

    def deeper(self, x):
        return x.masked_select(x > 0)  # TMS201 (x is a tensor: pick passes forward's input): forward -> pick -> deeper

    def unused(self, x):
        return x.nonzero()  # fine: not reachable from forward, and x is not known to be a tensor

    def unused_typed(self, x: torch.Tensor):
        return x.nonzero()  # TMS251: not reachable from forward


class Samples(Dataset):
    def __init__(self, data):
        self.data = data

    def __getitem__(self, i):
        t = torch.as_tensor(self.data[i])
        keep = t[t > 0]  # TMS253
        n = int(keep.sum())  # fine: a host value in data code
        if keep.any():  # fine: control flow in data code
            keep = keep[:n]  # TMS254
        return torch.unique(keep)  # TMS251

    def __len__(self):
        return len(self.data)


def collate(batch):
    lengths = torch.tensor([len(b) for b in batch])
    return torch.nonzero(lengths)  # TMS251
