"""Call targets are rewritten; comments and layout stay."""
import os

import mindspore


def merge(a, b):
    # join along the channels
    out = mindspore.mint.cat([a, b], dim=1)  # keep this comment
    grid = mindspore.mint.zeros((2, 3), dtype=mindspore.float32)
    flat = mindspore.mint.flatten(
        out,   # the merged tensor
        1,
    )
    return out, grid, flat, os.sep
