"""Two modules that call each other."""
import torch

from .cycle_a import ping


def pong(x: torch.Tensor):
    return ping(torch.unique(x))  # TMS201: reached through the cycle
