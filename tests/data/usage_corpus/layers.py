# Usage programs: torch.nn layers built at top level and called in run(); the benchmark copies
# torch's parameters into the MindSpore cells of the same names (see creation.py for the format).

# %% linear_basic
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(400)
x = torch.from_numpy(rng.standard_normal((2, 8)).astype(np.float32))
fc = nn.Linear(8, 4)


def run():
    return fc(x)

# %% linear_no_bias
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(401)
x = torch.from_numpy(rng.standard_normal((2, 8)).astype(np.float32))
proj = nn.Linear(8, 8, bias=False)


def run():
    return proj(x)

# %% linear_3d_input
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(402)
tokens = torch.from_numpy(rng.standard_normal((2, 5, 6)).astype(np.float32))
head = nn.Linear(6, 3)


def run():
    return head(tokens)

# %% conv2d_basic
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(403)
img = torch.from_numpy(rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
conv = nn.Conv2d(3, 4, 3)


def run():
    return conv(img)

# %% conv2d_padding_nobias
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(404)
img = torch.from_numpy(rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
conv = nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)


def run():
    return conv(img)

# %% conv2d_stride
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(405)
img = torch.from_numpy(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
conv = nn.Conv2d(3, 6, kernel_size=3, stride=2, padding=1)


def run():
    return conv(img)

# %% conv2d_groups
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(406)
img = torch.from_numpy(rng.standard_normal((1, 4, 6, 6)).astype(np.float32))
depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4)


def run():
    return depthwise(img)

# %% conv1d_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(407)
seq = torch.from_numpy(rng.standard_normal((2, 3, 10)).astype(np.float32))
conv = nn.Conv1d(3, 5, kernel_size=3, padding=1)


def run():
    return conv(seq)

# %% conv_transpose2d
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(408)
x = torch.from_numpy(rng.standard_normal((1, 4, 4, 4)).astype(np.float32))
up = nn.ConvTranspose2d(4, 2, kernel_size=2, stride=2)


def run():
    return up(x)

# %% batchnorm2d_train
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(409)
x = torch.from_numpy(rng.standard_normal((4, 3, 5, 5)).astype(np.float32))
bn = nn.BatchNorm2d(3)


def run():
    return bn(x)

# %% batchnorm2d_eval
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(410)
x = torch.from_numpy(rng.standard_normal((4, 3, 5, 5)).astype(np.float32))
bn = nn.BatchNorm2d(3)
bn.eval()


def run():
    return bn(x)

# %% batchnorm1d_train
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(411)
x = torch.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
bn = nn.BatchNorm1d(4)
bn.train()


def run():
    return bn(x)

# %% batchnorm_momentum
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(412)
x = torch.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
bn = nn.BatchNorm1d(4, momentum=0.01, eps=1e-3)
bn.eval()


def run():
    return bn(x)

# %% layernorm_last
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(413)
x = torch.from_numpy(rng.standard_normal((2, 5, 8)).astype(np.float32))
norm = nn.LayerNorm(8)


def run():
    return norm(x)

# %% layernorm_eps
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(414)
x = torch.from_numpy(rng.standard_normal((3, 6)).astype(np.float32))
norm = nn.LayerNorm(6, eps=1e-6)


def run():
    return norm(x)

# %% groupnorm
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(415)
x = torch.from_numpy(rng.standard_normal((2, 4, 3, 3)).astype(np.float32))
gn = nn.GroupNorm(2, 4)


def run():
    return gn(x)

# %% embedding_layer
import torch
import torch.nn as nn

ids = torch.tensor([[1, 2, 0], [4, 3, 9]])
emb = nn.Embedding(10, 4)


def run():
    return emb(ids)

# %% embedding_padding_idx
import torch
import torch.nn as nn

ids = torch.tensor([[0, 2, 5], [1, 0, 0]])
emb = nn.Embedding(6, 3, padding_idx=0)


def run():
    return emb(ids)

# %% dropout_eval
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(416)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
drop = nn.Dropout(0.3)
drop.eval()


def run():
    return drop(x)

# %% dropout_zero
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(417)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
drop = nn.Dropout(p=0.0)


def run():
    return drop(x)

# %% relu_layer_inplace
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(418)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
act = nn.ReLU(inplace=True)


def run():
    return act(x)

# %% relu_layer_positional_true
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(419)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
act = nn.ReLU(True)


def run():
    return act(x.clone())

# %% gelu_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(420)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
act = nn.GELU()


def run():
    return act(x)

# %% sigmoid_tanh_layers
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(421)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
sig = nn.Sigmoid()
tanh = nn.Tanh()


def run():
    return sig(x), tanh(x)

# %% softmax_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(422)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
softmax = nn.Softmax(dim=1)


def run():
    return softmax(x)

# %% leaky_relu_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(423)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
act = nn.LeakyReLU(0.2)


def run():
    return act(x)

# %% silu_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(424)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
act = nn.SiLU()


def run():
    return act(x)

# %% prelu_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(425)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
act = nn.PReLU()


def run():
    return act(x)

# %% flatten_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(426)
x = torch.from_numpy(rng.standard_normal((2, 3, 2, 2)).astype(np.float32))
flat = nn.Flatten()


def run():
    return flat(x)

# %% maxpool2d_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(427)
x = torch.from_numpy(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
pool = nn.MaxPool2d(2)


def run():
    return pool(x)

# %% maxpool2d_stride_padding
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(428)
x = torch.from_numpy(rng.standard_normal((1, 2, 7, 7)).astype(np.float32))
pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)


def run():
    return pool(x)

# %% avgpool2d_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(429)
x = torch.from_numpy(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
pool = nn.AvgPool2d(2)


def run():
    return pool(x)

# %% adaptive_avgpool_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(430)
x = torch.from_numpy(rng.standard_normal((2, 4, 5, 5)).astype(np.float32))
gap = nn.AdaptiveAvgPool2d((1, 1))


def run():
    return gap(x).view(2, -1)

# %% adaptive_avgpool_int
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(431)
x = torch.from_numpy(rng.standard_normal((2, 4, 6, 6)).astype(np.float32))
gap = nn.AdaptiveAvgPool2d(1)


def run():
    return gap(x)

# %% upsample_nearest
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(432)
x = torch.from_numpy(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
up = nn.Upsample(scale_factor=2, mode="nearest")


def run():
    return up(x)

# %% identity_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(433)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
skip = nn.Identity()


def run():
    return skip(x)

# %% sequential_mlp
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(434)
x = torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32))
mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))


