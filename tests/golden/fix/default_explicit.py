from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3)
        self.b = nn.Conv2d(3, 8, 3, bias=False)
        self.c = nn.Conv2d(
            3,
            8,
            kernel_size=3,
        )
        self.d = nn.Conv2d()
