"""TD(lambda) self-play, distillation, actors and learner. See docs/training.md."""
