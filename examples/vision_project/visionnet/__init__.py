"""A small image classifier used as the torch2ms example project."""
