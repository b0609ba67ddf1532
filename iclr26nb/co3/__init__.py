"CO3: concept-contrasting correction for multi-concept diffusion sampling: the shapes world, the corrector, baselines and metrics; diffusers pipelines (SD, SDXL, PixArt-Σ) in `real`."
from .method import *
from .real import *
