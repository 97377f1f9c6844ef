# Usage programs: the keywords torch calls take that MindSpore spells differently or lacks
# (out=, requires_grad=, device=, dtype=); see creation.py for the format.

# %% add_out
import numpy as np
import torch

rng = np.random.default_rng(950)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
buf = torch.empty(3, 4)


def run():
    torch.add(a, b, out=buf)
    return buf

# %% matmul_out
import numpy as np
import torch

rng = np.random.default_rng(951)
a = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))
result = torch.zeros(2, 2)


def run():
    out = torch.matmul(a, b, out=result)
    return out, result

# %% cat_out
import numpy as np
import torch

rng = np.random.default_rng(952)
parts = [torch.from_numpy(rng.standard_normal((1, 3)).astype(np.float32)) for _ in range(2)]
joined = torch.empty(2, 3)


def run():
    torch.cat(parts, dim=0, out=joined)
    return joined

# %% mul_out_scalar
import numpy as np
import torch

rng = np.random.default_rng(953)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
y = torch.empty(4)


def run():
    torch.mul(x, 3.0, out=y)
    return y

# %% ones_requires_grad_dtype
import torch


def run():
    w = torch.ones(2, 3, dtype=torch.float32, requires_grad=True)
    return w * 0.5

# %% randn_shape_only_device
import torch

device = torch.device("cpu")


def run():
    noise = torch.zeros(3, 2, device=device)
    return noise.shape

# %% full_dtype_device
import torch


def run():
    return torch.full((2, 2), 3, dtype=torch.int64, device="cpu")

# %% arange_dtype_requires_grad
import torch


def run():
    t = torch.arange(4, dtype=torch.float32, requires_grad=False)
    return t * 2

# %% tensor_dtype_double
import torch


def run():
    return torch.tensor([0.1, 0.2], dtype=torch.double)

# %% zeros_like_dtype_long
import numpy as np
import torch

rng = np.random.default_rng(954)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return torch.zeros_like(x, dtype=torch.long)

# %% eye_dtype
import torch


def run():
    return torch.eye(3, dtype=torch.int32)

# %% linear_device_dtype
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(955)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
fc = nn.Linear(3, 2, device="cpu", dtype=torch.float32)


def run():
    return fc(x)
