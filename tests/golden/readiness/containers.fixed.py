"""Containers of layers and of Parameters stored on self (TMS321, TMS322)."""
import torch
import torch.nn as nn
import mindspore


class Block(nn.Module):  # expect: TMS331
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x)


class Tower(nn.Module):  # expect: TMS331
    def __init__(self, depth, width):
        super().__init__()
        self.layers = mindspore.nn.CellList([nn.Linear(width, width), nn.ReLU()])  # expect: TMS321
        self.blocks = mindspore.nn.CellList([Block(width) for _ in range(depth)])  # expect: TMS321
        self.pair = mindspore.nn.CellList(list((nn.Linear(width, width), nn.Tanh())))  # expect: TMS321
        self.heads = mindspore.nn.CellDict({"cls": nn.Linear(width, 2), "box": nn.Linear(width, 4)})  # expect: TMS321
        self.scales = mindspore.ParameterTuple([nn.Parameter(torch.ones(width)) for _ in range(depth)])  # expect: TMS322
        self.good = nn.ModuleList([nn.Linear(width, width)])  # expect: none
        self.sizes = [width, width * 2]  # expect: none
        self.names = ["a", "b"]  # expect: none
        self.mixed = [nn.Linear(width, width), "not a layer"]  # expect: none
        self.empty = []  # expect: none

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class NotAModule:
    def __init__(self):
        self.layers = [nn.Linear(2, 2)]  # expect: none
