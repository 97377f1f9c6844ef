# Usage programs: tensor creation (written for torch2ms's fix benchmark; see torch2ms/verify/corpus.py).
# Each program starts at a "# %% NAME" line, builds seeded NumPy data and returns its result from run().

# %% tensor_from_list
import torch


def run():
    return torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

# %% tensor_from_numpy_float64
import numpy as np
import torch

rng = np.random.default_rng(0)
data = rng.standard_normal((3, 4))


def run():
    return torch.tensor(data)

# %% tensor_dtype_float32
import numpy as np
import torch

rng = np.random.default_rng(1)
data = rng.standard_normal((2, 5))


def run():
    return torch.tensor(data, dtype=torch.float32)

# %% tensor_dtype_long_labels
import torch


def run():
    labels = torch.tensor([0, 2, 1, 1], dtype=torch.long)
    return labels

# %% tensor_int_list
import torch


def run():
    return torch.tensor([3, 1, 2])

# %% tensor_requires_grad
import numpy as np
import torch

rng = np.random.default_rng(2)
w = torch.tensor(rng.standard_normal((3, 3)), dtype=torch.float32, requires_grad=True)


def run():
    return w * 2

# %% tensor_device_cpu
import torch


def run():
    t = torch.tensor([1.5, -2.0, 0.25], device="cpu")
    return t

# %% from_numpy_basic
import numpy as np
import torch

rng = np.random.default_rng(3)
arr = rng.standard_normal((4, 4)).astype(np.float32)


def run():
    return torch.from_numpy(arr)

# %% from_numpy_then_float
import numpy as np
import torch

rng = np.random.default_rng(4)
arr = rng.integers(0, 10, size=(3, 3))


def run():
    x = torch.from_numpy(arr).float()
    return x / 10

# %% as_tensor_float
import numpy as np
import torch

rng = np.random.default_rng(5)
arr = rng.standard_normal((2, 3))


def run():
    return torch.as_tensor(arr, dtype=torch.float32)

# %% zeros_varargs
import torch


def run():
    return torch.zeros(2, 3)

# %% zeros_tuple
import torch


def run():
    return torch.zeros((4, 2))

# %% zeros_dtype_long
import torch


def run():
    return torch.zeros(5, dtype=torch.long)

# %% zeros_requires_grad
import torch


def run():
    bias = torch.zeros(8, requires_grad=True)
    return bias + 1

# %% zeros_device
import torch

device = torch.device("cpu")


def run():
    return torch.zeros(3, 3, device=device)

# %% ones_varargs
import torch


def run():
    return torch.ones(3, 2) * 0.5

# %% ones_dtype
import torch


def run():
    return torch.ones(4, dtype=torch.float64)

# %% ones_bool_mask
import torch


def run():
    mask = torch.ones(2, 3, dtype=torch.bool)
    return mask

# %% zeros_like
import numpy as np
import torch

rng = np.random.default_rng(6)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return torch.zeros_like(x)

# %% ones_like_dtype
import numpy as np
import torch

rng = np.random.default_rng(7)
x = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    return torch.ones_like(x, dtype=torch.float64)

# %% full_value
import torch


def run():
    return torch.full((2, 4), 7.0)

# %% full_int
import torch


def run():
    return torch.full((3,), -1, dtype=torch.long)

# %% full_like
import numpy as np
import torch

rng = np.random.default_rng(8)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return torch.full_like(x, 0.1)

# %% arange_end
import torch


def run():
    return torch.arange(6)

# %% arange_start_end_step
import torch


def run():
    return torch.arange(1, 10, 2)

# %% arange_float_step
import torch


def run():
    return torch.arange(0, 1, 0.25)

# %% arange_dtype_float
import torch


def run():
    positions = torch.arange(8, dtype=torch.float32)
    return positions / 8

# %% arange_device
import torch

device = "cpu"


def run():
    return torch.arange(4, device=device)

# %% linspace_basic
import torch


def run():
    return torch.linspace(0, 1, steps=5)

# %% linspace_positional
import torch


def run():
    return torch.linspace(-1.0, 1.0, 9)

# %% eye_square
import torch


def run():
    return torch.eye(3)

# %% eye_rect
import torch


def run():
    return torch.eye(2, 4)

# %% empty_shape
import torch


def run():
    buf = torch.empty(3, 4)
    return buf.shape

# %% empty_fill
import torch


def run():
    buf = torch.empty(2, 2)
    buf.fill_(3.0)
    return buf

# %% new_zeros
import numpy as np
import torch

rng = np.random.default_rng(9)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.new_zeros((4, 2))

# %% new_ones
import numpy as np
import torch

rng = np.random.default_rng(10)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.new_ones(3)

# %% new_full
import numpy as np
import torch

rng = np.random.default_rng(11)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.new_full((2, 2), 5.0)

# %% new_tensor
import numpy as np
import torch

rng = np.random.default_rng(12)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.new_tensor([1.0, 2.0, 3.0])

# %% tril_ones_mask
import torch


def run():
    return torch.tril(torch.ones(4, 4))

# %% triu_diagonal
import numpy as np
import torch

rng = np.random.default_rng(13)
x = torch.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))


def run():
    return torch.triu(x, diagonal=1)

# %% Tensor_ctor_list
import torch


def run():
    return torch.Tensor([[1, 2], [3, 4]])

# %% FloatTensor_ctor
import torch


def run():
    return torch.FloatTensor([0.5, 1.5])

# %% LongTensor_ctor
import torch


def run():
    return torch.LongTensor([1, 0, 2])

# %% scalar_tensor
import torch


def run():
    return torch.tensor(3.5)

# %% clone_detach
import numpy as np
import torch

rng = np.random.default_rng(14)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    y = x.clone().detach()
    return y * 2
