# Usage programs: in-place Tensor methods; each returns the receiver so the update is compared
# (see creation.py for the format).

# %% add_inplace_tensor
import numpy as np
import torch

rng = np.random.default_rng(100)
acc = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))
step = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    acc.add_(step)
    return acc

# %% add_inplace_alpha
import numpy as np
import torch

rng = np.random.default_rng(101)
p = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
g = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    p.add_(g, alpha=-0.1)
    return p

# %% add_inplace_scalar
import torch

x = torch.tensor([1.0, 2.0, 3.0])


def run():
    x.add_(1)
    return x

# %% sub_inplace
import numpy as np
import torch

rng = np.random.default_rng(102)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
mean = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    x.sub_(mean)
    return x

# %% mul_inplace_scalar
import numpy as np
import torch

rng = np.random.default_rng(103)
w = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))


def run():
    w.mul_(0.9)
    return w

# %% mul_inplace_tensor
import numpy as np
import torch

rng = np.random.default_rng(104)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
m = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.mul_(m)
    return x

# %% div_inplace
import numpy as np
import torch

rng = np.random.default_rng(105)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    x.div_(2.0)
    return x

# %% div_inplace_norm
import numpy as np
import torch

rng = np.random.default_rng(106)
v = torch.from_numpy(rng.standard_normal((2, 4)).astype(np.float32))


def run():
    v.div_(v.norm(dim=1, keepdim=True))
    return v

# %% abs_inplace
import numpy as np
import torch

rng = np.random.default_rng(107)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    x.abs_()
    return x

# %% abs_inplace_returned
import numpy as np
import torch

rng = np.random.default_rng(108)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    y = x.abs_()
    return y, x

# %% clamp_inplace
import numpy as np
import torch

rng = np.random.default_rng(109)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    x.clamp_(min=-0.5, max=0.5)
    return x

# %% clamp_inplace_min
import numpy as np
import torch

rng = np.random.default_rng(110)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    x.clamp_(0)
    return x

# %% zero_inplace
import numpy as np
import torch

rng = np.random.default_rng(111)
grad = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    grad.zero_()
    return grad

# %% fill_inplace
import numpy as np
import torch

rng = np.random.default_rng(112)
x = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    x.fill_(0.25)
    return x

# %% copy_inplace
import numpy as np
import torch

rng = np.random.default_rng(113)
dst = torch.zeros(2, 3)
src = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    dst.copy_(src)
    return dst

# %% exp_inplace
import numpy as np
import torch

rng = np.random.default_rng(114)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.exp_()
    return x

# %% sqrt_inplace
import numpy as np
import torch

rng = np.random.default_rng(115)
x = torch.from_numpy(rng.uniform(0.1, 4.0, (4,)).astype(np.float32))


def run():
    x.sqrt_()
    return x

# %% neg_inplace
import numpy as np
import torch

rng = np.random.default_rng(116)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.neg_()
    return x

# %% sigmoid_inplace
import numpy as np
import torch

rng = np.random.default_rng(117)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.sigmoid_()
    return x

# %% tanh_inplace
import numpy as np
import torch

rng = np.random.default_rng(118)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.tanh_()
    return x

# %% relu_inplace_method
import numpy as np
import torch

rng = np.random.default_rng(119)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    x.relu_()
    return x

# %% pow_inplace
import numpy as np
import torch

rng = np.random.default_rng(120)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    x.pow_(2)
    return x

# %% floor_inplace
import numpy as np
import torch

rng = np.random.default_rng(121)
x = torch.from_numpy((rng.standard_normal((4,)) * 3).astype(np.float32))


def run():
    x.floor_()
    return x

# %% masked_fill_inplace
import numpy as np
import torch

rng = np.random.default_rng(122)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    x.masked_fill_(x > 0.5, 0.5)
    return x

# %% unsqueeze_inplace
import numpy as np
import torch

rng = np.random.default_rng(123)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    x.unsqueeze_(0)
    return x

