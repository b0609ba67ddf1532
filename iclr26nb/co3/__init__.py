"CO3: concept-contrasting correction for multi-concept diffusion sampling: the shapes world, the corrector, baselines and metrics."
from .method import *
