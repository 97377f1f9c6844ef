"""Call targets are rewritten; comments and layout stay."""
import os

import torch as th
from torch import flatten


def merge(a, b):
    # join along the channels
    out = th.cat([a, b], dim=1)  # keep this comment
    grid = th.zeros(2, 3, dtype=th.float32)
    flat = flatten(
        out,   # the merged tensor
        1,
    )
    return out, grid, flat, os.sep
