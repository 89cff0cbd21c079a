"""relu(a @ b) with both M and N dynamic: two dynamic dims share each hint (a 1-D search).

This is the case where the "4096" variant can turn out to be the kernel tuned for 64.
Run it plainly with `python samples/gemm_2d.py`.
"""

import torch


def model(a, b):
    return torch.relu(a @ b)


def inputs(M=512, N=768):
    a = torch.randn(M, 4096, dtype=torch.bfloat16)
    b = torch.randn(4096, N, dtype=torch.bfloat16)
    return a, b


workload = [
    {"M": 64, "N": 64},
    {"M": 256, "N": 256},
    {"M": 100, "N": 3000},
    {"M": 2048, "N": 2048},
    {"M": 4096, "N": 4096},
    {"M": 8192, "N": 8192},
]
hints = [64, 256, 4096]

if __name__ == "__main__":
    print(model(*inputs(M=8, N=16)).shape)
