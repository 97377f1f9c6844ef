"""Devices and precision: device moves, data parallel, mixed precision (TMS341-TMS343)."""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(model, rank):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: TMS341
    model = model.to(device)  # expect: TMS341
    model = model.cuda()  # expect: TMS341
    x = torch.ones(2).to("cuda:0")  # expect: TMS341
    y = x.to(torch.float16)  # expect: none
    z = x.to(dtype=torch.float32)  # expect: none
    torch.cuda.set_device(rank)  # expect: TMS341
    wrapped = nn.DataParallel(model)  # expect: TMS342
    distributed = DDP(model, device_ids=[rank])  # expect: TMS342
    return wrapped, distributed, y, z


def amp_step(model, optimizer, data):  # expect: TMS361
    scaler = torch.cuda.amp.GradScaler()  # expect: TMS343
    with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: TMS343
        loss = model(data).sum()
    with torch.amp.autocast("cuda"):  # expect: TMS343
        loss = loss * 2
    scaler.scale(loss).backward()  # expect: none
    scaler.step(optimizer)  # expect: none
    scaler.update()  # expect: none
