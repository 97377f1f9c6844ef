"""Module structure: Module subclasses, buffers, hooks, custom autograd, modes, state dicts."""
import torch
import torch.nn as nn
from torch.autograd import Function


class Encoder(nn.Module):  # expect: TMS331
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.register_buffer("steps", torch.zeros(1))  # expect: TMS332

    def forward(self, x):
        return self.conv(x)


class Deeper(Encoder):  # expect: TMS331
    pass


class ClampGrad(Function):  # expect: TMS334
    @staticmethod
    def forward(ctx, x):
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Plain:  # expect: none
    def train(self):
        return "plain"


def run(model, path, trainer):
    model.register_forward_hook(lambda mod, inp, out: None)  # expect: TMS333
    model.register_full_backward_hook(lambda mod, gin, gout: None)  # expect: TMS333
    model.train()  # expect: TMS335
    model.eval()  # expect: TMS335
    trainer.train()  # expect: none
    Plain().train()  # expect: none
    torch.save(model.state_dict(), path)  # expect: TMS336
    model.load_state_dict(torch.load(path))  # expect: TMS336
    net = Encoder()
    net.eval()  # expect: TMS335
    return ClampGrad.apply(torch.ones(2))