# %% squeeze_inplace
import numpy as np
import torch

rng = np.random.default_rng(124)
x = torch.from_numpy(rng.standard_normal((3, 1)).astype(np.float32))


def run():
    x.squeeze_(1)
    return x

# %% iadd_operator
import numpy as np
import torch

rng = np.random.default_rng(125)
rows = [torch.from_numpy(rng.standard_normal((3,)).astype(np.float32)) for _ in range(4)]


def run():
    total = torch.zeros(3)
    for r in rows:
        total += r
    return total

# %% imul_operator
import numpy as np
import torch

rng = np.random.default_rng(126)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    y = x * 1.0
    y *= 3
    return y

# %% setitem_slice
import numpy as np
import torch

rng = np.random.default_rng(127)
x = torch.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))


def run():
    x[:, 0] = 0.0
    return x

# %% setitem_mask
import numpy as np
import torch

rng = np.random.default_rng(128)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    x[x < 0] = 0
    return x

# %% index_fill_inplace
import numpy as np
import torch

rng = np.random.default_rng(129)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
index = torch.tensor([0, 2])


def run():
    x.index_fill_(1, index, -1.0)
    return x

# %% scatter_inplace
import torch

target = torch.zeros(3, 5)
index = torch.tensor([[0, 1], [2, 3], [4, 0]])
src = torch.ones(3, 2)


def run():
    target.scatter_(1, index, src)
    return target

# %% scatter_one_hot
import torch

labels = torch.tensor([1, 0, 3])


def run():
    one_hot = torch.zeros(3, 4)
    one_hot.scatter_(1, labels.unsqueeze(1), 1.0)
    return one_hot

# %% addmm_style_update
import numpy as np
import torch

rng = np.random.default_rng(130)
m = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
g = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    m.mul_(0.9).add_(g, alpha=0.1)
    return m

# %% addcmul_inplace
import numpy as np
import torch

rng = np.random.default_rng(131)
v = torch.from_numpy(rng.uniform(0, 1, (3,)).astype(np.float32))
g = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    v.mul_(0.999).addcmul_(g, g, value=0.001)
    return v

# %% lerp_inplace
import numpy as np
import torch

rng = np.random.default_rng(132)
ema = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
new = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    ema.lerp_(new, 0.1)
    return ema

# %% fill_diagonal
import torch


def run():
    m = torch.zeros(3, 3)
    m.fill_diagonal_(1.0)
    return m

# %% data_inplace
import numpy as np
import torch

rng = np.random.default_rng(133)
w = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    w.data.mul_(2)
    return w

# %% clamp_inplace_chain
import numpy as np
import torch

rng = np.random.default_rng(134)
x = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    y = x.clone()
    y.clamp_(min=0).mul_(2)
    return y, x

# %% t_inplace
import numpy as np
import torch

rng = np.random.default_rng(135)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    x.t_()
    return x

# %% view_row_scale
import numpy as np
import torch

rng = np.random.default_rng(136)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    x[:, 0].mul_(2)
    return x

# %% view_slice_add
import numpy as np
import torch

rng = np.random.default_rng(137)
buf = torch.from_numpy(rng.standard_normal((4, 2)).astype(np.float32))
delta = torch.from_numpy(rng.standard_normal((2, 2)).astype(np.float32))


def run():
    buf[2:].add_(delta)
    return buf

# %% attribute_receiver
import numpy as np
import torch


class State:
    def __init__(self, n):
        self.running = torch.zeros(n)

    def update(self, value, momentum=0.1):
        self.running.mul_(1 - momentum).add_(value, alpha=momentum)


rng = np.random.default_rng(138)
values = [torch.from_numpy(rng.standard_normal((3,)).astype(np.float32)) for _ in range(3)]
state = State(3)


def run():
    for v in values:
        state.update(v)
    return state.running

# %% inplace_on_operator_result
import numpy as np
import torch

rng = np.random.default_rng(139)
a = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return (a - b).abs_(), a
