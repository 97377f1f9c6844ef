"""Helpers used by the network (models/net.py) and by the data pipeline (data.py)."""
import torch


def topk_helper(x: torch.Tensor):
    k = int(x.sum())  # TMS206: called from Net.forward (net.py), so a host sync in network code
    return x.topk(k)  # TMS202: network code through a relative import


def shared(x: torch.Tensor):
    return x[x > 0]  # TMS203: called from both the network and the dataset: network code


def only_data(x: torch.Tensor):
    if x.sum() > 0:  # fine: control flow in data processing
        return torch.unique(x)  # TMS251: only the Dataset calls it
    return x


def reexported(x: torch.Tensor):
    return torch.nonzero(x)  # TMS201: reached through the package's re-export


def deeper(x: torch.Tensor):
    return inner_step(x)


def inner_step(x: torch.Tensor):
    return x.masked_select(x > 0)  # TMS201: forward -> deeper (other file) -> inner_step (same file)
