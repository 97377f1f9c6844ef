"""Imported by the network as `import mypkg.utils as U`."""
import torch


def pick(x: torch.Tensor):
    return torch.unique(x)  # TMS201: called as U.pick from Net.forward
