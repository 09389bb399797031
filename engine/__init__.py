"""The rules core, encoder and evaluators. Importing it first keys numba's kernel cache on the sources."""

from engine.cache import configure_numba

configure_numba()
