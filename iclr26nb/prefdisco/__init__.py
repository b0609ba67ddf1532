"PrefDisco-mini: a simulated preference world, the three-mode protocol, elicitation agents, PEP's preference models and question strategies, and the protocol over HTTP."
from .sim import *
from .llm import *
from .pep import *
