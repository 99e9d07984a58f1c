"""The operands of the small PyTorch step that capture.py and python_pkg.py
run under cutrace, relu(a @ b + c): two 256 x 256 matrices and a 256-vector
of random floats on the GPU."""
import sys


def gpu_operands():
    """(torch, a, b, c), the operands on the GPU; exits 77 (skipped) where
    PyTorch sees no GPU."""
    import torch

    if not torch.cuda.is_available():
        sys.exit(77)
    dev = torch.device("cuda")
    a = torch.randn(256, 256, device=dev)
    b = torch.randn(256, 256, device=dev)
    c = torch.randn(256, device=dev)
    return torch, a, b, c
