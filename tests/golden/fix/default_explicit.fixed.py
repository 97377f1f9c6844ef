from torch import nn
import mindspore


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = mindspore.nn.Conv2d(3, 8, 3, has_bias=True)
        self.b = mindspore.nn.Conv2d(3, 8, 3, has_bias=False)
        self.c = mindspore.nn.Conv2d(
            3,
            8,
            kernel_size=3, has_bias=True,
        )
        self.d = mindspore.nn.Conv2d(has_bias=True)
