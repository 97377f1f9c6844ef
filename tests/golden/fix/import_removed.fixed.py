import os, torch
from torch import no_grad
import torch.utils.data  # kept: torch is still used
import mindspore


def f(a, b):
    with no_grad():
        c = mindspore.mint.cat([a, b]) + mindspore.mint.zeros(3)
    return mindspore.mint.nn.functional.relu(c), os.getcwd(), mindspore.mint.nn.Linear(2, 2)


def g():
    return mindspore.mint.nonzero(torch.ones(3))
