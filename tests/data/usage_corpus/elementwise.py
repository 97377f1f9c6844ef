# Usage programs: element-wise math (see creation.py for the format).

# %% abs_function
import numpy as np
import torch

rng = np.random.default_rng(20)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.abs(x)

# %% abs_method
import numpy as np
import torch

rng = np.random.default_rng(21)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return x.abs()

# %% exp_log
import numpy as np
import torch

rng = np.random.default_rng(22)
x = torch.from_numpy(rng.uniform(0.1, 2.0, (3, 3)).astype(np.float32))


def run():
    return torch.log(torch.exp(x) + 1.0)

# %% sqrt_rsqrt
import numpy as np
import torch

rng = np.random.default_rng(23)
var = torch.from_numpy(rng.uniform(0.5, 3.0, (4,)).astype(np.float32))


def run():
    return torch.sqrt(var), torch.rsqrt(var + 1e-5)

# %% sin_cos_positional
import torch

pos = torch.arange(0, 8).float()


def run():
    return torch.sin(pos / 4), torch.cos(pos / 4)

# %% tanh_sigmoid
import numpy as np
import torch

rng = np.random.default_rng(24)
x = torch.from_numpy(rng.standard_normal((2, 6)).astype(np.float32))


def run():
    return torch.tanh(x) * torch.sigmoid(x)

# %% sigmoid_method
import numpy as np
import torch

rng = np.random.default_rng(25)
logits = torch.from_numpy(rng.standard_normal((4, 1)).astype(np.float32))


def run():
    return logits.sigmoid()

# %% clamp_min_max
import numpy as np
import torch

rng = np.random.default_rng(26)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return torch.clamp(x, min=-0.5, max=0.5)

# %% clamp_method_min
import numpy as np
import torch

rng = np.random.default_rng(27)
x = torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32))


def run():
    return x.clamp(min=0)

# %% clamp_positional
import numpy as np
import torch

rng = np.random.default_rng(28)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return torch.clamp(x, 0.0, 1.0)

# %% clip_alias
import numpy as np
import torch

rng = np.random.default_rng(29)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return x.clip(-1, 1)

# %% pow_scalar
import numpy as np
import torch

rng = np.random.default_rng(30)
x = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))


def run():
    return torch.pow(x, 2)

# %% pow_method_half
import numpy as np
import torch

rng = np.random.default_rng(31)
x = torch.from_numpy(rng.uniform(0.0, 4.0, (5,)).astype(np.float32))


def run():
    return x.pow(0.5)

# %% add_alpha
import numpy as np
import torch

rng = np.random.default_rng(32)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.add(a, b, alpha=2)

# %% sub_method
import numpy as np
import torch

rng = np.random.default_rng(33)
a = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return a.sub(b)

# %% mul_broadcast
import numpy as np
import torch

rng = np.random.default_rng(34)
x = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
scale = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return torch.mul(x, scale)

# %% div_true
import numpy as np
import torch

rng = np.random.default_rng(35)
a = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))
b = torch.from_numpy(rng.uniform(1.0, 2.0, (3, 3)).astype(np.float32))


def run():
    return torch.div(a, b)

# %% div_floor_mode
import torch

a = torch.tensor([7, -7, 9, 10])


def run():
    return torch.div(a, 2, rounding_mode="floor")

# %% div_trunc_mode
import torch

a = torch.tensor([7.5, -7.5, 3.0])


def run():
    return a.div(2, rounding_mode="trunc")

# %% floor_ceil_round
import numpy as np
import torch

rng = np.random.default_rng(36)
x = torch.from_numpy((rng.standard_normal((8,)) * 3).astype(np.float32))


def run():
    return torch.floor(x), torch.ceil(x), torch.round(x)

# %% round_decimals
import torch

x = torch.tensor([1.2345, 2.5555, -0.1234])


def run():
    return torch.round(x, decimals=2)

# %% sign_neg
import numpy as np
import torch

