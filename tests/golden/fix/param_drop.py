import torch
import torch.nn.functional as F


def up(x, model):
    y = F.interpolate(x, scale_factor=2.0, antialias=False)
    z = F.interpolate(x, scale_factor=2.0, antialias=False, mode="nearest")
    w = F.interpolate(x, 2.0, antialias=True)
    params = model.parameters(recurse=True)
    return y, z, w, params


class Net(torch.nn.Module):
    def forward(self, x):
        return self.parameters(recurse=True), x

    def freeze(self):
        return self.eval()
