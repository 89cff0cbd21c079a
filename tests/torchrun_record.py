"""What each rank runs in the CPU torchrun test: `kinspect` itself (`cli.main`), with the GPU
pipeline stood in by tests/fake_pipeline.py (the real SizeHintMultiKernelCall, stand-in
kernels) and CUDA said to be there; torchrun's environment, the process group (gloo on the
CPU) and everything `kinspect record` does with them are real."""

import sys

from fake_pipeline import FakePipeline

from kinspect import cli
from kinspect.commands import recording
from kinspect.inductor.recording import pipeline

recording.cuda_available = lambda: True
pipeline.LivePipeline = FakePipeline
sys.exit(cli.main(sys.argv[1:]))
