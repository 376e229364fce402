"""neuronxcc.nki.compiler: scheduling and compiler directives; accepted and not modelled."""
from nx_nki.compiler_api import *  # noqa: F401,F403
