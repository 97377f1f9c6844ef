import torch
import torch.nn.functional as F


def f(x, k, mode, items):
    a = torch.unique(x)  # another result structure in MindSpore (values and inverse indices)
    b = torch.einsum("ij->i", x)  # no CPU form
    with torch.no_grad():  # missing in MindSpore
        c = F.interpolate(x, scale_factor=2.0, mode="area")  # unsupported value
        d = F.interpolate(x, scale_factor=2.0, mode=mode)  # value not known
    e = torch.nn.Embedding(10, 3)  # MindSpore requires another parameter
    g = items.view(3)  # receiver not proven a tensor
    h = torch.cat([x, x])  # noqa: TMS101
    return a, b, c, d, e, g, h
