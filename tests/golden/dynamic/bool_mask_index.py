"""Boolean-mask indexing selects a data-dependent number of elements."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, idx, attn_mask):
        a = x[x > 0]  # TMS203
        valid = (x > 0) & (x < 1)
        b = x[valid]  # TMS203: named from logical ops
        c = x[~valid]  # TMS203
        d = x[torch.isnan(x)]  # TMS203
        e = x[:, x.sum(0) > 0]  # TMS203 inside a tuple index
        f = x[attn_mask]  # TMS203, low confidence: a tensor named like a mask
        g = x[idx]  # fine: an index tensor keeps the index's shape
        h = x[0]  # fine
        i = x[:, 1:3]  # fine
        x[x < 0] = 0  # fine: masked assignment keeps the shape
        x[x > 1] += 1  # fine: in-place masked update keeps the shape
        j = x * (x > 0)  # fine: the remedy
        k = torch.where(x > 0, x, 0)  # fine
        return a, b, c, d, e, f, g, h, i, j, k
