"PrefDisco-mini: a simulated preference world, the three-mode protocol, elicitation agents, and the protocol over HTTP."
from .sim import *
from .llm import *
