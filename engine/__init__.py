"""The game of backgammon, torch-free: the rules core, encoder, evaluators and search,
and by role cube/, formats/, gnubg/ and pit/. See docs/architecture.md."""
