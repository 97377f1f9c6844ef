import numpy as np
import torch

d = {"a": 1}
d.values()  # expect: none
s = "a,b"
s.split(",")  # expect: none
a = np.zeros(3)
np.mean(a)  # expect: none
a.sum()  # expect: none


def pandas_like(df):
    return df.sum()  # expect: none


def plain_list(items: list):
    items.append(1)  # expect: none
    return len(items)  # expect: none


def unknown_receiver(thing):
    return thing.unsqueeze(0)
