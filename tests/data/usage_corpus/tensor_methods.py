# Usage programs: Tensor methods for shapes, views and conversions (see creation.py for the format).

# %% view_flatten_batch
import numpy as np
import torch

rng = np.random.default_rng(60)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.view(x.size(0), -1)

# %% view_explicit
import numpy as np
import torch

rng = np.random.default_rng(61)
x = torch.from_numpy(rng.standard_normal((12,)).astype(np.float32))


def run():
    return x.view(3, 4)

# %% reshape_tuple
import numpy as np
import torch

rng = np.random.default_rng(62)
x = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    return x.reshape((4, 3))

# %% reshape_function
import numpy as np
import torch

rng = np.random.default_rng(63)
x = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    return torch.reshape(x, (3, -1))

# %% permute_nchw
import numpy as np
import torch

rng = np.random.default_rng(64)
img = torch.from_numpy(rng.standard_normal((2, 5, 4, 3)).astype(np.float32))


def run():
    return img.permute(0, 3, 1, 2)

# %% transpose_last
import numpy as np
import torch

rng = np.random.default_rng(65)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.transpose(1, 2)

# %% transpose_negative
import numpy as np
import torch

rng = np.random.default_rng(66)
k = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return k.transpose(-2, -1)

# %% t_matrix
import numpy as np
import torch

rng = np.random.default_rng(67)
w = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return w.t()

# %% unsqueeze_squeeze
import numpy as np
import torch

rng = np.random.default_rng(68)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    y = x.unsqueeze(0).unsqueeze(-1)
    return y, y.squeeze()

# %% squeeze_dim
import numpy as np
import torch

rng = np.random.default_rng(69)
x = torch.from_numpy(rng.standard_normal((3, 1, 4)).astype(np.float32))


def run():
    return x.squeeze(1)

# %% flatten_method
import numpy as np
import torch

rng = np.random.default_rng(70)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.flatten(1)

# %% flatten_function
import numpy as np
import torch

rng = np.random.default_rng(71)
x = torch.from_numpy(rng.standard_normal((2, 3, 2, 2)).astype(np.float32))


def run():
    return torch.flatten(x, start_dim=1)

# %% contiguous_after_transpose
import numpy as np
import torch

rng = np.random.default_rng(72)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return x.t().contiguous().view(-1)

# %% expand_singleton
import numpy as np
import torch

rng = np.random.default_rng(73)
x = torch.from_numpy(rng.standard_normal((3, 1)).astype(np.float32))


def run():
    return x.expand(3, 4)

# %% expand_as
import numpy as np
import torch

rng = np.random.default_rng(74)
bias = torch.from_numpy(rng.standard_normal((1, 4)).astype(np.float32))
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return bias.expand_as(x) + x

# %% repeat_tile
import numpy as np
import torch

rng = np.random.default_rng(75)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.repeat(2, 1)

# %% chunk_method
import numpy as np
import torch

rng = np.random.default_rng(76)
qkv = torch.from_numpy(rng.standard_normal((2, 9)).astype(np.float32))


def run():
    q, k, v = qkv.chunk(3, dim=-1)
    return q, k, v

# %% split_sizes
import numpy as np
import torch

rng = np.random.default_rng(77)
x = torch.from_numpy(rng.standard_normal((6, 2)).astype(np.float32))


def run():
    return x.split([2, 4], dim=0)

# %% float_long_int
import torch

x = torch.tensor([1.7, -2.2, 3.9])


def run():
    return x.long(), x.int(), x.long().float()

# %% double_half
import numpy as np
import torch

rng = np.random.default_rng(78)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return x.double(), x.half().float()

# %% to_dtype
import numpy as np
import torch

rng = np.random.default_rng(79)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return x.to(torch.float64)

# %% to_dtype_keyword
import torch

x = torch.tensor([0, 1, 2])


def run():
    return x.to(dtype=torch.float32) / 2

# %% type_float
import torch

x = torch.tensor([3, 4])


def run():
    return x.type(torch.float32)

# %% bool_mask_to_float
import numpy as np
import torch

rng = np.random.default_rng(80)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return (x > 0).float()

# %% size_tuple
import numpy as np
import torch

rng = np.random.default_rng(81)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    b, c, n = x.size()
    return b * c * n

# %% size_dim
import numpy as np
import torch

rng = np.random.default_rng(82)
x = torch.from_numpy(rng.standard_normal((5, 7)).astype(np.float32))


def run():
    return x.size(1) + x.size(-2)

# %% shape_attr
import numpy as np
import torch

rng = np.random.default_rng(83)
x = torch.from_numpy(rng.standard_normal((5, 7)).astype(np.float32))


def run():
    return list(x.shape)

# %% dim_numel
import numpy as np
import torch

rng = np.random.default_rng(84)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.dim(), x.numel(), x.ndim

# %% item_scalar
import numpy as np
import torch

rng = np.random.default_rng(85)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return x.sum().item()

# %% tolist_values
import torch

x = torch.tensor([[1, 2], [3, 4]])


def run():
    return x.tolist()

# %% numpy_roundtrip
import numpy as np
import torch

rng = np.random.default_rng(86)
x = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    return x.numpy() * 2

# %% detach_numpy
import numpy as np
import torch

rng = np.random.default_rng(87)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return x.detach().cpu().numpy()

# %% masked_fill
import numpy as np
import torch

rng = np.random.default_rng(88)
scores = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
mask = torch.tensor([[False, False, True, True], [False, True, True, True]])


def run():
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1)

# %% masked_fill_value
import numpy as np
import torch

rng = np.random.default_rng(89)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return x.masked_fill(x < 0, 0.0)

# %% type_as
import torch

a = torch.tensor([1, 2, 3])
b = torch.tensor([0.5, 0.5, 0.5])


def run():
    return a.type_as(b) * b

# %% dtype_check
import numpy as np
import torch

rng = np.random.default_rng(90)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return x.dtype == torch.float32, x.is_floating_point()

# %% unbind_rows
import numpy as np
import torch

rng = np.random.default_rng(91)
x = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))


def run():
    return x.unbind(0)

# %% narrow_cols
import numpy as np
import torch

rng = np.random.default_rng(92)
x = torch.from_numpy(rng.standard_normal((3, 6)).astype(np.float32))


def run():
    return x.narrow(1, 2, 3)

# %% flip_dims
import numpy as np
import torch

rng = np.random.default_rng(93)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))


def run():
    return x.flip(-1), torch.flip(x, dims=[0])

# %% movedim
import numpy as np
import torch

rng = np.random.default_rng(94)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.movedim(-1, 1)
