# This file mentions torch only in a comment: nothing is a torch API here.
def f(thing):
    return thing.unsqueeze(0)  # expect: none