rng = np.random.default_rng(37)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return torch.sign(x), torch.neg(x)

# %% reciprocal
import numpy as np
import torch

rng = np.random.default_rng(38)
x = torch.from_numpy(rng.uniform(0.5, 2.0, (4,)).astype(np.float32))


def run():
    return torch.reciprocal(x)

# %% where_select
import numpy as np
import torch

rng = np.random.default_rng(39)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.where(x > 0, x, torch.zeros_like(x))

# %% where_scalar
import numpy as np
import torch

rng = np.random.default_rng(40)
x = torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))


def run():
    return torch.where(x > 0, x, 0.0)

# %% maximum_minimum
import numpy as np
import torch

rng = np.random.default_rng(41)
a = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return torch.maximum(a, b), torch.minimum(a, b)

# %% lerp_weight
import numpy as np
import torch

rng = np.random.default_rng(42)
start = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))
end = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return torch.lerp(start, end, 0.3)

# %% addcmul_value
import numpy as np
import torch

rng = np.random.default_rng(43)
t = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
a = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))
b = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32))


def run():
    return torch.addcmul(t, a, b, value=0.5)

# %% erf_gelu_manual
import math

import numpy as np
import torch

rng = np.random.default_rng(44)
x = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))

# %% log1p_expm1
import numpy as np
import torch

rng = np.random.default_rng(45)
x = torch.from_numpy(rng.uniform(0.0, 1.0, (5,)).astype(np.float32))


def run():
    return torch.log1p(x), torch.expm1(x)

# %% remainder_fmod
import torch

a = torch.tensor([-3.0, -2.0, 5.0, 7.5])


def run():
    return torch.remainder(a, 2), torch.fmod(a, 2)

# %% square_method
import numpy as np
import torch

rng = np.random.default_rng(46)
x = torch.from_numpy(rng.standard_normal((3, 2)).astype(np.float32))


def run():
    return x.square().sum()

# %% operators_mixed
import numpy as np
import torch

rng = np.random.default_rng(47)
a = torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
b = torch.from_numpy(rng.uniform(1.0, 2.0, (2, 3)).astype(np.float32))


def run():
    return (a + b) * 2 - a / b + a ** 2

# %% comparison_ops
import numpy as np
import torch

rng = np.random.default_rng(48)
a = torch.from_numpy(rng.standard_normal((6,)).astype(np.float32))


def run():
    return torch.gt(a, 0), torch.le(a, 0.5), torch.eq(a, a), a.ne(0)

# %% logical_ops
import torch

a = torch.tensor([True, False, True, False])
b = torch.tensor([True, True, False, False])


def run():
    return torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_not(a), a ^ b

# %% isnan_nan_to_num
import numpy as np
import torch

x = torch.tensor([1.0, float("nan"), -2.0, float("inf")])


def run():
    return torch.isnan(x), torch.nan_to_num(x, nan=0.0, posinf=1e4)

# %% isclose_allclose
import numpy as np
import torch

rng = np.random.default_rng(49)
a = torch.from_numpy(rng.standard_normal((4,)).astype(np.float32))


def run():
    return torch.isclose(a, a + 1e-7), torch.allclose(a, a + 1e-7)

# %% exp_method_chain
import numpy as np
import torch

rng = np.random.default_rng(50)
x = torch.from_numpy(rng.standard_normal((3, 3)).astype(np.float32))


def run():
    return x.exp().log().neg()

# %% atan2_hypot
import numpy as np
import torch

rng = np.random.default_rng(51)
y = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return torch.atan2(y, x), torch.hypot(y, x)

# %% softplus_manual
import numpy as np
import torch

rng = np.random.default_rng(52)
x = torch.from_numpy(rng.standard_normal((5,)).astype(np.float32))


def run():
    return torch.log(1 + torch.exp(x))

# %% trunc_frac
import torch

x = torch.tensor([1.7, -1.7, 2.2])


def run():
    return torch.trunc(x), torch.frac(x)
