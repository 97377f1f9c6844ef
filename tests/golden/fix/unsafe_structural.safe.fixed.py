import torch
import torch.nn as nn
import mindspore


class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = mindspore.mint.nn.Linear(4, 2)
        self.device = device

    def forward(self, x: torch.Tensor):
        x = x.to(self.device)
        y = x.to(mindspore.float32)
        return self.fc(x.cuda()) + y


def train(device):
    model = Net(device)
    model.to(device)
    if device:
        model.to("cuda:0")
    x = mindspore.mint.zeros((2, 4)).cuda()
    return model(x.to(device))
