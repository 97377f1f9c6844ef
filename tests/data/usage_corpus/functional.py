# Usage programs: torch.nn.functional (see creation.py for the format).

# %% relu_basic
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(210)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.relu(x)

# %% relu_inplace_flag
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(211)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.relu(x, inplace=False) + 1

# %% torch_relu
import numpy as np
import torch

rng = np.random.default_rng(212)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.relu(x)

# %% gelu_default
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(213)
x = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))


def run():
    return F.gelu(x)

# %% gelu_tanh
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(214)
x = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))


def run():
    return F.gelu(x, approximate="tanh")

# %% silu
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(215)
x = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))


def run():
    return F.silu(x)

# %% softmax_dim
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(216)
logits = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return F.softmax(logits, dim=-1)

# %% softmax_torch
import numpy as np
import torch

rng = np.random.default_rng(217)
logits = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return torch.softmax(logits, dim=1)

# %% softmax_method
import numpy as np
import torch

rng = np.random.default_rng(218)
scores = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))


def run():
    return scores.softmax(-1)

# %% log_softmax_dim
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(219)
logits = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return F.log_softmax(logits, dim=1)

# %% log_softmax_torch
import numpy as np
import torch

rng = np.random.default_rng(220)
logits = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return torch.log_softmax(logits, dim=-1)

# %% leaky_relu_slope
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(221)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.leaky_relu(x, negative_slope=0.2)

# %% leaky_relu_positional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(222)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.leaky_relu(x, 0.1)

# %% elu_alpha
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(223)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.elu(x, alpha=1.0)

# %% dropout_eval
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(224)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.dropout(x, p=0.5, training=False)

# %% linear_weight_bias
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(225)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
w = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return F.linear(x, w, b)

# %% linear_no_bias
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(226)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
w = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.linear(x, w)

# %% conv2d_padding
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(227)
x = torch.from_numpy(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
w = torch.from_numpy(rng.standard_normal((3, 2, 3, 3)).astype(np.float32))


def run():
    return F.conv2d(x, w, padding=1)

# %% conv2d_stride_bias
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(228)
x = torch.from_numpy(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
w = torch.from_numpy(rng.standard_normal((4, 2, 3, 3)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return F.conv2d(x, w, b, stride=2)

# %% conv1d_basic
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(229)
x = torch.from_numpy(rng.standard_normal((2, 3, 8)).astype(np.float32))
w = torch.from_numpy(rng.standard_normal((4, 3, 3)).astype(np.float32))


def run():
    return F.conv1d(x, w)

# %% max_pool2d_kernel
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(230)
x = torch.from_numpy(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))


def run():
    return F.max_pool2d(x, 2)

# %% max_pool2d_stride
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(231)
x = torch.from_numpy(rng.standard_normal((1, 2, 7, 7)).astype(np.float32))


def run():
    return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)

# %% avg_pool2d_kernel
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(232)
x = torch.from_numpy(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))


def run():
    return F.avg_pool2d(x, 2)

# %% avg_pool1d_kernel
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(233)
x = torch.from_numpy(rng.standard_normal((2, 3, 8)).astype(np.float32))


def run():
    return F.avg_pool1d(x, kernel_size=2)

# %% adaptive_avg_pool2d_one
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(234)
x = torch.from_numpy(rng.standard_normal((2, 3, 5, 5)).astype(np.float32))


def run():
    return F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)

# %% adaptive_avg_pool1d
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(235)
x = torch.from_numpy(rng.standard_normal((2, 3, 8)).astype(np.float32))


def run():
    return F.adaptive_avg_pool1d(x, 1)

# %% interpolate_nearest
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(236)
x = torch.from_numpy(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))


def run():
    return F.interpolate(x, scale_factor=2, mode="nearest")

# %% interpolate_bilinear
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(237)
x = torch.from_numpy(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))


def run():
    return F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=False)

# %% pad_constant
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(238)
x = torch.from_numpy(rng.standard_normal((1, 2, 3)).astype(np.float32))


def run():
    return F.pad(x, (1, 2))

# %% pad_value
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(239)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return F.pad(x, (0, 1, 1, 0), value=-1.0)

# %% normalize_dim
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(240)
emb = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.normalize(emb, dim=-1)

# %% normalize_p1
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(241)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.normalize(x, p=1, dim=1)

# %% layer_norm_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(242)
x = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))


def run():
    return F.layer_norm(x, (5,))

# %% cosine_similarity
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(243)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return F.cosine_similarity(a, b, dim=1)

# %% embedding_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(244)
weight = torch.from_numpy(rng.standard_normal((10, 3)).astype(np.float32))
ids = torch.tensor([[1, 2, 3], [0, 9, 4]])


def run():
    return F.embedding(ids, weight)

# %% hardtanh
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(245)
x = torch.from_numpy((rng.standard_normal((6,)) * 2).astype(np.float32))


def run():
    return F.hardtanh(x, -1.0, 1.0)

# %% softplus_beta
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(246)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return F.softplus(x, beta=2)

# %% glu_dim
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(247)
x = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    return F.glu(x, dim=-1)

# %% pixel_shuffle
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(248)
x = torch.from_numpy(rng.standard_normal((1, 4, 2, 2)).astype(np.float32))


def run():
    return F.pixel_shuffle(x, 2)

# %% sigmoid_functional
import numpy as np
import torch

rng = np.random.default_rng(249)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return torch.sigmoid(x)

# %% tanh_functional
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(250)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return F.tanh(x)

# %% mish_hardswish
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(251)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return F.mish(x), F.hardswish(x)

# %% from_torch_nn_import_functional
import numpy as np
import torch
from torch.nn import functional as F

rng = np.random.default_rng(252)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return F.relu6(x * 4)

# %% scaled_dot_product_attention
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(253)
q = torch.from_numpy(rng.standard_normal((1, 2, 4, 8)).astype(np.float32))
k = torch.from_numpy(rng.standard_normal((1, 2, 4, 8)).astype(np.float32))
v = torch.from_numpy(rng.standard_normal((1, 2, 4, 8)).astype(np.float32))


def run():
    return F.scaled_dot_product_attention(q, k, v)

# %% unfold_patches
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(254)
x = torch.from_numpy(rng.standard_normal((1, 2, 4, 4)).astype(np.float32))


def run():
    return F.unfold(x, kernel_size=2, stride=2)
