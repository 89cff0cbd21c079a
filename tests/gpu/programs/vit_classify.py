"""An image classifier serving batches of changing size: a torchvision VisionTransformer
(small, random weights), 197 tokens per 224x224 image, so its GEMMs see 197*B rows.

    python vit_classify.py
    kinspect run --hints 64,256,4096 --measure vit_classify.py
"""

import torch
from torchvision.models.vision_transformer import VisionTransformer

BATCHES = [2, 8, 17, 32, 64, 8]


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=2, num_heads=6, hidden_dim=384,
                              mlp_dim=1536, num_classes=1000).to(device=device, dtype=dtype).eval()
    classify = torch.compile(model)
    with torch.no_grad():
        for batch in BATCHES:
            images = torch.randn(batch, 3, 224, 224, device=device, dtype=dtype)
            torch._dynamo.mark_dynamic(images, 0)
            top = classify(images).argmax(-1)
            print(f"batch {batch}: {tuple(top.shape)} labels")


if __name__ == "__main__":
    main()
