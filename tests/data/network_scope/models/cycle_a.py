"""Two modules that call each other."""
import torch

from . import cycle_b


def ping(x: torch.Tensor):
    if x.numel() > 4:
        return cycle_b.pong(x[:-1])
    return x[x != 0]  # TMS203: ping and pong call each other, both reached from Net.forward
