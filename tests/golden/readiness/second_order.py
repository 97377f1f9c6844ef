"""Second-order gradients: create_graph=True and hessian-style APIs (TMS301)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.functional import hessian


class Critic(nn.Module):  # expect: TMS331
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.fc(F.gelu(self.norm(x)))


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)
    grads = torch.autograd.grad(score.sum(), mixed, create_graph=True)[0]  # expect: TMS301
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def double_backward(loss, flag):
    loss.backward(create_graph=True)  # expect: TMS301
    loss.backward(create_graph=flag)  # expect: TMS301
    loss.backward()  # expect: none
    loss.backward(create_graph=False)  # expect: none


def first_order_only(out, x):
    return torch.autograd.grad(out, x, retain_graph=True)  # expect: none


def curvature(f, x):
    return hessian(f, x)  # expect: TMS301
