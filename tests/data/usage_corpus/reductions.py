# Usage programs: reductions with dim / keepdim (see creation.py for the format).

# %% sum_all
import numpy as np
import torch

rng = np.random.default_rng(140)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.sum(x)

# %% sum_dim_keepdim
import numpy as np
import torch

rng = np.random.default_rng(141)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return x.sum(dim=1, keepdim=True)

# %% sum_negative_dim
import numpy as np
import torch

rng = np.random.default_rng(142)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return x.sum(-1)

# %% sum_tuple_dims
import numpy as np
import torch

rng = np.random.default_rng(143)
x = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return torch.sum(x, dim=(1, 2))

# %% sum_bool_count
import numpy as np
import torch

rng = np.random.default_rng(144)
x = torch.from_numpy(rng.standard_normal((10,)).astype(np.float32))


def run():
    return (x > 0).sum()

# %% mean_all
import numpy as np
import torch

rng = np.random.default_rng(145)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return x.mean()

# %% mean_dim
import numpy as np
import torch

rng = np.random.default_rng(146)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.mean(x, dim=0)

# %% mean_keepdim_spatial
import numpy as np
import torch

rng = np.random.default_rng(147)
feat = torch.from_numpy(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))


def run():
    return feat.mean(dim=(2, 3), keepdim=True)

# %% mean_positional_dim
import numpy as np
import torch

rng = np.random.default_rng(148)
x = torch.from_numpy(rng.standard_normal((5, 2)).astype(np.float32))


def run():
    return x.mean(0)

# %% max_dim_values_indices
import numpy as np
import torch

rng = np.random.default_rng(149)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    values, indices = torch.max(x, dim=1)
    return values, indices

# %% max_all
import numpy as np
import torch

rng = np.random.default_rng(150)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return x.max()

# %% max_method_dim_index
import numpy as np
import torch

rng = np.random.default_rng(151)
logits = torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32))


def run():
    return logits.max(1)[1]

# %% max_two_tensors
import numpy as np
import torch

rng = np.random.default_rng(152)
a = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return torch.max(a, b)

# %% min_dim_keepdim
import numpy as np
import torch

rng = np.random.default_rng(153)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return x.min(dim=-1, keepdim=True).values

# %% argmax_dim
import numpy as np
import torch

rng = np.random.default_rng(154)
logits = torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32))


def run():
    return torch.argmax(logits, dim=1)

# %% argmax_method_accuracy
import numpy as np
import torch

rng = np.random.default_rng(155)
logits = torch.from_numpy(rng.standard_normal((8, 3)).astype(np.float32))
labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])


def run():
    pred = logits.argmax(dim=-1)
    return (pred == labels).float().mean()

# %% argmin_all
import numpy as np
import torch

rng = np.random.default_rng(156)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.argmin(x)

# %% prod_dim
import numpy as np
import torch

rng = np.random.default_rng(157)
x = torch.from_numpy(rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32))


def run():
    return torch.prod(x, dim=1)

# %% std_default
import numpy as np
import torch

rng = np.random.default_rng(158)
x = torch.from_numpy(rng.standard_normal((10,)).astype(np.float32))


def run():
    return x.std()

# %% std_dim_unbiased_false
import numpy as np
import torch

rng = np.random.default_rng(159)
x = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))


def run():
    return torch.std(x, dim=1, unbiased=False)

# %% var_dim_keepdim
import numpy as np
import torch

rng = np.random.default_rng(160)
x = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))


def run():
    return x.var(dim=-1, keepdim=True)

# %% var_mean
import numpy as np
import torch

rng = np.random.default_rng(161)
x = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))


def run():
    return torch.var_mean(x, dim=0)

# %% norm_default
import numpy as np
import torch

rng = np.random.default_rng(162)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return x.norm()

# %% norm_p_dim
import numpy as np
import torch

rng = np.random.default_rng(163)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.norm(x, p=2, dim=1)

# %% logsumexp_dim
import numpy as np
import torch

rng = np.random.default_rng(164)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.logsumexp(x, dim=1)

# %% cumsum_dim
import numpy as np
import torch

rng = np.random.default_rng(165)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.cumsum(x, dim=1)

# %% cumsum_method
import torch

x = torch.tensor([1, 2, 3, 4])


def run():
    return x.cumsum(0)

# %% cumprod_dim
import numpy as np
import torch

rng = np.random.default_rng(166)
x = torch.from_numpy(rng.uniform(0.5, 1.5, (2, 4)).astype(np.float32))


def run():
    return torch.cumprod(x, dim=1)

# %% all_any
import numpy as np
import torch

rng = np.random.default_rng(167)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return (x > -3).all(), (x > 1).any(dim=1)

# %% count_nonzero
import torch

x = torch.tensor([[0, 1, 2], [0, 0, 3]])


def run():
    return torch.count_nonzero(x, dim=1)

# %% topk_values
import numpy as np
import torch

rng = np.random.default_rng(168)
scores = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    values, indices = torch.topk(scores, k=3, dim=1)
    return values, indices

# %% topk_method
import numpy as np
import torch

rng = np.random.default_rng(169)
scores = torch.from_numpy(rng.standard_normal((8,)).astype(np.float32))


def run():
    return scores.topk(2)

# %% sort_descending
import numpy as np
import torch

rng = np.random.default_rng(170)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    values, order = torch.sort(x, descending=True)
    return values, order

# %% argsort_dim
import numpy as np
import torch

rng = np.random.default_rng(171)
x = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))


def run():
    return x.argsort(dim=-1)

# %% amax_amin
import numpy as np
import torch

rng = np.random.default_rng(172)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.amax(x, dim=1), torch.amin(x, dim=0)

# %% median_dim
import numpy as np
import torch

rng = np.random.default_rng(173)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return torch.median(x, dim=1).values

# %% mean_int_to_float
import torch

counts = torch.tensor([1, 2, 3, 4])


def run():
    return counts.float().mean()

# %% sum_dtype
import torch

x = torch.tensor([1, 2, 3], dtype=torch.int32)


def run():
    return x.sum(dtype=torch.int64)

# %% nansum
import torch

x = torch.tensor([1.0, float("nan"), 2.0])


def run():
    return torch.nansum(x)

# %% aminmax
import numpy as np
import torch

rng = np.random.default_rng(174)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return torch.aminmax(x)
