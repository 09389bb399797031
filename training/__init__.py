"""TD(lambda) self-play and distillation. Importing engine first keys numba's kernel cache on the sources."""

import engine  # noqa: F401
