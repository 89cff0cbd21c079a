"""A CNN serving batches of changing size: torchvision's ResNet-18 (random weights) on
32x32 images; its classifier's GEMM sees the batch as rows.

    python cnn_classify.py
    kinspect run --hints 64,256,4096 --measure cnn_classify.py
"""

import torch
from torchvision.models import resnet18

BATCHES = [4, 16, 37, 128, 16]


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = resnet18(num_classes=1000).to(device=device, dtype=dtype).eval()
    classify = torch.compile(model)
    with torch.no_grad():
        for batch in BATCHES:
            images = torch.randn(batch, 3, 32, 32, device=device, dtype=dtype)
            torch._dynamo.mark_dynamic(images, 0)
            top = classify(images).argmax(-1)
            print(f"batch {batch}: {tuple(top.shape)} labels")


if __name__ == "__main__":
    main()
