# Usage programs: dtype and device idioms (see creation.py for the format).

# %% device_selection_to
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rng = np.random.default_rng(800)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.to(device) * 2

# %% device_string_to
import numpy as np
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
rng = np.random.default_rng(801)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    y = x.to(device)
    return y.sum(0)

# %% model_to_device
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cpu")
rng = np.random.default_rng(802)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
model = nn.Linear(3, 2)
model.to(device)


def run():
    return model(x.to(device))

# %% cpu_call
import numpy as np
import torch

rng = np.random.default_rng(803)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return x.cpu() + 1

# %% cuda_guarded
import numpy as np
import torch

rng = np.random.default_rng(804)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
if torch.cuda.is_available():
    x = x.cuda()


def run():
    return x * x

# %% float_dtype_alias
import torch


def run():
    return torch.zeros(2, 2, dtype=torch.float)

# %% long_dtype_alias
import torch


def run():
    return torch.arange(5, dtype=torch.long) * 2

# %% int_dtype_alias
import torch

x = torch.tensor([1.5, 2.5])


def run():
    return x.to(torch.int)

# %% double_dtype
import torch


def run():
    return torch.ones(3, dtype=torch.double) / 3

# %% float16_cast
import numpy as np
import torch

rng = np.random.default_rng(805)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return x.to(torch.float16)

# %% int64_dtype
import torch


def run():
    return torch.tensor([1, 2, 3], dtype=torch.int64)

# %% int32_dtype
import torch


def run():
    return torch.tensor([1, 2, 3], dtype=torch.int32) + 1

# %% uint8_dtype
import torch


def run():
    return torch.tensor([0, 128, 255], dtype=torch.uint8)

# %% bool_dtype
import torch


def run():
    return torch.zeros(3, dtype=torch.bool)

# %% default_dtype
import torch


def run():
    return torch.get_default_dtype() == torch.float32

# %% finfo_eps
import numpy as np
import torch

rng = np.random.default_rng(806)
x = torch.from_numpy(rng.uniform(0, 1, (3,)).astype(np.float32))


def run():
    eps = torch.finfo(torch.float32).eps
    return torch.log(x + eps)

# %% is_tensor_check
import numpy as np
import torch

rng = np.random.default_rng(807)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return torch.is_tensor(x), torch.is_tensor(3.0)

# %% dtype_compare_branch
import torch

x = torch.tensor([1, 2, 3])


def run():
    if x.dtype == torch.int64:
        return x.float() / 2
    return x

# %% no_grad_block
import numpy as np
import torch

rng = np.random.default_rng(808)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    with torch.no_grad():
        y = x * 2
    return y

# %% no_grad_decorator
import numpy as np
import torch

rng = np.random.default_rng(809)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


@torch.no_grad()
def predict(v):
    return v.exp()


def run():
    return predict(x)

# %% manual_seed_call
import numpy as np
import torch

torch.manual_seed(42)
rng = np.random.default_rng(810)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return x + 1

# %% tensor_on_device_kwarg
import torch

device = torch.device("cpu")


def run():
    return torch.ones(2, 3, device=device, dtype=torch.float32)

# %% type_long_tensor
import torch

x = torch.tensor([1.9, 2.1])


def run():
    return x.type(torch.LongTensor)

# %% numel_dtype_itemsize
import torch

x = torch.zeros(4, 3)


def run():
    return x.numel() * x.element_size()

# %% from_numpy_int64
import numpy as np
import torch

rng = np.random.default_rng(811)
labels = rng.integers(0, 5, size=(6,))


def run():
    return torch.from_numpy(labels).long()
