"""Match analysis: every decision of a replayed .mat file graded against the engine's best.

grade.py values each checker play and cube action (cubeful, normalised to a 1-cube) and
the luck of each roll; summary.py turns the graded decisions into each player's error
rates, marks, rating and luck. The command line (scripts/commands/analyse.py) renders them.
"""

THRESHOLDS = (0.03, 0.06, 0.12)
"""gnubg's default marks, in normalised equity: doubtful, bad, very bad."""
