"""Ops whose output shape always depends on values, and their fixed-shape neighbours."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, repeats):
        a = torch.nonzero(x)  # TMS201
        b = torch.nonzero(x, as_tuple=True)  # TMS201
        c = x.nonzero()  # TMS201
        d = torch.masked_select(x, x > 0)  # TMS201
        e = x.masked_select(x > 0)  # TMS201
        f = torch.unique(x)  # TMS201
        g = x.unique()  # TMS201
        h = torch.unique_consecutive(x)  # TMS201
        i = torch.argwhere(x)  # TMS201
        j = torch.where(x > 0)  # TMS201: one argument
        k = torch.where(x > 0, x, torch.zeros_like(x))  # fine: three arguments keep the shape
        m = x.where(x > 0, 0.0)  # fine
        n = torch.repeat_interleave(x, repeats)  # TMS201: tensor repeats
        o = x.repeat_interleave(repeats)  # TMS201
        p = x.repeat_interleave(2)  # fine: constant repeats
        q = torch.repeat_interleave(x, repeats, output_size=8)  # fine: the length is given
        return a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q
