# Usage programs: small nn.Module models as projects write them (see creation.py for the format).

# %% mlp_module
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


rng = np.random.default_rng(500)
x = torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32))
model = MLP(6, 16, 3)


def run():
    return model(x)

# %% mlp_eval_no_grad
import numpy as np
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super(Classifier, self).__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x)


rng = np.random.default_rng(501)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))
model = Classifier()
model.eval()


def run():
    with torch.no_grad():
        logits = model(x)
    return logits.softmax(dim=-1)

# %% small_cnn
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 2 * 2, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        return self.fc(x)


rng = np.random.default_rng(502)
images = torch.from_numpy(rng.standard_normal((2, 1, 8, 8)).astype(np.float32))
model = SmallCNN()


def run():
    return model(images)

# %% cnn_flatten_torch
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        x = self.pool(self.features(x))
        x = torch.flatten(x, 1)
        return self.head(x)


rng = np.random.default_rng(503)
x = torch.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
net = Net()


def run():
    return net(x)

# %% residual_block
import numpy as np
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


rng = np.random.default_rng(504)
x = torch.from_numpy(rng.standard_normal((2, 4, 5, 5)).astype(np.float32))
block = BasicBlock(4)
block.eval()


def run():
    return block(x)

# %% norm_layer_parameter
import numpy as np
import torch
import torch.nn as nn


class ConvNormAct(nn.Module):
    def __init__(self, c_in, c_out, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)
        self.norm = norm_layer(c_out)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


rng = np.random.default_rng(505)
x = torch.from_numpy(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
block = ConvNormAct(3, 4, norm_layer=nn.Identity)


def run():
    return block(x)

# %% norm_layer_none_default
import numpy as np
import torch
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self.conv = nn.Conv2d(3, 4, 1)
        self.bn = norm_layer(4)

    def forward(self, x):
        return self.bn(self.conv(x))


rng = np.random.default_rng(506)
x = torch.from_numpy(rng.standard_normal((2, 3, 3, 3)).astype(np.float32))
stem = Stem()
stem.eval()


def run():
    return stem(x)

# %% attention_module
import math

import numpy as np
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        return self.proj(torch.matmul(attn, v))


rng = np.random.default_rng(507)
x = torch.from_numpy(rng.standard_normal((2, 4, 8)).astype(np.float32))
attn = SelfAttention(8)


def run():
    return attn(x)

# %% transformer_ffn
import numpy as np
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, dropout=0.0):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, dim),
        )

    def forward(self, x):
        return x + self.net(x)


rng = np.random.default_rng(508)
x = torch.from_numpy(rng.standard_normal((2, 3, 8)).astype(np.float32))
ffn = FeedForward(8, 16)
ffn.eval()


def run():
    return ffn(x)

# %% module_with_parameter
import numpy as np
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim) * 0.5)

    def forward(self, x):
        return x * self.gamma


rng = np.random.default_rng(509)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
layer = Scale(4)


def run():
    return layer(x)

# %% module_register_buffer
import numpy as np
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, -1, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std


rng = np.random.default_rng(510)
x = torch.from_numpy(rng.uniform(0, 1, (1, 3, 2, 2)).astype(np.float32))
norm = Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])


def run():
    return norm(x)

# %% module_forward_helper
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def encode(self, x):
        return F.normalize(self.fc(x), dim=-1)

    def forward(self, a, b):
        return (self.encode(a) * self.encode(b)).sum(-1)


rng = np.random.default_rng(511)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
enc = Encoder()


def run():
    return enc(a, b)

# %% module_list_blocks
import numpy as np
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, depth, dim):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.act = nn.ReLU()

    def forward(self, x):
        for blk in self.blocks:
            x = x + self.act(blk(x))
        return x


rng = np.random.default_rng(512)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
tower = Tower(3, 4)


def run():
    return tower(x)

# %% autoencoder
import numpy as np
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 2))
        self.decoder = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 8), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


rng = np.random.default_rng(513)
x = torch.from_numpy(rng.uniform(0, 1, (3, 8)).astype(np.float32))
ae = AutoEncoder()


def run():
    recon = ae(x)
    return recon, ((recon - x) ** 2).mean()

# %% lenet
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.avg_pool2d(torch.sigmoid(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.sigmoid(self.conv2(x)), 2)
        x = x.view(-1, 16 * 5 * 5)
        return self.fc2(torch.sigmoid(self.fc1(x)))


rng = np.random.default_rng(514)
x = torch.from_numpy(rng.standard_normal((2, 1, 28, 28)).astype(np.float32))
model = LeNet()


def run():
    return model(x)

# %% module_parameters_count
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def run():
    return sum(p.numel() for p in model.parameters())

# %% module_named_parameters
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))


def run():
    return [tuple(p.shape) for _, p in model.named_parameters()]

# %% module_children_count
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Linear(2, 2)

    def forward(self, x):
        return self.b(self.a(x))


head = Head()


def run():
    return len(list(head.children()))

# %% gru_classifier_module
import numpy as np
import torch
import torch.nn as nn


class TextRNN(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h[:, -1])


tokens = torch.tensor([[1, 4, 2, 7], [3, 3, 0, 5]])
model = TextRNN(8, 6, 3)


def run():
    return model(tokens)

# %% mlp_dropout_eval
import numpy as np
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


rng = np.random.default_rng(515)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
model = MLP()
model.eval()


def run():
    return model(x).squeeze(-1)

# %% conv_bn_relu_sequential_fn
import numpy as np
import torch
import torch.nn as nn


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU6(inplace=True),
    )


rng = np.random.default_rng(516)
x = torch.from_numpy(rng.standard_normal((1, 3, 6, 6)).astype(np.float32))
stem = conv_bn(3, 4, 2)
stem.eval()


def run():
    return stem(x)

# %% squeeze_excite
import numpy as np
import torch
import torch.nn as nn


class SE(nn.Module):
    def __init__(self, c, r=2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(c, c // r), nn.ReLU(inplace=True), nn.Linear(c // r, c), nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y.expand_as(x)


rng = np.random.default_rng(517)
x = torch.from_numpy(rng.standard_normal((2, 4, 3, 3)).astype(np.float32))
se = SE(4)


def run():
    return se(x)

# %% positional_encoding
import math

import numpy as np
import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, dim, max_len=16):
        super().__init__()
        pe = torch.zeros(max_len, dim)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


rng = np.random.default_rng(518)
x = torch.from_numpy(rng.standard_normal((2, 5, 8)).astype(np.float32))
pos = PositionalEncoding(8)


def run():
    return pos(x)

# %% model_state_dict_keys
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))


def run():
    return len(model.state_dict())

# %% model_train_flag
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 3), nn.Dropout(0.1))


def run():
    model.eval()
    first = model.training
    model.train()
    return first, model.training
