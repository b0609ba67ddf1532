"STEDiff: backdoor redundancy in text-to-image diffusion: the miniature world, STEBA and its baselines, STEDF detection (method) and the diffusers path (real)."
from .method import *
from .real import *
