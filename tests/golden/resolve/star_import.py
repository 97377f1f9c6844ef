from torch import *

x = zeros(2, 3)
y = cat([x, x], dim=0)
z = nonzero(x)
w = not_a_torch_function(x)  # expect: none
