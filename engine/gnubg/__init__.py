"""GNU Backgammon as oracle, opponent and yardstick: the process, the script run inside it,
and the external-player bot that lets gnubg play against us."""
