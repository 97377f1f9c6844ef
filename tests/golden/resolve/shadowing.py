import torch
import torch.nn as nn
import torch.nn.functional as F


def uses_param(F, x):
    return F.softmax(x)  # expect: low


def uses_local():
    nn = make_network()
    return nn.Linear(3, 4)  # expect: none


def loop_var(items):
    for torch in items:
        torch.zeros(3)  # expect: none


def F_function():
    def F(v):
        return v
    return F(1)  # expect: none


class Holder:
    nn = None

    def method(self):
        return nn.ReLU()


squares = [torch for torch in range(3)]
after = torch.ones(2)