def run():
    return mlp(x)

# %% sequential_conv_block
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(435)
x = torch.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
block = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1),
    nn.BatchNorm2d(4),
    nn.ReLU(inplace=True),
    nn.MaxPool2d(2),
)
block.eval()


def run():
    return block(x)

# %% modulelist_loop
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(436)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])


def run():
    h = x
    for layer in layers:
        h = torch.tanh(layer(h))
    return h

# %% zero_pad2d
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(437)
x = torch.from_numpy(rng.standard_normal((1, 1, 2, 2)).astype(np.float32))
pad = nn.ZeroPad2d(1)


def run():
    return pad(x)

# %% pixel_shuffle_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(438)
x = torch.from_numpy(rng.standard_normal((1, 8, 2, 2)).astype(np.float32))
ps = nn.PixelShuffle(2)


def run():
    return ps(x)

# %% hardswish_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(439)
x = torch.from_numpy((rng.standard_normal((6,)) * 3).astype(np.float32))
act = nn.Hardswish()


def run():
    return act(x)

# %% multihead_attention
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(440)
x = torch.from_numpy(rng.standard_normal((2, 5, 8)).astype(np.float32))
attn = nn.MultiheadAttention(8, 2, batch_first=True)


def run():
    out, _ = attn(x, x, x)
    return out

# %% instance_norm
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(441)
x = torch.from_numpy(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
norm = nn.InstanceNorm2d(3)


def run():
    return norm(x)

# %% embedding_from_pretrained
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(442)
vectors = torch.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
emb = nn.Embedding.from_pretrained(vectors)


def run():
    return emb(torch.tensor([4, 0, 2]))

# %% unflatten_layer
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(443)
x = torch.from_numpy(rng.standard_normal((2, 12)).astype(np.float32))
unflat = nn.Unflatten(1, (3, 4))


def run():
    return unflat(x)
