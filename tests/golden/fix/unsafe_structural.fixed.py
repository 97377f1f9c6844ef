import torch
import mindspore


class Net(mindspore.nn.Cell):
    def __init__(self, device):
        super().__init__()
        self.fc = mindspore.mint.nn.Linear(4, 2)
        self.device = device

    def construct(self, x: torch.Tensor):
        y = x.to(mindspore.float32)
        return self.fc(x) + y


def train(device):
    model = Net(device)
    if device:
        pass
    x = mindspore.mint.zeros((2, 4))
    return model(x)
