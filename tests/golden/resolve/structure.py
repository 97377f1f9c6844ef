import torch
import torch.nn as nn
from typing import Optional


class Net(nn.Module):
    pass


class Sub(Net):
    pass


@torch.no_grad()
def evaluate(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return x.sum()


def annotated(mask: Optional[torch.Tensor] = None, scale: "float" = 1.0):
    return mask.float()


dtype = torch.float32
device_type = torch.device("cpu")
torch.backends.cudnn.benchmark = True
if isinstance(dtype, torch.dtype):
    pass
