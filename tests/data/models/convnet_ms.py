"""The MindSpore port of convnet_torch.py, written by hand."""

import mindspore
from mindspore import nn, ops


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, pad_mode="pad", padding=1, has_bias=False)


class BasicBlock(nn.Cell):
    def __init__(self, cin, cout, stride=1, downsample=None, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self.conv1 = conv3x3(cin, cout, stride)
        self.bn1 = norm_layer(cout)
        self.relu = nn.ReLU()
        self.conv2 = conv3x3(cout, cout)
        self.bn2 = norm_layer(cout)
        self.downsample = downsample

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class SmallResNet(nn.Cell):
    def __init__(self, block=BasicBlock, layers=(2, 2), num_classes=10, width=8):
        super().__init__()
        self.inplanes = width
        self.stem = nn.SequentialCell(
            nn.Conv2d(3, width, 3, pad_mode="pad", padding=1, has_bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
        self.heads = nn.CellList([nn.Dense(width * 2, num_classes) for _ in range(2)])
        # A CellList filled after it is assigned keeps names without the "extra." prefix
        # (MindSpore names parameters when a cell is assigned): build it with its cells.
        self.extra = nn.CellList([nn.Conv1d(width * 2, width * 2, 3, pad_mode="pad", padding=1, has_bias=True)
                                  for _ in range(2)])

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.SequentialCell(
                nn.Conv2d(self.inplanes, planes, 1, stride=stride, pad_mode="valid", has_bias=False),
                nn.BatchNorm2d(planes),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(block(planes, planes))
        return nn.SequentialCell(*layers)

    def construct(self, x):
        h = self.layer2(self.layer1(self.stem(x)))
        h = h.mean(axis=3)
        for conv in self.extra:
            h = ops.relu(conv(h))
        h = h.mean(axis=2)
        return self.heads[0](h) + self.heads[1](h)


def small_resnet(num_classes=10, width=8):
    return SmallResNet(BasicBlock, [2, 2], num_classes=num_classes, width=width)
