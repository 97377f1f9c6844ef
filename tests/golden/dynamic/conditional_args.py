"""Ops that are dynamic only when an argument is not a compile-time constant."""
import torch
import torch.nn as nn

TOP = 4


class Net(nn.Module):
    def __init__(self, k=3, dim=1, width=None, heads=8):
        super().__init__()
        self.k = k
        self.lit = 5
        self.dim = dim
        self.width = width
        self.half = heads // 2

    def forward(self, x, scores):
        a = torch.topk(x, 2)  # fine: literal
        b = x.topk(TOP)  # fine: module constant
        c = x.topk(self.k)  # fine: __init__ parameter with a literal default
        d = x.topk(self.lit * 2)  # fine: arithmetic on constants
        e = x.topk(self.width)  # fine: configuration from __init__
        f = x.topk(x.size(1) // 2)  # fine: a shape is static
        g = x.topk(self.half)  # fine
        n = int((scores > 0).sum())  # TMS206
        h = x.topk(n)  # TMS202: k read from tensor values
        i = torch.kthvalue(x, scores.sum().item())  # TMS202 and TMS206
        j = x.topk(k=len(torch.nonzero(scores)))  # TMS202 and TMS201
        idx = torch.nonzero(scores > 0).squeeze(1)  # TMS201
        m = x.index_select(0, idx)  # TMS202: the index has a data-dependent length
        o = torch.index_select(x, 0, scores.long())  # fine: the index's length is static
        p = torch.gather(x, 1, idx.unsqueeze(0))  # TMS202
        q = torch.multinomial(scores, n)  # TMS202
        r = torch.multinomial(scores, 4)  # fine
        s = x.sum(self.dim)  # fine
        t = x.sum(int(scores[0]))  # TMS202 (dim from data) and TMS206
        u = x.transpose(0, 1).permute(1, 0)  # fine
        v = x.narrow(1, 0, n)  # TMS204: narrow with a length from data
        w = x.narrow(1, 0, x.shape[1] - 1)  # fine
        return a, b, c, d, e, f, g, h, i, j, m, o, p, q, r, s, t, u, v, w


def helper(x: torch.Tensor, k):
    return x.topk(k)  # TMS252, low confidence: k's origin is unknown here
