# Usage programs: optimizers and schedulers as training code steps them (see creation.py for the format).

# %% sgd_step_manual_grad
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(700)
x = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((4, 1)).astype(np.float32))
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def run():
    for _ in range(3):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    return model.weight, model.bias

# %% sgd_momentum_loop
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(701)
x = torch.from_numpy(rng.standard_normal((8, 4)).astype(np.float32))
y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def run():
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return model.weight

# %% adam_loop
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(702)
x = torch.from_numpy(rng.standard_normal((6, 2)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((6, 1)).astype(np.float32))
net = nn.Linear(2, 1)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
criterion = nn.MSELoss()


def run():
    for _ in range(3):
        optimizer.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
    return net.weight

# %% adamw_weight_decay
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(703)
x = torch.from_numpy(rng.standard_normal((6, 2)).astype(np.float32))
net = nn.Linear(2, 2)
optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)


def run():
    optimizer.zero_grad()
    net(x).pow(2).sum().backward()
    optimizer.step()
    return net.weight

# %% step_lr_schedule
import torch
import torch.nn as nn

model = nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)


def run():
    lrs = []
    for _ in range(5):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return lrs

# %% cosine_schedule
import torch
import torch.nn as nn

model = nn.Linear(2, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)


def run():
    lrs = []
    for _ in range(4):
        optimizer.step()
        scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return lrs

# %% param_groups_lr
import torch
import torch.nn as nn

model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def run():
    for group in optimizer.param_groups:
        group["lr"] = group["lr"] * 0.5
    return optimizer.param_groups[0]["lr"]

# %% clip_grad_norm
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(704)
x = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
model = nn.Linear(3, 2)


def run():
    model(x).sum().backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    return total

# %% grad_of_function
import numpy as np
import torch

rng = np.random.default_rng(705)
x = torch.from_numpy(rng.standard_normal((3,)).astype(np.float32)).requires_grad_()


def run():
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x)
    return g

# %% backward_leaf_grad
import numpy as np
import torch

rng = np.random.default_rng(706)
w = torch.tensor(rng.standard_normal((3,)), dtype=torch.float32, requires_grad=True)


def run():
    loss = (w * w).sum()
    loss.backward()
    return w.grad
