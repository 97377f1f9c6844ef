"""Branches and loops on tensor values in network code; shape and flag conditions are fine."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.depth = depth
        self.proj = nn.Linear(4, 4)

    def forward(self, x, use_cache, kind, mask=None, return_all=False):
        if x.sum() > 0:  # TMS205
            x = x + 1
        if mask is not None and mask.any():  # TMS205
            x = x * mask
        while x.abs().max() > 1:  # TMS205
            x = x / 2
        if x.mean().item() > 0.5:  # TMS205 and TMS206
            x = x - 1
        steps = int(x.norm())  # TMS206
        for _ in range(steps):  # TMS205: the loop count comes from data
            x = self.proj(x)
        y = x if torch.all(x > 0) else -x  # TMS205
        if not x.any():  # TMS205
            return x
        if self.training:  # fine
            x = x * 0.5
        if mask is None:  # fine
            x = x + 0
        if x.dim() == 3 and x.shape[0] > 1:  # fine: shapes are static
            x = x.squeeze(0)
        if use_cache:  # TMS205, low confidence: a bare forward parameter is often a flag
            x = x + 0
        if kind == "sum":  # fine: a tensor is never compared with a string
            x = x + 0
        if return_all:  # fine: a flag argument with a literal default
            return x, y
        for _ in range(self.depth):  # fine
            x = self.proj(x)
        assert x.abs().sum() > 0, "empty output"  # TMS206: the check reads a tensor value
        assert x.shape[-1] == 4  # fine: shapes are static
        assert return_all is not None  # fine
        return x


def evaluate(model, loader):
    total = 0.0
    for batch in loader:
        out = model(batch)
        if out.sum() > 0:  # fine: not network code
            total += out.sum().item()  # fine: host syncs belong in the training loop
        assert out.isfinite().all()  # fine: not network code
    return total
