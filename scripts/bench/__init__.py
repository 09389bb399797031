"""`tdgammon bench NAME`: one module a hot path, each printing its figure."""
