#!/usr/bin/env python
"""Module docstring."""
from __future__ import annotations

import sys  # system
import mindspore
if sys.platform:
    pass


def act(x):
    return mindspore.mint.nn.functional.relu(mindspore.mint.flatten(x, 1))
