"""Slices whose bounds come from tensor values."""
import torch
import torch.nn as nn

MAX_LEN = 128


class Net(nn.Module):
    def __init__(self, keep=16):
        super().__init__()
        self.keep = keep

    def forward(self, x, lengths):
        n = lengths.max().item()  # TMS206
        a = x[:, :n]  # TMS204
        b = x[:, : lengths.max()]  # TMS204: a tensor bound
        c = x[: int(lengths[0])]  # TMS204 and TMS206
        d = x[:, :MAX_LEN]  # fine
        e = x[:, 1:-1]  # fine
        f = x[:, : x.shape[1] // 2]  # fine: shape-based
        t, b2 = x.size(0), x.size(1)
        g = x[:t, :b2]  # fine
        bsz, seq = x.shape[:2]
        h = x[:bsz, :seq]  # fine: unpacked shape
        i = x[:, : self.keep]  # fine
        return a, b, c, d, e, f, g, h, i
