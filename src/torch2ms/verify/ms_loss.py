"""The training-step loss of `torch2ms verify-model` as a MindSpore Cell (GRAPH mode compiles it).

Imported only by the MindSpore side of the model worker (it imports MindSpore).
"""

from __future__ import annotations

from typing import Any

from mindspore import nn


def pick(value: Any, path: tuple[Any, ...]) -> Any:
    for index in path:
        value = value[index]
    return value


class LossCell(nn.Cell):  # type: ignore[misc]
    """The sum over the chosen float outputs of their sum, or of their mean squared error to a target."""

    def __init__(self, net: Any, paths: tuple[tuple[Any, ...], ...], targets: tuple[Any, ...], mse: bool) -> None:
        super().__init__(auto_prefix=False)  # the network's parameter names stay as they are
        self.net = net
        self.paths = paths
        self.targets = targets
        self.mse = mse

    def construct(self, *inputs: Any) -> Any:
        out = self.net(*inputs)
        total = 0.0
        for k in range(len(self.paths)):
            value = pick(out, self.paths[k])
            if self.mse:
                total = total + ((value - self.targets[k]) ** 2).mean()
            else:
                total = total + value.sum()
        return total
