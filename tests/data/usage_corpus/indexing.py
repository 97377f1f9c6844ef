# Usage programs: indexing, gathering and joining helpers (see creation.py for the format).

# %% gather_dim1
import numpy as np
import torch

rng = np.random.default_rng(180)
logp = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))
target = torch.tensor([1, 4, 0])


def run():
    return logp.gather(1, target.unsqueeze(1)).squeeze(1)

# %% gather_function
import numpy as np
import torch

rng = np.random.default_rng(181)
x = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))
idx = torch.tensor([[0, 0], [3, 1]])


def run():
    return torch.gather(x, dim=1, index=idx)

# %% index_select_rows
import numpy as np
import torch

rng = np.random.default_rng(182)
table = torch.from_numpy(rng.standard_normal((6, 3)).astype(np.float32))
ids = torch.tensor([4, 0, 2])


def run():
    return torch.index_select(table, 0, ids)

# %% index_select_method
import numpy as np
import torch

rng = np.random.default_rng(183)
x = torch.from_numpy(rng.standard_normal((3, 6)).astype(np.float32))


def run():
    return x.index_select(1, torch.tensor([5, 1]))

# %% scatter_function
import torch

index = torch.tensor([[0, 2], [1, 0]])
src = torch.tensor([[1.0, 2.0], [3.0, 4.0]])


def run():
    return torch.scatter(torch.zeros(2, 3), 1, index, src)

# %% scatter_add
import torch

index = torch.tensor([0, 1, 0, 2])
values = torch.tensor([1.0, 2.0, 3.0, 4.0])


def run():
    return torch.zeros(3).scatter_add(0, index, values)

# %% fancy_index_rows
import numpy as np
import torch

rng = np.random.default_rng(184)
x = torch.from_numpy(rng.standard_normal((5, 3)).astype(np.float32))
rows = torch.tensor([4, 1])


def run():
    return x[rows]

# %% slice_step
import numpy as np
import torch

rng = np.random.default_rng(185)
x = torch.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))


def run():
    return x[::2, 1:3]

# %% ellipsis_none
import numpy as np
import torch

rng = np.random.default_rng(186)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x[..., None, 0]

# %% select_dim
import numpy as np
import torch

rng = np.random.default_rng(187)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return x.select(1, 2)

# %% narrow_function
import numpy as np
import torch

rng = np.random.default_rng(188)
x = torch.from_numpy(rng.standard_normal((5, 2)).astype(np.float32))


def run():
    return torch.narrow(x, 0, 1, 3)

# %% roll_shift
import torch

x = torch.arange(8).view(2, 4)


def run():
    return torch.roll(x, shifts=1, dims=1)

# %% flip_function
import numpy as np
import torch

rng = np.random.default_rng(189)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return torch.flip(x, [0, 1])

# %% one_hot_functional
import torch
import torch.nn.functional as F

labels = torch.tensor([0, 3, 1])


def run():
    return F.one_hot(labels, num_classes=4)

# %% one_hot_float
import torch
import torch.nn.functional as F

labels = torch.tensor([2, 0])


def run():
    return F.one_hot(labels, 3).float()

# %% cat_dim0
import numpy as np
import torch

rng = np.random.default_rng(190)
a = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((1, 3)).astype(np.float32))


def run():
    return torch.cat([a, b])

# %% cat_dim_last
import numpy as np
import torch

rng = np.random.default_rng(191)
a = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    return torch.cat((a, b), dim=-1)

# %% cat_generator
import numpy as np
import torch

rng = np.random.default_rng(192)
parts = [torch.from_numpy(rng.standard_normal((1, 2)).astype(np.float32)) for _ in range(3)]


def run():
    return torch.cat([p * 2 for p in parts], dim=0)

# %% stack_dim0
import numpy as np
import torch

rng = np.random.default_rng(193)
xs = [torch.from_numpy(rng.standard_normal((3,)).astype(np.float32)) for _ in range(4)]


def run():
    return torch.stack(xs)

# %% stack_dim1
import numpy as np
import torch

rng = np.random.default_rng(194)
a = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return torch.stack([a, b], dim=1)

# %% split_function
import numpy as np
import torch

rng = np.random.default_rng(195)
x = torch.from_numpy(rng.standard_normal((7, 2)).astype(np.float32))


def run():
    return torch.split(x, 3)

# %% chunk_function
import numpy as np
import torch

rng = np.random.default_rng(196)
x = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    return torch.chunk(x, 2, dim=1)

# %% unbind_function
import numpy as np
import torch

rng = np.random.default_rng(197)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return torch.unbind(x, dim=1)

# %% repeat_interleave
import torch

x = torch.tensor([1, 2, 3])


def run():
    return torch.repeat_interleave(x, 2)

# %% tile_function
import torch

x = torch.tensor([[1, 2], [3, 4]])


def run():
    return torch.tile(x, (2, 1))

# %% take_flat
import numpy as np
import torch

rng = np.random.default_rng(198)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return torch.take(x, torch.tensor([0, 4, 8]))

# %% searchsorted
import torch

edges = torch.tensor([0.0, 1.0, 2.0, 3.0])
values = torch.tensor([0.5, 2.5, 3.5])


def run():
    return torch.searchsorted(edges, values)

# %% bucketize
import torch

boundaries = torch.tensor([1.0, 3.0, 5.0])
x = torch.tensor([0.5, 3.0, 6.0])


def run():
    return torch.bucketize(x, boundaries)

# %% masked_select
import numpy as np
import torch

rng = np.random.default_rng(199)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return torch.masked_select(x, x > 0)

# %% nonzero_indices
import torch

x = torch.tensor([0, 3, 0, 5])


def run():
    return torch.nonzero(x)

# %% tril_indices_like
import numpy as np
import torch

rng = np.random.default_rng(200)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return torch.tril(x, diagonal=-1)

# %% diag_embed
import torch

v = torch.tensor([1.0, 2.0, 3.0])


def run():
    return torch.diag(v)

# %% broadcast_to
import torch

x = torch.tensor([1.0, 2.0])


def run():
    return torch.broadcast_to(x, (3, 2))

# %% meshgrid_ij
import torch

ys = torch.arange(3)
xs = torch.arange(2)


def run():
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    return gy, gx

# %% unique_sorted
import torch

x = torch.tensor([3, 1, 2, 3, 1])


def run():
    return torch.unique(x)

# %% embedding_lookup_index
import numpy as np
import torch

rng = np.random.default_rng(201)
table = torch.from_numpy(rng.standard_normal((10, 4)).astype(np.float32))
tokens = torch.tensor([[1, 2], [9, 0]])


def run():
    return table[tokens]
