"""Inherited methods in one file: a call on self reaches the base that defines the method and the
overrides in subclasses."""
import torch
import torch.nn as nn


class Mixin:
    def helper(self, x: torch.Tensor):
        return x[x > 0]  # TMS203: Net.forward calls self.helper, which Net inherits from Mixin

    def explicit(self, x: torch.Tensor):
        return torch.unique(x)  # TMS201: called as Mixin.explicit(self, x) from Net.forward


class Net(Mixin, nn.Module):
    def forward(self, x):
        return self.helper(x) + self.hook(x) + Mixin.explicit(self, x)

    def hook(self, x: torch.Tensor):
        return x


class Special(Net):
    def hook(self, x: torch.Tensor):
        return torch.nonzero(x)  # TMS201: overrides a method that Net.forward calls


class Unrelated:
    def helper(self, x: torch.Tensor):
        return torch.unique(x)  # TMS251: the same name, but not a base of Net
