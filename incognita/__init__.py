"""Incognita: matched access conditions for tau-bench retail tasks."""

import os

# LiteLLM (imported by the upstream harness) downloads its model price map from the internet
# at import unless told to use the copy it ships. An offline tool must make no such call, and
# our costs come from our own price table; set it before anything can import litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

__version__ = "0.2.0"
