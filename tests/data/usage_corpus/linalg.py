# Usage programs: matrix products and linear algebra (see creation.py for the format).

# %% matmul_2d
import numpy as np
import torch

rng = np.random.default_rng(900)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))


def run():
    return torch.matmul(a, b)

# %% matmul_operator
import numpy as np
import torch

rng = np.random.default_rng(901)
a = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))


def run():
    return a @ b

# %% mm_method
import numpy as np
import torch

rng = np.random.default_rng(902)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))


def run():
    return a.mm(b)

# %% mm_function
import numpy as np
import torch

rng = np.random.default_rng(903)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))


def run():
    return torch.mm(a, b)

# %% bmm_batches
import numpy as np
import torch

rng = np.random.default_rng(904)
a = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((2, 4, 5)).astype(np.float32))


def run():
    return torch.bmm(a, b)

# %% einsum_attention
import numpy as np
import torch

rng = np.random.default_rng(905)
q = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
k = torch.from_numpy(rng.standard_normal((2, 5, 4)).astype(np.float32))


def run():
    return torch.einsum("bqd,bkd->bqk", q, k)

# %% einsum_outer
import numpy as np
import torch

rng = np.random.default_rng(906)
a = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return torch.einsum("i,j->ij", a, b)

# %% outer_product
import numpy as np
import torch

rng = np.random.default_rng(907)
a = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((2,)).astype(np.float32))


def run():
    return torch.outer(a, b)

# %% dot_vectors
import numpy as np
import torch

rng = np.random.default_rng(908)
a = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return torch.dot(a, b)

# %% linalg_norm_vector
import numpy as np
import torch

rng = np.random.default_rng(909)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.linalg.norm(x, dim=1)

# %% linalg_vector_norm
import numpy as np
import torch

rng = np.random.default_rng(910)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.linalg.vector_norm(x, ord=2, dim=-1)

# %% linalg_inv
import torch

m = torch.tensor([[4.0, 1.0], [2.0, 3.0]])


def run():
    return torch.linalg.inv(m)

# %% inverse_legacy
import torch

m = torch.tensor([[2.0, 0.5], [0.5, 1.0]])


def run():
    return torch.inverse(m)

# %% det_matrix
import torch

m = torch.tensor([[2.0, 1.0], [1.0, 3.0]])


def run():
    return torch.det(m)

# %% cross_product
import torch

a = torch.tensor([[1.0, 0.0, 0.0]])
b = torch.tensor([[0.0, 1.0, 0.0]])


def run():
    return torch.cross(a, b, dim=1)

# %% cdist_pairwise
import numpy as np
import torch

rng = np.random.default_rng(911)
a = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))


def run():
    return torch.cdist(a, b)

# %% trace_diag
import numpy as np
import torch

rng = np.random.default_rng(912)
m = torch.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))


def run():
    return torch.trace(m), torch.diagonal(m)

# %% addmm_bias
import numpy as np
import torch

rng = np.random.default_rng(913)
bias = torch.from_numpy(rng.standard_normal((2,)).astype(np.float32))
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))


def run():
    return torch.addmm(bias, a, b)

# %% baddbmm
import numpy as np
import torch

rng = np.random.default_rng(914)
c = torch.from_numpy(rng.standard_normal((2, 3, 3)).astype(np.float32))
a = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((2, 4, 3)).astype(np.float32))


def run():
    return torch.baddbmm(c, a, b, beta=0.5, alpha=2.0)

# %% kron_product
import torch

a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
b = torch.eye(2)


def run():
    return torch.kron(a, b)

# %% tensordot_dims
import numpy as np
import torch

rng = np.random.default_rng(915)
a = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))


def run():
    return torch.tensordot(a, b, dims=([1, 2], [1, 0]))

# %% cholesky
import torch

m = torch.tensor([[4.0, 2.0], [2.0, 3.0]])


def run():
    return torch.linalg.cholesky(m)

# %% solve_system
import torch

a = torch.tensor([[3.0, 1.0], [1.0, 2.0]])
b = torch.tensor([[9.0], [8.0]])


def run():
    return torch.linalg.solve(a, b)

# %% matrix_power
import torch

m = torch.tensor([[1.0, 1.0], [0.0, 1.0]])


def run():
    return torch.matrix_power(m, 3)

# %% fft_rfft_abs
import numpy as np
import torch

rng = np.random.default_rng(916)
signal = torch.from_numpy(rng.standard_normal((8,)).astype(np.float32))


def run():
    return torch.fft.rfft(signal).abs()

# %% matmul_transpose_scores
import numpy as np
import torch

rng = np.random.default_rng(917)
q = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
k = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))


def run():
    return q @ k.transpose(-1, -2) / 2.0
